"""Why the ``sparsebm`` algorithm of ``lbm-bench benchmark`` uses its settings.

    python scripts/bench_sparsebm.py [--tables 6] [--shape 50x50] [--raw-defaults K]

Draws ``--tables`` Bernoulli tables (``random_design("bernoulli", 3, 2, rng=t)``
at scale 1.5, labels and entries from seed ``t``; densities near 1/2 like the
benchmark's dense Bernoulli tables) and fits each with sparsebm's ``LBM``:

- ``raw defaults``: ``LBM(3, 2)`` as sparsebm ships it, on the table itself
  (only on the first ``--raw-defaults K`` tables: when the density exceeds 1/2 it
  runs its 10,000 iterations per start with a NaN likelihood, minutes per table);
- ``defaults``: sparsebm's settings, on the complement of tables denser than 1/2
  (what the wrapper does);
- ``wrapper``: :func:`lbm_bench.algorithms.sparsebm.sparsebm_lbm` (its settings,
  ``SPARSEBM_SETTINGS``).

Prints, per table and fit, the seconds, the ARI of rows and columns against the
generating labels and whether the labels equal those of ``defaults`` (up to a
relabelling). One process, one thread of work; the times are single runs.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import scipy.sparse as sp


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=6)
    parser.add_argument("--shape", default="50x50")
    parser.add_argument("--raw-defaults", type=int, default=0, metavar="K",
                        help="also fit the first K tables with sparsebm's raw defaults (minutes each)")
    args = parser.parse_args(argv)
    from sparsebm import LBM

    from lbm_bench.algorithms.sparsebm import (
        SPARSEBM_SETTINGS,
        global_numpy_seed,
        sparsebm_lbm,
    )
    from lbm_bench.metrics import ari
    from lbm_bench.models.design import random_design

    n_rows, n_cols = (int(v) for v in args.shape.split("x"))
    print(f"# sparsebm settings of the wrapper: {SPARSEBM_SETTINGS}")
    print(f"{'table':>5} {'density':>7} {'fit':>13} {'seconds':>8} {'ARI rows':>8} {'ARI cols':>8}  same as defaults")
    totals: dict[str, float] = {}
    for t in range(args.tables):
        model = random_design("bernoulli", 3, 2, rng=t).model(1.5)
        X, z, w = model.sample(n_rows, n_cols, rng=np.random.default_rng(t))
        density = float(X.mean())
        fits = []
        if t < args.raw_defaults:
            fits.append(("raw defaults", X))
        fits.append(("defaults", 1 - X if density > 0.5 else X))
        results = {}
        for name, table in fits:
            start = time.perf_counter()
            with global_numpy_seed(t), warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                fitted = LBM(3, 2, verbosity=0, use_gpu=False).fit(sp.csr_matrix(table))
            seconds = time.perf_counter() - start
            ok = fitted.trained_successfully_
            labels = (fitted.tau_1_.argmax(1), fitted.tau_2_.argmax(1)) if ok else None
            results[name] = (seconds, labels)
        start = time.perf_counter()
        labels = sparsebm_lbm(X, 3, 2, rng=t)
        results["wrapper"] = (time.perf_counter() - start, labels)
        reference = results["defaults"][1]
        for name, (seconds, labels) in results.items():
            totals[name] = totals.get(name, 0.0) + seconds
            if labels is None:
                print(f"{t:>5} {density:>7.3f} {name:>13} {seconds:>8.2f}   (not trained)")
                continue
            same = reference is not None and ari(reference[0], labels[0]) == 1 and ari(reference[1], labels[1]) == 1
            print(f"{t:>5} {density:>7.3f} {name:>13} {seconds:>8.2f} {ari(z, labels[0]):>8.3f} "
                  f"{ari(w, labels[1]):>8.3f}  {'yes' if same else 'no'}")
    print("# total seconds: " + ", ".join(f"{k} {v:.1f}" for k, v in totals.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
