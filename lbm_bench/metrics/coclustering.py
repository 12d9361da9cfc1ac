"""Comparison of co-clusterings: row, column, cell and 0-1 losses, and CARI.

:func:`l_row`, :func:`l_col`, :func:`l_item` (equal to :func:`ce`),
:func:`l_full` and :func:`cari` compare a reference co-clustering ``(z, w)``
with a predicted one ``(z_pred, w_pred)``. They also accept reference labels of
shape ``(n_sets, n)`` (for instance Gibbs label sets) and then return one value
per set; a 1-D reference returns a Python float. Label values may be any
integers.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from lbm_bench._docstrings import fill_doc
from lbm_bench.metrics.contingency_tables import (
    FloatOrArray,
    PairSums,
    ari_from_counts,
    encode_labels,
    finish,
    iter_tables,
    label_pair_sums,
    matched_count,
    pair_counts,
    sets_and_prediction,
)

__all__ = [
    "cari",
    "cari_counts",
    "ce",
    "l_col",
    "l_full",
    "l_item",
    "l_row",
]


# --------------------------------------------------------------------------- #
# Co-clustering losses                                                        #
# --------------------------------------------------------------------------- #


class _Hits(NamedTuple):
    """Correctly classified counts per reference set, out of ``n``."""

    hits: np.ndarray  # int64 of shape (n_sets,)
    n: int
    batched: bool


def _hits(sets: np.ndarray, pred: np.ndarray, match: bool) -> np.ndarray:
    """Items on which each validated int64 set agrees with ``pred``, int64 of shape (n_sets,).

    With ``match`` the clusters are matched optimally (each set separately),
    otherwise labels are compared as they are.
    """
    if not match:
        return np.count_nonzero(sets == pred, axis=1).astype(np.int64)
    codes_ref, k_ref = encode_labels(sets)
    codes_pred, k_pred = encode_labels(pred)
    hits = np.empty(sets.shape[0], dtype=np.int64)
    for block, tables in iter_tables(codes_ref, k_ref, codes_pred, k_pred):
        hits[block] = [matched_count(table) for table in tables]
    return hits


def _one_way_hits(
    name_ref: str, ref: Any, name_pred: str, pred: Any, match: bool
) -> _Hits:
    """Validate, then count the items on which each reference set agrees with ``pred``."""
    sets, predicted, batched = sets_and_prediction(name_ref, ref, name_pred, pred)
    return _Hits(_hits(sets, predicted, match), int(predicted.size), batched)


def _one_way_loss(name_ref: str, ref: Any, name_pred: str, pred: Any, match: bool) -> FloatOrArray:
    hits = _one_way_hits(name_ref, ref, name_pred, pred, match)
    return finish([(hits.n - h) / hits.n for h in hits.hits.tolist()], hits.batched)


def _two_way_hits(
    z: Any, w: Any, z_pred: Any, w_pred: Any, match: bool
) -> tuple[list[int], list[int], int, int, bool]:
    """(row hits, column hits, n_rows, n_cols, batched), broadcast to a common number of sets."""
    rows = _one_way_hits("z", z, "z_pred", z_pred, match)
    cols = _one_way_hits("w", w, "w_pred", w_pred, match)
    row_hits, col_hits, batched = _broadcast_sets(rows, cols)
    return row_hits, col_hits, rows.n, cols.n, batched


def _broadcast_sets(first: _Hits, second: _Hits) -> tuple[list[int], list[int], bool]:
    """Broadcast the per-set counts of rows and columns to a common number of sets."""
    try:
        rows, cols = np.broadcast_arrays(first.hits, second.hits)
    except ValueError as exc:
        raise ValueError(
            "row and column label sets must be equally many, got "
            f"{first.hits.size} and {second.hits.size}"
        ) from exc
    return rows.tolist(), cols.tolist(), first.batched or second.batched


@fill_doc
def l_row(z: ArrayLike, z_pred: ArrayLike, *, match: bool = True) -> FloatOrArray:
    """Row error rate ``l_row = 1 - (1/n) sum_i [z_i = sigma(z_pred_i)]``.

    With ``match=True`` ``sigma`` is the optimal one-to-one matching of
    predicted to reference clusters (rectangular when the numbers differ; the
    items of unmatched clusters are errors), so ``l_row`` equals
    :func:`matching_error`. With ``match=False`` labels are compared as they are.
    In [0, 1], 0 for identical partitions.

    Parameters
    ----------
    z : array-like of shape (n_rows,) or (n_sets, n_rows)
        Reference row labels, or a batch of reference label sets (each set is
        matched separately).
    z_pred : array-like of shape (n_rows,)
        Predicted row labels.
    {{match_per_set}}

    Examples
    --------
    >>> l_row([0, 0, 1, 1], [1, 1, 0, 1])
    0.25
    >>> l_row([0, 0, 1, 1], [1, 1, 0, 1], match=False)
    0.75
    """
    return _one_way_loss("z", z, "z_pred", z_pred, match)


@fill_doc
def l_col(w: ArrayLike, w_pred: ArrayLike, *, match: bool = True) -> FloatOrArray:
    """Column error rate; :func:`l_row` applied to the column labels.

    Parameters
    ----------
    w : array-like of shape (n_cols,) or (n_sets, n_cols)
        Reference column labels, or a batch of reference label sets.
    w_pred : array-like of shape (n_cols,)
        Predicted column labels.
    {{match_per_set}}

    Examples
    --------
    >>> l_col([0, 1, 1], [2, 0, 0])
    0.0
    """
    return _one_way_loss("w", w, "w_pred", w_pred, match)


@fill_doc
def l_item(
    z: ArrayLike, w: ArrayLike, z_pred: ArrayLike, w_pred: ArrayLike, *, match: bool = True
) -> FloatOrArray:
    """Cell (item) error rate of a co-clustering: ``l_row + l_col - l_row * l_col``.

    Eq. (3) of Lomet et al.: the proportion of cells ``(i, j)`` whose block
    ``(z_i, w_j)`` is wrong. With ``match=True`` rows and columns are matched by
    their optimal one-to-one maps; the joint optimum is separable because
    ``1 - (1 - l_row)(1 - l_col)`` increases in both. Computed exactly as
    ``1 - R C / (n_rows n_cols)`` from the integer counts ``R``, ``C`` of
    correctly classified rows and columns. In [0, 1], 0 for identical
    co-clusterings. With ``match=True`` it is Lomet's co-clustering
    classification error (:func:`ce`).

    Parameters
    ----------
    {{coclusterings}}
    match : bool, default=True
        Match the clusters optimally (each set separately), or use the identity.

    {{per_set}}

    Examples
    --------
    >>> l_item([0, 0, 1, 1], [0, 1], [0, 0, 1, 0], [1, 0])
    0.25
    """
    row_hits, col_hits, n_rows, n_cols, batched = _two_way_hits(z, w, z_pred, w_pred, match)
    cells = n_rows * n_cols
    return finish([(cells - r * c) / cells for r, c in zip(row_hits, col_hits, strict=True)],
                  batched)


@fill_doc
def ce(z: ArrayLike, w: ArrayLike, z_pred: ArrayLike, w_pred: ArrayLike) -> FloatOrArray:
    """Co-clustering classification error (Lomet, 2012): :func:`l_item` with matching.

    ``CE = min_{sigma, tau} 1 - (1/(IJ)) sum_ij [z_i = sigma(z'_i)][w_j = tau(w'_j)]
    = l_row + l_col - l_row l_col``, with one-to-one (rectangular) matchings.

    {{coclusterings_per_set}}

    Examples
    --------
    >>> ce([0, 0, 1, 1], [0, 1], [0, 0, 1, 0], [1, 0])
    0.25
    """
    return l_item(z, w, z_pred, w_pred, match=True)


@fill_doc
def l_full(
    z: ArrayLike, w: ArrayLike, z_pred: ArrayLike, w_pred: ArrayLike, *, match: bool = True
) -> FloatOrArray:
    """0-1 loss: 0 if both partitions agree (up to the matching), else 1.

    With ``match=True`` the row and column partitions must be identical up to
    relabelling; with ``match=False`` the labels must be equal.

    Parameters
    ----------
    {{coclusterings}}
    match : bool, default=True
        Compare up to relabelling, or compare labels as they are.

    Returns
    -------
    float or ndarray of shape (n_sets,)
        0.0 or 1.0; a float for 1-D references, one value per set for a batch.

    Examples
    --------
    >>> l_full([0, 0, 1], [0, 1], [1, 1, 0], [5, 2])
    0.0
    >>> l_full([0, 0, 1], [0, 1], [1, 1, 0], [5, 2], match=False)
    1.0
    """
    row_hits, col_hits, n_rows, n_cols, batched = _two_way_hits(z, w, z_pred, w_pred, match)
    values = [
        0.0 if (r == n_rows and c == n_cols) else 1.0
        for r, c in zip(row_hits, col_hits, strict=True)
    ]
    return finish(values, batched)


# --------------------------------------------------------------------------- #
# Co-clustering adjusted Rand index                                           #
# --------------------------------------------------------------------------- #


def _one_way_pair_sums(
    name_ref: str, ref: Any, name_pred: str, pred: Any
) -> tuple[PairSums, bool]:
    sets, predicted, batched = sets_and_prediction(name_ref, ref, name_pred, pred)
    return label_pair_sums(sets, predicted), batched


def cari_counts(
    rows: PairSums, cols: PairSums, s_row: int, s_col: int
) -> tuple[int, int, int, int]:
    """Pair counts of kron(N_rows, N_cols) from the sums of squares of both factors.

    ``sum_pq C(a_p b_q, 2) = (S2(A) S2(B) - S1(A) S1(B)) / 2`` and the margins
    of a Kronecker product are the Kronecker products of the margins.
    """
    n = rows.n * cols.n
    return pair_counts(
        rows.cells[s_row] * cols.cells[s_col],
        rows.rows[s_row] * cols.rows[s_col],
        rows.cols[s_row] * cols.cols[s_col],
        n,
    )


@fill_doc
def cari(z: ArrayLike, w: ArrayLike, z_pred: ArrayLike, w_pred: ArrayLike) -> FloatOrArray:
    """Co-clustering adjusted Rand index (Robert & Vasseur).

    The ARI of the contingency table of the blocks, ``N = kron(N_zz', N_ww')``,
    i.e. the ARI of the cell labels ``(z_i, w_j)`` and ``(z'_i, w'_j)``. The
    pair counts are obtained without forming the Kronecker product:
    ``sum_pq C(a_p b_q, 2) = (S2(A) S2(B) - n_rows n_cols) / 2`` with ``S2`` the
    sum of squared entries, and likewise for the margins; cost
    ``O(n_rows + n_cols + HH' + LL')``, exact integer arithmetic. Symmetric
    in the two co-clusterings, at most 1 (identical up to relabelling), about
    0 for independent co-clusterings.

    {{coclusterings_per_set}}

    Examples
    --------
    >>> round(cari([1, 2, 2, 2, 1], [1, 1, 2, 1, 1, 2],
    ...            [1, 1, 2, 1, 1], [1, 1, 2, 1, 3, 2]), 4)
    0.2501
    """
    rows, rows_batched = _one_way_pair_sums("z", z, "z_pred", z_pred)
    cols, cols_batched = _one_way_pair_sums("w", w, "w_pred", w_pred)
    n_row_sets, n_col_sets = len(rows.cells), len(cols.cells)
    if n_row_sets != n_col_sets and min(n_row_sets, n_col_sets) != 1:
        raise ValueError(
            f"z and w must hold equally many label sets, got {n_row_sets} and {n_col_sets}"
        )
    n_sets = max(n_row_sets, n_col_sets)
    values = [
        ari_from_counts(*cari_counts(rows, cols, min(s, n_row_sets - 1), min(s, n_col_sets - 1)))
        for s in range(n_sets)
    ]
    return finish(values, rows_batched or cols_batched)
