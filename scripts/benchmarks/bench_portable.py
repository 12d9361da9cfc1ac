"""What the same bytes on every CPU cost (issue 35), and why they need it.

    python scripts/benchmarks/bench_portable.py [--quick] [--repeats 5]
    python scripts/benchmarks/bench_portable.py --dispatch [--quick]
    python scripts/benchmarks/bench_portable.py --against d94874f [--quick] [--repeats 3]

Without an option: each function of ``lbm_bench._portable`` (the elementary functions
with the same bits on every CPU) against numpy's own, on float64 arrays of 6, 4096 and
10^6 elements: microseconds per call, best of ``--repeats``, and the ratio.

``--dispatch``: ``exp``, ``log``, ``log1p``, ``expm1``, ``tanh`` and ``power`` of numpy
(float64), of ``lbm_bench._portable`` and of the C library (Python's ``math``), on fixed
arguments (built by exact operations), computed in this process and in a subprocess at
each lower level this machine can emulate: numpy's AVX2 loops and OpenBLAS's Haswell
kernels, numpy's baseline loops and OpenBLAS's Nehalem kernels (``NPY_DISABLE_CPU_FEATURES``
and ``OPENBLAS_CORETYPE``, as tests/cpu_levels.py sets them), and those with glibc's
versions for CPUs without AVX2 and FMA ("no-fma": ``GLIBC_TUNABLES``, glibc only). It
prints the share of the arguments whose result differs from this process's: numpy's
where this machine's loops and the level's differ, the C library's at "no-fma",
``_portable``'s never.

``--against REF``: ``generate_table`` on a few tables of every family and storage (dense
and sparse, with row and column effects, with missing entries), the package at git
revision ``REF`` (``git archive``) against the working tree, each table in its own
process with BLAS on one thread, the two alternating, best of ``--repeats``: CPU seconds
(less sensitive than wall time to the other processes of a shared machine) and the ratio
now / ref; then whether the two tables have the same labels (MAP, Gibbs sets, Bayes
labels) and data (the largest relative difference of Gaussian entries: issue 35 moved
the last bits of the scale and block parameters, and so of the Gaussian entries
``mean + sd * noise``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

#: The lower dispatch levels (the environments of tests/cpu_levels.py): name, variables.
LEVELS = {
    "avx2": {"NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL AVX512_SPR", "OPENBLAS_CORETYPE": "Haswell"},
    "baseline": {"NPY_DISABLE_CPU_FEATURES": "X86_V3 X86_V4 AVX512_ICL AVX512_SPR", "OPENBLAS_CORETYPE": "Nehalem"},
    "no-fma": {"NPY_DISABLE_CPU_FEATURES": "X86_V3 X86_V4 AVX512_ICL AVX512_SPR", "OPENBLAS_CORETYPE": "Nehalem",
               "GLIBC_TUNABLES": "glibc.cpu.hwcaps=-AVX2,-FMA,-AVX512F,-AVX"},
}
FUNCTIONS = ("exp", "log", "log1p", "expm1", "tanh", "power")

#: (name, kind, n_rows, n_cols, g, m, risk, options) of --against.
TABLES = [
    ("poisson dense effects", "poisson", 300, 200, 3, 3, 0.1, {"effects": True}),
    ("poisson sparse effects", "poisson", 2000, 1500, 3, 3, 0.1, {"density": 0.05, "effects": True}),
    ("bernoulli sparse", "bernoulli", 2000, 1500, 3, 3, 0.1, {"density": 0.05}),
    ("gaussian missing block", "gaussian", 300, 200, 3, 3, 0.1, {"missing": 0.2, "missing_mechanism": "block"}),
    ("categorical", "categorical", 300, 200, 3, 3, 0.1, {"categories": 4}),
]
QUICK_TABLES = [
    ("poisson sparse effects", "poisson", 200, 150, 2, 2, 0.1, {"density": 0.1, "effects": True}),
    ("gaussian", "gaussian", 60, 40, 2, 2, 0.1, {}),
]


def arguments(name: str, size: int) -> tuple[np.ndarray, ...]:
    """Seeded arguments of ``name``, built by exact operations (np.exp's own bits follow the CPU)."""
    rng = np.random.default_rng(35)
    wide = np.ldexp(rng.uniform(1.0, 2.0, size), rng.integers(-60, 60, size))
    if name == "exp":
        return (rng.uniform(-700.0, 700.0, size),)
    if name == "expm1":
        return (rng.uniform(-3.0, 3.0, size),)
    if name == "tanh":
        return (rng.uniform(-5.0, 5.0, size),)
    if name == "power":
        return rng.uniform(0.5, 1.5, size), rng.uniform(0.0, 10.0, size)
    if name == "log1p":
        return (wide - 0.999,)
    return (wide,)


def _call(module, name: str, args: tuple[np.ndarray, ...]) -> np.ndarray:
    with np.errstate(all="ignore"):
        return np.asarray(getattr(module, name)(*args), dtype=np.float64)


def timings(sizes: list[int], repeats: int) -> list[dict]:
    """Microseconds per call of numpy's and _portable's functions (best of ``repeats``)."""
    import lbm_bench._portable as portable

    rows = []
    for name in FUNCTIONS:
        for size in sizes:
            args = arguments(name, size)
            row = {"function": name, "size": size}
            for label, module in (("numpy", np), ("portable", portable)):
                number = max(1, min(1000, 200_000 // size))
                best = min(_timed(module, name, args, number) for _ in range(repeats))
                row[label] = best * 1e6
            rows.append(row)
    return rows


def _timed(module, name: str, args: tuple[np.ndarray, ...], number: int) -> float:
    start = time.perf_counter()
    for _ in range(number):
        _call(module, name, args)
    return (time.perf_counter() - start) / number


_RESULTS = """
import json, math, sys
import numpy as np
import lbm_bench._portable as portable
sys.path.insert(0, {folder!r})
from bench_portable import FUNCTIONS, _call, arguments
out = {{}}
for name in FUNCTIONS:
    args = arguments(name, {size})
    c_library = np.array([getattr(math, "pow" if name == "power" else name)(*v) for v in zip(*args)])
    out[name] = [_call(np, name, args).tobytes().hex(), _call(portable, name, args).tobytes().hex(),
                 c_library.tobytes().hex()]
print(json.dumps(out))
"""


def dispatch_differences(size: int) -> dict[str, dict[str, tuple[float, float, float]]]:
    """Per level and function: the share of results of numpy's function, of _portable's and of
    the C library's that differ from this process's."""
    folder = str(Path(__file__).resolve().parent)
    code = _RESULTS.format(folder=folder, size=size)
    here = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                     check=True).stdout)
    out = {}
    for level in _levels():
        env = {**os.environ, **LEVELS[level]}
        there = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                          check=True, env=env).stdout)
        out[level] = {name: tuple(_share(here[name][k], there[name][k]) for k in (0, 1, 2)) for name in FUNCTIONS}
    return out


def _share(a: str, b: str) -> float:
    x, y = np.frombuffer(bytes.fromhex(a)), np.frombuffer(bytes.fromhex(b))
    return float(np.mean((x != y) & ~(np.isnan(x) & np.isnan(y))))


def _levels() -> list[str]:
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return []
    from numpy.lib.introspect import opt_func_info

    native = opt_func_info(func_name="^exp$", signature="^float64")["exp"]["dd"]["current"]
    return ["avx2", "baseline", "no-fma"] if native in ("X86_V3", "X86_V4") else ["baseline", "no-fma"]


_GENERATE = r"""
import hashlib, json, sys, time
import numpy as np
import lbm_bench
kind, n, d, g, m, risk, options = sys.argv[1], *map(int, sys.argv[2:6]), float(sys.argv[6]), json.loads(sys.argv[7])
start, cpu = time.perf_counter(), time.process_time()
table = lbm_bench.generate_table(kind, n, d, g, m, risk, rng=1, **options)
seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
labels = [table.map_rows, table.map_cols, table.gibbs.rows, table.gibbs.cols, table.bayes_rows, table.bayes_cols]
digest = hashlib.sha256(b"".join(np.ascontiguousarray(p).tobytes() for p in labels)).hexdigest()
data = table.data.toarray() if hasattr(table.data, "toarray") else np.asarray(table.data)
np.save(sys.argv[8], data)
print(json.dumps({"seconds": seconds, "cpu": cpu, "scale": table.scale, "labels": digest}))
"""


def generate(pythonpath: str, table: tuple, data_path: str) -> dict:
    """``generate_table`` of ``table`` in a subprocess importing the package from ``pythonpath``,
    BLAS on one thread; its data saved to ``data_path`` (.npy)."""
    _, kind, n, d, g, m, risk, options = table
    env = {**os.environ, "PYTHONPATH": pythonpath, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    with tempfile.TemporaryDirectory() as cwd:  # nothing on the working directory shadows PYTHONPATH
        out = subprocess.run([sys.executable, "-c", _GENERATE, kind, str(n), str(d), str(g), str(m), str(risk),
                              json.dumps(options), data_path], env=env, cwd=cwd, capture_output=True, text=True,
                             check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def data_difference(a: np.ndarray, b: np.ndarray) -> str:
    """"same" for identical data, else the largest relative difference (floats) or "differ"."""
    if a.shape == b.shape and np.array_equal(a, b, equal_nan=a.dtype.kind == "f"):
        return "same"
    if a.shape != b.shape or a.dtype.kind != "f":
        return "differ"
    with np.errstate(invalid="ignore", divide="ignore"):
        relative = np.abs(a - b) / np.maximum(np.abs(a), np.abs(b))
    return f"within {np.nanmax(relative):.1e}"


def against(revision: str, tables: list[tuple], repeats: int) -> list[dict]:
    """Best seconds of ``generate_table`` at ``revision`` and in the working tree, per table."""
    root = Path(__file__).resolve().parents[2]
    rows = []
    with tempfile.TemporaryDirectory() as ref:
        archive = subprocess.run(["git", "-C", str(root), "archive", revision, "lbm_bench"],
                                 check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", ref], input=archive, check=True)
        data = [str(Path(ref) / "ref.npy"), str(Path(ref) / "now.npy")]
        for table in tables:
            best: list[dict | None] = [None, None]
            for _ in range(repeats):
                for k, path in enumerate((ref, str(root))):
                    run = generate(path, table, data[k])
                    if best[k] is None or run["cpu"] < best[k]["cpu"]:
                        best[k] = run
            same_labels = best[0]["labels"] == best[1]["labels"]
            rows.append({"table": table[0], "ref": best[0], "now": best[1], "same_labels": same_labels,
                         "data": data_difference(np.load(data[0]), np.load(data[1]))})
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python scripts/benchmarks/bench_portable.py", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="small arrays and tables (seconds)")
    parser.add_argument("--repeats", type=int, default=None, help="timed runs (default 5, --against 3)")
    parser.add_argument("--dispatch", action="store_true", help="bits at numpy's lower dispatch levels")
    parser.add_argument("--against", metavar="REF", help="generate_table at git revision REF vs the working tree")
    args = parser.parse_args(argv)
    if args.dispatch:
        size = 20_000 if args.quick else 1_000_000
        print(f"# share of {size} results that differ from this process's: numpy's / _portable's / math's")
        levels = dispatch_differences(size)
        print(f"{'function':<9}" + "".join(f"{level:>27}" for level in levels))
        for name in FUNCTIONS:
            cells = "".join("   " + " / ".join(f"{share:6.2%}" for share in levels[level][name]) for level in levels)
            print(f"{name:<9}{cells}")
        return 0
    if args.against:
        repeats = args.repeats or 3
        print(f"# generate_table, {args.against} (ref) vs the working tree (now), each in its own process, "
              f"best of {repeats}")
        header = f"{'table':<24} {'ref cpu s':>9} {'now cpu s':>9} {'now/ref':>8}  {'labels':<7} data"
        print(header)
        print("-" * len(header))
        total = [0.0, 0.0]
        for row in against(args.against, QUICK_TABLES if args.quick else TABLES, repeats):
            ref, now = row["ref"]["cpu"], row["now"]["cpu"]
            total[0] += ref
            total[1] += now
            labels = "same" if row["same_labels"] else "differ"
            print(f"{row['table']:<24} {ref:>9.2f} {now:>9.2f} {now / ref:>8.3f}  {labels:<7} {row['data']}",
                  flush=True)
        print(f"{'all tables':<24} {total[0]:>9.2f} {total[1]:>9.2f} {total[1] / total[0]:>8.3f}")
        return 0
    sizes = [6, 4096] if args.quick else [6, 4096, 1_000_000]
    print(f"# microseconds per call, numpy's function and lbm_bench._portable's, best of {args.repeats or 5}")
    header = f"{'function':<9} {'size':>8} {'numpy us':>10} {'portable us':>12} {'ratio':>7}"
    print(header)
    print("-" * len(header))
    for row in timings(sizes, args.repeats or 5):
        print(f"{row['function']:<9} {row['size']:>8} {row['numpy']:>10.1f} {row['portable']:>12.1f} "
              f"{row['portable'] / row['numpy']:>7.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
