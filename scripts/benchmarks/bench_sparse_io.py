"""File size and read/write/score times of a large sparse table file.

    python scripts/benchmarks/bench_sparse_io.py [--shape 100000x10000] [--density 0.01] [--samples 2000] [--reuse FILE]
                                      [--uncertain 0.05] [--keep FILE]

Builds, without the generator (a benchmark of storage and scoring, not of
generation), a Bernoulli table of the requested shape and density with 3x3
clusters: entries drawn uniformly at the density (CSR), random MAP labels and
``--samples`` Gibbs label sets in 8 chains that copy the MAP labels except on a
fraction ``--uncertain`` of the rows and columns, where they are redrawn at
random in each set (about what a Gibbs run at 10% risk looks like). Then it
times ``save_table`` (twice: the two files must be identical), prints the stored
bytes of every dataset (compressed) against its raw size, and times
``load_table``, ``lbm-bench info`` and ``lbm-bench evaluate`` (subprocesses, as
a user runs them) and their peak RSS.
"""

from __future__ import annotations

import argparse
import hashlib
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import h5py
import numpy as np
import scipy.sparse as sp

from lbm_bench import CalibrationResult, GibbsSamples, RejectionRecord, Table, load_table, random_design, save_table

# The one internal this script uses (byte counts printed as the package prints them).
from lbm_bench.protocol.memory import format_bytes


def build_table(n_rows: int, n_cols: int, density: float, n_samples: int, uncertain: float, seed: int = 0):
    rng = np.random.default_rng(seed)
    design = random_design("bernoulli", 3, 3, rng=seed)
    model = design.model(1.0)
    nnz = int(density * n_rows * n_cols)
    flat = np.unique(rng.integers(0, n_rows * n_cols, nnz, dtype=np.int64))
    data = sp.csr_array((np.ones(flat.size, np.uint8), (flat // n_cols, flat % n_cols)), shape=(n_rows, n_cols))
    z, w = rng.integers(0, 3, n_rows), rng.integers(0, 3, n_cols)

    def sets(labels: np.ndarray) -> np.ndarray:
        out = np.repeat(labels.astype(np.uint8)[None], n_samples, 0)
        moving = np.flatnonzero(rng.random(labels.size) < uncertain)
        out[:, moving] = rng.integers(0, 3, (n_samples, moving.size), dtype=np.uint8)
        return out

    gibbs = GibbsSamples(rows=sets(z), cols=sets(w), chain_lengths=np.full(8, n_samples // 8), burn_in=50, thin=1)
    risk = gibbs.risk(z, w)
    calibration = CalibrationResult(scale=1.0, bracket=(0.9, 1.1), n_steps=1, mean_error=0.1, error_std=0.01,
                                    target_risk=0.1, tolerance=0.01, n_tables=10,
                                    history=np.array([[1.0, 0.1, 0.01, 10.0]]), design=design)
    rejection = RejectionRecord(attempts=1, screened_out=0, acceptance_rate=1.0, tolerance=0.01,
                                candidate_risks=np.array([risk.risk]))
    return Table(data=data, model=model, design=design, scale=1.0, truth_rows=z, truth_cols=w, map_rows=z,
                 map_cols=w, gibbs=gibbs, risk=risk, target_risk=0.1, seed=seed, calibration=calibration,
                 rejection=rejection)


def _run(*args: str) -> tuple[float, float, int, str]:
    """Wall seconds, CPU seconds (user + system), peak RSS (bytes) and stdout of
    ``python -m lbm_bench ARGS``."""
    # VmHWM (peak RSS of this process image): ru_maxrss would include the parent's peak,
    # which Linux carries over the fork and exec of the child.
    code = ("import sys, runpy; sys.argv = ['lbm-bench', *sys.argv[1:]]\n"
            "try:\n    runpy.run_module('lbm_bench', run_name='__main__')\n"
            "finally:\n    hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM')][0]\n"
            "    print('RSS', int(hwm.split()[1]) * 1024, file=sys.stderr)\n")
    start, before = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
    result = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, check=False)
    seconds, after = time.perf_counter() - start, resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    rss = int(result.stderr.split("RSS")[-1].split()[0])
    if result.returncode:
        raise RuntimeError(result.stderr)
    return seconds, cpu, rss, result.stdout


def _read_and_score(path: Path, folder: Path) -> None:
    """Time load_table, lbm-bench info and evaluate (MAP labels) on ``path``."""
    start = time.perf_counter()
    loaded = load_table(path)
    print(f"load_table: {time.perf_counter() - start:.1f} s, data {type(loaded.data).__name__}, "
          f"nnz {loaded.data.nnz}")
    labels = folder
    np.savetxt(labels / "rows.txt", loaded.map_rows, fmt="%d")
    np.savetxt(labels / "cols.txt", loaded.map_cols, fmt="%d")
    evaluate = ["evaluate", str(path), "--rows", str(labels / "rows.txt"), "--cols", str(labels / "cols.txt")]
    for command in (["info", str(path)], ["info", "--json", str(path)], evaluate):
        seconds, cpu, rss, _ = _run(*command)
        print(f"lbm-bench {command[0]}{' --json' if '--json' in command else ''}: {seconds:.1f} s "
              f"(CPU {cpu:.1f} s), peak RSS {format_bytes(rss)}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", default="100000x10000")
    parser.add_argument("--density", type=float, default=0.01)
    parser.add_argument("--samples", type=int, default=2000)
    parser.add_argument("--uncertain", type=float, default=0.05)
    parser.add_argument("--keep", type=Path, default=None, help="also keep the file here")
    parser.add_argument("--reuse", type=Path, default=None,
                        help="time reading and scoring an existing file (skip building and writing)")
    args = parser.parse_args(argv)
    if args.reuse is not None:
        with tempfile.TemporaryDirectory() as folder:
            _read_and_score(args.reuse, Path(folder))
        return 0
    n_rows, n_cols = (int(v) for v in args.shape.lower().split("x"))
    start = time.perf_counter()
    table = build_table(n_rows, n_cols, args.density, args.samples, args.uncertain)
    print(f"# built a {n_rows}x{n_cols} table, nnz {table.data.nnz}, {args.samples} label sets, "
          f"in {time.perf_counter() - start:.1f} s")
    with tempfile.TemporaryDirectory() as folder:
        path = args.keep or Path(folder) / "big.h5"
        times = []
        digests = []
        for copy in (path, Path(folder) / "again.h5"):
            start = time.perf_counter()
            save_table(table, copy)
            times.append(time.perf_counter() - start)
            digests.append(hashlib.sha256(copy.read_bytes()).hexdigest())
        print(f"save_table: {times[0]:.1f} s and {times[1]:.1f} s; identical bytes: {digests[0] == digests[1]}")
        total = path.stat().st_size
        print(f"file size {format_bytes(total)}")
        print(f"{'dataset':<22} {'dtype':>7} {'raw':>10} {'stored':>10} {'share':>6}")
        with h5py.File(path, "r") as f:
            names: list[str] = []
            f.visititems(lambda name, obj: names.append(name) if isinstance(obj, h5py.Dataset) else None)
            rows = [(n, f[n].dtype, f[n].size * f[n].dtype.itemsize, f[n].id.get_storage_size()) for n in names]
        for name, dtype, raw, stored in sorted(rows, key=lambda r: -r[3])[:8]:
            print(f"{name:<22} {dtype!s:>7} {format_bytes(raw):>10} {format_bytes(stored):>10} {stored / total:>6.1%}")
        _read_and_score(path, Path(folder))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
