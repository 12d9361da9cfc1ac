"""Greedy single-item moves: a labelling improved, at fixed counts, until no move of one row
or one column to another cluster raises its exact ICL.

Block CEM ends at a labelling that no single move improves by the *complete likelihood
at the fitted parameters*; the exact ICL integrates the parameters out, so a few rows or
columns may still gain by moving (Wyse, Friel and Latouche's greedy ICL search makes the
same moves from scratch). :func:`greedy_moves` makes them, best first, at fixed numbers of
clusters (a move that would empty a cluster is not made).

The gain of every move is computed from block sums alone
(:meth:`~lbm_bench.algorithms.criteria.Criterion.move_gains`): the table is read once per
pass over a side (the items' sums over the other side's clusters, which the moves of this
side leave unchanged), the family's terms (``log_marginal_blocks``) computed for every item
and cluster at once. A pass over the rows repeats until no row move gains, then the
columns, then the rows again, until neither side moves: a local optimum of the exact ICL
under single moves. Deterministic (ties go to the lower item, then the lower cluster); no
randomness.
"""

from __future__ import annotations

import numpy as np

from lbm_bench.algorithms.criteria import Criterion
from lbm_bench.algorithms.em_problem import row_totals
from lbm_bench.algorithms.kmeans import onehot

__all__ = ["MOVE_TOLERANCE", "greedy_moves"]

#: A move is made when it raises the criterion by more than this share of the criterion's
#: magnitude (at least this much): gains below it are rounding.
MOVE_TOLERANCE = 1e-9


def _threshold(value: float) -> float:
    return MOVE_TOLERANCE * max(1.0, abs(value))


def _side_pass(crit: Criterion, rows: np.ndarray, cols: np.ndarray, side: int,
               threshold: float) -> int:
    """Moves of ``side`` (0 rows, 1 columns; its labels changed in place) until none gains more
    than ``threshold``; returns the number made. The items' sums over the other side's
    clusters are read once: moving items of this side does not change them, and the block
    sums follow each move."""
    own, other = (rows, cols) if side == 0 else (cols, rows)
    k = int(own.max()) + 1
    other_onehot = onehot(other, int(other.max()) + 1)
    other_counts = other_onehot.sum(0)
    items = crit.problem.row_sums(other_onehot) if side == 0 else crit.problem.col_sums(
        other_onehot)
    totals = row_totals(onehot(own, k), items)  # (P, k, h), kept up to date
    made = 0
    while True:
        gains = crit.move_gains(items, own, k, other_counts, totals=totals)  # (n_items, k)
        best = gains.max(axis=1)
        candidates = np.flatnonzero(best > threshold)
        if candidates.size == 0:
            return made
        # the best gains first; each move's gain recomputed after the moves made before it
        order = candidates[np.argsort(-best[candidates], kind="stable")]
        moved = 0
        for item in order:
            gain = gains[item] if moved == 0 else crit.move_gains(items, own, k, other_counts,
                                                                  only=item, totals=totals)
            target = int(np.argmax(gain))
            if gain[target] > threshold:
                totals[:, own[item]] -= items[:, item]
                totals[:, target] += items[:, item]
                own[item] = target
                moved += 1
        made += moved
        if moved == 0:
            return made


def greedy_moves(crit: Criterion, rows: np.ndarray,
                 cols: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """The labelling ``(rows, cols)`` improved by single-item moves until none raises the
    exact ICL (see the module docstring).

    Parameters
    ----------
    crit : Criterion
        The criterion of the table (its form ``"exact-icl"``; under the BIC-type form
        the labelling is returned unchanged).
    rows : ndarray of shape (n_rows,) of int
        Row labels ``0 .. g - 1``, every cluster used.
    cols : ndarray of shape (n_cols,) of int
        Column labels ``0 .. m - 1``, every cluster used.

    Returns
    -------
    rows : ndarray of shape (n_rows,) of int64
    cols : ndarray of shape (n_cols,) of int64
        New arrays, with the same numbers of clusters, every cluster used.
    value : float
        Their criterion, at least that of the labelling given.

    Examples
    --------
    >>> from lbm_bench import random_model
    >>> from lbm_bench.algorithms.em_problem import EMProblem
    >>> model = random_model("poisson", 2, 2, scale=1.0, rng=0)
    >>> X, z, w = model.sample(60, 40, rng=1)
    >>> icl = Criterion(EMProblem(X, model.family))
    >>> rows, cols, value = greedy_moves(icl, z, w)
    >>> bool(value >= icl(z, w)), (int(rows.max()) + 1, int(cols.max()) + 1)
    (True, (2, 2))
    """
    rows, cols = np.array(rows, dtype=np.int64), np.array(cols, dtype=np.int64)
    start = crit(rows, cols)
    if crit.form != "exact-icl":
        return rows, cols, start
    threshold = _threshold(start)
    side, still = 0, 0  # passes in a row that moved nothing
    while still < 2:
        moved = _side_pass(crit, rows, cols, side, threshold)
        still = 0 if moved else still + 1
        side = 1 - side
    value = crit(rows, cols)
    return rows, cols, value
