"""What a compiled whole sweep of small dense tables would gain over the engine (issue 46).

    python scripts/benchmarks/bench_dense_sweep.py            # the paper release's shapes
    python scripts/benchmarks/bench_dense_sweep.py --quick    # two tiny tables (seconds)

A release of small dense tables (``repository/paper.toml``) spends its Gibbs runs in many
short numpy calls per half-sweep (block sums, logits, class masses, draws). This benchmark
measures what fusing a half-sweep into one compiled loop would win, before anyone builds it
into the package: a **prototype** half-sweep written for numba here (not the package's code:
the full block sums of every chain from the table, the logits, the class masses and the
inverse-CDF draw with ``exp`` from libm, one call per half-sweep) against the engine's
``run_chains`` (index updates, BLAS products, numpy's draws), both on one core, each chain
drawing its uniforms from the same stream in the same order.

For each table (a random design of 3x3 clusters at scale 1, 8 chains, ``--sweeps`` kept sweeps
after 50 of burn-in, the paper release's numbers): the seconds of each (best of
``--repeats``), their ratio, and whether every kept label set is the same (the draws compare
uniforms with class boundaries, so logits that differ from numpy's by an ulp change a label
only when a uniform falls within an ulp of a boundary).

The prototype recomputes the block sums in full at every half-sweep, where the engine updates
them by index: what it measures is the per-call overhead a fused sweep removes, the most a
compiled sweep can win on tables where index updates do not matter.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np

from lbm_bench import random_design
from lbm_bench.inference.chains import ChainStreams, run_chains
from lbm_bench.inference.engine import Sweeper
from lbm_bench.tasks.threads import single_blas_thread

sys.path.insert(0, str(Path(__file__).resolve().parent))  # sibling modules (scripts/README.md)

from _benchmarks import add_output_argument, bench_parser, best_time, finish  # noqa: E402

__all__ = ["SIZES", "QUICK", "half_sweep", "prototype_run", "sweep_rows", "main"]

#: (kind, n_rows, n_cols) of the default run (the paper release's shapes) and of ``--quick``.
SIZES = (("bernoulli", 50, 50), ("poisson", 50, 50), ("bernoulli", 200, 100), ("poisson", 200, 100),
         ("bernoulli", 500, 300), ("poisson", 500, 300), ("bernoulli", 1000, 1000))
QUICK = (("bernoulli", 30, 20), ("poisson", 30, 20))
CHAINS = 8
BURN_IN = 50


def half_sweep(stats, other, n_other_classes, eta, penalty_t, log_prior, u, out, sums, mass, scores):
    """One half-sweep of every chain (plain Python for numba): ``stats`` (n_other, n_own) the
    table oriented for this step, ``other`` (C, n_other) the other side's labels, ``eta``
    (k, o), ``penalty_t`` (o, k) the log-partition, ``log_prior`` (k,), ``u`` (C, n_own)
    uniforms; draws into ``out`` (C, n_own); ``sums`` (o, n_own), ``mass`` (o,), ``scores``
    (k,) work space."""
    chains, n_other = other.shape
    n_own = stats.shape[1]
    k = eta.shape[0]
    for c in range(chains):
        sums[:] = 0.0
        mass[:] = 0.0
        for j in range(n_other):
            label = other[c, j]
            mass[label] += 1.0
            row, target = stats[j], sums[label]
            for i in range(n_own):
                target[i] += row[i]
        for i in range(n_own):
            top = -np.inf
            for r in range(k):
                logit = 0.0
                for q in range(n_other_classes):
                    logit += eta[r, q] * sums[q, i]
                penalty = 0.0
                for q in range(n_other_classes):
                    penalty += mass[q] * penalty_t[q, r]
                logit = logit - penalty + log_prior[r]
                scores[r] = logit
                if logit > top:
                    top = logit
            total = 0.0
            for r in range(k):
                total += np.exp(scores[r] - top)
                scores[r] = total
            threshold = u[c, i] * total
            label = 0
            for r in range(k - 1):
                if scores[r] <= threshold:
                    label += 1
            out[c, i] = label


def prototype_run(compiled: Any, sweeper: Sweeper, X: np.ndarray, w: np.ndarray, kept: int,
                  streams: ChainStreams) -> tuple[np.ndarray, np.ndarray]:
    """The Gibbs run of :func:`~lbm_bench.inference.chains.run_chains` with the prototype
    half-sweep: kept label sets (C, kept, n_rows) and (C, kept, n_cols)."""
    n, d = X.shape
    eta, A = sweeper.eta[0], sweeper.log_partition  # (g, m)
    g, m = A.shape
    steps = ((np.ascontiguousarray(X.T), m, np.ascontiguousarray(eta), np.ascontiguousarray(A.T),
              sweeper.log_row_prior, np.empty((m, n)), np.empty(m), np.empty(g)),
             (np.ascontiguousarray(X), g, np.ascontiguousarray(eta.T), np.ascontiguousarray(A),
              sweeper.log_col_prior, np.empty((g, d)), np.empty(g), np.empty(m)))
    z, w = np.empty((CHAINS, n), np.uint8), w[0].astype(np.uint8)
    rows, cols = np.empty((CHAINS, kept, n), np.uint8), np.empty((CHAINS, kept, d), np.uint8)
    for sweep in range(BURN_IN + kept):
        for (stats, o, e, penalty_t, prior, sums, mass, scores), other, out in ((steps[0], w, z),
                                                                               (steps[1], z, w)):
            u = streams.random((1, CHAINS, out.shape[1]))[0]
            compiled(stats, other, o, e, penalty_t, prior, u, out, sums, mass, scores)
        if sweep >= BURN_IN:
            rows[:, sweep - BURN_IN], cols[:, sweep - BURN_IN] = z, w
    return rows, cols


def _streams(seed: int) -> ChainStreams:
    return ChainStreams([[np.random.default_rng(seed + c) for c in range(CHAINS)]])


def sweep_rows(sizes=SIZES, kept: int = 250, repeats: int = 3, seed: int = 0) -> list[dict[str, Any]]:
    """The engine and the prototype on each table (see the module documentation)."""
    import numba

    compiled = numba.njit(nogil=True)(half_sweep)
    rows = []
    for kind, n, d in sizes:
        model = random_design(kind, 3, 3, rng=seed + 1).model(1.0)
        X, _, w_true = model.sample(n, d, rng=seed + 2)
        X = np.asarray(X, dtype=np.float64)
        w = np.repeat(w_true[None, None].astype(np.uint8), CHAINS, axis=1)
        with single_blas_thread():
            sweeper = Sweeper.for_table(model, X)
            prototype_run(compiled, sweeper, X, w, 1, _streams(seed))  # compiles
            engine, run = best_time(lambda: run_chains(sweeper, w, kept, _streams(seed), burn_in=BURN_IN),
                                    repeats)
            fused, (z, v) = best_time(lambda: prototype_run(compiled, sweeper, X, w, kept, _streams(seed)),
                                      repeats)
        same = bool(np.array_equal(run.rows[0], z) and np.array_equal(run.cols[0], v))
        rows.append({"kind": kind, "shape": f"{n}x{d}", "engine": engine, "prototype": fused, "same": same})
    return rows


def format_rows(rows: list[dict[str, Any]], kept: int) -> str:
    lines = [f"Gibbs run of {CHAINS} chains, {BURN_IN} + {kept} sweeps, one core, best of the runs (seconds)",
             "| table | engine | compiled prototype | engine/prototype | same label sets |",
             "| --- | ---: | ---: | ---: | --- |"]
    for r in rows:
        lines.append(f"| {r['kind']} {r['shape']} | {r['engine']:.3f} | {r['prototype']:.3f} | "
                     f"{r['engine'] / r['prototype']:.2f} | {'yes' if r['same'] else 'NO'} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = bench_parser("bench_dense_sweep.py", __doc__.split("\n\n")[0], repeats="table (default 3)")
    parser.add_argument("--sweeps", type=int, default=None, help="kept sweeps per chain (default 250, --quick 5)")
    add_output_argument(parser)
    args = parser.parse_args(argv)
    kept = args.sweeps or (5 if args.quick else 250)
    rows = sweep_rows(QUICK if args.quick else SIZES, kept, args.repeats or (1 if args.quick else 3), args.seed)
    print(format_rows(rows, kept))
    finish(args.json, rows)
    return 0 if all(r["same"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
