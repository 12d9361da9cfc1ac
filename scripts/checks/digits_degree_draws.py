"""How much of a table's degrees follows the draw of its labels: the design fitted to
scikit-learn's digits (seed 2012, as ``fig_digits_design.py``), tables drawn at a scale from
``--draws`` seeds of labels and noise, with the row and column effects as fitted, drawn again
from the fitted ones pooled over the classes (:meth:`~lbm_bench.ModelDesign.at_shape`'s draw),
or all one. Prints per variant the range of the tables' mean count and the median and range of
the KS statistics of their row and column means against the source's
(``lbm_bench.fitting.degree_ks``).

Usage: ``python scripts/checks/digits_degree_draws.py [--scales 1,0.65] [--draws 10] [--quick]``
(needs scikit-learn; quick: the first 300 images, up to 4x4 clusters, 3 draws at scale 1).
"""

from __future__ import annotations

import argparse

import numpy as np

from lbm_bench import fit_design
from lbm_bench.fitting import degree_ks


def _effects(design, variant, rng):
    rows, cols = design.row_effects, design.col_effects
    if variant == "pooled":
        rows, cols = rng.choice(rows, rows.size), rng.choice(cols, cols.size)
        return rows / rows.mean(), cols / cols.mean()
    if variant == "none":
        return np.ones(rows.size), np.ones(cols.size)
    return rows, cols


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scales", default="1,0.65")
    parser.add_argument("--draws", type=int, default=10)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    from sklearn.datasets import load_digits

    X = load_digits().data.astype(np.int64)[: 300 if args.quick else None]
    if args.quick:
        args.scales, args.draws = "1", 3
    design = fit_design(X, (4, 4) if args.quick else (8, 8), certify=False, rng=2012).design
    if design.row_effects is None:
        raise SystemExit("the fitted design has no row and column effects")
    n_rows, n_cols = X.shape
    print(f"source mean count {X.mean():.2f}")
    for scale in (float(s) for s in args.scales.split(",")):
        model = design.model(scale)
        for variant in ("fitted", "pooled", "none"):
            found = []
            for seed in range(args.draws):
                rng = np.random.default_rng(seed)
                rows, cols = _effects(design, variant, rng)
                drawn = type(model)(model.row_proportions, model.col_proportions, model.rates, rows, cols)
                z, w = drawn.sample_labels(n_rows, n_cols, rng=rng)
                table = drawn.table_from_noise(drawn.draw_noise(n_rows, n_cols, rng=rng), z, w)
                ks = degree_ks(X, table)
                found.append((table.mean(), ks["rows"], ks["cols"]))
            mean, rows_ks, cols_ks = np.array(found).T
            print(f"scale {scale:g} effects {variant:6s}: mean count {mean.min():.2f}-{mean.max():.2f}; KS rows "
                  f"median {np.median(rows_ks):.2f} ({rows_ks.min():.2f}-{rows_ks.max():.2f}), columns median "
                  f"{np.median(cols_ks):.2f} ({cols_ks.min():.2f}-{cols_ks.max():.2f})")


if __name__ == "__main__":
    main()
