"""Benchmarks of the Gibbs sampler (incremental vs full block sums) and of the MAP.

For every configuration (family, table shape, clusters, target risk) the
benchmark draws a design with :func:`~lbm_bench.random_design` (equal
dispersions, so that the scale alone sets the difficulty), fixes one table's
labels and noise, and searches the scale whose Gibbs-estimated risk of the MAP
labels is near the target (bisection on the log-scale, each probe a MAP and a
200-set Gibbs run on the same noise). On that table it then times, side by
side in the same process:

- ``gibbs_labels(..., method="full")`` (baseline: full block-sum products at
  every half-sweep) and ``method="incremental"`` (index updates), 2,000 label
  sets, 8 chains, 50 burn-in sweeps, chains started at the MAP labels (so the
  MAP is not counted in the Gibbs time); best of ``repeats`` runs each;
- ``map_labels(..., method="full")`` (baseline: full block-sum products at
  every step of Algorithm 1) and its default ``method="incremental"``, with
  ``n_init=10`` random starts plus the classifier's two entrywise starts.

Peak memory is the ``tracemalloc`` peak of one extra, untimed run of each
method (numpy registers its buffers with tracemalloc, so it counts the
arrays allocated during the call: statistics, block sums, label sets; not the
input table nor memory held by BLAS threads).

Usage::

    python scripts/benchmarks/bench_gibbs_map.py                 # full benchmark (a few minutes on 2 cores)
    python scripts/benchmarks/bench_gibbs_map.py --quick         # tiny version (seconds)
    python scripts/benchmarks/bench_gibbs_map.py --json out.json # also write the rows
    python scripts/benchmarks/bench_gibbs_map.py --max-external-load 0.2   # shared machine: time when quiet
    python scripts/benchmarks/bench_gibbs_map.py --threshold     # measure the cost model of the index update
    python scripts/benchmarks/bench_gibbs_map.py --tolerance     # rounding of incremental Gaussian block sums

Profiling::

    python -m cProfile -s cumtime scripts/benchmarks/bench_gibbs_map.py --quick | head -60
    python -m cProfile -o bench.prof scripts/benchmarks/bench_gibbs_map.py
    python -c "import pstats; pstats.Stats('bench.prof').sort_stats('tottime').print_stats(25)"

Timings are wall-clock (``time.perf_counter``); set ``OPENBLAS_NUM_THREADS``
to pin the number of BLAS threads. The baseline's full product is the only part
of either Gibbs method that runs on more than one thread (OpenBLAS uses every
core by default); the incremental method's index updates, logits and draws run
on one. So the default compares the baseline on all cores with the incremental
method on one core; ``OPENBLAS_NUM_THREADS=1`` compares the two algorithms on
one core each (and is what release builds and calibration workers use, which
pin BLAS to one thread). docs/performance.md quotes both. On a shared machine
other processes skew the full-product baseline most (BLAS threads wait for
each other).
"""

from __future__ import annotations

import json
import math
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from lbm_bench import gibbs_labels, map_labels, random_design

# The internals this benchmark measures (the block-sum engine's kernels and the sampler's
# chain loop): the one place it reaches past the public API.
from lbm_bench.inference import dense_sums as _dense
from lbm_bench.inference.chains import run_chains
from lbm_bench.inference.engine import BlockSums, Sweeper

sys.path.insert(0, str(Path(__file__).resolve().parent))  # sibling modules (scripts/README.md)

from _benchmarks import TableSpec, add_output_argument, bench_parser  # noqa: E402
from _benchmarks import best_time as _best_time  # noqa: E402
from _benchmarks import peak_mib as _peak_mib  # noqa: E402

__all__ = ["Config", "CONFIGS", "QUICK_CONFIGS", "run_benchmarks", "measure_threshold", "main"]


@dataclass(frozen=True)
class Config(TableSpec):
    """One benchmark table: family, shape, clusters and target risk (and the family's design
    options, e.g. ``(("categories", 5),)``)."""

    target_risk: float
    n_samples: int = 2000
    options: tuple[tuple[str, Any], ...] = ()

    @property
    def name(self) -> str:
        return (
            f"{self.kind} {self.n_rows}x{self.n_cols} {self.g}x{self.m} "
            f"@{100 * self.target_risk:g}%"
        )


CONFIGS: tuple[Config, ...] = (
    Config("gaussian", 50, 50, 3, 3, 0.20),
    Config("gaussian", 500, 500, 3, 3, 0.10),
    Config("gaussian", 1000, 1000, 3, 3, 0.05),
    Config("gaussian", 1000, 1000, 3, 3, 0.10),
    Config("gaussian", 1000, 1000, 3, 3, 0.20),
    Config("gaussian", 1000, 1000, 10, 10, 0.10),
    Config("bernoulli", 1000, 1000, 3, 3, 0.10),
    Config("poisson", 500, 500, 3, 3, 0.10),
)

QUICK_CONFIGS: tuple[Config, ...] = (
    Config("gaussian", 40, 30, 3, 3, 0.10, n_samples=200),
    Config("bernoulli", 60, 50, 2, 2, 0.10, n_samples=200),
    Config("gaussian", 300, 300, 3, 3, 0.10, n_samples=200),  # takes the index route
)


def _cpu_snapshot() -> tuple[float, float, float]:
    """(CPU seconds used by the whole machine, by this process, wall clock)."""
    import os

    busy = math.nan
    try:
        with open("/proc/stat") as handle:
            fields = [float(x) for x in handle.readline().split()[1:]]
        ticks = os.sysconf("SC_CLK_TCK")
        busy = (sum(fields) - fields[3] - fields[4]) / ticks  # minus idle and iowait
    except (OSError, ValueError, IndexError, AttributeError):
        pass
    own = os.times()
    return busy, own.user + own.system, time.perf_counter()


def _external_load(start: tuple[float, float, float]) -> float:
    """Cores' worth of CPU used by other processes since ``start`` (Linux; else nan;
    nan too below 0.25 s, as /proc/stat counts in 10 ms ticks)."""
    busy, own, wall = _cpu_snapshot()
    if wall - start[2] < 0.25:
        return math.nan
    return max(0.0, ((busy - start[0]) - (own - start[1])) / (wall - start[2]))


def _wait_quiet(max_load: float, max_wait: float, say: Callable[[str], Any]) -> None:
    """Wait (at most ``max_wait`` s) until other processes use less than ``max_load``
    cores' worth of CPU over one second."""
    deadline = time.perf_counter() + max_wait
    while True:
        snapshot = _cpu_snapshot()
        time.sleep(1.0)
        load = _external_load(snapshot)
        if not load > max_load or time.perf_counter() > deadline:  # nan: not on Linux
            return
        say(f"  waiting: other processes use {load:.2f} cores")


def _quiet_timing(
    measure: Callable[[], Any], max_load: float | None, max_wait: float, say: Callable[[str], Any]
) -> tuple[Any, float, int]:
    """Run ``measure()``; with ``max_load``, wait for a quiet machine first and retry
    (up to 3 attempts) while other processes used more than ``max_load`` cores during
    it. Returns the result, the external load during it and the attempts."""
    for attempt in range(1, 4):  # noqa: B007 - the attempts made are returned
        if max_load is not None:
            _wait_quiet(max_load, max_wait, say)
        snapshot = _cpu_snapshot()
        result = measure()
        load = _external_load(snapshot)
        if max_load is None or not load > max_load:
            break
        say(f"  other processes used {load:.2f} cores during the timing; again")
    return result, load, attempt


def _probe_risk(model, X, seed: int, n_samples: int = 200) -> tuple[float, Any]:
    result = map_labels(model, X, rng=seed)
    samples = gibbs_labels(
        model, X, n_samples=n_samples, init=(result.rows, result.cols), rng=seed
    )
    return samples.risk(result.rows, result.cols).risk, result


def find_scale(
    config: Config, *, seed: int = 0, max_probes: int = 14, rel_tol: float = 0.15
) -> dict[str, Any]:
    """Scale whose table (fixed labels and noise) has a Gibbs risk of the MAP near the target.

    Returns a dict with the model, table, MAP result, scale, estimated risk and
    number of probes.
    """
    design = random_design(
        config.kind, config.g, config.m, equal_dispersions=True, rng=seed, **dict(config.options)
    )
    rng = np.random.default_rng(seed + 1)
    reference = design.model(1.0)
    z, w = reference.sample_labels(config.n_rows, config.n_cols, rng=rng)
    noise = reference.draw_noise(config.n_rows, config.n_cols, rng=rng)
    target = config.target_risk

    def probe(scale: float) -> dict[str, Any]:
        model = design.model(scale)
        X = model.table_from_noise(noise, z, w)
        risk, result = _probe_risk(model, X, seed)
        return {"scale": scale, "risk": risk, "model": model, "X": X, "map": result}

    scale = 4.0 / math.sqrt(min(config.n_rows, config.n_cols))
    best = probe(scale)
    probes = [best]
    lo = hi = None  # scales with risk above / below the target (risk decreases with scale)
    for _ in range(max_probes - 1):
        current = probes[-1]
        if abs(current["risk"] - target) <= rel_tol * target:
            break
        if current["risk"] > target:
            lo = current["scale"] if lo is None else max(lo, current["scale"])
        else:
            hi = current["scale"] if hi is None else min(hi, current["scale"])
        if lo is None:
            scale = hi / 2
        elif hi is None:
            scale = lo * 2
        else:
            scale = math.sqrt(lo * hi)
        probes.append(probe(scale))
    best = min(probes, key=lambda p: abs(p["risk"] - target))
    best["n_probes"] = len(probes)
    return best


def _route_counts(model, X, init, n_samples: int, seed: int) -> dict[str, int]:
    """Update routes of the incremental method on this table (rows + cols)."""
    sweeper = Sweeper(model, X[None])
    n_chains = 8
    w = np.stack([init[1]] * n_chains)[None]
    per_chain = -(-n_samples // n_chains)
    run = run_chains(sweeper, w, per_chain, np.random.default_rng(seed), burn_in=50)
    row_sums, col_sums = run.row_sums, run.col_sums
    return {
        "index_updates": row_sums.n_index + col_sums.n_index,
        "full_updates": row_sums.n_full + col_sums.n_full,
        "recompute_updates": row_sums.n_recompute + col_sums.n_recompute,
        "fallback_updates": row_sums.n_fallback + col_sums.n_fallback,
        "unchanged_updates": row_sums.n_unchanged + col_sums.n_unchanged,
        "mean_changed": (row_sums.n_changed + col_sums.n_changed)
        / max(1, row_sums.n_index + col_sums.n_index),
    }


def run_benchmarks(
    quick: bool = False,
    *,
    rng: int = 0,
    configs: Sequence[Config] | None = None,
    repeats: int | None = None,
    memory: bool = True,
    max_external_load: float | None = None,
    max_wait: float = 600.0,
    log: Callable[[str], Any] | None = None,
) -> list[dict]:
    """Run the benchmark; one dict per measurement (Gibbs and MAP rows per table).

    Parameters
    ----------
    quick : bool, default=False
        Tiny tables and 200 label sets (a few seconds), for tests.
    rng : int, default=0
        Seed of the designs, tables and samplers.
    configs : sequence of Config, optional
        Override the configurations.
    repeats : int, optional
        Timed runs per method (best kept); default 2 (1 when quick).
    memory : bool, default=True
        Also measure the tracemalloc peak of each method (one extra run each).
    max_external_load : float, optional
        On a shared machine: before each timed section, wait (at most
        ``max_wait`` seconds) until other processes use less than this many
        cores, and time again (up to 3 attempts) when they used more during
        the timing. The load measured is reported either way.
    log : callable, optional
        Progress messages (e.g. ``print``).

    Returns
    -------
    list of dict
        Keys: ``task`` ("gibbs" or "map"), ``config``, ``kind``, ``shape``,
        ``clusters``, ``target_risk``, ``risk``, ``scale``, ``external_load``
        (cores' worth of CPU used by other processes during the timed Gibbs
        runs, from /proc/stat), ``baseline_s``,
        ``new_s``, ``ratio``, ``sets_per_s``, ``peak_mib_baseline``,
        ``peak_mib_new``, ``identical`` (fraction of equal labels between the
        two methods), update-route counts.
    """
    seed = int(rng)
    configs = list(QUICK_CONFIGS if quick else CONFIGS) if configs is None else list(configs)
    repeats = (1 if quick else 2) if repeats is None else repeats
    say = log or (lambda message: None)
    rows: list[dict] = []
    for config in configs:
        start = time.perf_counter()
        found = find_scale(config, seed=seed, max_probes=4 if quick else 14)
        model, X, result = found["model"], found["X"], found["map"]
        init = (result.rows, result.cols)
        say(
            f"{config.name}: scale {found['scale']:.4g}, risk {found['risk']:.4f} "
            f"({found['n_probes']} probes, {time.perf_counter() - start:.1f} s)"
        )

        def gibbs(method: str) -> Any:
            return gibbs_labels(
                model, X, n_samples=config.n_samples, init=init, rng=seed, method=method
            )

        def timed_gibbs() -> tuple[float, Any, float, Any]:
            base_s = new_s = math.inf
            for _ in range(repeats):  # alternate, so both see the same machine load
                t, base = _best_time(lambda: gibbs("full"), 1)
                base_s = min(base_s, t)
                t, new = _best_time(lambda: gibbs("incremental"), 1)
                new_s = min(new_s, t)
            return base_s, base, new_s, new

        (base_s, base, new_s, new), ext_gibbs, _ = _quiet_timing(
            timed_gibbs, max_external_load, max_wait, say
        )
        identical = float(
            (np.sum(base.rows == new.rows) + np.sum(base.cols == new.cols))
            / (base.rows.size + base.cols.size)
        )
        peak_base = _peak_mib(lambda: gibbs("full")) if memory else math.nan
        peak_new = _peak_mib(lambda: gibbs("incremental")) if memory else math.nan
        common = {
            "config": config.name,
            "kind": config.kind,
            "shape": f"{config.n_rows}x{config.n_cols}",
            "clusters": f"{config.g}x{config.m}",
            "target_risk": config.target_risk,
            "risk": found["risk"],
            "scale": found["scale"],
        }
        rows.append(
            {
                **common,
                "task": f"gibbs {config.n_samples}",
                "external_load": ext_gibbs,
                "baseline_s": base_s,
                "new_s": new_s,
                "ratio": base_s / new_s,
                "sets_per_s": config.n_samples / new_s,
                "peak_mib_baseline": peak_base,
                "peak_mib_new": peak_new,
                "identical": identical,
                **_route_counts(model, X, init, config.n_samples, seed),
            }
        )
        say(f"  gibbs: full {base_s:.3f} s, incremental {new_s:.3f} s, x{base_s / new_s:.2f}")
        def timed_map() -> tuple[float, Any, float, Any]:
            base = _best_time(lambda: map_labels(model, X, method="full", rng=seed), repeats)
            new = _best_time(lambda: map_labels(model, X, rng=seed), repeats)
            return base + new

        (map_base_s, map_base, map_s, map_new), ext_map, _ = _quiet_timing(
            timed_map, max_external_load, max_wait, say
        )
        peak_map_base = (
            _peak_mib(lambda: map_labels(model, X, method="full", rng=seed)) if memory else math.nan
        )
        peak_map = _peak_mib(lambda: map_labels(model, X, rng=seed)) if memory else math.nan
        rows.append(
            {
                **common,
                "task": "map n_init=10",
                "external_load": ext_map,
                "baseline_s": map_base_s,
                "new_s": map_s,
                "ratio": map_base_s / map_s,
                "sets_per_s": math.nan,
                "peak_mib_baseline": peak_map_base,
                "peak_mib_new": peak_map,
                "identical": float(np.mean(np.concatenate([
                    map_base.rows == map_new.rows, map_base.cols == map_new.cols
                ]))),
            }
        )
        say(f"  map: full {map_base_s:.3f} s, incremental {map_s:.3f} s, x{map_base_s / map_s:.2f}")
    return rows


def measure_threshold(
    n: int = 1000,
    n_classes: int = 3,
    n_chains: int = 8,
    *,
    repeats: int = 5,
    seed: int = 0,
    fractions: Sequence[float] = (0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3),
) -> list[dict]:
    """Time one index update of ``K`` changed labels against one full product.

    On a Gaussian ``n x n`` table (2 statistics), row step, ``n_chains``
    chains; ``K`` labels moved at random. The chains of a real run move the
    same uncertain positions, so there the dense kernel gathers about ``K / 2``
    positions, fewer than here (``K' = positions``). The implied cost of one
    sparse-update row addition relative to one full-product row multiply-add
    is ``(t_sparse / row_adds) / (t_full / (C o n))``, where ``row_adds`` is
    ``2 K``, or ``K + 2 U`` when the two-stage form is used (compare with
    :data:`lbm_bench.inference.dense_sums.INDEX_UPDATE_COST`).
    """
    rng = np.random.default_rng(seed)
    design = random_design("gaussian", n_classes, n_classes, equal_dispersions=True, rng=seed)
    model = design.model(1.0)
    X, _, _ = model.sample(n, n, rng=rng)
    sweeper = Sweeper(model, X[None])
    labels = rng.integers(0, n_classes, (1, n_chains, n)).astype(np.uint8)
    full = BlockSums(sweeper, "rows", incremental=False)
    full.update(labels)
    t_full, _ = _best_time(lambda: full.update(labels), repeats)
    per_mac = t_full / (n_chains * n_classes * n)
    out = []
    for fraction in fractions:
        k = max(1, int(fraction * n_chains * n))
        flat = rng.choice(n_chains * n, size=k, replace=False)
        moved = labels.copy().reshape(-1)
        moved[flat] = (moved[flat] + rng.integers(1, n_classes, k)) % n_classes
        moved = moved.reshape(labels.shape)
        times = {}
        for kernel in ("sparse", "dense"):
            sums = BlockSums(
                sweeper, "rows", max_changed=10**9, recompute_every=10**9, kernel=kernel
            )
            sums.update(labels)
            state = [labels, moved]

            def flip() -> None:
                state.reverse()
                sums.update(state[0])

            times[kernel], _ = _best_time(flip, repeats)
            if kernel == "sparse":
                row_adds = sums.n_row_adds / sums.n_index
        out.append(
            {
                "changed": k,
                "positions": int(np.count_nonzero((moved != labels).any(axis=(0, 1)))),
                "row_adds": row_adds,
                "fraction": k / (n_chains * n),
                "t_full_ms": 1e3 * t_full,
                "t_sparse_ms": 1e3 * times["sparse"],
                "t_dense_ms": 1e3 * times["dense"],
                "cost_ratio": (times["sparse"] / row_adds) / per_mac,
            }
        )
    return out


def measure_gaussian_tolerance(
    cases: Sequence[tuple[int, float, int]] = (
        (1000, 0.05, 2000),
        (1000, 0.20, 2000),
        (500, 0.10, 20000),
        (300, 0.20, 20000),
    ),
    *,
    seeds: Sequence[int] = (0, 1, 2),
    drift_sweeps: int = 500,
    log: Callable[[str], Any] | None = None,
) -> list[dict]:
    """Rounding of the incremental Gaussian block sums, and its effect on the labels.

    For each ``(n, target risk, n_samples)`` and seed: an ``n x n`` 3x3 Gaussian
    table at the target risk (scale search as in the benchmark);

    - the label sets of ``gibbs_labels(method="incremental")`` and
      ``method="full"`` (same rng, chains started at the MAP), and the fraction
      of labels that differ;
    - the largest ``|S_incremental - S_full|`` over ``drift_sweeps`` sweeps
      (both sides, 8 chains, index updates forced at every sweep: no
      fallback), with the default recompute every 50 sweeps and with no
      recompute at all, absolute and relative to ``max |S|``.
    """
    say = log or (lambda message: None)
    out = []
    for n, target, n_samples in cases:
        for seed in seeds:
            found = find_scale(Config("gaussian", n, n, 3, 3, target), seed=seed)
            model, X, result = found["model"], found["X"], found["map"]
            options = dict(n_samples=n_samples, init=(result.rows, result.cols), rng=seed)
            inc = gibbs_labels(model, X, method="incremental", **options)
            full = gibbs_labels(model, X, method="full", **options)
            differing = int(np.sum(inc.rows != full.rows) + np.sum(inc.cols != full.cols))
            row = {
                "n": n,
                "seed": seed,
                "risk": found["risk"],
                "n_samples": n_samples,
                "labels": inc.rows.size + inc.cols.size,
                "differing_labels": differing,
            }
            sweeper = Sweeper(model, X[None])
            for name, every in (("recompute_50", None), ("no_recompute", 10**9)):
                rng = np.random.default_rng(seed)
                z = np.repeat(result.rows.astype(np.uint8)[None, None], 8, axis=1)
                w = np.repeat(result.cols.astype(np.uint8)[None, None], 8, axis=1)
                row_sums = BlockSums(sweeper, "rows", recompute_every=every, max_changed=10**9)
                col_sums = BlockSums(sweeper, "cols", recompute_every=every, max_changed=10**9)
                worst = worst_rel = 0.0
                for _ in range(drift_sweeps):
                    row_sums.update(w)
                    z = sweeper.sample_rows(row_sums, rng)
                    col_sums.update(z)
                    w = sweeper.sample_cols(col_sums, rng)
                    for sums, side in ((row_sums, sweeper.rows), (col_sums, sweeper.cols)):
                        exact = side.full_sums(sums.labels)
                        diff = float(np.abs(sums.sums - exact).max())
                        worst = max(worst, diff)
                        worst_rel = max(worst_rel, diff / float(np.abs(exact).max()))
                row[f"max_abs_{name}"] = worst
                row[f"max_rel_{name}"] = worst_rel
                row[f"index_updates_{name}"] = row_sums.n_index + col_sums.n_index
            say(str(row))
            out.append(row)
    return out


def machine_info() -> dict[str, Any]:
    """CPU, cores, BLAS threads, versions and load average, for the benchmark header."""
    import os
    import platform

    import scipy

    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as handle:
            for line in handle:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        load = os.getloadavg()
    except OSError:
        load = (math.nan,) * 3
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {
        "cpu": cpu,
        "cores": cores,
        "blas_threads": os.environ.get("OPENBLAS_NUM_THREADS", "default"),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "loadavg": tuple(round(x, 2) for x in load),
    }


def _fmt(value: float, spec: str) -> str:
    return "-" if value is None or (isinstance(value, float) and math.isnan(value)) else format(value, spec)


def format_table(rows: Sequence[dict]) -> str:
    """The rows as a fixed-width text table."""
    header = (
        f"{'configuration':<30} {'task':<13} {'risk':>6} {'ext':>5} {'base s':>8} {'new s':>8} "
        f"{'ratio':>6} {'sets/s':>8} {'peak MiB base/new':>18} {'same':>6} {'upd index/recomp/fallb':>22}"
    )
    lines = [header, "-" * len(header)]
    for row in rows:
        peak = f"{_fmt(row['peak_mib_baseline'], '.1f')}/{_fmt(row['peak_mib_new'], '.1f')}"
        routes = (
            f"{row['index_updates']}/{row['recompute_updates']}/{row['fallback_updates']}"
            if "index_updates" in row
            else "-"
        )
        lines.append(
            f"{row['config']:<30} {row['task']:<13} {row['risk']:>6.3f} {_fmt(row['external_load'], '.2f'):>5} "
            f"{_fmt(row['baseline_s'], '.3f'):>8} {row['new_s']:>8.3f} {_fmt(row['ratio'], '.2f'):>6} "
            f"{_fmt(row['sets_per_s'], '.0f'):>8} {peak:>18} {_fmt(row['identical'], '.4f'):>6} "
            f"{routes:>22}"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point: print the benchmark table."""
    parser = bench_parser("python scripts/benchmarks/bench_gibbs_map.py", "Benchmark the Gibbs sampler and the MAP.",
                          repeats="method")
    parser.add_argument("--no-memory", action="store_true", help="skip the tracemalloc runs")
    parser.add_argument(
        "--max-external-load",
        type=float,
        default=None,
        metavar="CORES",
        help="wait for, and retry timings until, other processes use fewer cores (shared machines)",
    )
    add_output_argument(parser)
    parser.add_argument(
        "--only",
        metavar="TEXT",
        action="append",
        help="run the configurations whose name contains TEXT (repeatable), e.g. '1000x1000 3x3'",
    )
    parser.add_argument(
        "--max-wait", type=float, default=600.0, help="seconds to wait for a quiet machine"
    )
    parser.add_argument(
        "--threshold", action="store_true", help="measure the index-update cost model instead"
    )
    parser.add_argument(
        "--tolerance",
        action="store_true",
        help="measure the rounding of incremental Gaussian block sums instead",
    )
    args = parser.parse_args(argv)
    if args.tolerance:
        results = measure_gaussian_tolerance(
            log=lambda message: print(message, file=sys.stderr, flush=True)
        )
        print(
            f"{'n':>5} {'seed':>4} {'risk':>6} {'sets':>6} {'differing labels':>17} "
            f"{'max|dS| (recompute 50)':>24} {'rel':>9} {'max|dS| (never)':>16} {'rel':>9}"
        )
        for r in results:
            print(
                f"{r['n']:>5} {r['seed']:>4} {r['risk']:>6.3f} {r['n_samples']:>6} "
                f"{r['differing_labels']:>8} / {r['labels']:<8} "
                f"{r['max_abs_recompute_50']:>24.2e} {r['max_rel_recompute_50']:>9.1e} "
                f"{r['max_abs_no_recompute']:>16.2e} {r['max_rel_no_recompute']:>9.1e}"
            )
        return 0
    if args.threshold:
        results = measure_threshold()
        print(
            f"{'changed K':>9} {'positions':>9} {'row adds':>8} {'fraction':>8} {'full ms':>8} "
            f"{'sparse ms':>9} {'dense ms':>9} {'row add / full row MAC':>23}"
        )
        for r in results:
            print(
                f"{r['changed']:>9} {r['positions']:>9} {r['row_adds']:>8.0f} {r['fraction']:>8.3f} "
                f"{r['t_full_ms']:>8.3f} {r['t_sparse_ms']:>9.3f} {r['t_dense_ms']:>9.3f} "
                f"{r['cost_ratio']:>23.2f}"
            )
        print(
            f"in use: INDEX_UPDATE_COST = {_dense.INDEX_UPDATE_COST}, "
            f"INDEX_MAX_FRACTION = {_dense.INDEX_MAX_FRACTION}"
        )
        return 0
    before = machine_info()
    start = time.perf_counter()
    configs = None
    if args.only:
        pool = QUICK_CONFIGS if args.quick else CONFIGS
        configs = [c for c in pool if any(text in c.name for text in args.only)]
        if not configs:
            parser.error(f"no configuration matches {args.only}; names: {[c.name for c in pool]}")
    rows = run_benchmarks(
        args.quick,
        rng=args.seed,
        configs=configs,
        max_wait=args.max_wait,
        repeats=args.repeats,
        memory=not args.no_memory,
        max_external_load=args.max_external_load,
        log=lambda message: print(message, file=sys.stderr, flush=True),
    )
    elapsed = time.perf_counter() - start
    print(
        f"# {before['cpu']}, {before['cores']} cores; OPENBLAS_NUM_THREADS: "
        f"{before['blas_threads']}; Python {before['python']}, "
        f"numpy {before['numpy']}, scipy {before['scipy']}"
    )
    print(
        f"# load average before {before['loadavg']}, after {machine_info()['loadavg']}; "
        f"benchmark wall time {elapsed:.1f} s; times are the best of the timed runs"
    )
    print(
        "# ext: cores' worth of CPU used by other processes during the timing (from /proc/stat);"
        " peak MiB: tracemalloc peak of one run"
    )
    print(format_table(rows))
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(rows, handle, indent=1)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
