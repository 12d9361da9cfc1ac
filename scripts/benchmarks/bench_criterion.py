"""What the floor criterion costs: ``generate_table`` at its defaults with
``criterion="bayes"`` (the floor) against ``criterion="map"`` (the paper's
protocol), same seeds, interleaved, in one process.

For every configuration and seed both criteria generate a table from scratch
(calibration included); printed per configuration: the mean wall-clock seconds
(calibration, rejection sampling, Gibbs runs, floor certificates), the
acceptance rate (tables over candidates, all seeds pooled), and the mean
certified risk, MAP risk and floor of the kept tables.

Usage: ``python scripts/benchmarks/bench_criterion.py [--quick] [--seeds N]``
(full: Gaussian, Poisson, Bernoulli at 50x50 3x3 and 200x100 3x2, targets 10%
and 20%, 3 seeds; quick: Bernoulli 50x50 3x3 at 20%, 1 seed).
Timings are noisy on a shared machine: compare the two columns of a row.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from lbm_bench import generate_table

FULL = [(kind, shape, clusters, risk)
        for kind in ("gaussian", "poisson", "bernoulli")
        for shape, clusters in (((50, 50), (3, 3)), ((200, 100), (3, 2)))
        for risk in (0.1, 0.2)]
QUICK = [("bernoulli", (50, 50), (3, 3), 0.2)]


def main(argv=None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--seeds", type=int, default=None)
    args = parser.parse_args(argv)
    configs = QUICK if args.quick else FULL
    n_seeds = args.seeds or (1 if args.quick else 3)
    rows = []
    print(f"{'configuration':<32} {'criterion':<9} {'seconds':>8} {'calib s':>8} {'reject s':>8} "
          f"{'gibbs s':>8} {'floor s':>8} {'accept':>7} {'certified':>9} {'MAP':>7} {'floor':>7}")
    for kind, shape, clusters, risk in configs:
        stats: dict[str, dict[str, list]] = {c: {} for c in ("bayes", "map")}
        for seed in range(n_seeds):
            for criterion in ("bayes", "map"):
                start = time.perf_counter()
                table = generate_table(kind, *shape, *clusters, risk, criterion=criterion, rng=1000 + seed)
                s = stats[criterion]
                s.setdefault("seconds", []).append(time.perf_counter() - start)
                for key in ("calibration", "rejection", "gibbs", "floor"):
                    s.setdefault(f"{key}_s", []).append(table.timings.get(key, 0.0))
                s.setdefault("attempts", []).append(table.rejection.attempts)
                s.setdefault("certified", []).append(table.certified_risk.risk)
                s.setdefault("map", []).append(table.risk.risk)
                s.setdefault("floor", []).append(table.bayes_risk.risk)
        name = f"{kind} {shape[0]}x{shape[1]} {clusters[0]}x{clusters[1]} @{risk:.0%}"
        for criterion, s in stats.items():
            row = {"config": name, "criterion": criterion, "tables": n_seeds,
                   "acceptance": n_seeds / float(np.sum(s["attempts"])),
                   **{k: float(np.mean(v)) for k, v in s.items() if k != "attempts"}}
            rows.append(row)
            print(f"{name:<32} {criterion:<9} {row['seconds']:>8.2f} {row['calibration_s']:>8.2f} "
                  f"{row['rejection_s']:>8.2f} {row['gibbs_s']:>8.2f} {row['floor_s']:>8.2f} {row['acceptance']:>7.2f} "
                  f"{row['certified']:>9.4f} {row['map']:>7.4f} {row['floor']:>7.4f}", flush=True)
    for criterion in ("bayes", "map"):
        mine = [r for r in rows if r["criterion"] == criterion]
        print(f"all ({criterion}): mean seconds {np.mean([r['seconds'] for r in mine]):.2f}, "
              f"acceptance {np.mean([r['acceptance'] for r in mine]):.2f}")
    return rows


if __name__ == "__main__":
    main()
