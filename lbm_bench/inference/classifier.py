"""Alternating MAP classifier with the true parameters (Algorithm 1 of Lomet et al.).

Each iteration maximises ``p(z | w, X)`` exactly (Proposition 1: one argmax
per row), then ``p(w | z, X)`` (one argmax per column), until the labels stop
changing; the complete-data likelihood increases strictly along the way. Several
starts run at once, batched, and the labelling with the highest complete-data
log-likelihood ``log p(X, z, w)`` wins.

**The classifier is a function of the table alone.** Its default starts are
random labels drawn from the proportions, never the generating labels: started
from them, the MAP inherits their luck and its apparent error is biased low
(see ``docs/protocol.md``). The generating labels may still be given as an
explicit ``init``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from lbm_bench._docstrings import fill_doc
from lbm_bench._seeds import draw_seed, stream
from lbm_bench._validation import check_choice, check_count, check_labels
from lbm_bench.inference.chains import table_groups
from lbm_bench.inference.engine import BlockSums, Sweeper
from lbm_bench.models.base import LatentBlockModel
from lbm_bench.tasks.pool import run_bundles

__all__ = ["MapResult", "map_labels"]


@dataclass(frozen=True)
class MapResult:
    """Output of :func:`map_labels`.

    Attributes
    ----------
    rows : ndarray of shape (n_rows,)
        MAP row labels.
    cols : ndarray of shape (n_cols,)
        MAP column labels.
    log_likelihood : float
        Complete-data log-likelihood ``log p(X, rows, cols)`` of the kept start.
    n_iter : int
        Iterations of the kept start.
    converged : bool
        Whether the kept start reached a fixed point within ``max_iter``.
    start_log_likelihoods : ndarray of shape (n_starts,)
        Final complete-data log-likelihood of every start.

    Examples
    --------
    >>> from lbm_bench import load_table
    >>> table = load_table("tests/data/table_v1_1.h5")
    >>> result = map_labels(table.model, table.data, rng=0)
    >>> result.rows.shape, result.n_starts, result.converged   # 10 random starts and 2 others
    ((12,), 12, True)
    >>> bool(result.log_likelihood == result.start_log_likelihoods.max())
    True
    """

    rows: np.ndarray
    cols: np.ndarray
    log_likelihood: float
    n_iter: int
    converged: bool
    start_log_likelihoods: np.ndarray

    @property
    def n_starts(self) -> int:
        """Number of starts that were run."""
        return int(self.start_log_likelihoods.shape[0])


def initial_column_labels(
    sweeper: Sweeper,
    n_init: int,
    rng: np.random.Generator | Sequence[np.random.Generator],
) -> np.ndarray:
    """X-only starts of Algorithm 1, as column labels of shape (B, 2 + n_init, n_cols).

    Start 0 classifies the columns entrywise: each column's class score sums, over its
    entries, ``log sum_k pi_k p(x_ij | k, l)`` (the row label integrated out entry by
    entry, ignoring that the entries of a row share one label: not the posterior, but
    a function of X alone that points each column to its class well enough to start
    Algorithm 1 in the right basin; the storage computes it, see
    :meth:`~lbm_bench.inference.engine.Sweeper.entrywise_scores`);
    start 1 classifies the rows entrywise and takes the column step; the
    ``n_init`` random starts draw column labels (even starts) or row labels
    followed by the column step (odd starts) from the proportions.

    ``rng`` is one Generator per table (a sequence of length B), or one
    Generator for all tables. With one Generator per table, the starts of a
    table do not depend on which other tables are in the batch, so a batched
    run gives the same starts as tables run one by one. Each table's Generator
    gives one seed (one ``integers`` call), the root of its ``"random starts"``; random
    start ``k`` draws its labels from that root's ``"start"`` ``k``
    (:data:`~lbm_bench._seeds.SEED_TREE`), so a start's labels depend on its index alone
    (the starts could run as tasks in any grouping).
    """
    model = sweeper.model
    B, n, d = sweeper.n_tables, sweeper.n_rows, sweeper.n_cols
    rngs = [rng] * B if isinstance(rng, np.random.Generator) else list(rng)
    if len(rngs) != B:
        raise ValueError(f"rng must be a Generator or {B} Generators, got {len(rngs)}")
    row_scores, col_scores = sweeper.entrywise_scores()
    w_marginal = col_scores.argmax(-1)[:, None]
    z_marginal = row_scores.argmax(-1)[:, None]
    z = np.empty((B, n_init, n), dtype=np.int64)
    w = np.empty((B, n_init, d), dtype=np.int64)
    for b, table_rng in enumerate(rngs):
        root = np.random.SeedSequence(draw_seed(table_rng))
        for k in range(n_init):  # each random start from its own stream: starts are tasks
            start_rng = np.random.default_rng(stream(root, "random starts", "start", k))
            z[b, k] = start_rng.choice(model.n_row_clusters, size=n, p=model.row_proportions)
            w[b, k] = start_rng.choice(model.n_col_clusters, size=d, p=model.col_proportions)
    from_rows = np.concatenate([z_marginal, z[:, 1::2]], axis=1)
    w_from_rows = _argmax_classes(sweeper.cols.logits(sweeper.cols.full_sums(from_rows), from_rows))
    w[:, 1::2] = w_from_rows[:, 1:]
    return np.concatenate([w_marginal, w_from_rows[:, :1], w], axis=1)


def _argmax_classes(logits: np.ndarray) -> np.ndarray:
    """``logits.argmax(axis=-2)`` for class-major logits (..., k, n), first maximum on
    ties, by ``k - 1`` vector comparisons (numpy's argmax along a middle axis is
    several times slower)."""
    best = logits[..., 0, :].copy()
    labels = np.zeros(best.shape, dtype=np.int64)
    for r in range(1, logits.shape[-2]):
        better = logits[..., r, :] > best
        np.copyto(labels, r, where=better)
        np.maximum(best, logits[..., r, :], out=best)
    return labels


def alternate(
    sweeper: Sweeper, w: np.ndarray, *, max_iter: int = 100, incremental: bool = True
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Run Algorithm 1 from column labels ``w`` (B, C, n_cols) for every start.

    The block sums of both steps are kept in :class:`~lbm_bench.inference.engine.BlockSums`
    and updated for the labels that changed (after the first iterations, few
    do, and converged starts none), unless ``incremental=False``: then they
    are recomputed in full at every step (the benchmark's baseline).

    Returns
    -------
    z, w : ndarray of shape (B, C, n_rows), (B, C, n_cols)
    n_iter : ndarray of shape (B, C)
    converged : ndarray of shape (B, C) of bool
    """
    B, C, _ = w.shape
    z = np.full((B, C, sweeper.n_rows), -1, dtype=np.int64)
    n_iter = np.zeros((B, C), dtype=np.int64)
    active = np.ones((B, C), dtype=bool)
    row_sums = BlockSums(sweeper, "rows", incremental=incremental)
    col_sums = BlockSums(sweeper, "cols", incremental=incremental)
    for _ in range(max_iter):
        row_sums.update(w)
        z_new = _argmax_classes(sweeper.rows.logits(row_sums.sums, row_sums.labels))
        col_sums.update(z_new)
        w_new = _argmax_classes(sweeper.cols.logits(col_sums.sums, col_sums.labels))
        changed = np.any(z_new != z, axis=-1) | np.any(w_new != w, axis=-1)
        n_iter += active
        active &= changed
        z, w = z_new, w_new
        if not active.any():
            break
    return z, w, n_iter, ~active


def best_of_starts(
    sweeper: Sweeper, z: np.ndarray, w: np.ndarray, *, base_measure: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """Index of the best start per table (B,) and all complete log-likelihoods (B, C)
    (without the label-free ``log h(X)`` when ``base_measure=False``)."""
    loglik = sweeper.complete_log_likelihood(z, w, base_measure=base_measure)
    return loglik.argmax(axis=1), loglik


def _alternate_starts(model: LatentBlockModel, X: Any, sweeper: Sweeper, starts_w: np.ndarray,
                      jobs: int,
                      **options: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`alternate` from the starts ``starts_w`` (C, n_cols) of one table, in groups of
    starts run as tasks over ``jobs`` workers when the table is large (as chains are:
    :func:`~lbm_bench.inference.chains.table_groups`); one batched loop otherwise."""
    groups = table_groups(model, X, starts_w.shape[0], jobs)
    if len(groups) == 1:
        return alternate(sweeper, starts_w[None], **options)
    bundles = [starts_w[list(g)] for g in groups]
    parts = run_bundles(_alternate_task, bundles, jobs, options, shared=(model, X))
    return tuple(np.concatenate([part[k] for part in parts], axis=1) for k in range(4))


def _alternate_task(model, table, bundle, options):
    """Groups of starts of one table (a bundle of :func:`~lbm_bench.tasks.pool.run_bundles`),
    one after the other on one Sweeper (built once per task)."""
    sweeper = Sweeper.for_table(model, table)
    return [alternate(sweeper, starts[None], **options) for starts in bundle]


@fill_doc
def map_labels(
    model: LatentBlockModel,
    X: Any,
    *,
    observed: Any = None,
    init: tuple[Any, Any] | None = None,
    n_init: int = 10,
    max_iter: int = 100,
    method: str = "incremental",
    jobs: int = 1,
    rng: np.random.Generator | int | None = None,
) -> MapResult:
    """Approximate the MAP labelling ``argmax p(z, w | X)`` by alternating exact steps.

    {{model_table}}
    init : (z, w), optional
        An extra start given explicitly (e.g. the generating labels, for
        studies of the bias they cause). It is run in addition to the X-only
        starts; set ``n_init=0`` to run it alone.
    n_init : int, default=10
        Number of random starts drawn from the proportions. When it is
        positive, two deterministic X-only starts are added: the columns, or
        the rows, classified entry by entry with the other labels integrated
        out (see :func:`initial_column_labels`).
    max_iter : int, default=100
        Maximum number of (row step, column step) iterations per start.
    method : {"incremental", "full"}, default="incremental"
        How the block sums of each step are obtained: updated for the labels
        that changed since the previous step (see :func:`alternate`), or
        recomputed in full (the benchmark's baseline). Both give the same
        labels (exactly for Poisson and Bernoulli tables, whose sums are
        integers; for Gaussian tables up to rounding in the last bits).
    jobs : int, default=1
        Workers of the backend configured by the caller, over which the starts of a large
        table (:func:`~lbm_bench.tasks.large.is_large`) run as tasks, grouped as chains are
        (:func:`~lbm_bench.inference.chains.chain_groups`): the labels do not depend on it.
    rng : None, int or numpy.random.Generator
        Source of randomness for the starts.

    Returns
    -------
    MapResult

    Examples
    --------
    >>> from lbm_bench import random_model
    >>> model = random_model("gaussian", 2, 2, scale=3.0, rng=0)
    >>> X, z, w = model.sample(30, 20, rng=1)
    >>> result = map_labels(model, X, rng=2)
    >>> result.rows.shape, result.cols.shape, result.converged
    ((30,), (20,), True)
    """
    rng = np.random.default_rng(rng)
    X = model.check_data(X, observed)
    n_init = check_count("n_init", n_init, minimum=0)
    max_iter = check_count("max_iter", max_iter)
    if n_init == 0 and init is None:
        raise ValueError("n_init must be >= 1 when no init is given, got 0")
    check_choice("method", method, ("incremental", "full"))
    sweeper = Sweeper.for_table(model, X)
    starts_w = []
    if init is not None:
        z0 = check_labels("init[0]", init[0], length=X.shape[0], n_clusters=model.n_row_clusters)
        w0 = check_labels("init[1]", init[1], length=X.shape[1], n_clusters=model.n_col_clusters)
        del z0  # Algorithm 1 starts with the row step, which only needs w
        starts_w.append(w0[None, None])
    if n_init:
        starts_w.append(initial_column_labels(sweeper, n_init, rng))
    jobs = check_count("jobs", jobs)
    z, w, n_iter, converged = _alternate_starts(model, X, sweeper,
                                                np.concatenate(starts_w,
                                                               axis=1)[0], jobs, max_iter=max_iter,
                                                incremental=method == "incremental")
    best, loglik = best_of_starts(sweeper, z, w)
    k = int(best[0])
    return MapResult(
        rows=z[0, k],
        cols=w[0, k],
        log_likelihood=float(loglik[0, k]),
        n_iter=int(n_iter[0, k]),
        converged=bool(converged[0, k]),
        start_log_likelihoods=loglik[0],
    )
