"""One table on every core: ``lbm-bench generate`` at ``--jobs 1`` and ``--jobs N``, side by side.

    python scripts/benchmarks/bench_chains_jobs.py            # issue 33's table, --jobs 1 and 2
    python scripts/benchmarks/bench_chains_jobs.py --shape 2000x1000 --density 0.05 --jobs 1 2

Runs the same ``lbm-bench generate`` command (default: issue 33's Bernoulli
100000x10000 table at density 0.01, 3x3 clusters, risk 0.1, seed 1) once per
``--jobs`` value, each in its own process, checks that the output files are
byte-identical, and prints the wall time of the whole command and of its phases
(the calibration, and the Gibbs runs: the screening runs and the certifying run,
whose chains run as tasks over the workers), the ratio of each to ``--jobs 1``
(issue 33 asks for at most 0.6 at ``--jobs 2``) and the serial fraction that ratio
implies by Amdahl's law (``s = (N r - 1) / (N - 1)`` for ``N`` workers and ratio
``r``; issue 33 asks for at most 10% for the certifying run). The phases' seconds
are the table's own ``timings`` (not stored in the file), read in the command's
process. Note the machine's load (printed) beside the numbers: the workers share
its cores with whatever else runs.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

#: Runs ``lbm-bench generate ARGS`` in this process and writes the table's timings to a JSON file.
_RUNNER = """
import json, sys
import lbm_bench.protocol.generate as generate
from lbm_bench.cli import main

original = generate.generate_table

def timed(*args, **kwargs):
    table = original(*args, **kwargs)
    with open(sys.argv[1], "w") as out:
        json.dump(table.timings, out)
    return table

generate.generate_table = timed
sys.exit(main(sys.argv[2:]))
"""

PHASES = (("calibration", "calibration"), ("gibbs", "Gibbs runs (certifying + screening)"))


def serial_fraction(ratio: float, n_jobs: int) -> float:
    """Amdahl's serial fraction implied by a time ratio ``t_N / t_1`` on ``n_jobs`` workers.

    >>> serial_fraction(0.5, 2), serial_fraction(1.0, 2), round(serial_fraction(0.6, 2), 3)
    (0.0, 1.0, 0.2)
    """
    return (n_jobs * ratio - 1) / (n_jobs - 1)


def run(args: argparse.Namespace, jobs: int, folder: Path) -> dict:
    """One command at ``--jobs jobs``: wall seconds, the phases' seconds and the file's SHA-256."""
    out, timings = folder / f"jobs{jobs}.h5", folder / f"jobs{jobs}.json"
    command = ["generate", "--kind", args.kind, "--shape", args.shape, "--clusters", args.clusters,
               "--risk", str(args.risk), "--seed", str(args.seed), "--jobs", str(jobs), "-o", str(out), "--force",
               "-q"]
    if args.density is not None:
        command += ["--density", str(args.density)]
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", _RUNNER, str(timings), *command], check=True)
    wall = time.perf_counter() - start
    digest = hashlib.sha256(out.read_bytes()).hexdigest()
    return {"jobs": jobs, "total": wall, **json.loads(timings.read_text()), "sha256": digest}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kind", default="bernoulli")
    parser.add_argument("--shape", default="100000x10000")
    parser.add_argument("--clusters", default="3x3")
    parser.add_argument("--risk", type=float, default=0.1)
    parser.add_argument("--density", type=float, default=0.01)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2], help="worker counts; the first is the baseline")
    args = parser.parse_args(argv)
    if any(j < 1 for j in args.jobs) or len(args.jobs) < 2:
        parser.error("--jobs needs at least two positive counts (the first is the baseline)")
    print(f"lbm-bench generate --kind {args.kind} --shape {args.shape} --clusters {args.clusters} "
          f"--risk {args.risk} --density {args.density} --seed {args.seed}")
    print(f"cores {os.cpu_count()}; load average before: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    with tempfile.TemporaryDirectory(prefix="bench_chains_jobs_") as tmp:
        runs = [run(args, jobs, Path(tmp)) for jobs in args.jobs]
    print(f"load average after: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    base = runs[0]
    print("| --jobs | part | seconds | ratio to --jobs {} | serial fraction (Amdahl) |".format(base["jobs"]))
    print("| ---: | --- | ---: | ---: | ---: |")
    for r in runs:
        for key, name in (("total", "whole command"), *PHASES):
            ratio = r[key] / base[key] if base[key] > 0 else float("nan")
            n = r["jobs"] / base["jobs"]
            fraction = f"{serial_fraction(ratio, n):.1%}" if n > 1 else ""
            print(f"| {r['jobs']} | {name} | {r[key]:.1f} | {ratio:.2f} | {fraction} |")
    same = len({r["sha256"] for r in runs}) == 1
    print(f"same file bytes at every --jobs: {'yes' if same else 'NO'} ({base['sha256'][:16]})")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
