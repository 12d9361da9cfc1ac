"""Comparison of two partitions: pair-counting, information and set-matching indices.

Every measure is computed from contingency tables (:mod:`lbm_bench.metrics.contingency_tables`).
The two compared partitions may have different numbers of clusters.
:func:`rand`, :func:`ari`, :func:`nmi`, :func:`ami`, :func:`matching_error`,
:func:`normalized_accuracy`, :func:`adjusted_asymmetric_accuracy` and
:func:`pair_sets_index` take two label vectors ``(a, b)``, or a single
contingency table ``a`` (rows: the reference clusters) with ``b=None``, like
genieclust. :func:`ari` and :func:`rand` also accept reference labels of shape
``(n_sets, n)`` and then return one value per set.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import gammaln

from lbm_bench._docstrings import fill_doc
from lbm_bench.metrics.contingency_tables import (
    FloatOrArray,
    PairSums,
    SparseTable,
    ari_from_counts,
    best_matching,
    finish,
    fraction_sum,
    label_pair_sums,
    matched_count,
    pair_counts,
    rand_from_counts,
    sets_and_prediction,
    sparse_input,
    table_arg,
    table_input,
    table_pair_sums,
)

__all__ = [
    "adjusted_asymmetric_accuracy",
    "ami",
    "ari",
    "ari_values",
    "matching_error",
    "nmi",
    "normalized_accuracy",
    "pair_sets_index",
    "rand",
]

#: Largest number of (i, j, n_ij) terms of the expected mutual information at once.
_EMI_BUDGET = 1 << 22


def _pair_values(
    sets: np.ndarray, pred: np.ndarray, index: Callable[[int, int, int, int], float]
) -> list[float]:
    """``index(a, b, c, d)`` of each validated int64 set ``sets[s]`` against ``pred``."""
    return _index_values(label_pair_sums(sets, pred), index)


def _index_values(sums: PairSums, index: Callable[[int, int, int, int], float]) -> list[float]:
    return [
        index(*pair_counts(t, r, c, sums.n))
        for t, r, c in zip(sums.cells, sums.rows, sums.cols, strict=True)
    ]


def _pair_index(
    a: Any, b: Any, index: Callable[[int, int, int, int], float]
) -> FloatOrArray:
    """Apply ``index(a, b, c, d)`` to a table, a label pair or a batch."""
    if b is None:
        table = table_arg("a", a)
        return finish(_index_values(table_pair_sums(table[None], int(table.sum())), index), False)
    sets, pred, batched = sets_and_prediction("a", a, "b", b)
    return finish(_pair_values(sets, pred, index), batched)


def ari_values(sets: np.ndarray, pred: np.ndarray) -> np.ndarray:
    """ARI of each validated int64 set ``sets[s]`` against ``pred``, shape (n_sets,)."""
    return np.asarray(_pair_values(sets, pred, ari_from_counts), dtype=np.float64)


@fill_doc
def rand(a: ArrayLike, b: ArrayLike | None = None) -> FloatOrArray:
    """Rand index: the proportion of item pairs on which two partitions agree.

    ``R = (a + d) / C(n, 2)`` with ``a`` the pairs grouped together in both
    partitions and ``d`` the pairs separated in both. Symmetric, in [0, 1],
    1 for identical partitions (and for ``n = 1``). Computed exactly from integer
    pair counts.

    {{pair_batch}}

    Examples
    --------
    >>> rand([0, 0, 1, 1], [0, 0, 1, 2])
    0.8333333333333334
    """
    return _pair_index(a, b, rand_from_counts)


@fill_doc
def ari(a: ArrayLike, b: ArrayLike | None = None) -> FloatOrArray:
    """Adjusted Rand index (Hubert & Arabie, 1985).

    ``ARI = (T - P Q / C(n,2)) / ((P + Q) / 2 - P Q / C(n,2))`` with
    ``T = sum_kl C(n_kl, 2)``, ``P = sum_k C(n_k., 2)``, ``Q = sum_l C(n_.l, 2)``;
    computed exactly as ``2(ad - bc) / ((a+b)(b+d) + (a+c)(c+d))`` from the
    integer pair counts. Symmetric, at most 1 (identical partitions), about 0
    for independent partitions, may be negative. 1.0 when neither partition
    separates a pair the other groups (this covers ``n = 1``).

    {{pair_batch}}

    Examples
    --------
    >>> ari([0, 0, 1, 1, 2, 2], [5, 5, -1, -1, 3, 3])
    1.0
    >>> round(ari([1, 2, 2, 2, 1], [1, 1, 2, 1, 1]), 4)
    -0.1538
    >>> ari([[0, 0, 1, 1], [0, 1, 0, 1]], [0, 0, 1, 1])
    array([ 1. , -0.5])
    """
    return _pair_index(a, b, ari_from_counts)


# --------------------------------------------------------------------------- #
# Information-theoretic measures                                              #
# --------------------------------------------------------------------------- #


def _entropy(counts: np.ndarray, n: int) -> float:
    """Shannon entropy (nats) of the counts; ``math.fsum`` makes it order-independent."""
    p = counts[counts > 0] / n
    return -math.fsum((p * np.log(p)).tolist())


def _mutual_info(table: SparseTable) -> tuple[float, float]:
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


def _information_limit(table: SparseTable) -> float | None:
    """Value of NMI and AMI where the formulas degenerate, else None.

    1.0 for identical partitions (each cluster of one is a cluster of the
    other, one cluster each included): for AMI, ``MI = E[MI]`` there whenever
    every permutation of the items gives the same table (all singletons, for
    instance), and the ratio ``0 / 0`` must score 1. 0.0 when exactly one
    partition has a single cluster.
    """
    k_a, k_b = table.row_sums.size, table.col_sums.size
    if k_a == 1 or k_b == 1:
        return 1.0 if k_a == k_b else 0.0
    if table.cells.size == k_a == k_b:
        return 1.0
    return None


def _normalised_information(a: Any, b: Any, *, adjusted: bool) -> float:
    """NMI_sum, or AMI_sum when ``adjusted``, of a label pair or a table."""
    table = sparse_input(a, b)
    special = _information_limit(table)
    if special is not None:
        return special
    mi, normaliser = _mutual_info(table)
    if not adjusted:
        return 0.0 if mi == 0.0 else mi / normaliser
    emi = _expected_mutual_info(table.row_sums, table.col_sums, table.n)
    eps = float(np.finfo(np.float64).eps)
    denominator = normaliser - emi
    denominator = min(denominator, -eps) if denominator < 0 else max(denominator, eps)
    return (mi - emi) / denominator


@fill_doc
def nmi(a: ArrayLike, b: ArrayLike | None = None) -> float:
    """Normalised mutual information, arithmetic-mean normalisation (NMI_sum).

    ``NMI = MI / ((H(a) + H(b)) / 2)`` with natural logarithms. Symmetric, in
    [0, 1], 1 for identical partitions (also when both have a single cluster),
    0 when exactly one partition has a single cluster. Not adjusted for chance.
    Same value as scikit-learn's ``normalized_mutual_info_score``.

    {{pair_float}}

    Examples
    --------
    >>> nmi([0, 0, 1, 1], [7, 7, 3, 3])
    1.0
    """
    return _normalised_information(a, b, adjusted=False)


@fill_doc
def ami(a: ArrayLike, b: ArrayLike | None = None) -> float:
    """Adjusted mutual information, arithmetic-mean normalisation (AMI_sum).

    ``AMI = (MI - E[MI]) / ((H(a) + H(b)) / 2 - E[MI])`` with the exact expected
    mutual information under the hypergeometric (permutation) model, evaluated
    in log space and vectorised over every term (Vinh, Epps & Bailey, 2010).
    Symmetric, at most 1, exactly 1 for identical partitions (also when
    ``MI = E[MI]``, as for two identical partitions into singletons), about 0
    for independent partitions, may be slightly negative. Same value as
    scikit-learn's ``adjusted_mutual_info_score``.

    {{pair_float}}

    Examples
    --------
    >>> ami([0, 0, 1, 1, 2, 2], [1, 1, 0, 0, 2, 2])
    1.0
    >>> ami([0, 1], [1, 0])  # all singletons: MI equals its expectation
    1.0
    """
    return _normalised_information(a, b, adjusted=True)


# --------------------------------------------------------------------------- #
# Set-matching measures                                                       #
# --------------------------------------------------------------------------- #


@fill_doc
def matching_error(a: ArrayLike, b: ArrayLike | None = None) -> float:
    """Matching error (Meila's classification error): ``1 - max_sigma sum_k n_{k,sigma(k)} / n``.

    ``sigma`` ranges over the one-to-one matchings between the clusters of the
    two partitions; when the numbers of clusters differ the matching is
    rectangular and the items of the unmatched clusters count as errors
    (``scipy.optimize.linear_sum_assignment``). Symmetric, in [0, 1), 0 exactly
    for identical partitions.

    {{pair_float}}

    Examples
    --------
    >>> matching_error([0, 0, 1, 1], [1, 1, 0, 2])
    0.25
    """
    table = table_input(a, b)
    n = int(table.sum())
    return (n - matched_count(table)) / n


def _on_square_table(a: Any, b: Any, index: Callable[[np.ndarray, int, int], float]) -> float:
    """``index(table, n, k)`` of the table padded to a square of side ``k = max(K, L)``.

    ``n`` is the item count. Two partitions with a single cluster each (``k = 1``)
    score 1.0 without calling ``index``.
    """
    table = table_input(a, b)
    k = max(table.shape)
    if k == 1:
        return 1.0
    return index(table, int(table.sum()), k)


@fill_doc
def normalized_accuracy(a: ArrayLike, b: ArrayLike | None = None) -> float:
    """Normalised (pivoted) accuracy: ``(PA - 1/k) / (1 - 1/k)``.

    ``PA = max_sigma sum_i c_{i,sigma(i)} / n`` is the accuracy under the best
    one-to-one matching and ``k = max(K, L)`` (the table padded with empty
    clusters to a square, as genieclust does). Symmetric, in [0, 1], 1 for
    identical partitions (also when both have a single cluster).

    {{pair_float}}

    Examples
    --------
    >>> normalized_accuracy([0, 0, 1, 1], [0, 0, 1, 0])
    0.5
    """
    return _on_square_table(a, b, lambda table, n, k: (matched_count(table) * k - n) / (n *
                                                                                        (k - 1)))


@fill_doc
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

    {{returns_float}}

    Examples
    --------
    >>> adjusted_asymmetric_accuracy([0, 0, 0, 1], [0, 0, 1, 1])
    0.6666666666666666
    """
    table = table_input(a, b)
    k = table.shape[0]
    if k == 1:
        return 1.0 if table.shape[1] == 1 else float("nan")
    row_sums = table.sum(axis=1)
    rows, cols = best_matching(table / row_sums[:, None])
    matched = fraction_sum(table[rows, cols], row_sums[rows])
    return float((matched - 1) / (k - 1))


@fill_doc
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
    {{pair}}
    simplified : bool, default=False
        Use ``E = 1`` (eq. 20 of Rezaei & Franti instead of eq. 18).
    clipped : bool, default=True
        Clip negative values to 0.

    {{returns_float}}

    Examples
    --------
    >>> pair_sets_index([0, 0, 1, 1], [1, 1, 0, 0])
    1.0
    """
    return _on_square_table(a, b,
                            lambda table, n, k: _pair_sets_value(table, n, k, simplified, clipped))


def _pair_sets_value(table: np.ndarray, n: int, k: int, simplified: bool, clipped: bool) -> float:
    row_sums, col_sums = table.sum(axis=1), table.sum(axis=0)
    largest = np.maximum(row_sums[:, None], col_sums[None, :])
    rows, cols = best_matching(table / largest)
    matched = fraction_sum(table[rows, cols], largest[rows, cols])
    if simplified:
        expected = Fraction(1)
    else:
        padded_rows = np.sort(np.pad(row_sums, (0, k - row_sums.size)))
        padded_cols = np.sort(np.pad(col_sums, (0, k - col_sums.size)))
        expected = Fraction(int(np.minimum(padded_rows, padded_cols).sum()), n)
    value = float((matched - expected) / (k - expected))
    return max(value, 0.0) if clipped else value
