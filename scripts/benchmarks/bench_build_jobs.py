"""A release's build at ``--jobs 1`` and ``--jobs N``, this checkout against a git revision, side by side.

    python scripts/benchmarks/bench_build_jobs.py --against b05d9fb            # repository/paper.toml
    python scripts/benchmarks/bench_build_jobs.py --against b05d9fb --large    # also a spec with one large table
    python scripts/benchmarks/bench_build_jobs.py --spec repository/mini.toml --jobs 1 2 4

Builds the spec (default: ``repository/paper.toml``) once per ``--jobs`` value with
:func:`~lbm_bench.release.build_release` (what ``lbm-bench build SPEC --jobs N`` runs),
each build in its own process, with this checkout's package and, with ``--against
REV``, the package at git revision ``REV`` (``git archive`` of ``lbm_bench/`` into a
temporary folder), one after the other for each ``--jobs``: old, new. It prints, for
every build, the wall time, its ratio to the first ``--jobs`` of the same package and
the new/old ratio, the **critical path** and whether the bytes are the same.

The critical path is the longest chain of work that must run one step after the other,
read from the build's :class:`~lbm_bench.release.BuildReport`: per configuration, its
calibration's seconds plus the longest of its tables (every table of a configuration
waits for its calibration; the first table runs in the calibration's task). A build
whose wall time is close to its critical path waits on one table. Tables certified
over all the workers (``spread``: from ``CHAIN_TASK_ENTRIES`` entries, issue 33) report
the pool's wall seconds: theirs shrinks with ``--jobs``, a table built as one task does not.

Same bytes: ``SHA256SUMS`` (every file of the release) is compared between the
``--jobs`` values of one package, and the tables' SHA-256 listed by the manifest
between the packages (the manifest itself names lbm-bench's version).

``--large`` also builds a spec with one large table (a sparse Bernoulli 40000x1000
table at density 0.01: 4e7 entries, above ``CHAIN_TASK_ENTRIES``) beside a few small
ones, where the old build certifies the large table in one worker. The machine's
load average (``uptime``) is printed before and after each build: other work on the
same cores moves the numbers, so read them side by side.
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

ROOT = Path(__file__).resolve().parents[2]  # the checkout (scripts/benchmarks/ is two below)

#: Builds ``argv[1]`` into ``argv[2]`` at ``--jobs argv[3]`` and prints the report as JSON.
_RUNNER = """
import json, sys, time
import lbm_bench
from lbm_bench.release import build_release

start = time.perf_counter()
report = build_release(sys.argv[1], sys.argv[2], n_jobs=int(sys.argv[3]))
wall = time.perf_counter() - start
print(json.dumps({"ok": report.ok, "wall": wall, "package": lbm_bench.__file__, "table_seconds": report.table_seconds,
                  "calibration_seconds": report.calibration_seconds,
                  "spread": getattr(report, "spread", []), "summary": report.summary()}))
"""

#: The ``--large`` spec: one sparse table above CHAIN_TASK_ENTRIES entries, and small dense tables.
LARGE_SPEC = """
[release]
name = "one-large-table"
version = "0.1"
seed = 7

[defaults]
criterion = "map"
tolerance = 0.02
n_samples = 400
n_chains = 8
burn_in = 20
screen_samples = 80

[[grid]]
kinds = ["bernoulli"]
shapes = ["40000x1000"]
clusters = ["3x3"]
risks = [0.1]
model_options = { density = 0.01 }

[[grid]]
kinds = ["gaussian", "poisson", "bernoulli"]
shapes = ["100x80"]
clusters = ["3x3"]
risks = [0.1]
replicates = 2
"""


def critical_path(run: dict) -> tuple[float, str]:
    """The longest configuration's seconds (its calibration, then its longest table) and its name.

    >>> critical_path({"calibration_seconds": {"a-1x1": 2.0, "b-1x1": 1.0},
    ...                "table_seconds": {"a-1x1-01": {"gibbs": 1.0}, "a-1x1-02": {"gibbs": 3.0, "floor": float("nan")},
    ...                                  "b-1x1-01": {"gibbs": 4.5}}})
    (5.5, 'b-1x1')
    """
    by_config: dict[str, float] = {}
    for table_id, timings in run["table_seconds"].items():
        seconds = sum(v for v in timings.values() if v == v)  # NaN: a stage not reported
        config = table_id.rsplit("-", 1)[0]
        by_config[config] = max(by_config.get(config, 0.0), seconds)
    paths = {c: run["calibration_seconds"].get(c, 0.0) + s for c, s in by_config.items()}
    longest = max(paths, key=paths.__getitem__)
    return paths[longest], longest


def load() -> str:
    return " ".join(f"{v:.2f}" for v in os.getloadavg())


def build(package: str, spec: Path, out: Path, jobs: int) -> dict:
    """One build in its own process with the package at ``package``; its report and digests."""
    env = dict(os.environ, PYTHONPATH=package)
    before = load()
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", _RUNNER, str(spec), str(out), str(jobs)], env=env, check=True,
                          capture_output=True, text=True, cwd=spec.parent)
    elapsed = time.perf_counter() - start
    run = json.loads(done.stdout.strip().splitlines()[-1])
    if not Path(run["package"]).resolve().is_relative_to(Path(package).resolve()):
        raise SystemExit(f"the build meant to run {package} imported {run['package']}")
    if not run["ok"]:
        raise SystemExit(f"the build at --jobs {jobs} ({package}) failed:\n{run['summary']}")
    manifest = json.loads((out / "manifest.json").read_text())
    tables = "\n".join(f"{t['file']} {t['sha256']}" for t in sorted(manifest["tables"], key=lambda t: t["file"]))
    return {**run, "jobs": jobs, "process": elapsed, "load_before": before, "load_after": load(),
            "all_files": hashlib.sha256((out / "SHA256SUMS").read_bytes()).hexdigest(),
            "tables": hashlib.sha256(tables.encode()).hexdigest()}


def bench(spec: Path, packages: dict[str, str], jobs: list[int], folder: Path) -> bool:
    """Build ``spec`` with every package at every ``jobs``, side by side; print the table; True
    when the bytes agree everywhere."""
    print(f"\n## {spec.name}: build_release(spec, out, n_jobs=J), each build in its own process")
    runs: dict[str, list[dict]] = {name: [] for name in packages}
    for j in jobs:
        for name, package in packages.items():
            run = build(package, spec, folder / f"{spec.stem}-{name}-{j}", j)
            runs[name].append(run)
            print(f"  built: {name} --jobs {j}: {run['wall']:.1f} s (load {run['load_before']} -> "
                  f"{run['load_after']})", flush=True)
    print("| package | --jobs | wall s | vs first --jobs | new/old | critical path s (configuration) | "
          "path/wall | spread tables | load before -> after |")
    print("| --- | ---: | ---: | ---: | ---: | --- | ---: | ---: | --- |")
    for name, rows in runs.items():
        for k, run in enumerate(rows):
            path, longest = critical_path(run)
            old = runs.get("old")
            versus = f"{run['wall'] / old[k]['wall']:.2f}" if old and name != "old" else ""
            print(f"| {name} | {run['jobs']} | {run['wall']:.1f} | {run['wall'] / rows[0]['wall']:.2f} | {versus} | "
                  f"{path:.1f} ({longest}) | {path / run['wall']:.2f} | {len(run['spread'])} | "
                  f"{run['load_before']} -> {run['load_after']} |")
    same = True
    for name, rows in runs.items():
        agree = len({r["all_files"] for r in rows}) == 1
        same &= agree
        print(f"{name}: same SHA256SUMS (every file) at every --jobs: {'yes' if agree else 'NO'} "
              f"({rows[0]['all_files'][:16]})")
    if len(runs) > 1:
        agree = len({r["tables"] for rows in runs.values() for r in rows}) == 1
        same &= agree
        print(f"same tables (manifest SHA-256) in both packages: {'yes' if agree else 'NO'}")
    return same


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--spec", default=str(ROOT / "repository" / "paper.toml"), help="release spec to build")
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2], help="worker counts; the first is the base")
    parser.add_argument("--against", metavar="REV", help="git revision of the old build, run side by side")
    parser.add_argument("--large", action="store_true", help="also a spec with one table above CHAIN_TASK_ENTRIES")
    parser.add_argument("--only-large", action="store_true", help="the --large spec only")
    args = parser.parse_args(argv)
    if any(j < 1 for j in args.jobs):
        parser.error("--jobs takes positive counts")
    print(f"cores {os.cpu_count()}; {subprocess.run(['uptime'], capture_output=True, text=True).stdout.strip()}")
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    same = True
    with tempfile.TemporaryDirectory(prefix="bench_build_jobs_") as tmp:
        folder = Path(tmp)
        packages = {"new": str(ROOT)}
        if args.against:
            archive = subprocess.run(["git", "-C", str(ROOT), "archive", args.against, "lbm_bench"], check=True,
                                     capture_output=True).stdout
            (folder / "old").mkdir()
            subprocess.run(["tar", "-x", "-C", str(folder / "old")], input=archive, check=True)
            packages = {"old": str(folder / "old"), "new": str(ROOT)}
            print(f"old: {args.against}; new: the working tree at {commit}")
        specs = [] if args.only_large else [Path(args.spec).resolve()]
        if args.large or args.only_large:
            large = folder / "one-large-table.toml"
            large.write_text(LARGE_SPEC)
            specs.append(large)
        for spec in specs:
            same &= bench(spec, packages, args.jobs, folder)
    print(f"\n{subprocess.run(['uptime'], capture_output=True, text=True).stdout.strip()}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
