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
over all the workers (``spread``: from ``LARGE_TABLE_ENTRIES`` entries, issue 33) report
the pool's wall seconds: theirs shrinks with ``--jobs``, a table built as one task does not.

Same bytes: ``SHA256SUMS`` (every file of the release) is compared between the
``--jobs`` values of one package, and the tables' SHA-256 listed by the manifest
between the packages (the manifest itself names lbm-bench's version).

``--large`` also builds a spec with one large table (a sparse Bernoulli 40000x1000
table at density 0.01: 4e7 entries, above ``LARGE_TABLE_ENTRIES``) beside a few small
ones, where the old build certifies the large table in one worker. The machine's
load average (``uptime``) is printed before and after each build: other work on the
same cores moves the numbers, so read them side by side.

``--repeat N`` builds every (package, ``--jobs``) N times, in rounds (each round: old then
new at every ``--jobs``), so that the two packages meet the machine's drift alike: a
2-core machine's speed moves by 10-15% over minutes, more than many a change. The table
then gives each wall time as the median of the rounds (with their range), the new/old
ratio as the median of the rounds' ratios (old and new of one round, built one after the
other) with every round's ratio, and the critical path of the median build.

``--seeds S ...`` builds the spec once per release seed (its ``[release] seed`` replaced,
in a copy beside the temporary builds): what a release costs depends on its draws (the
candidates that rejection sampling tries, a fifth more or less from one seed to another),
and two commits whose draws differ are compared fairly over several seeds. A last table
sums the seeds: each package's wall time and candidates, and the new/old ratio of the sums.

    python scripts/benchmarks/bench_build_jobs.py --against d94874f --jobs 2 --seeds 1 2 3 4 5
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

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
                  "spread": getattr(report, "spread", []), "summary": report.summary(),
                  "candidates": sum(getattr(report, "attempts", {}).values())}))
"""

#: The ``--large`` spec: one sparse table above LARGE_TABLE_ENTRIES entries, and small dense tables.
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


def with_seed(spec: Path, seed: int, folder: Path) -> Path:
    """A copy of ``spec`` in ``folder`` whose ``[release] seed`` is ``seed`` (the rest verbatim)."""
    text = spec.read_text(encoding="utf-8")
    if "seed" not in tomllib.loads(text).get("release", {}):
        raise SystemExit(f"{spec} has no [release] seed to replace")
    header = re.search(r"^\[release\][ \t]*$", text, flags=re.MULTILINE)
    after = re.search(r"^\[", text[header.end():], flags=re.MULTILINE)
    end = header.end() + (after.start() if after else len(text) - header.end())
    section, count = re.subn(r"^(seed[ \t]*=[ \t]*)\d+", rf"\g<1>{seed}", text[header.end():end], count=1,
                             flags=re.MULTILINE)
    if count != 1:
        raise SystemExit(f"{spec}: its [release] seed is not written as 'seed = <integer>' on a line of its own")
    copy = folder / f"{spec.stem}-seed{seed}.toml"
    copy.write_text(text[:header.end()] + section + text[end:], encoding="utf-8")
    if tomllib.loads(copy.read_text(encoding="utf-8"))["release"]["seed"] != seed:
        raise SystemExit(f"{spec}: could not set its seed to {seed}")
    return copy


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


def _median_run(rows: list[dict]) -> dict:
    """The build of median wall time (the upper middle one of an even count)."""
    return sorted(rows, key=lambda run: run["wall"])[len(rows) // 2]


def bench(spec: Path, packages: dict[str, str], jobs: list[int], folder: Path,
          repeat: int = 1) -> tuple[bool, dict[str, dict[int, list[dict]]]]:
    """Build ``spec`` with every package at every ``jobs``, ``repeat`` rounds, side by side; print
    the table; whether the bytes agree everywhere, and the builds (package -> jobs -> rounds)."""
    print(f"\n## {spec.name}: build_release(spec, out, n_jobs=J), each build in its own process")
    runs: dict[str, dict[int, list[dict]]] = {name: {j: [] for j in jobs} for name in packages}
    for r in range(repeat):
        for j in jobs:
            for name, package in packages.items():
                out = folder / f"{spec.stem}-{name}-{j}"
                run = build(package, spec, out, j)
                shutil.rmtree(out)  # its digests are kept; the next round builds afresh
                runs[name][j].append(run)
                round_ = f" (round {r + 1} of {repeat})" if repeat > 1 else ""
                print(f"  built: {name} --jobs {j}{round_}: {run['wall']:.1f} s (load {run['load_before']} -> "
                      f"{run['load_after']})", flush=True)
    rounds = " | walls s by round | new/old by round" if repeat > 1 else ""
    print(f"| package | --jobs | wall s | vs first --jobs | new/old | critical path s (configuration) | "
          f"path/wall | spread tables | load before -> after{rounds} |")
    print("| --- | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---" + (" | --- | ---" if repeat > 1 else "") + " |")
    old = runs.get("old")
    for name, by_jobs in runs.items():
        first = statistics.median(run["wall"] for run in by_jobs[jobs[0]])
        for j, rows in by_jobs.items():
            wall = statistics.median(run["wall"] for run in rows)
            ratios = [run["wall"] / base["wall"] for run, base in zip(rows, old[j], strict=True)] \
                if old and name != "old" else []
            versus = f"{statistics.median(ratios):.2f}" if ratios else ""
            median_run = _median_run(rows)
            path, longest = critical_path(median_run)
            line = (f"| {name} | {j} | {wall:.1f} | {wall / first:.2f} | {versus} | {path:.1f} ({longest}) | "
                    f"{path / median_run['wall']:.2f} | {len(median_run['spread'])} | "
                    f"{median_run['load_before']} -> {median_run['load_after']}")
            if repeat > 1:
                line += (" | " + " ".join(f"{run['wall']:.1f}" for run in rows) + " | "
                         + " ".join(f"{ratio:.2f}" for ratio in ratios))
            print(line + " |")
    same = True
    for name, by_jobs in runs.items():
        digests = {run["all_files"] for rows in by_jobs.values() for run in rows}
        agree = len(digests) == 1
        same &= agree
        print(f"{name}: same SHA256SUMS (every file) at every --jobs: {'yes' if agree else 'NO'} "
              f"({by_jobs[jobs[0]][0]['all_files'][:16]})")
    if len(runs) > 1:
        agree = len({run["tables"] for by_jobs in runs.values() for rows in by_jobs.values() for run in rows}) == 1
        same &= agree
        print(f"same tables (manifest SHA-256) in both packages: {'yes' if agree else 'NO'}")
    return same, runs


def seeds_summary(by_seed: dict[int, dict[str, dict[int, list[dict]]]], jobs: list[int]) -> None:
    """The seeds side by side and summed: median wall and candidates per package, new/old."""
    names = list(next(iter(by_seed.values())))
    print("\n## over the seeds: median wall s (candidates tried) per build")
    print("| seed | --jobs | " + " | ".join(names) + (" | new/old |" if "old" in names else " |"))
    print("| ---: | ---: | " + " | ".join("---:" for _ in names) + (" | ---: |" if "old" in names else " |"))
    totals = {(name, j): [0.0, 0] for name in names for j in jobs}
    for seed, runs in by_seed.items():
        for j in jobs:
            cells, walls = [], {}
            for name in names:
                rows = runs[name][j]
                walls[name] = statistics.median(run["wall"] for run in rows)
                candidates = rows[0]["candidates"]  # the same tables in every round
                totals[name, j][0] += walls[name]
                totals[name, j][1] += candidates
                cells.append(f"{walls[name]:.1f} ({candidates})")
            versus = f" | {walls['new'] / walls['old']:.2f}" if "old" in names else ""
            print(f"| {seed} | {j} | " + " | ".join(cells) + versus + " |")
    for j in jobs:
        cells = [f"{totals[name, j][0]:.1f} ({totals[name, j][1]})" for name in names]
        versus = f" | {totals['new', j][0] / totals['old', j][0]:.2f}" if "old" in names else ""
        print(f"| all | {j} | " + " | ".join(cells) + versus + " |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--spec", default=str(ROOT / "repository" / "paper.toml"), help="release spec to build")
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2], help="worker counts; the first is the base")
    parser.add_argument("--against", metavar="REV", help="git revision of the old build, run side by side")
    parser.add_argument("--large", action="store_true", help="also a spec with one table above LARGE_TABLE_ENTRIES")
    parser.add_argument("--only-large", action="store_true", help="the --large spec only")
    parser.add_argument("--seeds", type=int, nargs="+", metavar="S",
                        help="build the spec once per release seed (its [release] seed replaced); a summed table")
    parser.add_argument("--repeat", type=int, default=1, metavar="N",
                        help="rounds of builds (old then new at every --jobs); medians and each round's ratio")
    args = parser.parse_args(argv)
    if any(j < 1 for j in args.jobs):
        parser.error("--jobs takes positive counts")
    if args.repeat < 1:
        parser.error(f"--repeat takes a positive count, got {args.repeat}")
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
        if args.seeds and specs:
            specs = [with_seed(specs[0], seed, folder) for seed in args.seeds]
        if args.large or args.only_large:
            large = folder / "one-large-table.toml"
            large.write_text(LARGE_SPEC)
            specs.append(large)
        by_seed = {}
        for k, spec in enumerate(specs):
            agree, runs = bench(spec, packages, args.jobs, folder, args.repeat)
            same &= agree
            if args.seeds and k < len(args.seeds):
                by_seed[args.seeds[k]] = runs
        if len(by_seed) > 1:
            seeds_summary(by_seed, args.jobs)
    print(f"\n{subprocess.run(['uptime'], capture_output=True, text=True).stdout.strip()}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
