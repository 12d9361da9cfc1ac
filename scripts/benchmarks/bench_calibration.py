"""Whole calibrations on the paper release's shapes, against a git revision.

    python scripts/benchmarks/bench_calibration.py --against 4c07ee5 [--repeats 1] [--quick] [--risk 0.1]

Calibration was almost all of a release build (docs/releases.md). For each of the
paper release's shapes (``repository/paper.toml``), this calibrates one design
(``random_design(kind, g, m, rng=0)``) to the target risk with:

- ``ref``: the package at revision ``REF`` (``git archive`` into a temporary
  directory, run in a subprocess with ``PYTHONPATH`` pointing there), with the
  number of calibration tables the paper spec gave it before this revision
  (200 tables up to 200x100, 50 for 500x300, 20 for 1000x1000);
- ``now``: the working tree's defaults (``n_tables="auto"``, root finding from
  a first guess), also in a subprocess.

Both run with the MAP criterion (the paper release's). Times are the best of
``--repeats`` alternating runs; the scales found, the final mean errors and the
number of evaluations are printed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

#: (kind, n_rows, n_cols, g, m, calibration tables the paper spec used at 4c07ee5)
PAPER_SHAPES = [
    (kind, n, d, g, m, tables)
    for kind in ("gaussian", "poisson", "bernoulli")
    for n, d, g, m, tables in (
        (50, 50, 3, 3, 200), (200, 100, 3, 2, 200), (100, 80, 4, 3, 200),
        (500, 300, 3, 3, 50), (1000, 1000, 3, 3, 20),
    )
]

_RUN = """
import json, sys, time, inspect
import lbm_bench
from lbm_bench import calibrate_scale, random_design
kind, n, d, g, m, risk, tables = sys.argv[1], *map(int, sys.argv[2:6]), float(sys.argv[6]), sys.argv[7]
design = random_design(kind, g, m, rng=0)
options = {}
if tables != "default":
    options["n_tables"] = int(tables)
if "criterion" in inspect.signature(calibrate_scale).parameters:
    options["criterion"] = "map"
start = time.perf_counter()
result = calibrate_scale(kind, n, d, g, m, risk, design=design, rng=1, **options)
print(json.dumps({"seconds": time.perf_counter() - start, "scale": result.scale,
                  "mean_error": result.mean_error, "n_steps": result.n_steps,
                  "n_tables": result.n_tables}))
"""


def _run(pythonpath: str, config: tuple, risk: float, tables: str) -> dict:
    kind, n, d, g, m = config[:5]
    env = dict(os.environ, PYTHONPATH=pythonpath)
    out = subprocess.run([sys.executable, "-c", _RUN, kind, str(n), str(d), str(g), str(m), str(risk), tables],
                         env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python scripts/benchmarks/bench_calibration.py")
    parser.add_argument("--against", required=True, help="git revision to compare with")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--risk", type=float, default=0.1)
    parser.add_argument("--quick", action="store_true", help="two small shapes, 20 reference tables")
    args = parser.parse_args(argv)
    shapes = [("gaussian", 50, 50, 3, 3, 20), ("bernoulli", 100, 80, 4, 3, 20)] if args.quick else PAPER_SHAPES
    root = Path(__file__).resolve().parents[2]  # the checkout (scripts/benchmarks/ is two below)
    with tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.run(["git", "-C", str(root), "archive", args.against, "lbm_bench"],
                                 check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
        print(f"# whole calibration to risk {args.risk} (MAP criterion), {args.against} (fixed tables) vs "
              f"working tree (defaults); best of {args.repeats}, each in its own process")
        header = (f"{'configuration':<26} {'ref s':>7} {'now s':>7} {'ratio':>6}  "
                  f"{'scale ref / now':<17} {'error ref / now':<15} evaluations ref / now")
        print(header)
        print("-" * len(header))
        totals = [0.0, 0.0]
        for config in shapes:
            best: list[dict | None] = [None, None]
            for _ in range(args.repeats):
                for k, (path, tables) in enumerate(((tmp, str(config[5])), (str(root), "default"))):
                    run = _run(path, config, args.risk, tables)
                    if best[k] is None or run["seconds"] < best[k]["seconds"]:
                        best[k] = run
            ref, now = best
            totals[0] += ref["seconds"]
            totals[1] += now["seconds"]
            kind, n, d, g, m, _ = config
            print(f"{kind + f' {n}x{d} {g}x{m}':<26} {ref['seconds']:>7.2f} {now['seconds']:>7.2f} "
                  f"{ref['seconds'] / now['seconds']:>6.2f}  {ref['scale']:>7.4g} / {now['scale']:<7.4g} "
                  f"{ref['mean_error']:.4f} / {now['mean_error']:.4f} "
                  f"{ref['n_steps']} x {ref['n_tables']} / {now['n_steps']} (final {now['n_tables']})", flush=True)
        print(f"{'all shapes':<26} {totals[0]:>7.2f} {totals[1]:>7.2f} {totals[0] / totals[1]:>6.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
