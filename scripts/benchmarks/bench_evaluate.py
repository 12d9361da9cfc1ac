"""`lbm-bench evaluate` and `lbm-bench info` on a large table file: a git revision against the working tree.

    python scripts/benchmarks/bench_evaluate.py --against b05d9fb [--shape 100000x10000] [--samples 2000]
        [--floor] [--jobs 1 2] [--paired-jobs] [--repeats 1] [--keep FILE | --reuse FILE [--rows R --cols C]]

Builds, without the generator (a benchmark of reading and scoring, not of generation), the
table of ``bench_sparse_io.py`` (Bernoulli, 3x3 clusters, entries uniform at ``--density``, Gibbs
sets copying the MAP labels but on a fraction ``--uncertain`` of the items), with ``--floor`` its
floor too (``floor_certificate``, criterion ``bayes``: evaluate then recomputes the floor's
cross-fitted losses, its costliest part). Then runs, as a user does, ``lbm-bench evaluate FILE
--rows MAP --cols MAP --json`` and ``lbm-bench info FILE`` with the package at ``--against``
(``git archive`` into a temporary folder, ``PYTHONPATH``) and with the working tree, old and new
alternating, ``--repeats`` times (the best is kept), the new one at every ``--jobs`` (and the old
one too with ``--paired-jobs``; else at its default). Prints wall seconds, CPU seconds (the command
and its workers), the peak resident memory of the command's process (its own ``VmHWM``), the peak
of the resident memory summed over its processes (``sum``) and of its largest worker (each
process's resident memory polled every 0.2 s by ``bench_million.ProcessMemory``: a worker's own
peak, not its parent's carried over a fork), old over new, whether the reports are identical,
and the load average (``/proc/loadavg``) before each command: the machine may be shared.
``--reuse FILE`` scores an existing file (read only), with ``--rows`` and ``--cols`` label files
(default: the file's MAP labels).
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # sibling modules (scripts/README.md)

from bench_million import ProcessMemory  # noqa: E402
from bench_sparse_io import build_table  # noqa: E402

from lbm_bench import floor_certificate, save_table  # noqa: E402
from lbm_bench.protocol.memory import format_bytes  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]

#: Runs ``python -m lbm_bench ARGS`` and prints, on stderr, the peak RSS of this process
#: (``VmHWM``: exact, whatever the polling misses).
_CODE = """import sys, runpy
sys.argv = ['lbm-bench', *sys.argv[1:]]
try:
    runpy.run_module('lbm_bench', run_name='__main__')
finally:
    hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM')][0]
    print('RSS', int(hwm.split()[1]) * 1024, file=sys.stderr)
"""


def _load() -> str:
    return Path("/proc/loadavg").read_text().split()[0] if Path("/proc/loadavg").exists() else "?"


def run(pythonpath: str, *args: str) -> dict:
    """Wall and CPU seconds, peak RSS (process, largest worker), stdout and the load before."""
    load = _load()
    env = dict(os.environ, PYTHONPATH=pythonpath)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    # run from an empty folder: ``python -c`` puts the working directory first on sys.path
    with tempfile.TemporaryDirectory() as cwd:
        process = subprocess.Popen([sys.executable, "-c", _CODE, *args], stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True, env=env, cwd=cwd)
        with ProcessMemory([process.pid]) as memory:
            stdout, stderr = process.communicate()
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if process.returncode:
        raise RuntimeError(f"{' '.join(args)} failed:\n{stderr}")
    rss = int(stderr.split("RSS")[-1].split()[0])
    # the command's workers: every process of its tree but itself and loky's resource tracker
    workers = max((peak for key, peak in memory.peaks.items()
                   if not key.startswith(f"{process.pid} ") and not key.endswith("resource tracker")), default=0)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"seconds": seconds, "cpu": cpu, "rss": rss, "sum": max(memory.peak_sum, rss), "workers": workers,
            "out": stdout, "load": load}


def build(path: Path, shape: str, density: float, samples: int, uncertain: float, floor: bool) -> None:
    n_rows, n_cols = (int(v) for v in shape.lower().split("x"))
    start = time.perf_counter()
    table = build_table(n_rows, n_cols, density, samples, uncertain)
    if floor:
        from dataclasses import replace

        certificate = floor_certificate(table.gibbs, starts=[(table.map_rows, table.map_cols)],
                                        n_row_clusters=3, n_col_clusters=3)
        table = replace(table, bayes_rows=certificate.rows, bayes_cols=certificate.cols,
                        bayes_risk=certificate.risk, criterion="bayes")
    save_table(table, path)
    print(f"# built {path.name}: {n_rows}x{n_cols}, {samples} label sets ({format_bytes(samples * (n_rows + n_cols))}"
          f" of labels), floor {'yes' if floor else 'no'}, in {time.perf_counter() - start:.0f} s; "
          f"file {format_bytes(path.stat().st_size)}")


def _row(name: str, old: dict | None, new: dict, same: str) -> str:
    def cell(r: dict | None) -> str:
        if r is None:
            return f"{'':>39}"
        memory = f"{format_bytes(r['rss']):>9} {format_bytes(r['sum']):>9}"
        return f"{r['seconds']:7.1f} {r['cpu']:6.1f} {memory} {r['load']:>4}"

    ratio = f"{old['seconds'] / new['seconds']:5.2f}x" if old else "      "
    workers = format_bytes(new["workers"]) if new["workers"] else "-"
    return f"{name:<22} {cell(old)} | {cell(new)} {workers:>9} | {ratio} {same}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", metavar="REF", help="git revision of the old package (default: none)")
    parser.add_argument("--shape", default="100000x10000")
    parser.add_argument("--density", type=float, default=0.01)
    parser.add_argument("--samples", type=int, default=2000)
    parser.add_argument("--uncertain", type=float, default=0.05)
    parser.add_argument("--floor", action="store_true", help="store the floor (evaluate recomputes its losses)")
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2], help="new evaluate's --jobs (default 1 2)")
    parser.add_argument("--paired-jobs", action="store_true", help="the old evaluate at every --jobs too")
    parser.add_argument("--repeats", type=int, default=1, help="runs of each command, the best kept")
    parser.add_argument("--keep", type=Path, help="keep the built file here")
    parser.add_argument("--reuse", type=Path, help="an existing file (skip building)")
    parser.add_argument("--rows", type=Path, help="row labels to score (default: the file's MAP labels)")
    parser.add_argument("--cols", type=Path, help="column labels to score (default: the file's MAP labels)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        path = args.reuse or args.keep or folder / "big.h5"
        if args.reuse is None:
            build(path, args.shape, args.density, args.samples, args.uncertain, args.floor)
        from lbm_bench import load_table

        table = load_table(path, label_sets=False)
        rows, cols = args.rows or folder / "rows.txt", args.cols or folder / "cols.txt"
        if args.rows is None:
            np.savetxt(rows, table.map_rows, fmt="%d")
        if args.cols is None:
            np.savetxt(cols, table.map_cols, fmt="%d")
        print(f"# {path}: {table.shape[0]}x{table.shape[1]}, {table.gibbs.n_samples} label sets, "
              f"floor {'stored' if table.bayes_risk is not None else 'not stored'}; {os.cpu_count()} CPUs")
        old_root = None
        if args.against:
            old_root = folder / "old"
            old_root.mkdir()
            archive = subprocess.run(["git", "-C", str(ROOT), "archive", args.against, "lbm_bench"],
                                     capture_output=True, check=True).stdout
            subprocess.run(["tar", "-x", "-C", str(old_root)], input=archive, check=True)
        evaluate = ["evaluate", str(path), "--rows", str(rows), "--cols", str(cols), "--json"]
        commands = [("info", ["info", str(path)], [[]])]
        commands.append(("evaluate", evaluate, [["--jobs", str(j)] for j in args.jobs]))
        print(f"{'command':<22} {'old: wall':>7} {'CPU':>6} {'peak RSS':>9} {'sum':>9} {'load':>4} | {'new: wall':>7} "
              f"{'CPU':>6} {'peak RSS':>9} {'sum':>9} {'load':>4} {'worker':>9} | old/new")
        for name, command, variants in commands:
            best_old = None
            for extra in variants:
                best_new = None
                if args.paired_jobs:
                    best_old = None
                for _ in range(args.repeats):  # old and new alternate
                    if old_root is not None and (best_old is None or extra is variants[0] or args.paired_jobs):
                        old = run(str(old_root), *command, *(extra if args.paired_jobs else []))
                        best_old = old if best_old is None or old["seconds"] < best_old["seconds"] else best_old
                    new = run(str(ROOT), *command, *extra)
                    best_new = new if best_new is None or new["seconds"] < best_new["seconds"] else best_new
                same = ""
                if best_old is not None:
                    same = "same report" if best_old["out"] == best_new["out"] else "REPORTS DIFFER"
                label = f"{name} {' '.join(extra)}".strip()
                print(_row(label, best_old, best_new, same), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
