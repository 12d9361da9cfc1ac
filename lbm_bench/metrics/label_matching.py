"""The label matching of the conditional risk: one matching of the predicted clusters to the
reference clusters for every label set, the one that minimises the mean ``l_item``.

:func:`optimal_matchings` alternates exact Hungarian steps on the two sides
(:func:`alternating_matchings`), then, when one side has few maximal one-to-one matchings,
enumerates them all to certify the optimum (see
:func:`~lbm_bench.metrics.risk.conditional_risk`); :func:`cluster_map` turns a matching into
the array ``predicted cluster -> reference cluster``.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from lbm_bench.metrics import contingency_tables as _contingency_tables
from lbm_bench.metrics.contingency_tables import TableStack, best_matching

__all__ = ["alternating_matchings", "cluster_map", "optimal_matchings"]


#: Safety cap on the alternating Hungarian steps of
#: :func:`~lbm_bench.metrics.risk.conditional_risk`.
_MAX_ALTERNATIONS = 1000


#: Largest number of maximal one-to-one matchings of one side that
#: :func:`~lbm_bench.metrics.risk.conditional_risk` enumerates to certify the global optimum.
_MAX_ENUMERATION = 720


def alternating_matchings(
    rows: TableStack, cols: TableStack
) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray], int]:
    """Coordinate ascent on ``F = sum_s R_s(sigma) C_s(tau)`` by exact Hungarian steps.

    Minimising the mean ``l_item`` is maximising ``F``, with ``R_s``/``C_s`` the
    correctly classified row/column counts of set ``s``. Given ``tau``, ``F`` is
    linear in the row matching with weights ``sum_s C_s N_s``, so each step is
    an exact linear assignment; a step is kept only when it increases ``F``
    (integers, so no cycling), and the loop stops when neither step does.
    """
    ones = np.ones(rows.n_sets, dtype=np.int64)
    sigma = best_matching(rows.weighted_sum(ones))
    tau = best_matching(cols.weighted_sum(ones))
    row_hits, col_hits = rows.hits(sigma), cols.hits(tau)
    best = int(np.dot(row_hits, col_hits))
    stale, steps, update_rows = 0, 0, True
    while stale < 2 and steps < _MAX_ALTERNATIONS:
        steps += 1
        if update_rows:
            candidate = best_matching(rows.weighted_sum(col_hits))
            hits = rows.hits(candidate)
            value = int(np.dot(hits, col_hits))
        else:
            candidate = best_matching(cols.weighted_sum(row_hits))
            hits = cols.hits(candidate)
            value = int(np.dot(row_hits, hits))
        if value > best:
            best, stale = value, 0
            if update_rows:
                sigma, row_hits = candidate, hits
            else:
                tau, col_hits = candidate, hits
        else:
            stale += 1
        update_rows = not update_rows
    return sigma, tau, steps


def _maximal_matchings(k_ref: int, k_pred: int) -> tuple[np.ndarray, np.ndarray]:
    """Every maximal one-to-one matching, as index arrays of shape (n_matchings, min(k, k'))."""
    size = min(k_ref, k_pred)
    chosen = np.array(
        list(itertools.permutations(range(max(k_ref, k_pred)), size)), dtype=np.int64
    ).reshape(-1, size)
    fixed = np.broadcast_to(np.arange(size, dtype=np.int64), chosen.shape)
    return (chosen, fixed) if k_ref >= k_pred else (fixed, chosen)


def _enumerate(
    side: np.ndarray, other: np.ndarray
) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """Global maximiser of ``F`` by enumerating the maximal matchings of ``side``.

    ``side`` and ``other`` are table stacks of shapes (S, k, k') and (S, l, l').
    For each matching of ``side`` the best matching of ``other`` is an exact
    linear assignment with weights ``sum_s R_s M_s``; non-negative weights make
    maximal matchings sufficient.
    """
    ref_idx, pred_idx = _maximal_matchings(side.shape[1], side.shape[2])
    other_flat = other.reshape(other.shape[0], -1).astype(np.float64)
    step = max(1, _contingency_tables.CELL_BUDGET // max(1, side.shape[0] * ref_idx.shape[1]))
    best_value, best = -1.0, (ref_idx[0], pred_idx[0])
    best_other = (np.arange(0), np.arange(0))
    for start in range(0, ref_idx.shape[0], step):
        block = slice(start, start + step)
        hits = side[:, ref_idx[block], pred_idx[block]].sum(axis=2)
        weights = (hits.T.astype(np.float64) @ other_flat).reshape(-1, *other.shape[1:])
        for offset, weight in enumerate(weights):
            matching = best_matching(weight)
            value = float(weight[matching].sum())
            if value > best_value:
                index = start + offset
                best_value, best, best_other = value, (ref_idx[index], pred_idx[index]), matching
    return best, best_other


def optimal_matchings(
    rows: TableStack, cols: TableStack
) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray], int, bool]:
    """(sigma, tau, alternating steps, exact): alternating, then enumeration when cheap."""
    sigma, tau, steps = alternating_matchings(rows, cols)
    n_row = math.perm(max(rows.k_ref, rows.k_pred), min(rows.k_ref, rows.k_pred))
    n_col = math.perm(max(cols.k_ref, cols.k_pred), min(cols.k_ref, cols.k_pred))
    row_tables, col_tables = rows.stacked(), cols.stacked()
    if min(n_row, n_col) > _MAX_ENUMERATION or row_tables is None or col_tables is None:
        return sigma, tau, steps, False
    if n_row <= n_col:
        new_sigma, new_tau = _enumerate(row_tables, col_tables)
    else:
        new_tau, new_sigma = _enumerate(col_tables, row_tables)
    current = int(np.dot(rows.hits(sigma), cols.hits(tau)))
    if int(np.dot(rows.hits(new_sigma), cols.hits(new_tau))) > current:
        sigma, tau = new_sigma, new_tau
    return sigma, tau, steps, True


def cluster_map(matching: tuple[np.ndarray, np.ndarray], stack: TableStack) -> np.ndarray:
    """Array ``predicted cluster -> reference cluster``, -1 if unmatched or empty."""
    out = np.full(stack.k_pred, -1, dtype=np.int64)
    ref_idx, pred_idx = matching
    out[pred_idx] = ref_idx
    out[stack.pred_sizes() == 0] = -1
    out.flags.writeable = False
    return out
