"""Gibbs sweeps on categorical tables against the binary tables of the same shape (issue 24).

For each configuration (shape, clusters, number of categories K, target risk) the
benchmark draws a categorical design and a Bernoulli design (equal dispersions), fixes
one table's labels and noise for each, and searches the scale at which the Gibbs risk
of the MAP labels is near the target (``find_scale`` of ``bench_gibbs_map.py``, a
sibling module), so
that both tables are equally hard and their chains move as many labels. It then times,
in the same process and alternating between the tables (best of ``repeats``):

- ``bernoulli``: ``gibbs_labels`` on the binary table (2,000 label sets, 8 chains, 50
  burn-in sweeps, chains started at the MAP): the reference;
- ``categorical``: the same on the categorical table, with its code statistics (the
  codes packed, :mod:`lbm_bench.inference.code_sums`);
- ``categorical dense``: the same table with the statistics held as ``K - 1`` float64
  tables (the dense storage, as before the code layout), for comparison;

and prints seconds per sweep and the ratio to the binary table's sweep (issue 24 asks
for at most 3x at 1000x1000, K = 5). Wall-clock times; ``OPENBLAS_NUM_THREADS=1`` for
one thread (the index updates run on one thread anyway).

Usage::

    OPENBLAS_NUM_THREADS=1 python scripts/benchmarks/bench_categorical.py          # 1000x1000, K = 3, 5, 10
    python scripts/benchmarks/bench_categorical.py --quick                         # tiny (seconds)
    python scripts/benchmarks/bench_categorical.py --json rows.json
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from lbm_bench import CategoricalLBM, gibbs_labels

sys.path.insert(0, str(Path(__file__).resolve().parent))  # sibling modules (scripts/README.md)

from _benchmarks import add_output_argument, bench_parser, finish  # noqa: E402
from bench_gibbs_map import Config, find_scale, machine_info  # noqa: E402

__all__ = ["CatConfig", "CONFIGS", "QUICK_CONFIGS", "DenseCategorical", "run_benchmarks", "main"]


class DenseCategorical(CategoricalLBM):
    """Categorical blocks whose statistics the engine holds as K - 1 float64 tables (the
    dense storage): what a family without ``code_statistics`` costs."""

    code_statistics = False


@dataclass(frozen=True)
class CatConfig:
    """A categorical table and its binary twin: shape, clusters, categories, target risk."""

    n_rows: int
    n_cols: int
    g: int
    m: int
    categories: int
    target_risk: float
    n_samples: int = 2000

    @property
    def name(self) -> str:
        return f"{self.n_rows}x{self.n_cols} {self.g}x{self.m} K={self.categories} @{100 * self.target_risk:g}%"


CONFIGS: tuple[CatConfig, ...] = (
    CatConfig(1000, 1000, 3, 3, 3, 0.10),
    CatConfig(1000, 1000, 3, 3, 5, 0.10),
    CatConfig(1000, 1000, 3, 3, 10, 0.10),
)
QUICK_CONFIGS: tuple[CatConfig, ...] = (CatConfig(120, 100, 3, 3, 5, 0.10, n_samples=200),)


def _sweep_seconds(model, X, init, n_samples: int, seed: int) -> float:
    """Seconds per sweep of one ``gibbs_labels`` run (8 chains, 50 burn-in sweeps)."""
    sweeps = 50 + -(-n_samples // 8)
    start = time.perf_counter()
    gibbs_labels(model, X, n_samples=n_samples, init=init, rng=seed)
    return (time.perf_counter() - start) / sweeps


def run_benchmarks(
    quick: bool = False,
    *,
    rng: int = 0,
    configs: Sequence[CatConfig] | None = None,
    repeats: int | None = None,
    log: Callable[[str], Any] | None = None,
) -> list[dict]:
    """One row per table (the binary reference, the categorical table with code statistics
    and with dense ones) with seconds per sweep and the ratio to the binary table's.

    Returns
    -------
    list of dict
        Keys: ``config``, ``variant``, ``kind``, ``categories``, ``risk``, ``scale``,
        ``seconds_per_sweep``, ``ratio_to_bernoulli``, ``identical`` (the dense variant's
        label sets equal the code variant's: same engine arithmetic on exact counts).
    """
    seed = int(rng)
    configs = list(QUICK_CONFIGS if quick else CONFIGS) if configs is None else list(configs)
    repeats = (1 if quick else 3) if repeats is None else repeats
    say = log or (lambda message: None)
    rows: list[dict] = []
    binaries: dict[tuple, dict] = {}  # the binary twin of a shape, clusters and target, found once
    for config in configs:
        probes = 4 if quick else 14
        twin = Config("bernoulli", config.n_rows, config.n_cols, config.g, config.m, config.target_risk)
        if twin not in binaries:
            binaries[twin] = find_scale(twin, seed=seed, max_probes=probes)
        binary = binaries[twin]
        coded = find_scale(Config("categorical", config.n_rows, config.n_cols, config.g, config.m,
                                  config.target_risk, options=(("categories", config.categories),)),
                           seed=seed, max_probes=probes)
        model = coded["model"]
        dense = DenseCategorical(model.row_proportions, model.col_proportions, model.probs)
        variants = {
            "bernoulli": (binary["model"], binary["X"], binary),
            "categorical": (model, coded["X"], coded),
            "categorical dense": (dense, coded["X"], coded),
        }
        best = dict.fromkeys(variants, math.inf)
        for _ in range(repeats):  # alternate, so that every variant sees the same machine load
            for name, (m, X, found) in variants.items():
                init = (found["map"].rows, found["map"].cols)
                best[name] = min(best[name], _sweep_seconds(m, X, init, config.n_samples, seed))
        init = (coded["map"].rows, coded["map"].cols)
        a = gibbs_labels(model, coded["X"], n_samples=config.n_samples, init=init, rng=seed)
        b = gibbs_labels(dense, coded["X"], n_samples=config.n_samples, init=init, rng=seed)
        identical = bool(np.array_equal(a.rows, b.rows) and np.array_equal(a.cols, b.cols))
        for name, (m, _, found) in variants.items():
            rows.append({
                "config": config.name, "variant": name, "kind": m.kind,
                "categories": getattr(m, "categories", 2), "risk": found["risk"], "scale": found["scale"],
                "seconds_per_sweep": best[name], "ratio_to_bernoulli": best[name] / best["bernoulli"],
                "identical": identical,
            })
        say(f"{config.name}: " + ", ".join(f"{n} {1e3 * best[n]:.2f} ms/sweep" for n in variants))
    return rows


def format_table(rows: list[dict]) -> str:
    lines = [f"{'table':32s} {'variant':18s} {'risk':>6s} {'ms/sweep':>9s} {'x bernoulli':>11s}"]
    for r in rows:
        lines.append(f"{r['config']:32s} {r['variant']:18s} {r['risk']:6.3f} {1e3 * r['seconds_per_sweep']:9.2f} "
                     f"{r['ratio_to_bernoulli']:11.2f}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = bench_parser("bench_categorical.py", __doc__.split("\n\n")[0], repeats="table (best kept)")
    add_output_argument(parser)
    args = parser.parse_args(argv)
    before = machine_info()
    start = time.perf_counter()
    rows = run_benchmarks(args.quick, rng=args.seed, repeats=args.repeats, log=print)
    print(f"# {before['cpu']}, {before['cores']} cores; OPENBLAS_NUM_THREADS: {before['blas_threads']}; "
          f"Python {before['python']}, numpy {before['numpy']}, scipy {before['scipy']}")
    print(f"# load average before {before['loadavg']}, after {machine_info()['loadavg']}; "
          f"benchmark wall time {time.perf_counter() - start:.1f} s; best of the timed runs, alternated")
    print(format_table(rows))
    finish(args.json, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
