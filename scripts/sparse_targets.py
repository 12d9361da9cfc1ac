"""The large sparse tables of issue 16, built through the API (run under ``/usr/bin/time -v``).

    python scripts/sparse_targets.py bernoulli   # 100000x10000, 3x3, 10% risk, density 0.01, seed 1
    python scripts/sparse_targets.py poisson     # 50000x5000, 4x3, 10% risk, density 0.02, effects, seed 2

Prints the table's summary, the seconds per stage, the number of stored entries
and the peak resident memory of the process (``ru_maxrss``).
"""

from __future__ import annotations

import argparse
import resource
import sys
import time

from lbm_bench import generate_table

TARGETS = {
    "bernoulli": (("bernoulli", 100_000, 10_000, 3, 3, 0.1), {"density": 0.01, "rng": 1}),
    "poisson": (("poisson", 50_000, 5_000, 4, 3, 0.1), {"density": 0.02, "effects": True, "rng": 2}),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("target", choices=sorted(TARGETS))
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    args = parser.parse_args(argv)
    positional, options = TARGETS[args.target]
    start = time.perf_counter()
    table = generate_table(*positional, progress=not args.quiet, **options)
    seconds = time.perf_counter() - start
    print(table.summary())
    n_rows, n_cols = table.shape
    print(f"stored entries {table.data.nnz} (density {table.data.nnz / (n_rows * n_cols):.5f});"
          f" data {type(table.data).__name__}")
    print("stages (s): " + ", ".join(f"{k} {v:.1f}" for k, v in table.timings.items()))
    print(f"calibration: {table.calibration.n_steps} steps, history (scale, mean error, sd, tables):")
    for row in table.calibration.history:
        print("   " + "  ".join(f"{v:.5g}" for v in row))
    print(f"total {seconds:.1f} s; peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20:.2f} GiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
