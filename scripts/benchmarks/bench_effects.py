"""A sparse Poisson table with row and column effects: its draw and its MAP, this checkout
against a git revision, each in its own process.

    python scripts/benchmarks/bench_effects.py --against 35fb714                   # 1e5 x 1e4 at 1%
    python scripts/benchmarks/bench_effects.py --against HEAD --shape 3000x800     # seconds

For each package (this checkout's; with ``--against REV``, also the package at git revision
``REV``, from ``git archive`` into a temporary folder), in a process of its own: the sparse
Poisson design of ``--clusters`` blocks with effects for the shape (``random_design(...,
density=DENSITY, effects=SHAPE, rng=1)``) at scale ``--scale``, labels and one noise drawn
from seed 5, then

- ``draw``: ``table_from_noise`` of that noise, twice (the first draws the bands without
  keeping them when the table is large, the second from the bands it then keeps), with
  ``draw_noise`` itself (what the calibration and every candidate of ``lbm-bench generate
  --effects`` do);
- ``MAP``: ``map_labels`` of the table (10 random starts, one job), whose X-only starts score
  every stored entry with its row's and column's effects.

It prints the CPU seconds of each part, the best of ``--repeat`` runs (old and new in turn),
the new/old ratios, and whether both packages give the same table (SHA-256 of the CSR
arrays) and the same MAP labels: a change of speed only must give the same bytes.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # the checkout (scripts/benchmarks/ is two below)

#: Runs the parts in a process whose ``PYTHONPATH`` names one package; prints JSON.
_RUNNER = """
import hashlib, json, sys, time
import numpy as np
import lbm_bench
from lbm_bench.inference.classifier import map_labels
from lbm_bench.models.design import random_design

n, d, g, m = (int(v) for v in sys.argv[1:5])
density, scale = float(sys.argv[5]), float(sys.argv[6])
design = random_design("poisson", g, m, rng=1, density=density, effects=(n, d))
model = design.model(scale)
rng = np.random.default_rng(5)
z, w = model.sample_labels(n, d, rng=rng)
start = time.process_time()
noise = model.draw_noise(n, d, rng=rng)
X = model.table_from_noise(noise, z, w)
again = model.table_from_noise(noise, z, w)
draw = time.process_time() - start
table = hashlib.sha256()
for array in (X.indptr, X.indices, X.data, again.indptr, again.indices, again.data):
    table.update(np.ascontiguousarray(array).tobytes())
start = time.process_time()
result = map_labels(model, X, n_init=10, jobs=1, rng=rng)
seconds = time.process_time() - start
labels = hashlib.sha256(np.ascontiguousarray(result.rows).tobytes() + np.ascontiguousarray(result.cols).tobytes())
print(json.dumps({"draw": draw, "map": seconds, "nnz": int(X.nnz), "table": table.hexdigest(),
                  "labels": labels.hexdigest(), "package": lbm_bench.__file__}))
"""


def run(package: str, args: argparse.Namespace) -> dict:
    """One run of the parts with the package at ``package`` (its own process)."""
    n, d = args.shape
    g, m = args.clusters
    done = subprocess.run([sys.executable, "-c", _RUNNER, str(n), str(d), str(g), str(m), str(args.density),
                           str(args.scale)], env=dict(os.environ, PYTHONPATH=package), check=True,
                          capture_output=True, text=True, cwd=package)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    if not Path(result["package"]).resolve().is_relative_to(Path(package).resolve()):
        raise SystemExit(f"the run meant to use {package} imported {result['package']}")
    return result


def pair(text: str) -> tuple[int, int]:
    """``"AxB"`` -> (A, B), positive integers."""
    try:
        a, b = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected AxB (two positive integers), got {text!r}") from None
    if a < 1 or b < 1:
        raise argparse.ArgumentTypeError(f"expected AxB (two positive integers), got {text!r}")
    return a, b


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", metavar="REV", help="git revision of the old package, run side by side")
    parser.add_argument("--shape", type=pair, default=(100_000, 10_000), help="rows x columns (default 100000x10000)")
    parser.add_argument("--clusters", type=pair, default=(3, 3), help="row x column clusters (default 3x3)")
    parser.add_argument("--density", type=float, default=0.01, help="the design's density (default 0.01)")
    parser.add_argument("--scale", type=float, default=0.3, help="the design's scale (default 0.3)")
    parser.add_argument("--repeat", type=int, default=2, help="runs of each package, the best kept (default 2)")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error(f"--repeat takes a positive count, got {args.repeat}")
    if not 0 < args.density <= 1:
        parser.error(f"--density takes a value in (0, 1], got {args.density}")
    print(f"cores {os.cpu_count()}; load average {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    with tempfile.TemporaryDirectory(prefix="bench_effects_") as tmp:
        packages = {"new": str(ROOT)}
        if args.against:
            archive = subprocess.run(["git", "-C", str(ROOT), "archive", args.against, "lbm_bench"], check=True,
                                     capture_output=True).stdout
            subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
            packages = {"old": tmp, "new": str(ROOT)}
        runs: dict[str, list[dict]] = {name: [] for name in packages}
        for _ in range(args.repeat):
            for name, package in packages.items():
                runs[name].append(run(package, args))
    n, d = args.shape
    nnz = runs["new"][0]["nnz"]
    print(f"sparse Poisson with effects, {n}x{d}, {args.clusters[0]}x{args.clusters[1]} clusters, density "
          f"{args.density}, scale {args.scale}: {nnz:,} stored entries; CPU seconds, best of {args.repeat}")
    print("| part | " + " | ".join(packages) + (" | new/old |" if "old" in packages else " |"))
    print("| --- | " + " | ".join("---:" for _ in packages) + (" | ---: |" if "old" in packages else " |"))
    for part, label in (("draw", "draw (noise, table twice)"), ("map", "MAP (10 random starts)")):
        best = {name: min(r[part] for r in rows) for name, rows in runs.items()}
        ratio = f" | {best['new'] / best['old']:.2f}" if "old" in best else ""
        print(f"| {label} | " + " | ".join(f"{best[name]:.2f}" for name in packages) + ratio + " |")
    same = True
    for key, what in (("table", "table (CSR arrays)"), ("labels", "MAP labels")):
        digests = {r[key] for rows in runs.values() for r in rows}
        same &= len(digests) == 1
        print(f"same {what} in every run{' and both packages' if 'old' in runs else ''}: "
              f"{'yes' if len(digests) == 1 else 'NO'} ({runs['new'][0][key][:16]})")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
