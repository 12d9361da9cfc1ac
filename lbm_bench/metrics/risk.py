"""Conditional risk of a co-clustering against Gibbs label sets, and the item losses.

:func:`conditional_risk` scores one co-clustering against Gibbs label sets
under a single label matching (:mod:`lbm_bench.metrics.label_matching`) and returns a
:class:`ConditionalRisk`; :func:`item_losses` gives the per-set row and column error rates
of a labelling under the identity matching (the Gibbs sampler runs with the true
parameters, so its sets live in the generating label space). The scale's other end, the
chance level, is :mod:`lbm_bench.metrics.chance`'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from lbm_bench._validation import (
    check_integer_array,
    check_label_sets,
    check_labels,
    describe_value,
)
from lbm_bench.metrics.coclustering import cari_counts
from lbm_bench.metrics.contingency_tables import (
    TableStack,
    ari_from_counts,
    label_codes,
    same_length,
)
from lbm_bench.metrics.label_matching import cluster_map, optimal_matchings
from lbm_bench.metrics.mcmc import chain_diagnostics

__all__ = [
    "ConditionalRisk",
    "check_gibbs_sets",
    "conditional_risk",
    "conditional_risk_of_sets",
    "item_losses",
    "set_item_losses",
]


# --------------------------------------------------------------------------- #
# Item losses under the identity matching                                     #
# --------------------------------------------------------------------------- #


def check_gibbs_sets(gibbs_rows: Any, gibbs_cols: Any) -> tuple[np.ndarray, np.ndarray]:
    """The row and column label sets drawn by Gibbs, checked: as many sets on each side."""
    rows = check_label_sets("gibbs_rows", gibbs_rows)
    cols = check_label_sets("gibbs_cols", gibbs_cols)
    if rows.shape[0] != cols.shape[0]:
        raise ValueError(
            "gibbs_rows and gibbs_cols must hold equally many label sets, "
            f"got shapes {rows.shape} and {cols.shape}"
        )
    return rows, cols


def item_losses(
    gibbs_rows: ArrayLike, gibbs_cols: ArrayLike, z: ArrayLike, w: ArrayLike
) -> tuple[np.ndarray, np.ndarray]:
    """Row and column error rates of ``(z, w)`` against every label set, identity matching.

    No matching is searched: labels are compared as they are, so a label that
    appears in no set (for instance -1 for an unmatched cluster) is an error.
    ``l_item`` of each set is ``row_loss + col_loss - row_loss * col_loss``.

    Parameters
    ----------
    gibbs_rows : array-like of shape (n_sets, n_rows)
        Row label sets (non-negative integers).
    gibbs_cols : array-like of shape (n_sets, n_cols)
        Column label sets, as many as the row sets.
    z : array-like of shape (n_rows,)
        Row labels (any integers).
    w : array-like of shape (n_cols,)
        Column labels (any integers).

    Returns
    -------
    row_loss : ndarray of shape (n_sets,)
    col_loss : ndarray of shape (n_sets,)

    Examples
    --------
    >>> row_loss, col_loss = item_losses([[0, 0, 1], [0, 1, 1]], [[0, 1], [0, 1]],
    ...                                  [0, 0, 1], [1, 1])
    >>> row_loss.tolist(), col_loss.tolist()
    ([0.0, 0.3333333333333333], [0.5, 0.5])
    """
    rows, cols = check_gibbs_sets(gibbs_rows, gibbs_cols)
    z = check_labels("z", z, length=rows.shape[1], nonnegative=False)
    w = check_labels("w", w, length=cols.shape[1], nonnegative=False)
    return set_item_losses(rows, cols, z, w)


def set_item_losses(
    rows: np.ndarray, cols: np.ndarray, z: np.ndarray, w: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`item_losses` of validated arrays (sets of shape (S, n), vectors of length n)."""
    return np.mean(rows != z, axis=1), np.mean(cols != w, axis=1)


# --------------------------------------------------------------------------- #
# Conditional risk against Gibbs label sets                                   #
# --------------------------------------------------------------------------- #


@dataclass(frozen=True, eq=False)
class ConditionalRisk:
    """Conditional risk of one co-clustering estimated from label sets.

    Attributes
    ----------
    risk : float
        Mean of ``l_item`` over the label sets under the single matching
        ``(row_map, col_map)``.
    mcse : float
        Monte Carlo standard error of ``risk``: batch means within each chain,
        pooled over chains (:func:`~lbm_bench.metrics.mcmc.chain_diagnostics`, the
        estimator of every MCSE of the package; 0 for a single label set).
    mean_l_row : float
        Mean row error rate under ``row_map``.
    mean_l_col : float
        Mean column error rate under ``col_map``.
    row_labels : ndarray of shape (n_pred_row_clusters,)
        The distinct predicted row labels, in increasing order (any non-negative
        integers: the scores depend on the partition, never on the label values).
    row_map : ndarray of shape (n_pred_row_clusters,)
        Reference row cluster matched to the predicted row cluster ``row_labels[i]``,
        -1 when unmatched. For labels ``0..k-1``, ``row_labels`` is ``arange(k)`` and
        ``row_map`` is indexed by the label itself; :meth:`matched_labels` maps any labels.
    col_labels, col_map : ndarray of shape (n_pred_col_clusters,)
        Likewise for the columns.
    cari_mean : float
        Mean CARI between the label sets and the co-clustering.
    cari_sd : float
        Standard deviation (``ddof=1``) of the CARI over the sets (NaN for one set).
    n_sets : int
        Number of label sets.
    n_steps : int
        Number of alternating Hungarian steps taken after the initial matching.
    exact : bool
        True when the matching is certified optimal by enumerating every
        maximal matching of one side (each with the exact best matching of the
        other side); False when it is the alternating (coordinate-wise) optimum.
    """

    risk: float
    mcse: float
    mean_l_row: float
    mean_l_col: float
    row_map: np.ndarray
    col_map: np.ndarray
    cari_mean: float
    cari_sd: float
    n_sets: int
    n_steps: int
    exact: bool
    row_labels: np.ndarray
    col_labels: np.ndarray

    def matched_labels(self, z_pred: ArrayLike, w_pred: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
        """The reference cluster matched to each item's predicted cluster (-1: unmatched), for
        labels among ``row_labels`` and ``col_labels`` (ValueError otherwise): then
        ``risk == l_item(gibbs_rows, gibbs_cols, *matched_labels(z_pred, w_pred),
        match=False).mean()``."""
        return (_matched(self.row_labels, self.row_map, check_labels("z_pred", z_pred), "z_pred"),
                _matched(self.col_labels, self.col_map, check_labels("w_pred", w_pred), "w_pred"))


def _matched(labels: np.ndarray, cluster_map: np.ndarray, pred: np.ndarray,
             name: str) -> np.ndarray:
    index = np.minimum(np.searchsorted(labels, pred), labels.size - 1)
    unknown = labels[index] != pred
    if unknown.any():
        raise ValueError(f"{name} holds the label {int(pred[unknown][0])}, which the scored labels "
                         "do not have")
    return cluster_map[index]


def _chain_lengths(n_sets: int, n_chains: Any, chain_lengths: Any) -> list[int]:
    """Lengths of the chain-major blocks of label sets."""
    if chain_lengths is not None:
        lengths = check_integer_array("chain_lengths", chain_lengths)
        if lengths.ndim != 1 or lengths.size == 0 or lengths.min() < 1:
            raise ValueError(
                "chain_lengths must be a 1-D sequence of positive integers, "
                f"got {describe_value(lengths)}"
            )
        if int(lengths.sum()) != n_sets:
            raise ValueError(
                f"chain_lengths must sum to the number of label sets {n_sets}, "
                f"got {int(lengths.sum())}"
            )
        if n_chains not in (1, lengths.size):
            raise ValueError(
                f"n_chains={describe_value(n_chains)} contradicts chain_lengths of length "
                f"{lengths.size}"
            )
        return [int(x) for x in lengths]
    if isinstance(n_chains, bool) or not isinstance(n_chains, (int, np.integer)):
        raise TypeError(f"n_chains must be an integer, got {describe_value(n_chains)}")
    if not 1 <= int(n_chains) <= n_sets:
        raise ValueError(f"n_chains must lie in [1, {n_sets}], got {int(n_chains)}")
    size, extra = divmod(n_sets, int(n_chains))
    return [size + (1 if c < extra else 0) for c in range(int(n_chains))]


def _mean_sd(values: Sequence[float]) -> tuple[float, float]:
    array = np.asarray(values, dtype=np.float64)
    sd = float(np.std(array, ddof=1)) if array.size > 1 else float("nan")
    return float(array.mean()), sd


def conditional_risk(
    gibbs_rows: ArrayLike,
    gibbs_cols: ArrayLike,
    z_pred: ArrayLike,
    w_pred: ArrayLike,
    *,
    n_chains: int = 1,
    chain_lengths: Sequence[int] | None = None,
) -> ConditionalRisk:
    """Conditional risk of a co-clustering: mean ``l_item`` over Gibbs label sets.

    The label sets share the generating label space (the Gibbs sampler runs
    with the true parameters: no label switching), so a **single** matching
    ``(sigma, tau)`` of predicted to reference clusters is used for all sets,
    the one minimising the mean loss. (A separate matching per set would let
    an algorithm score below the Bayes risk.) Predictions may have any number
    of clusters: the matchings are rectangular and the items of unmatched
    predicted clusters count as errors.

    The mean ``mean_s [l_row,s + l_col,s - l_row,s l_col,s]`` is not separable in
    ``(sigma, tau)`` because of the product term. It is minimised by
    alternating exact Hungarian steps: start from the matchings of the summed
    (averaged) contingency tables; given ``tau``, the objective is linear in the
    row matching, ``mean_s l_row,s (1 - l_col,s) + mean_s l_col,s``, so the best
    ``sigma`` is a linear assignment with weights ``sum_s (1 - l_col,s) N_s``;
    then likewise for ``tau`` given ``sigma``; iterate until neither step
    improves the (integer) objective ``sum_s R_s C_s`` (correctly classified
    row and column counts). The result cannot be improved by changing one of
    the two matchings alone, which does not guarantee the global optimum.
    So, when one side has at most 720 maximal one-to-one matchings (e.g.
    ``g = g' <= 6``), every one of them is also enumerated, each with the exact
    best matching of the other side, and the result is certified optimal
    (``exact=True``).

    Parameters
    ----------
    gibbs_rows : array-like of shape (n_sets, n_rows)
        Reference row label sets with values in ``[0, g)``; chain-major when
        several chains are stored.
    gibbs_cols : array-like of shape (n_sets, n_cols)
        Reference column label sets with values in ``[0, m)``.
    z_pred : array-like of shape (n_rows,)
        Predicted row labels, any non-negative integers (renumbered: time and memory
        depend on the numbers of clusters, not on the label values).
    w_pred : array-like of shape (n_cols,)
        Predicted column labels, any non-negative integers.
    n_chains : int, default=1
        Number of chains stored one after the other; chain ``c`` holds a
        contiguous block of sets, the first ``n_sets % n_chains`` chains one
        set longer than the others.
    chain_lengths : sequence of int, optional
        Explicit chain lengths (summing to ``n_sets``); overrides ``n_chains``.

    Returns
    -------
    ConditionalRisk
        ``risk`` and its ``mcse`` (batch means of ``l_item`` of size
        ``floor(sqrt(L))`` within each chain of ``L`` sets, pooled over chains, see
        :class:`ConditionalRisk`), mean row and column error rates, the
        matching, CARI mean and standard deviation and the number of sets.

    Examples
    --------
    >>> result = conditional_risk([[0, 0, 1, 1], [0, 0, 1, 0]], [[0, 1], [0, 1]],
    ...                           [1, 1, 0, 0], [0, 1])
    >>> result.risk, result.mean_l_row, result.row_map.tolist()
    (0.125, 0.125, [1, 0])
    """
    # Sets keep their stored dtype (uint8 for g <= 256): an int64 copy of 2,000 sets of
    # 100,000 rows would take 1.6 GB; the contingency tables are built block by block.
    rows_ref, cols_ref = check_gibbs_sets(gibbs_rows, gibbs_cols)
    rows_pred = check_labels("z_pred", z_pred)
    cols_pred = check_labels("w_pred", w_pred)
    same_length("gibbs_rows", rows_ref, "z_pred", rows_pred)
    same_length("gibbs_cols", cols_ref, "w_pred", cols_pred)
    lengths = _chain_lengths(rows_ref.shape[0], n_chains, chain_lengths)
    return conditional_risk_of_sets(rows_ref, cols_ref, rows_pred, cols_pred, lengths)


def conditional_risk_of_sets(
    rows_ref: np.ndarray,
    cols_ref: np.ndarray,
    rows_pred: np.ndarray,
    cols_pred: np.ndarray,
    lengths: Sequence[int],
) -> ConditionalRisk:
    """:func:`conditional_risk` of validated arrays.

    ``rows_ref``/``cols_ref`` are non-negative integer label sets (any integer dtype) of shapes
    (S, n_rows) and (S, n_cols), ``rows_pred``/``cols_pred`` int64 non-negative
    vectors of matching lengths, ``lengths`` the chain lengths (summing to S).
    The predictions are renumbered first
    (:func:`~lbm_bench.metrics.contingency_tables.label_codes`), so that the contingency tables are
    sized by the numbers of clusters, not by the label values.
    """
    (rows_pred, row_labels), (cols_pred,
                              col_labels) = label_codes(rows_pred), label_codes(cols_pred)
    rows = TableStack(rows_ref, int(rows_ref.max()) + 1, rows_pred, row_labels.size)
    cols = TableStack(cols_ref, int(cols_ref.max()) + 1, cols_pred, col_labels.size)
    return conditional_risk_of_tables(rows, cols, row_labels, col_labels, lengths)


def conditional_risk_of_tables(rows: TableStack, cols: TableStack, row_labels: np.ndarray,
                               col_labels: np.ndarray, lengths: Sequence[int]) -> ConditionalRisk:
    """:func:`conditional_risk` from the contingency tables of every set against the
    renumbered predictions (:class:`TableStack`), and the distinct predicted labels."""
    n_sets = rows.n_sets
    sigma, tau, steps, exact = optimal_matchings(rows, cols)
    row_hits, col_hits = rows.hits(sigma), cols.hits(tau)

    n_rows, n_cols = rows.n_items, cols.n_items
    cells = n_rows * n_cols
    products = [r * c for r, c in zip(row_hits.tolist(), col_hits.tolist(), strict=True)]
    losses = np.array([(cells - p) / cells for p in products])
    row_sums, col_sums = rows.pair_sums(), cols.pair_sums()
    caris = [ari_from_counts(*cari_counts(row_sums, col_sums, s, s)) for s in range(n_sets)]
    cari_mean, cari_sd = _mean_sd(caris)
    return ConditionalRisk(
        risk=(n_sets * cells - sum(products)) / (n_sets * cells),
        mcse=chain_diagnostics(losses, np.asarray(lengths))[0],
        mean_l_row=(n_sets * n_rows - int(row_hits.sum())) / (n_sets * n_rows),
        mean_l_col=(n_sets * n_cols - int(col_hits.sum())) / (n_sets * n_cols),
        row_map=cluster_map(sigma, rows),
        col_map=cluster_map(tau, cols),
        cari_mean=cari_mean,
        cari_sd=cari_sd,
        n_sets=n_sets,
        n_steps=steps,
        exact=exact,
        row_labels=_read_only(row_labels),
        col_labels=_read_only(col_labels),
    )


def _read_only(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array
