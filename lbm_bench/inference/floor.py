"""The floor of a table: the Bayes labels for ``l_item`` and their honest risk.

The honest risk
---------------
Labels chosen on a set of draws and scored on the same draws are biased low
(they are fitted to the noise of those draws). :func:`floor_certificate`
cross-fits: it splits the chains into two halves, chooses labels on each half,
scores them on the other half, and reports the mean of the per-set losses with
the same Monte Carlo standard error and R-hat as the MAP's risk. The labels it
returns (to store and to compare with) are chosen on all sets.
(:mod:`lbm_bench.inference.bayes` finds the labels; this module cross-fits them.)

On a large table (:func:`~lbm_bench.tasks.large.is_large`) and ``jobs > 1``, the descents
of the three searches (each half, and all the sets) run as tasks over the backend in force,
in bundles of about equal cost (:func:`~lbm_bench.tasks.bundles.weighted_bundles`, run by
:func:`~lbm_bench.tasks.pool.run_tasks`); the result does not depend on ``jobs`` (integer
objectives: the first best descent of each search wins, as in one process).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from lbm_bench._docstrings import fill_doc
from lbm_bench._validation import check_count
from lbm_bench.inference.bayes import (
    best_descent,
    descend,
    prepare_sides,
    search_labels,
    search_starts,
)
from lbm_bench.inference.gibbs import GibbsSamples, RiskEstimate
from lbm_bench.metrics.mcmc import chain_diagnostics
from lbm_bench.tasks.bundles import weighted_bundles
from lbm_bench.tasks.large import is_large
from lbm_bench.tasks.pool import run_tasks
from lbm_bench.tasks.shipping import shipped

__all__ = [
    "FloorCertificate", "cross_fitted_sides", "floor_certificate", "floor_risk", "risk_from_losses",
    "set_start_indices", "side_bounds"
]


@dataclass(frozen=True)
class FloorCertificate:
    """The Bayes labels for ``l_item`` of a table and their cross-fitted risk.

    Attributes
    ----------
    rows : ndarray of shape (n_rows,)
        Row labels chosen on all label sets (int64).
    cols : ndarray of shape (n_cols,)
        Column labels chosen on all label sets (int64).
    risk : RiskEstimate
        Cross-fitted conditional risk: labels chosen on one half of the chains,
        scored on the other half, and the reverse.
    losses : ndarray of shape (n_samples,)
        The cross-fitted ``l_item`` loss of every label set (chain-major, the
        order of the sets), for paired comparisons with another labelling.

    Examples
    --------
    >>> from lbm_bench import load_table
    >>> table = load_table("tests/data/table_v1_1.h5")
    >>> floor = floor_certificate(table.gibbs)
    >>> floor.rows.shape, floor.cols.shape, floor.losses.shape
    ((12,), (10,), (50,))
    >>> floor.risk.risk == table.bayes_risk.risk   # the floor the table's file certifies
    True
    """

    rows: np.ndarray
    cols: np.ndarray
    risk: RiskEstimate
    losses: np.ndarray

    @property
    def row_loss(self) -> float:
        """Cross-fitted mean ``l_row``."""
        return self.risk.row_loss

    @property
    def col_loss(self) -> float:
        """Cross-fitted mean ``l_col``."""
        return self.risk.col_loss


def risk_from_losses(row_loss: np.ndarray, col_loss: np.ndarray,
                     chain_lengths: np.ndarray) -> RiskEstimate:
    """A :class:`RiskEstimate` from per-set ``l_row`` and ``l_col`` losses (chain-major)."""
    row_loss, col_loss = np.asarray(row_loss,
                                    dtype=np.float64), np.asarray(col_loss, dtype=np.float64)
    losses = row_loss + col_loss - row_loss * col_loss
    mcse, rhat = chain_diagnostics(losses, chain_lengths)
    n_samples = losses.shape[0]
    variance = float(losses.var())
    ess = float(n_samples) if mcse == 0 else variance / mcse**2
    return RiskEstimate(
        risk=float(losses.mean()),
        mcse=mcse,
        rhat=rhat,
        ess=min(ess, float(n_samples)) if variance > 0 else float(n_samples),
        row_loss=float(row_loss.mean()),
        col_loss=float(col_loss.mean()),
        n_samples=n_samples,
        n_chains=int(np.asarray(chain_lengths).shape[0]),
    )


def _halves(chain_lengths: np.ndarray) -> np.ndarray:
    """Half (0 or 1) of every set: whole chains, in pairs so that both halves
    hold chains of both starts when starts alternate; one chain is cut in two."""
    lengths = np.asarray(chain_lengths, dtype=np.int64)
    n_chains = lengths.shape[0]
    if n_chains == 1:
        half = np.zeros(int(lengths[0]), dtype=np.int64)
        half[int(lengths[0]) // 2 :] = 1
        return half
    group = (np.arange(n_chains) // 2) % 2 if n_chains >= 4 else np.arange(n_chains) % 2
    return np.repeat(group, lengths)


@fill_doc
def floor_certificate(
    samples: GibbsSamples,
    *,
    starts: Sequence[tuple[Any, Any]] | None = None,
    n_row_clusters: int | None = None,
    n_col_clusters: int | None = None,
    n_set_starts: int = 4,
    max_sweeps: int = 1000,
    jobs: int = 1,
) -> FloorCertificate:
    """The Bayes labels for ``l_item`` and their honest (cross-fitted) conditional risk.

    The chains are split into two halves (pairs of consecutive chains go to
    alternating halves, so that with chains started alternately at two points
    both halves hold both; a single chain is cut in its middle). Labels are
    chosen by :func:`bayes_labels` on each half and score the sets of the other
    half; the per-set losses give the risk, its MCSE and R-hat exactly as for
    the MAP labels (:meth:`GibbsSamples.risk`). The returned labels are chosen
    on all sets.

    Parameters
    ----------
    samples : GibbsSamples
        Label sets drawn from ``p(z, w | X)``, at least two.
    starts : sequence of (rows, cols), optional
        Further starts of the descent, e.g. the MAP labels (X-only).
    n_row_clusters, n_col_clusters, n_set_starts, max_sweeps : int, optional
        As in :func:`bayes_labels`.
    jobs : int, default=1
        Workers of the backend configured by the caller. The descents of a large
        table's three searches (each half, and all the sets) then run as tasks, balanced
        by their sets; the labels and the risk do not depend on it (integer arithmetic).

    Returns
    -------
    FloorCertificate

    {{gibbs_samples_example}}
    >>> floor = floor_certificate(samples)
    >>> floor.rows.shape, floor.cols.shape, 0 <= floor.risk.risk <= 1
    ((40,), (30,), True)
    """
    risk, losses, (z, w) = _cross_fitted(samples, starts, n_row_clusters, n_col_clusters,
                                         n_set_starts, max_sweeps, with_labels=True, jobs=jobs)
    return FloorCertificate(rows=z, cols=w, risk=risk, losses=losses)


@fill_doc
def floor_risk(samples: GibbsSamples, *, starts: Sequence[tuple[Any, Any]] | None = None,
               n_row_clusters: int | None = None, n_col_clusters: int | None = None,
               n_set_starts: int = 4, max_sweeps: int = 1000) -> RiskEstimate:
    """``floor_certificate(samples, ...).risk`` without its labels chosen on all sets (the
    calibration's).

    {{gibbs_samples_example}}
    >>> floor_risk(samples) == floor_certificate(samples).risk
    True
    """
    return _cross_fitted(samples, starts, n_row_clusters, n_col_clusters, n_set_starts, max_sweeps,
                         with_labels=False)[0]


def _cross_fitted(samples, starts, n_row_clusters, n_col_clusters, n_set_starts, max_sweeps, *,
                  with_labels: bool, jobs: int = 1):
    """The checked inputs' cross-fitted risk, per-set losses, and (``with_labels``) the labels
    chosen on all sets, else None."""
    if not isinstance(samples, GibbsSamples):
        raise TypeError(f"samples must be GibbsSamples, got {type(samples).__name__}")
    if samples.n_samples < 2:
        raise ValueError(f"samples must hold at least 2 label sets, got {samples.n_samples}")
    max_sweeps = check_count("max_sweeps", max_sweeps)
    n_set_starts = check_count("n_set_starts", n_set_starts, minimum=0)
    jobs = check_count("jobs", jobs)
    rows, cols, pairs = prepare_sides(samples.rows, samples.cols, starts, n_row_clusters,
                                      n_col_clusters, bounds=side_bounds(samples.chain_lengths))
    return cross_fitted_sides(samples.chain_lengths, rows, cols, pairs, n_set_starts, max_sweeps,
                              with_labels=with_labels, jobs=jobs)


def side_bounds(chain_lengths: np.ndarray) -> list[int]:
    """Where the blocks of the prepared sides are cut besides their size: the chains' ends,
    and the middle of a single chain (the halves of :func:`_halves`)."""
    chain_lengths = np.asarray(chain_lengths)
    half_cut = [int(chain_lengths[0]) // 2] if chain_lengths.shape[0] == 1 else []
    return [*np.cumsum(chain_lengths).tolist(), *half_cut]


def cross_fitted_sides(chain_lengths: np.ndarray, rows, cols, pairs, n_set_starts: int,
                       max_sweeps: int, *, with_labels: bool = False, jobs: int = 1):
    """:func:`_cross_fitted` of prepared sides (:func:`~lbm_bench.inference.bayes.prepare_sides`,
    blocks cut at :func:`side_bounds`) and checked starts ``pairs``: the risk, the per-set
    losses, and (``with_labels``) the labels chosen on all sets, else None."""
    half = _halves(chain_lengths)
    sides = [(rows.subset(half == 0), cols.subset(half == 0)),
             (rows.subset(half == 1), cols.subset(half == 1))]
    if with_labels:
        sides.append((rows, cols))
    found = _searches(sides, pairs, n_set_starts, max_sweeps, jobs)
    risk, losses = _cross_fit(chain_lengths, rows, cols, half, found[:2])
    return risk, losses, (found[2] if with_labels else None)


def set_start_indices(chain_lengths: np.ndarray, n_set_starts: int) -> list[int]:
    """The sets (indices among all) that the searches of the two halves start from."""
    half = _halves(chain_lengths)
    picked = []
    for side in (0, 1):
        index = np.flatnonzero(half == side)
        chosen = np.unique(np.linspace(0, index.size - 1, n_set_starts).round().astype(np.int64))
        picked += index[chosen].tolist()
    return sorted(set(picked))


def _cross_fit(chain_lengths, rows, cols, half, labels) -> tuple[RiskEstimate, np.ndarray]:
    """Labels chosen on each half of the chains (``labels[h]``) score the other half: the
    risk and per-set losses."""
    n_rows, n_cols = rows.ref.shape[0], cols.ref.shape[0]
    row_loss = np.empty(rows.n_sets)
    col_loss = np.empty(rows.n_sets)
    for side, (z, w) in enumerate(labels):
        scored = half != side
        scored_rows, scored_cols = rows.subset(scored), cols.subset(scored)
        row_loss[scored] = 1.0 - scored_rows.agreements(z) / n_rows
        col_loss[scored] = 1.0 - scored_cols.agreements(w) / n_cols
    risk = risk_from_losses(row_loss, col_loss, chain_lengths)
    return risk, row_loss + col_loss - row_loss * col_loss


def _searches(sides, pairs, n_set_starts: int, max_sweeps: int,
              jobs: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """:func:`_search` on every (rows, cols) of ``sides``. For a large table
    (:func:`~lbm_bench.tasks.large.is_large`) and ``jobs > 1``, all their descents run as
    ``jobs`` tasks of about equal sets (each side's starts are chosen here); the best descent
    of each side is the first of the highest objective, as in one process."""
    n_rows, n_cols = sides[0][0].ref.shape[0], sides[0][1].ref.shape[0]
    if jobs == 1 or not is_large(n_rows, n_cols):
        return [search_labels(r, c, pairs, n_set_starts, max_sweeps) for r, c in sides]
    descents = [(k, z, w) for k, (r, c) in enumerate(sides)
                for z, w in search_starts(r, c, pairs, n_set_starts)]
    costs = [sides[k][0].n_sets for k, _, _ in descents]
    bundles = weighted_bundles(costs, min(jobs, len(descents)))
    # each side crosses once (scattered to one Dask worker, fetched by another when a task
    # there needs it; memory-mapped on loky), not in every task that descends on it
    light = [
        shipped((r.without_sets(), c.without_sets()), broadcast=False, reuse=False)
        for r, c in sides
    ]
    calls = [({int(k): light[k] for k in {descents[i][0] for i in bundle}},
              [descents[i] for i in bundle], max_sweeps) for bundle in bundles]
    parts = run_tasks(_descent_task, calls, len(calls))
    results = [result for part in parts for result in part]
    return [best_descent([d for (k, _, _), d in zip(descents, results, strict=True) if k == side])
            for side in range(len(sides))]


def _descent_task(sides, items, max_sweeps):
    """:func:`_descend` from each ``(side, z, w)`` of ``items`` on ``sides[side]`` (a task)."""
    return [
        descend(*sides[k], z.astype(np.int64), w.astype(np.int64), max_sweeps) for k, z, w in items
    ]
