"""Comparison of partitions and of co-clusterings, and the conditional risk.

Every measure is computed from contingency tables. Label vectors may use any
integer values (negative ones included): two label vectors describe the same
partition when they differ by a relabelling. The two compared partitions may
have different numbers of clusters.

Partition comparison
    :func:`contingency`, :func:`rand`, :func:`ari`, :func:`nmi`, :func:`ami`,
    :func:`matching_error`, :func:`normalized_accuracy`,
    :func:`adjusted_asymmetric_accuracy` and :func:`pair_sets_index` take two
    label vectors ``(a, b)``, or a single contingency table ``a`` (rows: the
    reference clusters) with ``b=None``, like genieclust.

Co-clustering comparison
    :func:`l_row`, :func:`l_col`, :func:`l_item` (equal to :func:`ce` with
    ``match=True``), :func:`l_full` and :func:`cari` compare a reference
    co-clustering ``(z, w)`` with a predicted one ``(z_pred, w_pred)``.

Batches of reference label sets
    :func:`ari`, :func:`rand`, :func:`l_row`, :func:`l_col`, :func:`l_item`,
    :func:`l_full`, :func:`ce` and :func:`cari` also accept reference labels of
    shape ``(n_sets, n)`` (for instance Gibbs label sets) and then return one
    value per set; a 1-D reference returns a Python float.

Conditional risk
    :func:`conditional_risk` scores one co-clustering against Gibbs label sets
    under a single label matching and returns a :class:`ConditionalRisk`.

Pair counts (Rand, ARI, CARI) are exact integers: sums of squares of table
entries are accumulated in int64 only where they provably fit (a table over
``n < 3.03e9`` items has ``sum(n_ij**2) <= n**2 < 2**63``) and every product
of such sums is formed with Python integers, so the final ratio is correctly
rounded.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike
from scipy.optimize import linear_sum_assignment
from scipy.special import gammaln

__all__ = [
    "contingency",
    "rand",
    "ari",
    "nmi",
    "ami",
    "matching_error",
    "normalized_accuracy",
    "adjusted_asymmetric_accuracy",
    "pair_sets_index",
    "l_row",
    "l_col",
    "l_item",
    "l_full",
    "ce",
    "cari",
    "ConditionalRisk",
    "conditional_risk",
]

#: Largest number of int64 cells (or index entries) built at once: 128 MiB.
_CELL_BUDGET = 1 << 24
#: Largest number of (i, j, n_ij) terms of the expected mutual information at once.
_EMI_BUDGET = 1 << 22
#: Largest item count for which sum(n_ij ** 2) <= n ** 2 fits in int64.
_INT64_SQUARE_LIMIT = math.isqrt(2**63 - 1)
#: Safety cap on the alternating Hungarian steps of :func:`conditional_risk`.
_MAX_ALTERNATIONS = 1000
#: Largest number of maximal one-to-one matchings of one side that
#: :func:`conditional_risk` enumerates to certify the global optimum.
_MAX_ENUMERATION = 720

#: A float for a 1-D reference, an ndarray of shape (n_sets,) for a batch of sets.
FloatOrArray = float | np.ndarray


# --------------------------------------------------------------------------- #
# Input validation                                                            #
# --------------------------------------------------------------------------- #


def _describe(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return f"an array of shape {value.shape} and dtype {value.dtype}"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _integer_array(name: str, values: Any) -> np.ndarray:
    """Return ``values`` as an int64 array, accepting integral floats."""
    try:
        array = np.asarray(values)
    except (TypeError, ValueError) as exc:  # ragged nested sequences
        raise TypeError(f"{name} must be an array of integers, got {_describe(values)}") from exc
    kind = array.dtype.kind
    if kind in "iub":
        return array.astype(np.int64, copy=False)
    if kind == "f" and np.all(np.isfinite(array)) and np.all(array == np.round(array)):
        return array.astype(np.int64)
    raise TypeError(
        f"{name} must hold integers, got dtype {array.dtype} with shape {array.shape}"
    )


def _labels(
    name: str, values: Any, *, batched: bool = False, nonnegative: bool = False
) -> np.ndarray:
    """Validate labels: 1-D, or 1-D/2-D ``(n_sets, n)`` when ``batched``."""
    array = _integer_array(name, values)
    if batched and array.ndim not in (1, 2):
        raise ValueError(f"{name} must be 1-D or 2-D (n_sets, n), got shape {array.shape}")
    if not batched and array.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {array.shape}")
    if array.size == 0:
        raise ValueError(f"{name} must not be empty, got shape {array.shape}")
    if nonnegative and array.min() < 0:
        raise ValueError(f"{name} must be non-negative, got min {int(array.min())}")
    return array


def _same_length(name_a: str, a: np.ndarray, name_b: str, b: np.ndarray) -> None:
    if a.shape[-1] != b.shape[-1]:
        raise ValueError(
            f"{name_a} and {name_b} must have the same length, "
            f"got shapes {a.shape} and {b.shape}"
        )


def _table_arg(name: str, values: Any) -> np.ndarray:
    """Validate a contingency table; drop its empty rows and columns."""
    table = _integer_array(name, values)
    if table.ndim != 2:
        raise ValueError(
            f"{name} must be a 2-D contingency table when the second labels are None, "
            f"got shape {table.shape}"
        )
    if table.size == 0 or table.min() < 0 or table.sum() == 0:
        raise ValueError(
            f"{name} must be a non-empty table of non-negative counts with a positive "
            f"total, got shape {table.shape}"
        )
    return table[table.sum(axis=1) > 0][:, table.sum(axis=0) > 0]


def _pair(
    a: Any, b: Any, name_a: str = "a", name_b: str = "b"
) -> tuple[np.ndarray, np.ndarray]:
    """Validate two 1-D label vectors of the same length."""
    first = _labels(name_a, a)
    second = _labels(name_b, b)
    _same_length(name_a, first, name_b, second)
    return first, second


# --------------------------------------------------------------------------- #
# Contingency tables                                                          #
# --------------------------------------------------------------------------- #


def _encode(labels: np.ndarray) -> tuple[np.ndarray, int]:
    """Map labels to codes ``0..k-1`` in increasing label order; return (codes, k).

    A presence map costs O(n + span) when the label span is moderate; otherwise
    ``np.unique`` sorts.
    """
    low, high = int(labels.min()), int(labels.max())
    span = high - low + 1
    if span > 4 * labels.size + 1024:
        values, inverse = np.unique(labels, return_inverse=True)
        return inverse.reshape(labels.shape).astype(np.int64, copy=False), int(values.size)
    shifted = labels - low
    present = np.bincount(shifted.ravel(), minlength=span) > 0
    if present.all():
        return shifted, span
    codes = np.cumsum(present) - 1
    return codes[shifted], int(codes[-1] + 1)


def _dense_table(codes_a: np.ndarray, k_a: int, codes_b: np.ndarray, k_b: int) -> np.ndarray:
    flat = np.bincount((codes_a * k_b + codes_b).ravel(), minlength=k_a * k_b)
    return flat.reshape(k_a, k_b)


def _iter_tables(
    ref: np.ndarray, k_ref: int, pred: np.ndarray, k_pred: int
) -> Iterator[tuple[slice, np.ndarray]]:
    """Yield ``(sets, tables)`` with tables of shape (len(sets), k_ref, k_pred).

    One ``np.bincount`` over ``s * k_ref * k_pred + ref * k_pred + pred`` builds
    the tables of a whole block of label sets.
    """
    n_sets, n_items = ref.shape
    cells = k_ref * k_pred
    step = max(1, _CELL_BUDGET // max(cells, n_items))
    for start in range(0, n_sets, step):
        block = ref[start : start + step]
        count = block.shape[0]
        index = block * k_pred + pred
        index += (np.arange(count, dtype=np.int64) * cells)[:, None]
        tables = np.bincount(index.ravel(), minlength=count * cells)
        yield slice(start, start + count), tables.reshape(count, k_ref, k_pred)


def contingency(a: ArrayLike, b: ArrayLike) -> np.ndarray:
    """Contingency table of two partitions.

    Parameters
    ----------
    a : array-like of shape (n_samples,)
        Integer labels of the first partition (any integer values).
    b : array-like of shape (n_samples,)
        Integer labels of the second partition.

    Returns
    -------
    ndarray of shape (n_clusters_a, n_clusters_b)
        ``table[k, l]`` counts the items with the ``k``-th smallest label of
        ``a`` and the ``l``-th smallest label of ``b``; no row or column is empty.

    Examples
    --------
    >>> contingency([1, 2, 2, 2, 1], [1, 1, 2, 1, 1])
    array([[2, 0],
           [2, 1]])
    """
    first, second = _pair(a, b)
    codes_a, k_a = _encode(first)
    codes_b, k_b = _encode(second)
    return _dense_table(codes_a, k_a, codes_b, k_b)


def _table_input(a: Any, b: Any) -> np.ndarray:
    """Dense table from two label vectors, or the validated table ``a``."""
    if b is None:
        return _table_arg("a", a)
    return contingency(a, b)


class _Sparse(NamedTuple):
    """Non-zero cells of a contingency table with its margins."""

    rows: np.ndarray  # row index of each non-zero cell
    cols: np.ndarray  # column index of each non-zero cell
    cells: np.ndarray  # the non-zero counts
    row_sums: np.ndarray
    col_sums: np.ndarray
    n: int


def _sparse_input(a: Any, b: Any) -> _Sparse:
    """Sparse view of the table; avoids a dense table with very many clusters."""
    if b is None:
        table = _table_arg("a", a)
    else:
        first, second = _pair(a, b)
        codes_a, k_a = _encode(first)
        codes_b, k_b = _encode(second)
        if k_a * k_b > max(_CELL_BUDGET, 4 * first.size):
            keys, cells = np.unique(codes_a * k_b + codes_b, return_counts=True)
            return _Sparse(
                keys // k_b,
                keys % k_b,
                cells.astype(np.int64),
                np.bincount(codes_a, minlength=k_a),
                np.bincount(codes_b, minlength=k_b),
                int(first.size),
            )
        table = _dense_table(codes_a, k_a, codes_b, k_b)
    rows, cols = np.nonzero(table)
    return _Sparse(
        rows, cols, table[rows, cols], table.sum(axis=1), table.sum(axis=0), int(table.sum())
    )


# --------------------------------------------------------------------------- #
# Exact pair counts                                                           #
# --------------------------------------------------------------------------- #


def _square_sums(values: np.ndarray, n_items: int, axis: Any) -> list[int]:
    """Sums of squares as Python ints (int64 when ``n_items**2`` fits)."""
    if n_items <= _INT64_SQUARE_LIMIT:
        squares = np.square(values, dtype=np.int64).sum(axis=axis)
    else:
        obj = values.astype(object)
        squares = (obj * obj).sum(axis=axis)
    return [int(x) for x in np.atleast_1d(squares).tolist()]


class _PairSums(NamedTuple):
    """Per label set: sums of squares of the cells and of both margins, and n."""

    cells: list[int]
    rows: list[int]
    cols: list[int]
    n: int


def _table_pair_sums(tables: np.ndarray, n_items: int) -> _PairSums:
    """Pair sums of a stack of tables of shape (n_sets, k_ref, k_pred)."""
    return _PairSums(
        _square_sums(tables, n_items, (1, 2)),
        _square_sums(tables.sum(axis=2), n_items, 1),
        _square_sums(tables.sum(axis=1), n_items, 1),
        n_items,
    )


def _label_pair_sums(ref: np.ndarray, pred: np.ndarray) -> _PairSums:
    """Pair sums of each reference set ``ref[s]`` (2-D) against ``pred`` (1-D)."""
    codes_ref, k_ref = _encode(ref)
    codes_pred, k_pred = _encode(pred)
    n_items = int(pred.size)
    cells: list[int] = []
    rows: list[int] = []
    cols: list[int] = []
    if k_ref * k_pred > max(_CELL_BUDGET, 4 * n_items):  # sparse, one set at a time
        col_sq = _square_sums(np.bincount(codes_pred), n_items, None)[0]
        for labels in codes_ref:
            _, counts = np.unique(labels * k_pred + codes_pred, return_counts=True)
            cells += _square_sums(counts, n_items, None)
            rows += _square_sums(np.bincount(labels), n_items, None)
            cols.append(col_sq)
        return _PairSums(cells, rows, cols, n_items)
    for _, tables in _iter_tables(codes_ref, k_ref, codes_pred, k_pred):
        sums = _table_pair_sums(tables, n_items)
        cells += sums.cells
        rows += sums.rows
        cols += sums.cols
    return _PairSums(cells, rows, cols, n_items)


def _pair_counts(sq_cells: int, sq_rows: int, sq_cols: int, n: int) -> tuple[int, int, int, int]:
    """(a, b, c, d): pairs together in both, only in the rows, only in the cols, in neither."""
    together = (sq_cells - n) // 2
    rows = (sq_rows - n) // 2
    cols = (sq_cols - n) // 2
    total = n * (n - 1) // 2
    return together, rows - together, cols - together, total - rows - cols + together


def _ari_from_counts(a: int, b: int, c: int, d: int) -> float:
    """Hubert-Arabie ARI = 2(ad - bc) / ((a+b)(b+d) + (a+c)(c+d)), exactly."""
    if b == 0 and c == 0:
        return 1.0
    return 2 * (a * d - b * c) / ((a + b) * (b + d) + (a + c) * (c + d))


def _rand_from_counts(a: int, b: int, c: int, d: int) -> float:
    total = a + b + c + d
    return 1.0 if total == 0 else (a + d) / total


def _finish(values: Sequence[float], batched: bool) -> FloatOrArray:
    if batched:
        return np.asarray(values, dtype=np.float64)
    return float(values[0])


def _pair_index(
    a: Any, b: Any, index: Callable[[int, int, int, int], float]
) -> FloatOrArray:
    """Apply ``index(a, b, c, d)`` to a table, a label pair or a batch."""
    if b is None:
        table = _table_arg("a", a)
        sums = _table_pair_sums(table[None], int(table.sum()))
        batched = False
    else:
        ref = _labels("a", a, batched=True)
        pred = _labels("b", b)
        _same_length("a", ref, "b", pred)
        batched = ref.ndim == 2
        sums = _label_pair_sums(np.atleast_2d(ref), pred)
    values = [
        index(*_pair_counts(t, r, c, sums.n))
        for t, r, c in zip(sums.cells, sums.rows, sums.cols)
    ]
    return _finish(values, batched)


def rand(a: ArrayLike, b: ArrayLike | None = None) -> FloatOrArray:
    """Rand index: the proportion of item pairs on which two partitions agree.

    ``R = (a + d) / C(n, 2)`` with ``a`` the pairs grouped together in both
    partitions and ``d`` the pairs separated in both. Symmetric, in [0, 1],
    1 for identical partitions (and for ``n = 1``). Computed exactly from integer
    pair counts.

    Parameters
    ----------
    a : array-like of shape (n_samples,) or (n_sets, n_samples) or (k, l)
        Reference labels, a batch of reference label sets, or a contingency
        table when ``b`` is None.
    b : array-like of shape (n_samples,), optional
        Predicted labels.

    Returns
    -------
    float or ndarray of shape (n_sets,)
        A float for a 1-D ``a`` or a table, one value per set for a 2-D ``a``.

    Examples
    --------
    >>> rand([0, 0, 1, 1], [0, 0, 1, 2])
    0.8333333333333334
    """
    return _pair_index(a, b, _rand_from_counts)


def ari(a: ArrayLike, b: ArrayLike | None = None) -> FloatOrArray:
    """Adjusted Rand index (Hubert & Arabie, 1985).

    ``ARI = (T - P Q / C(n,2)) / ((P + Q) / 2 - P Q / C(n,2))`` with
    ``T = sum_kl C(n_kl, 2)``, ``P = sum_k C(n_k., 2)``, ``Q = sum_l C(n_.l, 2)``;
    computed exactly as ``2(ad - bc) / ((a+b)(b+d) + (a+c)(c+d))`` from the
    integer pair counts. Symmetric, at most 1 (identical partitions), about 0
    for independent partitions, may be negative. 1.0 when neither partition
    separates a pair the other groups (this covers ``n = 1``).

    Parameters
    ----------
    a : array-like of shape (n_samples,) or (n_sets, n_samples) or (k, l)
        Reference labels, a batch of reference label sets (each compared with
        ``b``), or a contingency table when ``b`` is None.
    b : array-like of shape (n_samples,), optional
        Predicted labels.

    Returns
    -------
    float or ndarray of shape (n_sets,)
        A float for a 1-D ``a`` or a table, one value per set for a 2-D ``a``.

    Examples
    --------
    >>> ari([0, 0, 1, 1, 2, 2], [5, 5, -1, -1, 3, 3])
    1.0
    >>> round(ari([1, 2, 2, 2, 1], [1, 1, 2, 1, 1]), 4)
    -0.1538
    >>> ari([[0, 0, 1, 1], [0, 1, 0, 1]], [0, 0, 1, 1])
    array([ 1. , -0.5])
    """
    return _pair_index(a, b, _ari_from_counts)


# --------------------------------------------------------------------------- #
# Information-theoretic measures                                              #
# --------------------------------------------------------------------------- #


def _entropy(counts: np.ndarray, n: int) -> float:
    """Shannon entropy (nats) of the counts; ``math.fsum`` makes it order-independent."""
    p = counts[counts > 0] / n
    return -math.fsum((p * np.log(p)).tolist())


def _mutual_info(table: _Sparse) -> tuple[float, float]:
    """Mutual information ``H(a) + H(b) - H(a, b)`` (clipped at 0) and ``(H(a) + H(b)) / 2``.

    Identical partitions give ``H(a, b) = H(a) = H(b)`` bit for bit, hence a
    normalised value of exactly 1.
    """
    h_a = _entropy(table.row_sums, table.n)
    h_b = _entropy(table.col_sums, table.n)
    mi = max(h_a + h_b - _entropy(table.cells, table.n), 0.0)
    return mi, (h_a + h_b) / 2


def _emi_chunks(counts: np.ndarray) -> Iterator[tuple[int, int]]:
    """Split consecutive pairs into chunks of at most about ``_EMI_BUDGET`` terms."""
    ends = np.cumsum(counts)
    start = 0
    while start < counts.size:
        base = ends[start - 1] if start else 0
        stop = int(np.searchsorted(ends, base + _EMI_BUDGET, side="right"))
        stop = max(stop, start + 1)
        yield start, stop
        start = stop


def _expected_mutual_info(row_sums: np.ndarray, col_sums: np.ndarray, n: int) -> float:
    """Exact expected mutual information under the hypergeometric model.

    Vinh, Epps & Bailey (2010), eq. (24a): sum over cells (i, j) and over every
    feasible count ``max(1, a_i + b_j - n) <= n_ij <= min(a_i, b_j)`` of
    ``n_ij / n * log(n n_ij / (a_i b_j)) * P(n_ij)`` with the hypergeometric
    probability evaluated in log space with ``gammaln``; all terms at once.
    """
    a = np.repeat(row_sums.astype(np.int64), col_sums.size)
    b = np.tile(col_sums.astype(np.int64), row_sums.size)
    low = np.maximum(1, a + b - n)
    counts = np.maximum(np.minimum(a, b) - low + 1, 0)
    log_const = (
        gammaln(a + 1.0) + gammaln(b + 1.0) + gammaln(n - a + 1.0) + gammaln(n - b + 1.0)
        - gammaln(n + 1.0)
    )
    log_ab = np.log(a.astype(np.float64)) + np.log(b.astype(np.float64))
    total = 0.0
    for start, stop in _emi_chunks(counts):
        size = counts[start:stop]
        pair = np.repeat(np.arange(start, stop), size)
        first = np.cumsum(size) - size
        nij = low[pair] + (np.arange(int(size.sum())) - np.repeat(first, size))
        ai, bj = a[pair], b[pair]
        log_p = (
            log_const[pair]
            - gammaln(nij + 1.0)
            - gammaln(ai - nij + 1.0)
            - gammaln(bj - nij + 1.0)
            - gammaln(n - ai - bj + nij + 1.0)
        )
        term = nij / n * (math.log(n) + np.log(nij.astype(np.float64)) - log_ab[pair])
        total += float(np.sum(term * np.exp(log_p)))
    return total


def nmi(a: ArrayLike, b: ArrayLike | None = None) -> float:
    """Normalised mutual information, arithmetic-mean normalisation (NMI_sum).

    ``NMI = MI / ((H(a) + H(b)) / 2)`` with natural logarithms. Symmetric, in
    [0, 1], 1 for identical partitions (also when both have a single cluster),
    0 when exactly one partition has a single cluster. Not adjusted for chance.
    Same value as scikit-learn's ``normalized_mutual_info_score``.

    Parameters
    ----------
    a : array-like of shape (n_samples,) or (k, l)
        Labels, or a contingency table when ``b`` is None.
    b : array-like of shape (n_samples,), optional
        Labels of the other partition.

    Returns
    -------
    float

    Examples
    --------
    >>> nmi([0, 0, 1, 1], [7, 7, 3, 3])
    1.0
    """
    table = _sparse_input(a, b)
    k_a, k_b = table.row_sums.size, table.col_sums.size
    if k_a == 1 or k_b == 1:
        return 1.0 if k_a == k_b else 0.0
    mi, normaliser = _mutual_info(table)
    return 0.0 if mi == 0.0 else mi / normaliser


def ami(a: ArrayLike, b: ArrayLike | None = None) -> float:
    """Adjusted mutual information, arithmetic-mean normalisation (AMI_sum).

    ``AMI = (MI - E[MI]) / ((H(a) + H(b)) / 2 - E[MI])`` with the exact expected
    mutual information under the hypergeometric (permutation) model, evaluated
    in log space and vectorised over every term (Vinh, Epps & Bailey, 2010).
    Symmetric, at most 1 (identical partitions), about 0 for independent
    partitions, may be slightly negative. Same value as scikit-learn's
    ``adjusted_mutual_info_score``.

    Parameters
    ----------
    a : array-like of shape (n_samples,) or (k, l)
        Labels, or a contingency table when ``b`` is None.
    b : array-like of shape (n_samples,), optional
        Labels of the other partition.

    Returns
    -------
    float

    Examples
    --------
    >>> ami([0, 0, 1, 1, 2, 2], [1, 1, 0, 0, 2, 2])
    1.0
    """
    table = _sparse_input(a, b)
    k_a, k_b = table.row_sums.size, table.col_sums.size
    if k_a == 1 or k_b == 1:
        return 1.0 if k_a == k_b else 0.0
    mi, normaliser = _mutual_info(table)
    emi = _expected_mutual_info(table.row_sums, table.col_sums, table.n)
    eps = float(np.finfo(np.float64).eps)
    denominator = normaliser - emi
    denominator = min(denominator, -eps) if denominator < 0 else max(denominator, eps)
    return (mi - emi) / denominator


# --------------------------------------------------------------------------- #
# Set-matching measures                                                       #
# --------------------------------------------------------------------------- #


def _best_matching(weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Maximum-weight one-to-one matching of rows and columns (rectangular)."""
    return linear_sum_assignment(np.asarray(weights, dtype=np.float64), maximize=True)


def _fraction_sum(numerators: np.ndarray, denominators: np.ndarray) -> Fraction:
    """Exact sum of ``numerators / denominators`` (integer arrays)."""
    return sum(
        (Fraction(a, b) for a, b in zip(numerators.tolist(), denominators.tolist())),
        Fraction(0),
    )


def _matched_count(table: np.ndarray) -> int:
    rows, cols = _best_matching(table)
    return int(table[rows, cols].sum())


def matching_error(a: ArrayLike, b: ArrayLike | None = None) -> float:
    """Matching error (Meila's classification error): ``1 - max_sigma sum_k n_{k,sigma(k)} / n``.

    ``sigma`` ranges over the one-to-one matchings between the clusters of the
    two partitions; when the numbers of clusters differ the matching is
    rectangular and the items of the unmatched clusters count as errors
    (``scipy.optimize.linear_sum_assignment``). Symmetric, in [0, 1), 0 exactly
    for identical partitions.

    Parameters
    ----------
    a : array-like of shape (n_samples,) or (k, l)
        Labels, or a contingency table when ``b`` is None.
    b : array-like of shape (n_samples,), optional
        Labels of the other partition.

    Returns
    -------
    float

    Examples
    --------
    >>> matching_error([0, 0, 1, 1], [1, 1, 0, 2])
    0.25
    """
    table = _table_input(a, b)
    n = int(table.sum())
    return (n - _matched_count(table)) / n


def normalized_accuracy(a: ArrayLike, b: ArrayLike | None = None) -> float:
    """Normalised (pivoted) accuracy: ``(PA - 1/k) / (1 - 1/k)``.

    ``PA = max_sigma sum_i c_{i,sigma(i)} / n`` is the accuracy under the best
    one-to-one matching and ``k = max(K, L)`` (the table padded with empty
    clusters to a square, as genieclust does). Symmetric, in [0, 1], 1 for
    identical partitions (also when both have a single cluster).

    Parameters
    ----------
    a : array-like of shape (n_samples,) or (k, l)
        Labels, or a contingency table when ``b`` is None.
    b : array-like of shape (n_samples,), optional
        Labels of the other partition.

    Returns
    -------
    float

    Examples
    --------
    >>> normalized_accuracy([0, 0, 1, 1], [0, 0, 1, 0])
    0.5
    """
    table = _table_input(a, b)
    n, k = int(table.sum()), max(table.shape)
    if k == 1:
        return 1.0
    return (_matched_count(table) * k - n) / (n * (k - 1))


def adjusted_asymmetric_accuracy(a: ArrayLike, b: ArrayLike | None = None) -> float:
    """Adjusted asymmetric accuracy (Gagolewski), a.k.a. normalised clustering accuracy.

    ``AAA = (max_sigma (1/K) sum_i c_{i,sigma(i)} / c_{i.} - 1/K) / (1 - 1/K)``
    where the rows (``a``) are the ``K`` reference clusters: the average
    per-reference-cluster recall under the best one-to-one matching, rescaled
    so that 0 is the uniform-assignment level. With fewer predicted clusters
    the unmatched reference clusters score 0; with more, the extra predicted
    clusters are left unmatched. Not symmetric; at most 1 (identical
    partitions); non-negative when ``L <= K``, may be negative otherwise.
    NaN when the reference has a single cluster and the prediction several
    (undefined), 1.0 when both have a single cluster.

    Parameters
    ----------
    a : array-like of shape (n_samples,) or (K, L)
        Reference labels, or a contingency table (rows: reference) when ``b``
        is None.
    b : array-like of shape (n_samples,), optional
        Predicted labels.

    Returns
    -------
    float

    Examples
    --------
    >>> adjusted_asymmetric_accuracy([0, 0, 0, 1], [0, 0, 1, 1])
    0.6666666666666666
    """
    table = _table_input(a, b)
    k = table.shape[0]
    if k == 1:
        return 1.0 if table.shape[1] == 1 else float("nan")
    row_sums = table.sum(axis=1)
    rows, cols = _best_matching(table / row_sums[:, None])
    matched = _fraction_sum(table[rows, cols], row_sums[rows])
    return float((matched - 1) / (k - 1))


def pair_sets_index(
    a: ArrayLike, b: ArrayLike | None = None, *, simplified: bool = False, clipped: bool = True
) -> float:
    """Pair sets index (Rezaei & Franti, 2016), as in genieclust.

    With ``k = max(K, L)`` (the table padded with empty clusters),
    ``s = max_sigma sum_i c_{i,sigma(i)} / max(c_{i.}, c_{.sigma(i)})`` and
    ``E = sum_i min(c_(i)., c_.(i)) / n`` over the row and column sums sorted
    in decreasing order, ``PSI = max(0, (s - E) / (k - E))``; the simplified
    index uses ``E = 1``. Symmetric, in [0, 1] when clipped, 1 for identical
    partitions (also when both have a single cluster).

    Parameters
    ----------
    a : array-like of shape (n_samples,) or (k, l)
        Labels, or a contingency table when ``b`` is None.
    b : array-like of shape (n_samples,), optional
        Labels of the other partition.
    simplified : bool, default=False
        Use ``E = 1`` (eq. 20 of Rezaei & Franti instead of eq. 18).
    clipped : bool, default=True
        Clip negative values to 0.

    Returns
    -------
    float

    Examples
    --------
    >>> pair_sets_index([0, 0, 1, 1], [1, 1, 0, 0])
    1.0
    """
    table = _table_input(a, b)
    n, k = int(table.sum()), max(table.shape)
    if k == 1:
        return 1.0
    row_sums, col_sums = table.sum(axis=1), table.sum(axis=0)
    largest = np.maximum(row_sums[:, None], col_sums[None, :])
    rows, cols = _best_matching(table / largest)
    matched = _fraction_sum(table[rows, cols], largest[rows, cols])
    if simplified:
        expected = Fraction(1)
    else:
        padded_rows = np.sort(np.pad(row_sums, (0, k - row_sums.size)))
        padded_cols = np.sort(np.pad(col_sums, (0, k - col_sums.size)))
        expected = Fraction(int(np.minimum(padded_rows, padded_cols).sum()), n)
    value = float((matched - expected) / (k - expected))
    return max(value, 0.0) if clipped else value


# --------------------------------------------------------------------------- #
# Co-clustering losses                                                        #
# --------------------------------------------------------------------------- #


class _Hits(NamedTuple):
    """Correctly classified counts per reference set, out of ``n``."""

    hits: np.ndarray  # int64 of shape (n_sets,)
    n: int
    batched: bool


def _one_way_hits(
    name_ref: str, ref: Any, name_pred: str, pred: Any, match: bool
) -> _Hits:
    """Items on which each reference set agrees with ``pred`` (best matching or identity)."""
    reference = _labels(name_ref, ref, batched=True)
    predicted = _labels(name_pred, pred)
    _same_length(name_ref, reference, name_pred, predicted)
    batched = reference.ndim == 2
    reference = np.atleast_2d(reference)
    if not match:
        hits = np.count_nonzero(reference == predicted, axis=1).astype(np.int64)
        return _Hits(hits, int(predicted.size), batched)
    codes_ref, k_ref = _encode(reference)
    codes_pred, k_pred = _encode(predicted)
    hits = np.empty(reference.shape[0], dtype=np.int64)
    for sets, tables in _iter_tables(codes_ref, k_ref, codes_pred, k_pred):
        hits[sets] = [_matched_count(table) for table in tables]
    return _Hits(hits, int(predicted.size), batched)


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
    match : bool, default=True
        Match the clusters optimally, or use the identity map.

    Returns
    -------
    float or ndarray of shape (n_sets,)

    Examples
    --------
    >>> l_row([0, 0, 1, 1], [1, 1, 0, 1])
    0.25
    >>> l_row([0, 0, 1, 1], [1, 1, 0, 1], match=False)
    0.75
    """
    hits = _one_way_hits("z", z, "z_pred", z_pred, match)
    return _finish([(hits.n - h) / hits.n for h in hits.hits.tolist()], hits.batched)


def l_col(w: ArrayLike, w_pred: ArrayLike, *, match: bool = True) -> FloatOrArray:
    """Column error rate; :func:`l_row` applied to the column labels.

    Parameters
    ----------
    w : array-like of shape (n_cols,) or (n_sets, n_cols)
        Reference column labels, or a batch of reference label sets.
    w_pred : array-like of shape (n_cols,)
        Predicted column labels.
    match : bool, default=True
        Match the clusters optimally, or use the identity map.

    Returns
    -------
    float or ndarray of shape (n_sets,)

    Examples
    --------
    >>> l_col([0, 1, 1], [2, 0, 0])
    0.0
    """
    hits = _one_way_hits("w", w, "w_pred", w_pred, match)
    return _finish([(hits.n - h) / hits.n for h in hits.hits.tolist()], hits.batched)


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
    z : array-like of shape (n_rows,) or (n_sets, n_rows)
        Reference row labels, or a batch of reference row label sets.
    w : array-like of shape (n_cols,) or (n_sets, n_cols)
        Reference column labels, or a batch of reference column label sets.
    z_pred : array-like of shape (n_rows,)
        Predicted row labels.
    w_pred : array-like of shape (n_cols,)
        Predicted column labels.
    match : bool, default=True
        Match the clusters optimally (each set separately), or use the identity.

    Returns
    -------
    float or ndarray of shape (n_sets,)

    Examples
    --------
    >>> l_item([0, 0, 1, 1], [0, 1], [0, 0, 1, 0], [1, 0])
    0.25
    """
    rows = _one_way_hits("z", z, "z_pred", z_pred, match)
    cols = _one_way_hits("w", w, "w_pred", w_pred, match)
    row_hits, col_hits, batched = _broadcast_sets(rows, cols)
    cells = rows.n * cols.n
    return _finish([(cells - r * c) / cells for r, c in zip(row_hits, col_hits)], batched)


def ce(z: ArrayLike, w: ArrayLike, z_pred: ArrayLike, w_pred: ArrayLike) -> FloatOrArray:
    """Co-clustering classification error (Lomet, 2012): :func:`l_item` with matching.

    ``CE = min_{sigma, tau} 1 - (1/(IJ)) sum_ij [z_i = sigma(z'_i)][w_j = tau(w'_j)]
    = l_row + l_col - l_row l_col``, with one-to-one (rectangular) matchings.

    Parameters
    ----------
    z : array-like of shape (n_rows,) or (n_sets, n_rows)
        Reference row labels.
    w : array-like of shape (n_cols,) or (n_sets, n_cols)
        Reference column labels.
    z_pred : array-like of shape (n_rows,)
        Predicted row labels.
    w_pred : array-like of shape (n_cols,)
        Predicted column labels.

    Returns
    -------
    float or ndarray of shape (n_sets,)

    Examples
    --------
    >>> ce([0, 0, 1, 1], [0, 1], [0, 0, 1, 0], [1, 0])
    0.25
    """
    return l_item(z, w, z_pred, w_pred, match=True)


def l_full(
    z: ArrayLike, w: ArrayLike, z_pred: ArrayLike, w_pred: ArrayLike, *, match: bool = True
) -> FloatOrArray:
    """0-1 loss: 0 if both partitions agree (up to the matching), else 1.

    With ``match=True`` the row and column partitions must be identical up to
    relabelling; with ``match=False`` the labels must be equal.

    Parameters
    ----------
    z : array-like of shape (n_rows,) or (n_sets, n_rows)
        Reference row labels.
    w : array-like of shape (n_cols,) or (n_sets, n_cols)
        Reference column labels.
    z_pred : array-like of shape (n_rows,)
        Predicted row labels.
    w_pred : array-like of shape (n_cols,)
        Predicted column labels.
    match : bool, default=True
        Compare up to relabelling, or compare labels as they are.

    Returns
    -------
    float or ndarray of shape (n_sets,)
        0.0 or 1.0.

    Examples
    --------
    >>> l_full([0, 0, 1], [0, 1], [1, 1, 0], [5, 2])
    0.0
    >>> l_full([0, 0, 1], [0, 1], [1, 1, 0], [5, 2], match=False)
    1.0
    """
    rows = _one_way_hits("z", z, "z_pred", z_pred, match)
    cols = _one_way_hits("w", w, "w_pred", w_pred, match)
    row_hits, col_hits, batched = _broadcast_sets(rows, cols)
    values = [
        0.0 if (r == rows.n and c == cols.n) else 1.0 for r, c in zip(row_hits, col_hits)
    ]
    return _finish(values, batched)


# --------------------------------------------------------------------------- #
# Co-clustering adjusted Rand index                                           #
# --------------------------------------------------------------------------- #


def _one_way_pair_sums(
    name_ref: str, ref: Any, name_pred: str, pred: Any
) -> tuple[_PairSums, bool]:
    reference = _labels(name_ref, ref, batched=True)
    predicted = _labels(name_pred, pred)
    _same_length(name_ref, reference, name_pred, predicted)
    return _label_pair_sums(np.atleast_2d(reference), predicted), reference.ndim == 2


def _cari_counts(
    rows: _PairSums, cols: _PairSums, s_row: int, s_col: int
) -> tuple[int, int, int, int]:
    """Pair counts of kron(N_rows, N_cols) from the sums of squares of both factors.

    ``sum_pq C(a_p b_q, 2) = (S2(A) S2(B) - S1(A) S1(B)) / 2`` and the margins
    of a Kronecker product are the Kronecker products of the margins.
    """
    n = rows.n * cols.n
    return _pair_counts(
        rows.cells[s_row] * cols.cells[s_col],
        rows.rows[s_row] * cols.rows[s_col],
        rows.cols[s_row] * cols.cols[s_col],
        n,
    )


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

    Parameters
    ----------
    z : array-like of shape (n_rows,) or (n_sets, n_rows)
        Reference row labels, or a batch of reference row label sets.
    w : array-like of shape (n_cols,) or (n_sets, n_cols)
        Reference column labels, or a batch of reference column label sets.
    z_pred : array-like of shape (n_rows,)
        Predicted row labels.
    w_pred : array-like of shape (n_cols,)
        Predicted column labels.

    Returns
    -------
    float or ndarray of shape (n_sets,)

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
        _ari_from_counts(*_cari_counts(rows, cols, min(s, n_row_sets - 1), min(s, n_col_sets - 1)))
        for s in range(n_sets)
    ]
    return _finish(values, rows_batched or cols_batched)


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
        Monte Carlo standard error of ``risk`` by pooled batch means (NaN for
        a single label set).
    mean_l_row : float
        Mean row error rate under ``row_map``.
    mean_l_col : float
        Mean column error rate under ``col_map``.
    row_map : ndarray of shape (n_pred_row_clusters,)
        Reference row cluster matched to each predicted row cluster (the index
        is the predicted label), -1 when unmatched or when the predicted
        cluster is empty.
    col_map : ndarray of shape (n_pred_col_clusters,)
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


class _TableStack:
    """Contingency tables of every label set against one prediction, shape (S, k, k').

    Kept in memory when small, otherwise rebuilt block by block on each pass.
    """

    def __init__(self, ref: np.ndarray, k_ref: int, pred: np.ndarray, k_pred: int) -> None:
        self.ref, self.k_ref, self.pred, self.k_pred = ref, k_ref, pred, k_pred
        self.n_items = int(pred.size)
        self._cache: list[tuple[slice, np.ndarray]] | None = None
        if ref.shape[0] * k_ref * k_pred <= _CELL_BUDGET:
            self._cache = list(_iter_tables(ref, k_ref, pred, k_pred))

    def blocks(self) -> Iterator[tuple[slice, np.ndarray]]:
        if self._cache is not None:
            return iter(self._cache)
        return _iter_tables(self.ref, self.k_ref, self.pred, self.k_pred)

    def stacked(self) -> np.ndarray | None:
        """All tables as one array of shape (S, k, k'), or None when not kept."""
        if self._cache is None:
            return None
        return np.concatenate([tables for _, tables in self._cache])

    def weighted_sum(self, weights: np.ndarray) -> np.ndarray:
        """``sum_s weights[s] * N_s`` of shape (k, k')."""
        total = np.zeros((self.k_ref, self.k_pred), dtype=np.float64)
        for sets, tables in self.blocks():
            total += np.einsum("s,skl->kl", weights[sets].astype(np.float64), tables)
        return total

    def hits(self, matching: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
        """Correctly classified counts of every set under ``matching`` (int64, (S,))."""
        ref_idx, pred_idx = matching
        out = np.empty(self.ref.shape[0], dtype=np.int64)
        for sets, tables in self.blocks():
            out[sets] = tables[:, ref_idx, pred_idx].sum(axis=1)
        return out

    def pair_sums(self) -> _PairSums:
        cells: list[int] = []
        rows: list[int] = []
        cols: list[int] = []
        for _, tables in self.blocks():
            sums = _table_pair_sums(tables, self.n_items)
            cells += sums.cells
            rows += sums.rows
            cols += sums.cols
        return _PairSums(cells, rows, cols, self.n_items)


def _chain_lengths(n_sets: int, n_chains: Any, chain_lengths: Any) -> list[int]:
    """Lengths of the chain-major blocks of label sets."""
    if chain_lengths is not None:
        lengths = _integer_array("chain_lengths", chain_lengths)
        if lengths.ndim != 1 or lengths.size == 0 or lengths.min() < 1:
            raise ValueError(
                "chain_lengths must be a 1-D sequence of positive integers, "
                f"got {_describe(lengths)}"
            )
        if int(lengths.sum()) != n_sets:
            raise ValueError(
                f"chain_lengths must sum to the number of label sets {n_sets}, "
                f"got {int(lengths.sum())}"
            )
        if n_chains not in (1, lengths.size):
            raise ValueError(
                f"n_chains={n_chains!r} contradicts chain_lengths of length {lengths.size}"
            )
        return [int(x) for x in lengths]
    if isinstance(n_chains, bool) or not isinstance(n_chains, (int, np.integer)):
        raise TypeError(f"n_chains must be an integer, got {_describe(n_chains)}")
    if not 1 <= int(n_chains) <= n_sets:
        raise ValueError(f"n_chains must lie in [1, {n_sets}], got {int(n_chains)}")
    size, extra = divmod(n_sets, int(n_chains))
    return [size + (1 if c < extra else 0) for c in range(int(n_chains))]


def _batch_means_mcse(values: np.ndarray, lengths: Sequence[int]) -> float:
    """Monte Carlo standard error of ``values.mean()`` by pooled batch means.

    Batch size ``b = min(floor(sqrt(S)), shortest chain)``; every chain is cut
    into ``floor(L_c / b)`` consecutive batches (its last ``L_c mod b`` values
    are left out of the variance estimate only), the ``B`` batch means ``Y_k``
    of all chains are pooled, ``sigma^2 = b / (B - 1) * sum_k (Y_k - Ybar)^2``
    and ``MCSE = sqrt(sigma^2 / S)``. NaN when ``B < 2``.
    """
    n_sets = values.size
    size = max(1, min(math.isqrt(n_sets), min(lengths)))
    means = []
    start = 0
    for length in lengths:
        count = length // size
        means.append(values[start : start + count * size].reshape(count, size).mean(axis=1))
        start += length
    batch_means = np.concatenate(means)
    if batch_means.size < 2:
        return float("nan")
    return math.sqrt(size * float(np.var(batch_means, ddof=1)) / n_sets)


def _alternate(
    rows: _TableStack, cols: _TableStack
) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray], int]:
    """Coordinate ascent on ``F = sum_s R_s(sigma) C_s(tau)`` by exact Hungarian steps.

    Minimising the mean ``l_item`` is maximising ``F``, with ``R_s``/``C_s`` the
    correctly classified row/column counts of set ``s``. Given ``tau``, ``F`` is
    linear in the row matching with weights ``sum_s C_s N_s``, so each step is
    an exact linear assignment; a step is kept only when it increases ``F``
    (integers, so no cycling), and the loop stops when neither step does.
    """
    ones = np.ones(rows.ref.shape[0], dtype=np.int64)
    sigma = _best_matching(rows.weighted_sum(ones))
    tau = _best_matching(cols.weighted_sum(ones))
    row_hits, col_hits = rows.hits(sigma), cols.hits(tau)
    best = int(np.dot(row_hits, col_hits))
    stale, steps, update_rows = 0, 0, True
    while stale < 2 and steps < _MAX_ALTERNATIONS:
        steps += 1
        if update_rows:
            candidate = _best_matching(rows.weighted_sum(col_hits))
            hits = rows.hits(candidate)
            value = int(np.dot(hits, col_hits))
        else:
            candidate = _best_matching(cols.weighted_sum(row_hits))
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
    step = max(1, _CELL_BUDGET // max(1, side.shape[0] * ref_idx.shape[1]))
    best_value, best = -1.0, (ref_idx[0], pred_idx[0])
    best_other = (np.arange(0), np.arange(0))
    for start in range(0, ref_idx.shape[0], step):
        block = slice(start, start + step)
        hits = side[:, ref_idx[block], pred_idx[block]].sum(axis=2)
        weights = (hits.T.astype(np.float64) @ other_flat).reshape(-1, *other.shape[1:])
        for offset, weight in enumerate(weights):
            matching = _best_matching(weight)
            value = float(weight[matching].sum())
            if value > best_value:
                index = start + offset
                best_value, best, best_other = value, (ref_idx[index], pred_idx[index]), matching
    return best, best_other


def _optimal_matchings(
    rows: _TableStack, cols: _TableStack
) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray], int, bool]:
    """(sigma, tau, alternating steps, exact): alternating, then enumeration when cheap."""
    sigma, tau, steps = _alternate(rows, cols)
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


def _cluster_map(
    matching: tuple[np.ndarray, np.ndarray], pred: np.ndarray, k_pred: int
) -> np.ndarray:
    """Array ``predicted cluster -> reference cluster``, -1 if unmatched or empty."""
    out = np.full(k_pred, -1, dtype=np.int64)
    ref_idx, pred_idx = matching
    out[pred_idx] = ref_idx
    out[np.bincount(pred, minlength=k_pred) == 0] = -1
    out.flags.writeable = False
    return out


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
        Predicted row labels, non-negative integers (the label is the index
        into ``row_map``).
    w_pred : array-like of shape (n_cols,)
        Predicted column labels, non-negative integers.
    n_chains : int, default=1
        Number of chains stored one after the other; chain ``c`` holds a
        contiguous block of sets, the first ``n_sets % n_chains`` chains one
        set longer than the others.
    chain_lengths : sequence of int, optional
        Explicit chain lengths (summing to ``n_sets``); overrides ``n_chains``.

    Returns
    -------
    ConditionalRisk
        ``risk`` and its ``mcse`` (pooled batch means of ``l_item`` with batch
        size about ``sqrt(n_sets)`` within each chain, see
        :class:`ConditionalRisk`), mean row and column error rates, the
        matching, CARI mean and standard deviation and the number of sets.

    Examples
    --------
    >>> result = conditional_risk([[0, 0, 1, 1], [0, 0, 1, 0]], [[0, 1], [0, 1]],
    ...                           [1, 1, 0, 0], [0, 1])
    >>> result.risk, result.mean_l_row, result.row_map.tolist()
    (0.125, 0.125, [1, 0])
    """
    rows_ref = np.atleast_2d(_labels("gibbs_rows", gibbs_rows, batched=True, nonnegative=True))
    cols_ref = np.atleast_2d(_labels("gibbs_cols", gibbs_cols, batched=True, nonnegative=True))
    if rows_ref.shape[0] != cols_ref.shape[0]:
        raise ValueError(
            "gibbs_rows and gibbs_cols must hold equally many label sets, "
            f"got shapes {rows_ref.shape} and {cols_ref.shape}"
        )
    rows_pred = _labels("z_pred", z_pred, nonnegative=True)
    cols_pred = _labels("w_pred", w_pred, nonnegative=True)
    _same_length("gibbs_rows", rows_ref, "z_pred", rows_pred)
    _same_length("gibbs_cols", cols_ref, "w_pred", cols_pred)
    n_sets = rows_ref.shape[0]
    lengths = _chain_lengths(n_sets, n_chains, chain_lengths)

    k_row_pred, k_col_pred = int(rows_pred.max()) + 1, int(cols_pred.max()) + 1
    rows = _TableStack(rows_ref, int(rows_ref.max()) + 1, rows_pred, k_row_pred)
    cols = _TableStack(cols_ref, int(cols_ref.max()) + 1, cols_pred, k_col_pred)
    sigma, tau, steps, exact = _optimal_matchings(rows, cols)
    row_hits, col_hits = rows.hits(sigma), cols.hits(tau)

    n_rows, n_cols = rows.n_items, cols.n_items
    cells = n_rows * n_cols
    products = [r * c for r, c in zip(row_hits.tolist(), col_hits.tolist())]
    losses = np.array([(cells - p) / cells for p in products])
    row_sums, col_sums = rows.pair_sums(), cols.pair_sums()
    caris = [_ari_from_counts(*_cari_counts(row_sums, col_sums, s, s)) for s in range(n_sets)]
    cari_mean, cari_sd = _mean_sd(caris)
    return ConditionalRisk(
        risk=(n_sets * cells - sum(products)) / (n_sets * cells),
        mcse=_batch_means_mcse(losses, lengths),
        mean_l_row=(n_sets * n_rows - int(row_hits.sum())) / (n_sets * n_rows),
        mean_l_col=(n_sets * n_cols - int(col_hits.sum())) / (n_sets * n_cols),
        row_map=_cluster_map(sigma, rows_pred, k_row_pred),
        col_map=_cluster_map(tau, cols_pred, k_col_pred),
        cari_mean=cari_mean,
        cari_sd=cari_sd,
        n_sets=n_sets,
        n_steps=steps,
        exact=exact,
    )
