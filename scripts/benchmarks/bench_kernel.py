"""The compiled kernel of sparse tables against scipy's, side by side in one run (issue 46).

    python scripts/benchmarks/bench_kernel.py              # Bernoulli and Poisson 100000x10000 at 1%
    python scripts/benchmarks/bench_kernel.py --million    # also 1000000x100000 at 0.1% (~10 GiB, minutes)
    python scripts/benchmarks/bench_kernel.py --quick      # tiny (seconds)
    python scripts/benchmarks/bench_kernel.py --threshold  # where the compiled kernel starts to pay

For each table (3x3 clusters, drawn at the scale of the design's first guess for a 10% MAP
error, as ``bench_sparse.py``), in one process on one BLAS thread, both kernels (a Sweeper of
each: ``use_kernel("scipy")`` and ``use_kernel("compiled")``), alternating, best of
``--repeats``:

- **rows product**, **cols product**, **both products**: the full block sums of a sweep's two
  steps, ``X @ onehot(w)`` and ``X^T @ onehot(z)`` for 8 chains at once (their labels the
  generating ones with a tenth redrawn), in ns per stored entry per chain;
- **index updates**: both steps' updates from one Gibbs sweep's labels to the next (8 chains
  run from the generating labels; the share of row labels that moved is printed), in the same
  unit;
- **start scores**: the MAP's X-only start scores (``entrywise_scores``), ns per stored entry;
- **Gibbs run**: ``run_chains`` of 8 chains from the generating labels, each drawing from its
  own stream (burn-in included), ns per stored entry per chain per sweep;
- **MAP**: ``map_labels`` with its defaults, seconds (tables up to 1e7 stored entries, or
  ``--map``).

``--threshold`` measures where ``kernel="auto"`` should take the compiled kernel: ``lbm-bench
generate`` of sparse Bernoulli tables (3x3 clusters, 10% risk, ``--jobs 1``) of growing stored
entries, each with ``--kernel scipy`` and ``--kernel compiled`` in its own process (numba's
import and the loading of its loops included, from a warm cache), alternating, best of
``--repeats``: the CPU seconds of each (user + system) and their difference, and whether the
files are the same.

``same`` says whether the two kernels gave the same values (sums, scores, label sets and MAP
labels bit for bit: they must). The compiled kernel's one-off costs are shown apart, each in
a fresh process: importing numba and compiling the loops into an empty cache, then importing
and loading them from that cache (what every later process, a worker included, pays).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

# The internals this benchmark measures: the engine's sums and sweeps, the kernel's choice, the
# scale's first guess (the one place it reaches past the public API).
from lbm_bench import load_table, map_labels, random_design
from lbm_bench.inference.chains import ChainStreams, run_chains
from lbm_bench.inference.engine import BlockSums, Sweeper
from lbm_bench.inference.kernel_choice import use_kernel
from lbm_bench.protocol.separation import first_guess
from lbm_bench.tasks.threads import single_blas_thread

sys.path.insert(0, str(Path(__file__).resolve().parent))  # sibling modules (scripts/README.md)

from _benchmarks import add_output_argument, bench_parser, finish  # noqa: E402
from bench_gibbs_map import machine_info  # noqa: E402

__all__ = ["SIZES", "MILLION", "QUICK", "THRESHOLD_SIZES", "QUICK_THRESHOLD", "compile_seconds", "kernel_rows",
           "threshold_rows", "main"]

#: (kind, n_rows, n_cols, density) of the default run, and of ``--million`` and ``--quick``.
SIZES = (("bernoulli", 100_000, 10_000, 0.01), ("poisson", 100_000, 10_000, 0.01))
MILLION = (("bernoulli", 1_000_000, 100_000, 0.001), ("poisson", 1_000_000, 100_000, 0.001))
QUICK = (("bernoulli", 2000, 500, 0.05), ("poisson", 2000, 500, 0.05))
KERNELS = ("scipy", "compiled")
#: Tables up to this many stored entries get their MAP timed without ``--map``.
MAP_ENTRIES = 10**7

#: Run in a fresh process: import numba, then the first call of every loop on a sweep's argument
#: types (a compilation into an empty cache, or a load from it); prints the seconds as JSON.
_COMPILE = """
import json, time
import numpy as np
from scipy import sparse
start = time.perf_counter()
import numba  # noqa: F401
imported = time.perf_counter()
from lbm_bench.inference.compiled_loops import compiled_loops
loops = compiled_loops()
X = sparse.random_array((30, 20), density=0.2, format="csr", rng=0)
X.data[:] = 1.0
onehot = np.zeros((20, 24), np.uint8)
loops.fill_onehot(np.zeros((8, 20), np.uint8), 3, onehot)
data = X.data.astype(np.uint8)  # the values as the kernel holds them: small unsigned integers
for acc in (np.int32, np.int64):
    loops.class_sums(X.indptr, X.indices, data, False, onehot, np.empty(24, acc), np.empty((24, 30)))
    loops.move_entries_by_pair(X.indptr, X.indices, data, False, np.zeros(1, np.int64), np.zeros(1, np.int64),
                               np.ones(1, np.int64), np.zeros(1, np.int64), np.zeros((1, 20), acc), np.zeros((2, 20)))
loops.move_entries(X.indptr, X.indices, data, False, np.zeros(1, np.int64), np.zeros(1, np.int64),
                   np.ones(1, np.int64), np.zeros((2, 20)))
loops.add_row_gains(X.indptr, data, np.zeros(1, np.int64), 1, np.zeros((1, 3)), np.empty(3), np.zeros((30, 3)))
print(json.dumps({"import": imported - start, "first_calls": time.perf_counter() - imported}))
"""


def compile_seconds() -> dict[str, dict[str, float]]:
    """The compiled kernel's one-off seconds, each in a fresh process: ``"cold"`` (numba's
    import, then the loops compiled into an empty cache) and ``"warm"`` (the same, loaded from
    that cache)."""
    out = {}
    with tempfile.TemporaryDirectory(prefix="bench-kernel-cache-") as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache}
        for name in ("cold", "warm"):
            done = subprocess.run([sys.executable, "-c", _COMPILE], env=env, capture_output=True, text=True,
                                  check=True)
            out[name] = json.loads(done.stdout)
    return out


#: (n_rows, n_cols, density) of ``--threshold``: about 3e4 to 3e6 stored entries (``--quick``: two).
THRESHOLD_SIZES = ((6000, 1000, 0.005), (10000, 2000, 0.005), (20000, 3000, 0.005), (30000, 6000, 0.005),
                   (60000, 10000, 0.005))
QUICK_THRESHOLD = ((600, 200, 0.05), (1000, 400, 0.05))


def threshold_rows(sizes=THRESHOLD_SIZES, repeats: int = 2, seed: int = 1) -> list[dict[str, Any]]:
    """``lbm-bench generate`` with each kernel at each size (see the module documentation)."""
    import resource

    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-kernel-threshold-") as folder:
        for n_rows, n_cols, density in sizes:
            cpu = dict.fromkeys(KERNELS, np.inf)
            digests = {}
            for _ in range(repeats):
                for kernel in KERNELS:
                    out = Path(folder) / f"{kernel}.h5"
                    command = [sys.executable, "-m", "lbm_bench", "generate", "--kind", "bernoulli", "--shape",
                               f"{n_rows}x{n_cols}", "--clusters", "3x3", "--risk", "0.1", "--density", str(density),
                               "--seed", str(seed), "--jobs", "1", "--kernel", kernel, "-o", str(out), "--force", "-q"]
                    before = resource.getrusage(resource.RUSAGE_CHILDREN)
                    subprocess.run(command, check=True)
                    after = resource.getrusage(resource.RUSAGE_CHILDREN)
                    cpu[kernel] = min(cpu[kernel], after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
                    digests[kernel] = out.read_bytes()
            nnz = int(load_table(Path(folder) / "scipy.h5", label_sets=False).data.nnz)
            rows.append({"shape": f"{n_rows}x{n_cols}", "density": density, "nnz": nnz, "cpu": cpu,
                         "same": digests["scipy"] == digests["compiled"]})
    return rows


def format_threshold(rows: list[dict[str, Any]]) -> str:
    lines = ["lbm-bench generate --kind bernoulli --clusters 3x3 --risk 0.1 --jobs 1, CPU seconds (user + system), "
             "best of the runs",
             "| shape | density | stored entries | scipy | compiled | scipy - compiled | same file |",
             "| --- | ---: | ---: | ---: | ---: | ---: | --- |"]
    for r in rows:
        s, c = r["cpu"]["scipy"], r["cpu"]["compiled"]
        lines.append(f"| {r['shape']} | {r['density']:g} | {r['nnz']:,} | {s:.2f} | {c:.2f} | {s - c:+.2f} | "
                     f"{'yes' if r['same'] else 'NO'} |")
    return "\n".join(lines)


def _table(kind: str, n_rows: int, n_cols: int, density: float, seed: int):
    design = random_design(kind, 3, 3, density=density, rng=seed)
    scale, _ = first_guess(design, n_rows, n_cols, 0.1)
    model = design.model(scale)
    X, z, w = model.sample(n_rows, n_cols, rng=seed + 1)
    return model, X, z, w


def _noisy(labels: np.ndarray, chains: int, rng: np.random.Generator) -> np.ndarray:
    """``chains`` copies of ``labels`` (1, chains, n), a tenth of each redrawn."""
    out = np.repeat(labels[None, None].astype(np.uint8), chains, axis=1)
    redraw = rng.random(out.shape) < 0.1
    out[redraw] = rng.integers(0, 3, int(redraw.sum()))
    return out


def _timed(func) -> tuple[float, Any]:
    """The seconds of one call of ``func``, and its value."""
    start = time.perf_counter()
    value = func()
    return time.perf_counter() - start, value


def _same(values: list) -> bool:
    a, b = values
    if isinstance(a, tuple):
        return all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
    return bool(np.array_equal(a, b))


def kernel_rows(kind: str, n_rows: int, n_cols: int, density: float, *, chains: int = 8, sweeps: int = 20,
                repeats: int = 3, seed: int = 0, with_map: bool | None = None) -> dict[str, Any]:
    """Both kernels on one table (see the module documentation): seconds of each part, best of
    ``repeats``, alternating, and whether they agree."""
    model, X, z, w = _table(kind, n_rows, n_cols, density, seed)
    nnz = int(X.nnz)
    sweepers = {}
    for kernel in KERNELS:
        with use_kernel(kernel):
            sweepers[kernel] = Sweeper.for_table(model, X)
        assert sweepers[kernel].kernel.name == {"scipy": "sparse", "compiled": "compiled"}[kernel]
    rng = np.random.default_rng(seed + 2)
    w_chains, z_chains = _noisy(w, chains, rng), _noisy(z, chains, rng)
    # two consecutive sweeps' labels of a Gibbs run from the generating labels
    start = np.repeat(w[None, None].astype(np.uint8), chains, axis=1)
    streams = ChainStreams([[np.random.default_rng(seed + 3 + c) for c in range(chains)]])
    run = run_chains(sweepers["compiled"], start, 2, streams, burn_in=5)
    moved = float(np.mean(run.rows[0, :, 1] != run.rows[0, :, 0]))
    parts: dict[str, Any] = {  # each part: its seconds and its values, on a sweeper
        "rows product": lambda s: _timed(lambda: s.rows.full_sums(w_chains)),
        "cols product": lambda s: _timed(lambda: s.cols.full_sums(z_chains)),
        "index updates": lambda s: _updates(s, run),
        "start scores": lambda s: _timed(s.entrywise_scores),
        "Gibbs run": lambda s: _timed(lambda: _gibbs(s, w, chains, sweeps, seed)),
    }
    if with_map if with_map is not None else nnz <= MAP_ENTRIES:
        parts["MAP"] = lambda s: _timed(lambda: _map(model, X, s, seed))
    seconds = {part: dict.fromkeys(KERNELS, np.inf) for part in parts}
    same = {}
    with single_blas_thread():
        for kernel in KERNELS:  # warm-up (the compiled loops are loaded here)
            sweepers[kernel].rows.full_sums(w_chains[:, :1])
        for part, func in parts.items():
            values = {}
            for _ in range(repeats):
                for kernel in KERNELS:
                    elapsed, values[kernel] = func(sweepers[kernel])
                    seconds[part][kernel] = min(seconds[part][kernel], elapsed)
            same[part] = _same([values[k] for k in KERNELS])
    for kernel in KERNELS:
        seconds.setdefault("both products", {})[kernel] = (seconds["rows product"][kernel]
                                                           + seconds["cols product"][kernel])
    same["both products"] = same["rows product"] and same["cols product"]
    return {"table": f"{kind} {n_rows}x{n_cols} 3x3 @{density:g}", "nnz": nnz, "chains": chains,
            "sweeps": sweeps + 5, "moved": moved, "seconds": seconds, "same": same}


def _updates(sweeper: Sweeper, run) -> tuple[float, tuple[np.ndarray, np.ndarray]]:
    """Both steps' block sums brought from one sweep's labels to the next by index updates: the
    seconds of the updates alone, and the sums."""
    seconds, out = 0.0, []
    for side, labels in (("rows", run.cols), ("cols", run.rows)):
        sums = BlockSums(sweeper, side, max_changed=10**12)
        sums.update(labels[:, :, 0])
        elapsed, route = _timed(lambda: sums.update(labels[:, :, 1]))
        assert route in ("index", "unchanged"), route
        seconds += elapsed
        out.append(sums.sums)
    return seconds, tuple(out)


def _gibbs(sweeper: Sweeper, w: np.ndarray, chains: int, sweeps: int, seed: int) -> np.ndarray:
    start = np.repeat(w[None, None].astype(np.uint8), chains, axis=1)
    streams = ChainStreams([[np.random.default_rng(seed + 10 + c) for c in range(chains)]])
    run = run_chains(sweeper, start, sweeps, streams, burn_in=5)
    return run.rows, run.cols


def _map(model, X, sweeper: Sweeper, seed: int) -> tuple[np.ndarray, np.ndarray]:
    kernel = "compiled" if sweeper.kernel.name == "compiled" else "scipy"
    with use_kernel(kernel):
        result = map_labels(model, X, rng=seed)
    return result.rows, result.cols


#: How each part is shown: its unit, and the seconds' divisor of that unit.
def _units(row: dict[str, Any]) -> dict[str, tuple[str, float]]:
    per_chain = row["nnz"] * row["chains"] / 1e9
    return {"rows product": ("ns per stored entry per chain", per_chain),
            "cols product": ("ns per stored entry per chain", per_chain),
            "both products": ("ns per stored entry per chain", per_chain),
            "index updates": (f"ns per stored entry per chain ({100 * row['moved']:.1f}% of the rows moved)",
                              per_chain),
            "start scores": ("ns per stored entry", row["nnz"] / 1e9),
            "Gibbs run": (f"ns per stored entry per chain per sweep ({row['sweeps']} sweeps)",
                          per_chain * row["sweeps"]),
            "MAP": ("seconds", 1.0)}


def format_rows(rows: list[dict[str, Any]], compile_times: dict[str, dict[str, float]] | None) -> str:
    lines = []
    if compile_times is not None:
        cold, warm = compile_times["cold"], compile_times["warm"]
        lines.append(f"compiled kernel, once per process: import numba {cold['import']:.2f} s; compiling its loops "
                     f"into an empty cache {cold['first_calls']:.2f} s; in the next process, import "
                     f"{warm['import']:.2f} s and loading them from the cache {warm['first_calls']:.2f} s")
    order = ("rows product", "cols product", "both products", "index updates", "start scores", "Gibbs run", "MAP")
    for row in rows:
        lines.append("")
        lines.append(f"{row['table']}: {row['nnz']:,} stored entries, {row['chains']} chains, one core")
        lines.append("| part | unit | scipy | compiled | scipy/compiled | same |")
        lines.append("| --- | --- | ---: | ---: | ---: | --- |")
        units = _units(row)
        for part in order:
            if part not in row["seconds"]:
                continue
            unit, divisor = units[part]
            s, c = (row["seconds"][part][k] / divisor for k in KERNELS)
            lines.append(f"| {part} | {unit} | {s:.3f} | {c:.3f} | {s / c:.2f} | "
                         f"{'yes' if row['same'][part] else 'NO'} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = bench_parser("bench_kernel.py", __doc__.split("\n\n")[0], repeats="part (default 3, --quick 1)")
    parser.add_argument("--million", action="store_true", help="also the 1e6 x 1e5 tables at 0.1%%")
    parser.add_argument("--only-million", action="store_true", help="the 1e6 x 1e5 tables alone")
    parser.add_argument("--map", action="store_true", help="time the MAP of every table (not only up to 1e7 entries)")
    parser.add_argument("--sweeps", type=int, default=None, help="kept sweeps of the Gibbs run (default 20; +5)")
    parser.add_argument("--no-compile", action="store_true", help="leave out the compile times")
    parser.add_argument("--threshold", action="store_true",
                        help="only the CPU seconds of lbm-bench generate with each kernel at growing sizes")
    add_output_argument(parser)
    args = parser.parse_args(argv)
    if args.threshold:
        info = machine_info()
        print(f"# {info['cpu']}, {info['cores']} cores; load average before {info['loadavg']}", flush=True)
        sizes = QUICK_THRESHOLD if args.quick else THRESHOLD_SIZES
        rows = threshold_rows(sizes, args.repeats or (1 if args.quick else 2))
        print(format_threshold(rows))
        print(f"# load average after {machine_info()['loadavg']}")
        finish(args.json, rows)
        return 0 if all(r["same"] for r in rows) else 1
    repeats = args.repeats or (1 if args.quick else 3)
    sweeps = args.sweeps or (3 if args.quick else 20)
    sizes = QUICK if args.quick else (MILLION if args.only_million else SIZES + (MILLION if args.million else ()))
    info = machine_info()
    from lbm_bench.inference.compiled_loops import numba_status

    print(f"# {info['cpu']}, {info['cores']} cores; numpy {np.__version__}, numba {numba_status()[0]}; "
          f"load average before {info['loadavg']}", flush=True)
    compile_times = None if args.no_compile else compile_seconds()
    rows = [kernel_rows(*size, sweeps=sweeps, repeats=repeats, seed=args.seed, with_map=args.map or None)
            for size in sizes]
    print(format_rows(rows, compile_times))
    print(f"# load average after {machine_info()['loadavg']}")
    finish(args.json, {"compile": compile_times, "tables": rows})
    return 0 if all(all(row["same"].values()) for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
