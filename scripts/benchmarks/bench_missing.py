"""What missing entries cost: ``generate_table`` on a complete table and on the same request
with entries missing, side by side (time, peak memory, the mask in memory and on disk).

    python scripts/benchmarks/bench_missing.py [--shape 1000x1000] [--clusters 3x3] [--risk 0.1]
                                               [--missing 0.3] [--mechanism random] [--seeds 5 6 7] [--quick]

Issue 25 asks that a 1000x1000 Gaussian table at 30% missing generate within 1.5x the
time and memory of the complete one. Each request runs in a fresh Python process (so
that its peak resident memory, ``ru_maxrss``, is its own), one after the other with the
same seed; the script prints, per request, the seconds of ``generate_table`` (total,
calibration, Gibbs), the peak RSS, the certified floor, the file's size, and for the
table with missing entries the bytes of its mask per entry in memory (the ``observed``
boolean array) and on disk (the ``observed`` dataset, compressed), then the ratios
(missing / complete), with the CPU seconds (less sensitive than wall time to other
processes on a shared machine) and the calibration's work (its steps and the calibration
tables summed over them: at criterion ``bayes`` each table's short-run floor). With several
``--seeds``, one pair per seed, and the ratio of the summed times: the calibration's
sequential number of tables makes a single pair vary, while the work per table is the
same (the engine's one more statistic channel: 1.5x for Gaussian block sums).
``--quick`` runs a 120x80 table (seconds).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

#: The child process: generate one table, write it, report as one JSON line.
_CHILD = r"""
import json, resource, sys, time
import h5py
from lbm_bench import generate_table, save_table

kind, n, d, g, m, risk, missing, mechanism, seed, path = sys.argv[1:]
options = {} if float(missing) == 0 else {"missing": {"rate": float(missing), "mechanism": mechanism}}
usage = resource.getrusage(resource.RUSAGE_SELF)
cpu_start = usage.ru_utime + usage.ru_stime
start = time.perf_counter()
table = generate_table(kind, int(n), int(d), int(g), int(m), float(risk), rng=int(seed), **options)
seconds = time.perf_counter() - start
usage = resource.getrusage(resource.RUSAGE_SELF)
cpu = usage.ru_utime + usage.ru_stime - cpu_start
save_table(table, path)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
data = table.table_data()
out = {"seconds": seconds, "cpu": cpu, "calibration": table.timings["calibration"], "gibbs": table.timings["gibbs"],
       "peak_rss": peak, "floor": table.bayes_risk.risk, "attempts": table.rejection.attempts,
       "steps": table.calibration.n_steps, "scale": table.scale, "n_missing": data.n_missing,
       "tables": int(table.calibration.history[:, 3].sum()),
       "mask_bytes": int(getattr(data, "observed", None).nbytes) if data.n_missing else 0}
with h5py.File(path, "r") as f:
    out["mask_disk"] = int(f["observed"].id.get_storage_size()) if "observed" in f else 0
print(json.dumps(out))
"""


def run_request(kind: str, shape: tuple[int, int], clusters: tuple[int, int], risk: float, missing: float,
                mechanism: str, seed: int, folder: Path) -> dict:
    """Generate one table in a fresh process; its measures as a dict (file size included)."""
    path = folder / f"{kind}-{missing:g}.h5"
    args = [kind, *map(str, shape), *map(str, clusters), str(risk), str(missing), mechanism, str(seed), str(path)]
    result = subprocess.run([sys.executable, "-c", _CHILD, *args], capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"generate_table failed for missing={missing}:\n{result.stderr}")
    row = json.loads(result.stdout.strip().splitlines()[-1])
    row["file"] = path.stat().st_size
    return row


def _pair(text: str) -> tuple[int, int]:
    a, b = (int(v) for v in text.lower().split("x"))
    return a, b


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kind", default="gaussian")
    parser.add_argument("--shape", type=_pair, default=(1000, 1000))
    parser.add_argument("--clusters", type=_pair, default=(3, 3))
    parser.add_argument("--risk", type=float, default=0.1)
    parser.add_argument("--missing", type=float, default=0.3)
    parser.add_argument("--mechanism", default="random", choices=["random", "block"])
    parser.add_argument("--seeds", type=int, nargs="+", default=[5])
    parser.add_argument("--quick", action="store_true", help="a 120x80 table (seconds)")
    args = parser.parse_args(argv)
    shape = (120, 80) if args.quick else args.shape
    n, d = shape
    print(f"{args.kind} {n}x{d} {args.clusters[0]}x{args.clusters[1]} at {args.risk:g}: complete against "
          f"{args.missing:.0%} missing ({args.mechanism}), seeds {' '.join(map(str, args.seeds))}")
    print("| seed | missing | total s | CPU s | calibration s (steps, tables) | Gibbs s | attempts "
          "| peak RSS MiB "
          "| floor | file MiB | mask B/entry in memory | mask B/entry on disk |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    totals = {0.0: 0.0, args.missing: 0.0}
    cpus = {0.0: 0.0, args.missing: 0.0}
    peaks = {0.0: 0.0, args.missing: 0.0}
    with tempfile.TemporaryDirectory() as tmp:
        for seed in args.seeds:
            rows = {}
            for missing in (0.0, args.missing):
                r = rows[missing] = run_request(args.kind, shape, args.clusters, args.risk, missing, args.mechanism,
                                                seed, Path(tmp))
                totals[missing] += r["seconds"]
                cpus[missing] += r["cpu"]
                peaks[missing] = max(peaks[missing], r["peak_rss"])
                work = f"{r['calibration']:.1f} ({r['steps']}, {r['tables']})"
                print(f"| {seed} | {missing:.0%} | {r['seconds']:.1f} | {r['cpu']:.1f} | {work} | {r['gibbs']:.1f} "
                      f"| {r['attempts']} | {r['peak_rss'] / 2**20:.0f} | {r['floor']:.4f} | {r['file'] / 2**20:.2f} "
                      f"| {r['mask_bytes'] / (n * d):.2f} | {r['mask_disk'] / (n * d):.3f} |", flush=True)
            base, new = rows[0.0], rows[args.missing]
            print(f"| {seed} | ratio | {new['seconds'] / base['seconds']:.2f}x | {new['cpu'] / base['cpu']:.2f}x "
                  f"| | | | {new['peak_rss'] / base['peak_rss']:.2f}x | | {new['file'] / base['file']:.2f}x | | |")
    print(f"ratio (missing / complete) over the seeds: time {totals[args.missing] / totals[0.0]:.2f}x (summed), "
          f"CPU {cpus[args.missing] / cpus[0.0]:.2f}x (summed), "
          f"peak RSS {peaks[args.missing] / peaks[0.0]:.2f}x (largest)")


if __name__ == "__main__":
    main()
