"""What the calibrations of a release spec cost: tables, entries, seconds, precision.

    python scripts/benchmarks/calibration_cost.py repository/paper.toml [--jobs 2]
    PYTHONPATH=/path/to/old/checkout python scripts/benchmarks/calibration_cost.py SPEC   # older code

Calibrates every configuration of the spec exactly as ``lbm-bench build`` does
(``calibrate_scale`` with the configuration's settings and calibration seed,
BLAS on one thread, the configurations spread over ``--jobs`` processes), and
prints per configuration, costliest first: seconds, evaluations, the tables
computed (a scale's tables counted once, at the most evaluated there), the final
number of tables, the calibrated mean risk and its standard error, and how far
the design's first guess of the scale was from the calibrated one
(``log(guess / scale)``, :func:`lbm_bench.protocol.separation.first_guess`). The total
line gives the calibration seconds (wall and CPU) and the **table entries
calibrated** (tables computed times ``n_rows * n_cols``): unlike seconds, that
count does not depend on the machine's load, so two versions of the code can
be compared on a shared machine; the last line the mean and standard deviation of
the first guess's log ratio over the configurations. Only APIs that older checkouts
have are used.
"""

from __future__ import annotations

import argparse
import math
import time


def _calibrate(config):
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        start, cpu = time.perf_counter(), time.process_time()
        if hasattr(config, "request"):  # a table request and its settings (since the house's second pass)
            from lbm_bench.protocol.calibration import calibrate

            result = calibrate(config.request, config.settings, rng=config.calibration_seed)
        else:  # older checkouts: the positional request and the settings unpacked
            from lbm_bench.models.design import resolve_effects
            from lbm_bench.protocol.calibration import calibrate_scale

            s = config.settings
            result = calibrate_scale(
                config.kind, *config.shape, *config.clusters, config.risk,
                n_tables=s.n_calibration_tables, tolerance=s.calibration_tolerance, n_init=s.n_init,
                method=s.calibration_method, criterion=s.criterion,
                rng=config.calibration_seed, **resolve_effects(config.model_options, *config.shape),
            )
        return config.config_id, config.shape, result, time.perf_counter() - start, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("spec")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    from joblib import Parallel, delayed

    from lbm_bench.release.spec import read_spec

    configs = {t.config_id: t for t in read_spec(args.spec).tables}
    start = time.perf_counter()
    outcomes = Parallel(n_jobs=args.jobs)(delayed(_calibrate)(c) for c in configs.values())
    wall = time.perf_counter() - start
    from lbm_bench.protocol.separation import first_guess

    seconds = cpu_seconds = entries = 0.0
    log_ratios = []
    for config_id, (n, d), result, sec, cpu in sorted(outcomes, key=lambda o: -o[3]):
        per_scale: dict[float, int] = {}
        for scale, _, _, n_tables in result.history:
            per_scale[scale] = max(per_scale.get(scale, 0), int(n_tables))
        computed = sum(per_scale.values())
        seconds += sec
        cpu_seconds += cpu
        entries += computed * n * d
        se = result.error_std / math.sqrt(result.n_tables)
        off = result.mean_error - result.target_risk
        guess = math.log(first_guess(result.design, n, d, result.target_risk)[0] / result.scale)
        log_ratios.append(guess)
        print(f"{config_id:32s} {sec:6.2f} s (CPU {cpu:6.2f} s)  evaluations {len(result.history):2d}  "
              f"tables computed {computed:4d}  final n {result.n_tables:3d}  mean {result.mean_error:.4f} "
              f"({off:+.4f})  se {se:.4f}  guess {guess:+.3f}")
    print(f"total: {len(outcomes)} configurations, calibration {seconds:.1f} s (CPU {cpu_seconds:.1f} s) over "
          f"{args.jobs} process(es) (wall {wall:.1f} s), table entries calibrated {entries / 1e6:.1f} million "
          f"({entries:.0f})")
    mean = sum(log_ratios) / len(log_ratios)
    sd = math.sqrt(sum((r - mean) ** 2 for r in log_ratios) / max(len(log_ratios) - 1, 1))
    print(f"first guess: log(guess / calibrated scale) mean {mean:+.3f}, sd {sd:.3f} over {len(log_ratios)} "
          "configurations")


if __name__ == "__main__":
    main()
