"""Benchmark of the sparse engine: sparse tables against the same tables densified.

Part 1 (default): for each configuration, one sparse table (its scale from the
design's first guess, :func:`lbm_bench.protocol.separation.first_guess`, for a
MAP error near 10%), and in the same process, alternating, best of
``repeats``:

- ``gibbs``: 2,000 label sets (8 chains, 50 burn-in sweeps, chains started at
  the generating labels and at the MAP labels) on the ``scipy.sparse`` table and
  on ``X.toarray()``; ``same`` says whether the label sets are identical (they
  must be: integer block sums are exact by both engines);
- ``map``: :func:`map_labels` with its defaults on both.
- ``peak MiB``: ``tracemalloc`` peak of one Gibbs run of each (numpy's buffers:
  statistics, block sums, label sets; not the input table).

Part 2 (``--scaling``): the sparse engine alone, seconds per Gibbs sweep (8
chains from the generating labels, 20 sweeps after 5, best of ``repeats``
runs of the same sweeps), the fraction of row labels that move per sweep (the
incremental block-sum updates cost in proportion to it) and peak memory, as the
number of stored entries grows at a fixed shape, as ``n_rows + n_cols`` grows
at a fixed number of stored entries, and as the number of blocks ``g m`` grows;
then the log-log slopes of time and memory along each axis.

Usage::

    python scripts/benchmarks/bench_sparse.py             # part 1 (about a minute on 2 cores)
    python scripts/benchmarks/bench_sparse.py --scaling   # parts 1 and 2
    python scripts/benchmarks/bench_sparse.py --quick     # tiny version (seconds)
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from lbm_bench import gibbs_labels, map_labels, random_design

# The internals this benchmark measures or needs (the engine's sweeps, the sampler's chain
# loop, the scale's first guess): the one place it reaches past the public API.
from lbm_bench.inference.chains import run_chains
from lbm_bench.inference.engine import Sweeper
from lbm_bench.protocol.separation import first_guess

sys.path.insert(0, str(Path(__file__).resolve().parent))  # sibling modules (scripts/README.md)

from _benchmarks import TableSpec, add_output_argument, bench_parser, best_time, finish, peak_mib  # noqa: E402
from bench_gibbs_map import machine_info  # noqa: E402

__all__ = ["SparseConfig", "CONFIGS", "QUICK_CONFIGS", "AXIS_KEYS", "engine_rows", "scaling_rows", "scaling_slopes",
           "main"]


@dataclass(frozen=True)
class SparseConfig(TableSpec):
    """A sparse table: family, shape, clusters, density, Poisson effects."""

    density: float
    effects: bool = False
    n_samples: int = 2000

    def label(self) -> str:
        extra = " effects" if self.effects else ""
        return f"{self.kind} {self.n_rows}x{self.n_cols} {self.g}x{self.m} @{self.density:g}{extra}"


CONFIGS: tuple[SparseConfig, ...] = (
    SparseConfig("bernoulli", 2000, 1000, 3, 3, 0.01),
    SparseConfig("bernoulli", 2000, 1000, 3, 3, 0.05),
    SparseConfig("poisson", 2000, 1000, 3, 3, 0.02, effects=True),
    SparseConfig("bernoulli", 6000, 2000, 3, 3, 0.01),
)

QUICK_CONFIGS: tuple[SparseConfig, ...] = (
    SparseConfig("bernoulli", 300, 200, 2, 2, 0.05, n_samples=200),
    SparseConfig("poisson", 300, 200, 2, 2, 0.05, effects=True, n_samples=200),
)


def _table(config: SparseConfig, seed: int, target: float = 0.1):
    options = {"effects": (config.n_rows, config.n_cols)} if config.effects else {}
    design = random_design(config.kind, config.g, config.m, density=config.density, rng=seed, **options)
    scale, _ = first_guess(design, config.n_rows, config.n_cols, target)
    model = design.model(scale)
    X, z, w = model.sample(config.n_rows, config.n_cols, rng=seed + 1)
    return model, X, z, w


def engine_rows(quick: bool = False, *, seed: int = 0, repeats: int | None = None) -> list[dict[str, Any]]:
    """Part 1: the sparse engine against the densified table (see the module documentation)."""
    repeats = repeats or (1 if quick else 3)
    rows = []
    for config in QUICK_CONFIGS if quick else CONFIGS:
        rows.append(_engine_row(config, seed, repeats))
    return rows


def _engine_row(config: SparseConfig, seed: int, repeats: int) -> dict[str, Any]:
    model, X, z, w = _table(config, seed)
    dense = X.toarray()
    start = map_labels(model, X, rng=seed)
    starts = [(z, w), (start.rows, start.cols)]

    def gibbs(table):
        return gibbs_labels(model, table, n_samples=config.n_samples, init=starts, rng=seed + 2)

    def classify(table):
        return map_labels(model, table, rng=seed)

    times = {"sparse": math.inf, "dense": math.inf}
    map_times = {"sparse": math.inf, "dense": math.inf}
    results = {}
    for _ in range(repeats):  # alternating
        for name, table in (("sparse", X), ("dense", dense)):
            seconds, results[name] = best_time(lambda t=table: gibbs(t), 1)
            times[name] = min(times[name], seconds)
            seconds, _ = best_time(lambda t=table: classify(t), 1)
            map_times[name] = min(map_times[name], seconds)
    same = bool(np.array_equal(results["sparse"].rows, results["dense"].rows)
                and np.array_equal(results["sparse"].cols, results["dense"].cols))
    return {
        "config": config.label(), "nnz": int(X.nnz), "risk": results["sparse"].risk(start.rows, start.cols).risk,
        "n_samples": config.n_samples,
        "gibbs_dense_s": times["dense"], "gibbs_sparse_s": times["sparse"],
        "map_dense_s": map_times["dense"], "map_sparse_s": map_times["sparse"], "same": same,
        "peak_dense_mib": peak_mib(lambda: gibbs(dense)), "peak_sparse_mib": peak_mib(lambda: gibbs(X)),
    }


def _sweep_seconds(config: SparseConfig, seed: int, sweeps: int, repeats: int) -> dict[str, Any]:
    model, X, z, w = _table(config, seed)
    sweeper = Sweeper.for_table(model, X)
    w0 = np.repeat(w[None, None], 8, axis=1)
    run_chains(sweeper, w0, 5, np.random.default_rng(seed))  # warm-up

    def run():  # the same sweeps at every repeat (same start, same stream)
        return run_chains(sweeper, w0, sweeps, np.random.default_rng(seed), burn_in=5)

    seconds, chains = best_time(run, repeats)
    rows = chains.rows[0]
    moved = float(np.mean(rows[:, 1:] != rows[:, :-1]))  # fraction of row labels moved per sweep
    peak = peak_mib(lambda: run_chains(Sweeper.for_table(model, X), w0, 3, np.random.default_rng(seed)))
    return {"config": config.label(), "nnz": int(X.nnz), "n_items": config.n_rows + config.n_cols,
            "blocks": config.g * config.m, "sweep_s": seconds / (sweeps + 5), "moved": moved, "peak_mib": peak}


#: The quantity each axis of part 2 varies (the slopes of :func:`scaling_slopes` are against it).
AXIS_KEYS = {"nnz": "nnz", "n+d": "n_items", "gm": "blocks"}


def scaling_slopes(rows: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Least-squares slopes of log(seconds per sweep) and log(peak MiB) against the log of
    each axis's quantity (1: linear growth, 0: none)."""
    out = {}
    for axis, key in AXIS_KEYS.items():
        part = [r for r in rows if r["axis"] == axis]
        if len(part) < 2:
            continue
        x = np.log([r[key] for r in part])
        out[axis] = {name: float(np.polyfit(x, np.log([r[field] for r in part]), 1)[0])
                     for name, field in (("time", "sweep_s"), ("memory", "peak_mib"))}
    return out


def scaling_rows(quick: bool = False, *, seed: int = 0, repeats: int | None = None) -> list[dict[str, Any]]:
    """Part 2: seconds per sweep (best of ``repeats``) and peak memory against nnz,
    n_rows + n_cols and g m."""
    repeats = repeats or (1 if quick else 3)
    if quick:
        grid = [("nnz", SparseConfig("bernoulli", 400, 200, 2, 2, d)) for d in (0.02, 0.08)]
        sweeps = 3
    else:
        grid = [("nnz", SparseConfig("bernoulli", 20000, 5000, 3, 3, d)) for d in (0.0025, 0.005, 0.01, 0.02)]
        grid += [("n+d", SparseConfig("bernoulli", 5000 * f, 1250 * f, 3, 3, 0.02 / f**2)) for f in (1, 2, 4, 8)]
        grid += [("gm", SparseConfig("bernoulli", 20000, 5000, k, k, 0.005)) for k in (2, 3, 5, 8)]
        sweeps = 20
    rows = []
    for axis, config in grid:
        row = _sweep_seconds(config, seed, sweeps, repeats)
        row["axis"] = axis
        rows.append(row)
    return rows


def format_engine_rows(rows: list[dict[str, Any]]) -> str:
    lines = [f"{'configuration':<38} {'nnz':>9} {'risk':>6} {'task':<11} {'dense s':>8} {'sparse s':>8} "
             f"{'ratio':>6} {'peak MiB dense/sparse':>22} {'same':>5}"]
    lines.append("-" * len(lines[0]))
    for r in rows:
        lines.append(f"{r['config']:<38} {r['nnz']:>9} {r['risk']:>6.3f} {'gibbs ' + str(r['n_samples']):<11} "
                     f"{r['gibbs_dense_s']:>8.3f} {r['gibbs_sparse_s']:>8.3f} "
                     f"{r['gibbs_dense_s'] / r['gibbs_sparse_s']:>6.2f} "
                     f"{r['peak_dense_mib']:>10.1f}/{r['peak_sparse_mib']:<11.1f} {str(r['same']):>5}")
        lines.append(f"{'':<38} {'':>9} {'':>6} {'map':<11} {r['map_dense_s']:>8.3f} {r['map_sparse_s']:>8.3f} "
                     f"{r['map_dense_s'] / r['map_sparse_s']:>6.2f}")
    return "\n".join(lines)


def format_scaling_rows(rows: list[dict[str, Any]]) -> str:
    lines = [f"{'axis':<5} {'configuration':<38} {'nnz':>9} {'n+d':>7} {'g m':>4} {'s/sweep':>8} "
             f"{'moved':>6} {'peak MiB':>9}"]
    lines.append("-" * len(lines[0]))
    for r in rows:
        lines.append(f"{r['axis']:<5} {r['config']:<38} {r['nnz']:>9} {r['n_items']:>7} {r['blocks']:>4} "
                     f"{r['sweep_s']:>8.4f} {r['moved']:>6.3f} {r['peak_mib']:>9.1f}")
    slopes = scaling_slopes(rows)
    if slopes:
        lines.append("log-log slopes (1: linear): " + "; ".join(
            f"{axis} time {s['time']:.2f} memory {s['memory']:.2f}" for axis, s in slopes.items()))
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point: print the benchmark tables."""
    parser = bench_parser("python scripts/benchmarks/bench_sparse.py",
                          "The sparse engine against the densified tables.", repeats="task")
    parser.add_argument("--scaling", action="store_true", help="also time sweeps against nnz, n+d and g m")
    add_output_argument(parser)
    args = parser.parse_args(argv)
    info = machine_info()
    print(f"# {info['cpu']}, {info['cores']} cores; OPENBLAS_NUM_THREADS: {info['blas_threads']}; "
          f"numpy {info['numpy']}, scipy {info['scipy']}; load average {info['loadavg']}")
    print("sparse engine vs the same tables densified (same process, alternating, best of repeats)")
    rows = engine_rows(args.quick, seed=args.seed, repeats=args.repeats)
    print(format_engine_rows(rows))
    out: dict[str, Any] = {"engine": rows}
    if args.scaling:
        print("\nsparse engine: seconds per Gibbs sweep (8 chains) and tracemalloc peak")
        out["scaling"] = scaling_rows(args.quick, seed=args.seed, repeats=args.repeats)
        print(format_scaling_rows(out["scaling"]))
    finish(args.json, out)
    return 0 if all(r["same"] for r in rows) else 1


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
