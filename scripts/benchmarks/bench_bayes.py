"""Benchmark of the Bayes labels for ``l_item`` against the Gibbs run that feeds them.

For every configuration the table is found as in ``bench_gibbs_map.py``
(a scale whose MAP risk is near the target, fixed labels and noise). On it, in
the same process: the Gibbs run (2,000 label sets, 8 chains, 50 burn-in sweeps,
chains started at the MAP labels; the baseline), :func:`bayes_labels` on its
sets (the MAP labels as a further start), and :func:`floor_certificate`
(cross-fitted: three searches). Best of ``repeats`` runs each. The row also
reports the MAP's risk and the floor found, to show what the search buys.

Usage::

    python scripts/benchmarks/bench_bayes.py            # 1000x1000 tables (a minute or two on 2 cores)
    python scripts/benchmarks/bench_bayes.py --quick    # tiny version (seconds)
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lbm_bench import bayes_labels, floor_certificate, gibbs_labels

sys.path.insert(0, str(Path(__file__).resolve().parent))  # sibling modules (scripts/README.md)

from _benchmarks import add_output_argument, bench_parser, finish  # noqa: E402
from _benchmarks import best_time as _best_time  # noqa: E402
from bench_gibbs_map import Config, find_scale  # noqa: E402

__all__ = ["CONFIGS", "QUICK_CONFIGS", "bayes_rows", "format_rows", "main"]

CONFIGS: tuple[Config, ...] = (
    Config("gaussian", 1000, 1000, 3, 3, 0.10),
    Config("gaussian", 1000, 1000, 3, 3, 0.20),
    Config("bernoulli", 1000, 1000, 3, 3, 0.20),
    Config("poisson", 500, 500, 3, 3, 0.20),
)

QUICK_CONFIGS: tuple[Config, ...] = (
    Config("gaussian", 60, 50, 3, 3, 0.20, n_samples=200),
    Config("bernoulli", 80, 60, 2, 2, 0.10, n_samples=200),
)


def bayes_rows(quick: bool = False, *, seed: int = 0, repeats: int | None = None) -> list[dict[str, Any]]:
    """Time the Gibbs run, :func:`bayes_labels` and :func:`floor_certificate` per configuration."""
    repeats = repeats or (1 if quick else 3)
    rows = []
    for config in QUICK_CONFIGS if quick else CONFIGS:
        found = find_scale(config, seed=seed)
        model, X, result = found["model"], found["X"], found["map"]
        start = (result.rows, result.cols)
        gibbs_s, samples = _best_time(
            lambda m=model, x=X, n=config.n_samples, s=start: gibbs_labels(m, x, n_samples=n, init=s, rng=seed),
            repeats,
        )
        labels_s, _ = _best_time(
            lambda r=samples.rows, c=samples.cols, s=start: bayes_labels(r, c, starts=[s]), repeats
        )
        floor_s, floor = _best_time(lambda g=samples, s=start: floor_certificate(g, starts=[s]), repeats)
        rows.append({
            "benchmark": "bayes labels",
            "config": config.name,
            "n_samples": config.n_samples,
            "gibbs_s": gibbs_s,
            "bayes_labels_s": labels_s,
            "floor_certificate_s": floor_s,
            "map_risk": samples.risk(*start).risk,
            "bayes_risk": floor.risk.risk,
            "bayes_risk_mcse": floor.risk.mcse,
        })
    return rows


def format_rows(rows: list[dict[str, Any]]) -> str:
    """The rows as a text table (times in seconds, ratios to the Gibbs run)."""
    lines = [
        f"{'table':<32} {'sets':>5} {'gibbs s':>8} {'labels s':>9} {'ratio':>6} "
        f"{'floor s':>8} {'ratio':>6} {'MAP risk':>9} {'floor':>7}"
    ]
    for row in rows:
        lines.append(
            f"{row['config']:<32} {row['n_samples']:>5} {row['gibbs_s']:>8.3f} "
            f"{row['bayes_labels_s']:>9.3f} {row['bayes_labels_s'] / row['gibbs_s']:>6.3f} "
            f"{row['floor_certificate_s']:>8.3f} {row['floor_certificate_s'] / row['gibbs_s']:>6.3f} "
            f"{row['map_risk']:>9.4f} {row['bayes_risk']:>7.4f}"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point: print the benchmark table."""
    parser = bench_parser(
        "python scripts/benchmarks/bench_bayes.py",
        "Time the Bayes labels and the floor certificate against the Gibbs run.",
        repeats="step",
    )
    add_output_argument(parser)
    args = parser.parse_args(argv)
    rows = bayes_rows(args.quick, seed=args.seed, repeats=args.repeats)
    print("Bayes labels for l_item vs the Gibbs run that feeds them (best of repeats, same process)")
    print(format_rows(rows))
    finish(args.json, rows)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
