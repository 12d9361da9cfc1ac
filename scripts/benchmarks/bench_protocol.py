"""Benchmarks of the protocol's stages: calibration, whole tables, memory.

Baselines run in the same process as the measured code:

- calibration: the mean apparent error of the MAP over the tables at one
  scale (one dichotomy step), baseline with the tables run one by one
  (``batch_bytes=1``) and full block-sum products at every step of
  Algorithm 1 (``incremental=False``), versus the defaults (cache-sized
  batches of tables, block sums updated for the changed labels). Every table
  draws its MAP starts from its own stream, so both runs must give the same
  errors: the row says whether they did. Best of 3 alternating runs;
- whole table: ``generate_table`` end to end (Gaussian 200x100 at 5%, 10% and
  20% risk, Poisson 300x200 4x3 at 10%), baseline with the defaults of commit
  4c07ee5 (the paper's dichotomy from scale 1 on a fixed 200 tables, the MAP's
  risk as target: ``calibration_method="bisection", n_calibration_tables=200,
  criterion="map"``), versus today's defaults (root finding from a first guess of
  the scale, sequential number of tables, the floor as target); the detail gives
  both scales, both certified risks ("old / new"), the evaluations and the attempts;
- batch sizes (``--batches``): one dichotomy step with 1, 2, 4, ... tables
  per batch, the measurement behind the default batch budget;
- memory: a 2000x2000 table with 10x10 clusters and 2,000 label sets, built
  in a subprocess whose peak resident memory (``ru_maxrss``) is reported.

Usage::

    python scripts/benchmarks/bench_protocol.py            # calibration step and whole tables
    python scripts/benchmarks/bench_protocol.py --quick    # tiny version (seconds)
    python scripts/benchmarks/bench_protocol.py --memory   # plus the 2000x2000 memory run
    python scripts/benchmarks/bench_protocol.py --batches  # tables per batch in calibration
    lbm-bench build repository/paper.toml --out paper --jobs 2 --timings   # per configuration

Profiling (where a table's time goes; ``python -m lbm_bench`` is the CLI)::

    python -m cProfile -s tottime scripts/benchmarks/bench_protocol.py --quick | head -40
    python -m cProfile -o gen.prof -m lbm_bench generate --kind poisson --shape 200x100 \
        --clusters 3x3 --risk 0.2 --seed 1 -o /tmp/t.h5 --force
    python -c "import pstats; pstats.Stats('gen.prof').sort_stats('tottime').print_stats(25)"
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from lbm_bench import calibrate_scale, generate_table

# The internal this benchmark measures (one calibration step over a batch of tables):
# the one place it reaches past the public API.
from lbm_bench.protocol.common_random_numbers import CommonRandomNumbers

sys.path.insert(0, str(Path(__file__).resolve().parent))  # sibling modules (scripts/README.md)

from _benchmarks import peak_mib  # noqa: E402

__all__ = ["batch_size_lines", "calibration_rows", "memory_row", "whole_table_rows"]


def _timed(function: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    value = function()
    return time.perf_counter() - start, value


def calibration_rows(quick: bool = False) -> list[dict]:
    """Time one dichotomy step (all tables at one scale), per-table loop vs batched."""
    configs = [("gaussian", 50, 50, 3, 3, 200), ("bernoulli", 200, 100, 3, 3, 200),
               ("gaussian", 1000, 1000, 3, 3, 20)]
    if quick:
        configs = [("gaussian", 30, 30, 2, 2, 20)]
    rows = []
    for kind, n, d, g, m, n_tables in configs:
        calibration = calibrate_scale(kind, n, d, g, m, 0.1, n_tables=min(n_tables, 20), criterion="map", rng=0)
        seed = np.random.SeedSequence(1)
        one = CommonRandomNumbers(calibration.design, n, d, n_tables, seed, batch_bytes=1,
                                  incremental=False)
        batched = CommonRandomNumbers(calibration.design, n, d, n_tables, seed)
        base, new = float("inf"), float("inf")
        for _ in range(1 if quick else 3):  # alternate, keep the best of each
            seconds, errors_one = _timed(partial(one.apparent_errors, calibration.scale, 10))
            base = min(base, seconds)
            seconds, errors_batched = _timed(partial(batched.apparent_errors, calibration.scale, 10))
            new = min(new, seconds)
        rows.append({
            "benchmark": "calibration step", "config": f"{kind} {n}x{d} {g}x{m}, {n_tables} tables",
            "baseline_s": base, "new_s": new, "ratio": base / new,
            "peak_mib": peak_mib(partial(batched.apparent_errors, calibration.scale, 10)),
            "detail": {"mean error": f"{errors_batched.mean():.4f}",
                       "identical": "yes" if np.array_equal(errors_one, errors_batched) else "NO"},
        })
    return rows


def batch_size_lines(quick: bool = False, repeats: int = 3) -> list[str]:
    """Time one dichotomy step for several numbers of tables per batch (``--batches``):
    the measurement behind the calibration's batch budget."""
    configs = [("gaussian", 50, 50, 200), ("poisson", 100, 100, 200), ("bernoulli", 200, 100, 200),
               ("gaussian", 500, 300, 50), ("gaussian", 1000, 1000, 20)]
    sizes = (1, 2, 4, 8, 16, 32, 64)
    if quick:
        configs, sizes = [("gaussian", 30, 30, 8)], (1, 8)
    lines = [f"seconds per dichotomy step (best of {repeats}) by tables per batch; * = default budget",
             f"{'configuration':<34}" + "".join(f"{size:>8}" for size in sizes)]
    for kind, n, d, n_tables in configs:
        calibration = calibrate_scale(kind, n, d, 3, 3, 0.1, n_tables=min(n_tables, 20), criterion="map", rng=0)
        crn = CommonRandomNumbers(calibration.design, n, d, n_tables, np.random.SeedSequence(1))
        default = len(crn.batches()[0])  # with the default budget
        cells = []
        for size in sizes:
            if size > n_tables:
                cells.append(f"{'-':>8}")
                continue
            crn.batch_bytes = size * crn.bytes_per_table  # same tables and noise, other batches
            step = partial(crn.apparent_errors, calibration.scale, 10)
            best = min(_timed(step)[0] for _ in range(repeats))
            cells.append(f"{best:>7.3f}" + ("*" if size == default else " "))
        lines.append(f"{f'{kind} {n}x{d} 3x3, {n_tables} tables':<34}" + "".join(cells)
                     + (f"  (default {default})" if default not in sizes else ""))
    return lines


def whole_table_rows(quick: bool = False) -> list[dict]:
    """Time ``generate_table`` end to end, the old calibration against the new, in one process.

    Baseline: the defaults of commit 4c07ee5, the paper's dichotomy from scale 1
    on a fixed 200 tables calibrating the MAP's risk (``calibration_method="bisection",
    n_calibration_tables=200, criterion="map"``); new: today's defaults (root finding
    from a first guess, sequential number of tables, the floor as target with its
    gap measured on a few tables). Everything else is the defaults in both. The
    detail's ``risks`` are each table's certified risk (the MAP's, then the floor).
    """
    configs = [("gaussian", 200, 100, 3, 3, risk) for risk in (0.05, 0.1, 0.2)]
    configs.append(("poisson", 300, 200, 4, 3, 0.1))
    options: dict = {}
    baseline_tables = 200
    if quick:
        configs = [("gaussian", 30, 30, 2, 2, risk) for risk in (0.05, 0.1, 0.2)]
        options = dict(n_samples=200, tolerance=0.05)
        baseline_tables = 20
    rows = []
    for kind, n, d, g, m, risk in configs:
        baseline = partial(generate_table, kind, n, d, g, m, risk, rng=3, calibration_method="bisection",
                           n_calibration_tables=baseline_tables, criterion="map", **options)
        new = partial(generate_table, kind, n, d, g, m, risk, rng=3, **options)

        base, table_base = _timed(baseline)
        now, table = _timed(new)
        history = table.calibration.history
        rows.append({
            "benchmark": "whole table", "config": f"{kind} {n}x{d} {g}x{m}, risk {risk}",
            "baseline_s": base, "new_s": now, "ratio": base / now,
            "peak_mib": peak_mib(new),
            "detail": {**{k: round(v, 2) for k, v in table.timings.items()},
                       "scales": f"{table_base.calibration.scale:.4g} / {table.calibration.scale:.4g}",
                       "risks": f"{table_base.certified_risk.risk:.4f} / {table.certified_risk.risk:.4f}",
                       "evaluations": f"{table_base.calibration.n_steps} x {baseline_tables} / "
                                      f"{len(history)} (up to {int(history[:, 3].max())} tables)"},
            "attempts": f"{table_base.rejection.attempts} / {table.rejection.attempts}",
        })
    return rows


_MEMORY_SCRIPT = """
import json, resource, sys, time
import lbm_bench
start = time.perf_counter()
table = lbm_bench.generate_table("gaussian", 2000, 2000, 10, 10, 0.1, tolerance=0.05,
                                 n_calibration_tables=int(sys.argv[1]), n_init=2, rng=1)
lbm_bench.save_table(table, sys.argv[2])
print(json.dumps({"seconds": time.perf_counter() - start,
                  "maxrss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "risk": table.risk.risk, "gibbs_rows_dtype": str(table.gibbs.rows.dtype),
                  "n_samples": table.gibbs.n_samples}))
"""


def memory_row(path: str, n_calibration_tables: int = 10) -> dict:
    """Build a 2000x2000, 10x10-cluster table with 2,000 label sets in a subprocess;
    report its peak resident memory."""
    result = subprocess.run([sys.executable, "-c", _MEMORY_SCRIPT, str(n_calibration_tables), path],
                            capture_output=True, text=True, check=True)
    data = json.loads(result.stdout.strip().splitlines()[-1])
    return {"benchmark": "memory", "config": "gaussian 2000x2000 10x10, 2000 label sets",
            "baseline_s": float("nan"), "new_s": data["seconds"], "ratio": float("nan"),
            "peak_mib": data["maxrss_mib"], "detail": data}


def format_rows(rows: list[dict]) -> str:
    """A fixed-width table of benchmark rows."""
    header = f"{'benchmark':<17} {'configuration':<42} {'base s':>8} {'new s':>8} {'ratio':>6} {'peak MiB':>9}  detail"
    lines = [header, "-" * len(header)]
    for r in rows:
        base = "-" if r["baseline_s"] != r["baseline_s"] else f"{r['baseline_s']:.3f}"
        ratio = "-" if r["ratio"] != r["ratio"] else f"{r['ratio']:.2f}"
        detail = r.get("detail", "")
        if isinstance(detail, dict):
            keys = ("calibration", "rejection", "gibbs", "risk", "mean error", "identical", "scales",
                    "risks", "evaluations")
            detail = ", ".join(f"{k} {v}" for k, v in detail.items() if k in keys)
        if "attempts" in r:
            detail = f"{detail}; attempts {r['attempts']}"
        lines.append(f"{r['benchmark']:<17} {r['config']:<42} {base:>8} {r['new_s']:>8.3f} {ratio:>6} "
                     f"{r['peak_mib']:>9.1f}  {detail}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Print the protocol benchmarks (``--quick`` for a tiny version, ``--memory`` to add
    the 2000x2000 10x10 memory run, a few minutes)."""
    import argparse
    import os
    import platform
    import tempfile

    parser = argparse.ArgumentParser(prog="python scripts/benchmarks/bench_protocol.py")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--memory", action="store_true")
    parser.add_argument("--batches", action="store_true",
                        help="only time a dichotomy step for several numbers of tables per batch")
    args = parser.parse_args(argv)
    if args.batches:
        print("\n".join(batch_size_lines(args.quick)))
        return 0
    print(f"# {platform.machine()}, {os.cpu_count()} cores; calibration step, whole table, memory")
    rows = calibration_rows(args.quick) + whole_table_rows(args.quick)
    if args.memory:
        with tempfile.TemporaryDirectory() as tmp:
            rows.append(memory_row(os.path.join(tmp, "t.h5")))
    print(format_rows(rows))
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
