"""The calibration's dichotomy step on the paper release's shapes, against a git revision.

    python scripts/bench_calibration.py --against 500064b [--repeats 3] [--quick]

Calibration is almost all of a release build (docs/releases.md). For each of the
paper release's shapes (``repository/paper.toml``: cluster numbers and number of
calibration tables as there), this draws a design, calibrates it to 10% risk once
(on 20 tables, to get a realistic scale), then times one dichotomy step, the
X-only MAP over all the calibration tables at that scale
(``CommonRandomNumbers.apparent_errors``), with:

- ``ref``: the package at revision ``REF``, extracted with ``git archive`` into a
  temporary directory and imported as ``lbm_bench_ref`` (its defaults);
- ``now``: the working tree's defaults.

Times are the best of ``--repeats`` alternating runs; the mean apparent errors
of both are printed (they differ when the revisions draw different MAP starts).
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_gibbs import _load_ref, ref_module  # noqa: E402

from lbm_bench import calibrate_scale  # noqa: E402
from lbm_bench.protocol.calibration import CommonRandomNumbers  # noqa: E402

#: (kind, n_rows, n_cols, g, m, calibration tables), after repository/paper.toml
PAPER_SHAPES = [
    (kind, n, d, g, m, tables)
    for kind in ("gaussian", "poisson", "bernoulli")
    for n, d, g, m, tables in (
        (50, 50, 3, 3, 200), (200, 100, 3, 2, 200), (100, 80, 4, 3, 200),
        (500, 300, 3, 3, 50), (1000, 1000, 3, 3, 20),
    )
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python scripts/bench_calibration.py")
    parser.add_argument("--against", required=True, help="git revision to compare with")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="two small shapes, 20 tables")
    args = parser.parse_args(argv)
    shapes = [("gaussian", 50, 50, 3, 3, 20), ("bernoulli", 100, 80, 4, 3, 20)] if args.quick else PAPER_SHAPES
    root = Path(__file__).resolve().parents[1]
    with tempfile.TemporaryDirectory() as tmp:
        old = _load_ref(args.against, root, Path(tmp))
        print(f"# one dichotomy step (X-only MAP, 12 starts, over the calibration tables), "
              f"{args.against} vs working tree; best of {args.repeats}")
        header = f"{'configuration':<32} {'tables':>6} {'ref s':>8} {'now s':>8} {'ratio':>6}  mean error ref / now"
        print(header)
        print("-" * len(header))
        totals = [0.0, 0.0]
        for kind, n, d, g, m, n_tables in shapes:
            calibration = calibrate_scale(kind, n, d, g, m, 0.1, n_tables=20, rng=0)
            design = calibration.design
            old_design = ref_module(old, "models.design", "design").ModelDesign(
                **{f.name: getattr(design, f.name) for f in dataclasses.fields(design)}
            )
            seed = np.random.SeedSequence(1)
            ref = ref_module(old, "protocol.calibration", "calibration").CommonRandomNumbers(old_design, n, d, n_tables, seed)
            now = CommonRandomNumbers(design, n, d, n_tables, seed)
            best = [math.inf, math.inf]
            errors = [None, None]
            for _ in range(args.repeats):
                for k, crn in enumerate((ref, now)):
                    start = time.perf_counter()
                    errors[k] = crn.apparent_errors(calibration.scale, 10)
                    best[k] = min(best[k], time.perf_counter() - start)
            totals[0] += best[0]
            totals[1] += best[1]
            print(f"{kind + f' {n}x{d} {g}x{m}':<32} {n_tables:>6} {best[0]:>8.3f} {best[1]:>8.3f} "
                  f"{best[0] / best[1]:>6.2f}  {errors[0].mean():.4f} / {errors[1].mean():.4f}", flush=True)
        print(f"{'all shapes':<32} {'':>6} {totals[0]:>8.3f} {totals[1]:>8.3f} {totals[0] / totals[1]:>6.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
