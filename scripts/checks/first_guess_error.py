"""Is the first guess's side error right? Predicted against measured, the other side known.

    python scripts/checks/first_guess_error.py [--tables 20] [--seed 0]
        [--design KIND NxD GxM ...]

The first guess of the calibrated scale (:func:`lbm_bench.protocol.separation.first_guess`)
predicts each side's error from the separations between its classes; the other side's
errors then attenuate them. This checks the first part alone, where an exact answer is
cheap: with the column labels and the parameters known, the best row labels are each row's
most probable class (a product over its entries), so their error can be measured on drawn
tables. For each design (``random_design(KIND, G, M, rng=seed)``) at the scale the first
guess gives for an ``l_item`` of 0.1, it prints the row error measured over ``--tables``
tables of that design (mean and standard error) beside two predictions from the same
separations: the sum of the pairwise errors over the other classes (the union bound the
first guess used until 2026-11) and the jointly normal likelihood ratios it uses now
(``SideError``).
"""

from __future__ import annotations

import argparse
import math

import numpy as np
from scipy import special

from lbm_bench import random_design
from lbm_bench.protocol import separation

#: (kind, n_rows, n_cols, g, m): few and many classes, the three families of generate_timings.
DESIGNS = [
    ("gaussian", 500, 500, 3, 3),
    ("gaussian", 500, 500, 10, 10),
    ("poisson", 500, 500, 10, 10),
    ("bernoulli", 500, 500, 8, 8),
    ("gaussian", 300, 200, 5, 5),
]


def union_bound_error(separations: np.ndarray, proportions: np.ndarray) -> float:
    """A side's error as the sum of its pairwise errors ``Phi(-sqrt(D / 2))`` over the other classes.

    >>> round(union_bound_error(np.array([[0.0, 2.0], [2.0, 0.0]]), np.array([0.5, 0.5])), 4)
    0.1587
    """
    tail = 0.5 * special.erfc(np.sqrt(np.maximum(separations, 0.0) / 2) / math.sqrt(2))
    np.fill_diagonal(tail, 0.0)
    return min(float((proportions * tail.sum(axis=1)).sum()), 1.0 - float(np.max(proportions)))


def measured_row_error(design, n_rows: int, n_cols: int, scale: float, tables: int, rng) -> tuple[float, float]:
    """Error of the best row labels given the true column labels and parameters, over ``tables``
    tables: mean and standard error."""
    model = design.without_effects().model(scale)
    eta, log_partition = model.natural_parameters, model.log_partition  # (p, g, m), (g, m)
    log_prior = np.log(design.row_proportions)
    errors = []
    for _ in range(tables):
        X, z, w = model.sample(n_rows, n_cols, rng=rng)
        stats = model.sufficient_statistics(np.asarray(X))  # (p, n, d)
        onehot = np.eye(len(design.col_proportions))[w]  # (d, m)
        sums = stats @ onehot  # (p, n, m): each row's statistics summed by column class
        counts = onehot.sum(axis=0)  # (m,)
        scores = np.einsum("pnl,pkl->nk", sums, eta) - log_partition @ counts + log_prior
        errors.append(float(np.mean(scores.argmax(axis=1) != z)))
    return float(np.mean(errors)), float(np.std(errors, ddof=1) / math.sqrt(tables)) if tables > 1 else math.nan


def check(kind: str, n_rows: int, n_cols: int, g: int, m: int, tables: int, seed: int) -> str:
    """One table row: the design, its scale, the measured row error and both predictions."""
    design = random_design(kind, g, m, rng=seed)
    scale, _ = separation.first_guess(design, n_rows, n_cols, 0.1)
    divergences = separation.block_divergences(design, scale)
    rows = separation._separations(divergences, design.col_proportions, n_cols)
    union = union_bound_error(rows, design.row_proportions)
    joint = separation.SideError(rows, design.row_proportions).error()
    mean, se = measured_row_error(design, n_rows, n_cols, scale, tables, np.random.default_rng(seed))
    return (f"| {kind} {n_rows}x{n_cols} {g}x{m} | {scale:.4f} | {mean:.4f} ({se:.4f}) | {union:.4f} "
            f"| {joint:.4f} |")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=20, help="tables measured per design")
    parser.add_argument("--seed", type=int, default=0, help="seed of the designs and of their tables")
    parser.add_argument("--design", nargs=3, action="append", metavar=("KIND", "NxD", "GxM"))
    args = parser.parse_args(argv)
    designs = DESIGNS
    if args.design:
        designs = []
        for kind, shape, clusters in args.design:
            n, d = (int(v) for v in shape.lower().split("x"))
            g, m = (int(v) for v in clusters.lower().split("x"))
            designs.append((kind, n, d, g, m))
    print(f"row error with the column labels known, at the first guess's scale for l_item 0.1; "
          f"{args.tables} tables per design, seed {args.seed}")
    print("| design | scale | measured (se) | union bound (until 2026-11) | jointly normal (now) |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for kind, n, d, g, m in designs:
        print(check(kind, n, d, g, m, args.tables, args.seed), flush=True)


if __name__ == "__main__":
    main()
