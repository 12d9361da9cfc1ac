"""Why the floor is calibrated by a control variate: the spread of the gap.

``criterion="bayes"`` calibrates the tables' mean floor as the X-only MAP's mean
apparent error (cheap, measured on many tables) minus the mean gap between the
MAP's conditional risk and the floor (a short Gibbs run per table, measured on a
few tables; lbm_bench/protocol/scale_search.py). This script measures, over
tables drawn at one scale with the calibration's common random numbers, per
table:

- ``apparent``: the MAP's apparent error against the generating labels;
- ``map short`` / ``floor short``: the MAP's risk and the cross-fitted floor
  from the calibration's short run (:func:`lbm_bench.protocol.calibration.table_gap`:
  200 sets, 4 chains started at the MAP);
- ``map full`` / ``floor full``: the same from a certifying run (2,000 sets,
  8 chains, half started at the generating labels as ``generate_table`` does).

and prints their means and standard deviations over the tables, the gap
``map - floor`` from both runs, and the short floor's bias against the full one.
The gap's spread is what sets the number of tables its measure needs; the
apparent error's, the MAP's.

Usage: ``python scripts/gap_spread.py [--quick] [--tables N]`` (full: Poisson
300x200 4x3 and Gaussian 200x100 3x3 near 10%, Bernoulli 100x80 4x3 near 20%;
20 tables each; quick: Poisson only, 6 tables).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from lbm_bench import calibrate_scale, floor_certificate, gibbs_labels
from lbm_bench.protocol.calibration import (
    GAP_BURN_IN,
    GAP_CHAINS,
    GAP_SAMPLES,
    CommonRandomNumbers,
    child_seed,
    classifier_labels,
)

CONFIGS = [("poisson", 300, 200, 4, 3, 0.1), ("gaussian", 200, 100, 3, 3, 0.1), ("bernoulli", 100, 80, 4, 3, 0.2)]
COLUMNS = ("apparent", "map short", "floor short", "map full", "floor full")


def measure(kind: str, n_rows: int, n_cols: int, g: int, m: int, risk: float, n_tables: int) -> np.ndarray:
    """Per-table values of :data:`COLUMNS` at the MAP-calibrated scale, shape (n_tables, 5)."""
    cal = calibrate_scale(kind, n_rows, n_cols, g, m, risk, criterion="map", rng=5)
    crn = CommonRandomNumbers(cal.design, n_rows, n_cols, n_tables, np.random.SeedSequence(1))
    model = cal.design.model(cal.scale)
    rows = []
    for t in range(n_tables):
        z0, w0 = crn.table_labels(t)
        X = model.table_from_noise(crn.noise(t), z0, w0)
        (zm, wm), = classifier_labels(model, X[None], [crn.table_seeds[t]], 10)
        row, col = np.mean(zm != z0), np.mean(wm != w0)
        short = gibbs_labels(model, X, n_samples=GAP_SAMPLES, n_chains=GAP_CHAINS, burn_in=GAP_BURN_IN,
                             init=[(zm, wm)], rng=np.random.default_rng(child_seed(crn.table_seeds[t], 3)))
        full = gibbs_labels(model, X, n_samples=2000, n_chains=8, burn_in=50, init=[(z0, w0), (zm, wm)],
                            rng=np.random.default_rng(child_seed(crn.table_seeds[t], 4)))
        rows.append([
            row + col - row * col,
            short.risk(zm, wm).risk,
            floor_certificate(short, starts=[(zm, wm)], n_row_clusters=g, n_col_clusters=m).risk.risk,
            full.risk(zm, wm).risk,
            floor_certificate(full, starts=[(zm, wm)], n_row_clusters=g, n_col_clusters=m).risk.risk,
        ])
    return np.array(rows)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--tables", type=int, default=None)
    args = parser.parse_args(argv)
    configs = CONFIGS[:1] if args.quick else CONFIGS
    n_tables = args.tables or (6 if args.quick else 20)
    print(f"{'configuration':<28} {'':>6} " + " ".join(f"{c:>11}" for c in COLUMNS)
          + f" {'gap short':>10} {'gap full':>9} {'floor bias':>10}")
    for kind, n_rows, n_cols, g, m, risk in configs:
        start = time.perf_counter()
        values = measure(kind, n_rows, n_cols, g, m, risk, n_tables)
        gap_short, gap_full = values[:, 1] - values[:, 2], values[:, 3] - values[:, 4]
        bias = values[:, 2] - values[:, 4]
        name = f"{kind} {n_rows}x{n_cols} {g}x{m} @{risk:.0%}"
        for label, reduce in (("mean", np.mean), ("sd", np.std)):
            cells = " ".join(f"{reduce(values[:, j]):>11.4f}" for j in range(len(COLUMNS)))
            print(f"{name if label == 'mean' else '':<28} {label:>6} {cells} {reduce(gap_short):>10.4f} "
                  f"{reduce(gap_full):>9.4f} {reduce(bias):>10.4f}")
        print(f"{'':<28} {n_tables} tables in {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
