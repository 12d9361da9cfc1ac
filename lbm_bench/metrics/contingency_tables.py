"""Contingency tables, exact pair counts and matchings shared by every metric.

Label vectors may use any integer values (negative ones included): two label
vectors describe the same partition when they differ by a relabelling.

Pair counts (Rand, ARI, CARI) are exact integers: sums of squares of table
entries are accumulated in int64 only where they provably fit (a table over
``n < 3.03e9`` items has ``sum(n_ij**2) <= n**2 < 2**63``) and every product
of such sums is formed with Python integers, so the final ratio is correctly
rounded.

Besides :func:`contingency`, the names of this module are the building blocks
of the other metric modules (:mod:`~lbm_bench.metrics.partition`,
:mod:`~lbm_bench.metrics.coclustering`, :mod:`~lbm_bench.metrics.risk`): they take
arrays already validated by :mod:`lbm_bench._validation` (int64 labels), which
the user-facing functions of those modules do; :mod:`lbm_bench.metrics` exports
only the user-facing ones.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from fractions import Fraction
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike
from scipy.optimize import linear_sum_assignment

from lbm_bench._validation import check_integer_array, check_label_sets, check_labels

__all__ = [
    "ari_from_counts",
    "best_matching",
    "block_pair_sums",
    "contingency",
    "compact_labels",
    "encode_labels",
    "finish",
    "fraction_sum",
    "iter_tables",
    "label_codes",
    "label_pair_sums",
    "matched_count",
    "pair_counts",
    "PairSums",
    "rand_from_counts",
    "same_length",
    "sets_and_prediction",
    "sparse_input",
    "SparseTable",
    "TableStack",
    "table_arg",
    "table_input",
    "table_pair_sums",
]

#: Largest number of int64 cells (or index entries) built at once: 128 MiB.
CELL_BUDGET = 1 << 24
#: Largest item count for which sum(n_ij ** 2) <= n ** 2 fits in int64.
INT64_SQUARE_LIMIT = math.isqrt(2**63 - 1)

#: A float for a 1-D reference, an ndarray of shape (n_sets,) for a batch of sets.
FloatOrArray = float | np.ndarray


# --------------------------------------------------------------------------- #
# Validation at the boundary (helpers of lbm_bench._validation)               #
# --------------------------------------------------------------------------- #


def same_length(name_a: str, a: np.ndarray, name_b: str, b: np.ndarray) -> None:
    if a.shape[-1] != b.shape[-1]:
        raise ValueError(
            f"{name_a} and {name_b} must have the same length, got shapes {a.shape} and {b.shape}"
        )


def _pair(
    a: Any, b: Any, name_a: str = "a", name_b: str = "b"
) -> tuple[np.ndarray, np.ndarray]:
    """Validate two 1-D label vectors (any integers) of the same length."""
    first = check_labels(name_a, a, nonnegative=False)
    second = check_labels(name_b, b, nonnegative=False)
    same_length(name_a, first, name_b, second)
    return first, second


def sets_and_prediction(
    name_ref: str, ref: Any, name_pred: str, pred: Any
) -> tuple[np.ndarray, np.ndarray, bool]:
    """Validate reference labels (1-D, or label sets (n_sets, n)) and a 1-D prediction.

    Returns the int64 sets of shape (n_sets, n), the int64 prediction, and
    whether the reference was a batch (2-D).
    """
    sets = check_label_sets(name_ref, ref, nonnegative=False)
    predicted = check_labels(name_pred, pred, nonnegative=False)
    batched = np.ndim(ref) == 2  # ref is known to be a regular 1-D or 2-D array here
    same_length(name_ref, sets if batched else sets[0], name_pred, predicted)
    return sets.astype(np.int64, copy=False), predicted, batched


def table_arg(name: str, values: Any) -> np.ndarray:
    """Validate a contingency table; drop its empty rows and columns."""
    table = check_integer_array(name, values)
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


# --------------------------------------------------------------------------- #


def compact_labels(labels: Any) -> np.ndarray:
    """Labels renumbered ``0 .. k-1`` in increasing label order (empty clusters dropped), as int64.

    >>> compact_labels(np.array([4, 1, 4, 7])).tolist()
    [1, 0, 1, 2]
    """
    return encode_labels(np.asarray(labels))[0].astype(np.int64, copy=False)


def label_codes(labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Codes ``0..k-1`` of integer labels in increasing label order, and the ``k`` distinct
    labels (sorted): ``values[codes] == labels``. Time and memory follow the number of
    items, not the label values (a label may be ``10**12``).

    >>> codes, values = label_codes(np.array([4_000_000_000, 1, 4_000_000_000, 7]))
    >>> codes.tolist(), values.tolist()
    ([2, 0, 2, 1], [1, 7, 4000000000])
    """
    codes, k = encode_labels(labels)
    values = np.empty(k, dtype=labels.dtype)
    values[codes] = labels
    return codes.astype(np.int64, copy=False), values


def encode_labels(labels: np.ndarray) -> tuple[np.ndarray, int]:
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


def iter_tables(
    ref: np.ndarray, k_ref: int, pred: np.ndarray, k_pred: int
) -> Iterator[tuple[slice, np.ndarray]]:
    """Yield ``(sets, tables)`` with tables of shape (len(sets), k_ref, k_pred).

    One ``np.bincount`` over ``s * k_ref * k_pred + ref * k_pred + pred`` builds
    the tables of a whole block of label sets.
    """
    n_sets, n_items = ref.shape
    cells = k_ref * k_pred
    step = max(1, CELL_BUDGET // max(cells, n_items))
    for start in range(0, n_sets, step):
        block = ref[start : start + step].astype(np.int64, copy=False)  # sets may be uint8
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
    codes_a, k_a = encode_labels(first)
    codes_b, k_b = encode_labels(second)
    return _dense_table(codes_a, k_a, codes_b, k_b)


def table_input(a: Any, b: Any) -> np.ndarray:
    """Dense table from two label vectors, or the validated table ``a``."""
    if b is None:
        return table_arg("a", a)
    return contingency(a, b)


class SparseTable(NamedTuple):
    """Non-zero cells of a contingency table with its margins."""

    rows: np.ndarray  # row index of each non-zero cell
    cols: np.ndarray  # column index of each non-zero cell
    cells: np.ndarray  # the non-zero counts
    row_sums: np.ndarray
    col_sums: np.ndarray
    n: int


def sparse_input(a: Any, b: Any) -> SparseTable:
    """Sparse view of the table; avoids a dense table with very many clusters."""
    if b is None:
        table = table_arg("a", a)
    else:
        first, second = _pair(a, b)
        codes_a, k_a = encode_labels(first)
        codes_b, k_b = encode_labels(second)
        if k_a * k_b > max(CELL_BUDGET, 4 * first.size):
            keys, cells = np.unique(codes_a * k_b + codes_b, return_counts=True)
            return SparseTable(
                keys // k_b,
                keys % k_b,
                cells.astype(np.int64),
                np.bincount(codes_a, minlength=k_a),
                np.bincount(codes_b, minlength=k_b),
                int(first.size),
            )
        table = _dense_table(codes_a, k_a, codes_b, k_b)
    rows, cols = np.nonzero(table)
    return SparseTable(
        rows, cols, table[rows, cols], table.sum(axis=1), table.sum(axis=0), int(table.sum())
    )


# --------------------------------------------------------------------------- #
# Exact pair counts                                                           #
# --------------------------------------------------------------------------- #


def _square_sums(values: np.ndarray, n_items: int, axis: Any) -> list[int]:
    """Sums of squares as Python ints (int64 when ``n_items**2`` fits)."""
    if n_items <= INT64_SQUARE_LIMIT:
        squares = np.square(values, dtype=np.int64).sum(axis=axis)
    else:
        obj = values.astype(object)
        squares = (obj * obj).sum(axis=axis)
    return [int(x) for x in np.atleast_1d(squares).tolist()]


class PairSums(NamedTuple):
    """Per label set: sums of squares of the cells and of both margins, and n."""

    cells: list[int]
    rows: list[int]
    cols: list[int]
    n: int


def table_pair_sums(tables: np.ndarray, n_items: int) -> PairSums:
    """Pair sums of a stack of tables of shape (n_sets, k_ref, k_pred)."""
    return PairSums(
        _square_sums(tables, n_items, (1, 2)),
        _square_sums(tables.sum(axis=2), n_items, 1),
        _square_sums(tables.sum(axis=1), n_items, 1),
        n_items,
    )


def label_pair_sums(ref: np.ndarray, pred: np.ndarray) -> PairSums:
    """Pair sums of each reference set ``ref[s]`` (2-D) against ``pred`` (1-D)."""
    codes_ref, k_ref = encode_labels(ref)
    codes_pred, k_pred = encode_labels(pred)
    n_items = int(pred.size)
    if k_ref * k_pred > max(CELL_BUDGET, 4 * n_items):  # sparse, one set at a time
        cells: list[int] = []
        rows: list[int] = []
        cols: list[int] = []
        col_sq = _square_sums(np.bincount(codes_pred), n_items, None)[0]
        for labels in codes_ref:
            _, counts = np.unique(labels * k_pred + codes_pred, return_counts=True)
            cells += _square_sums(counts, n_items, None)
            rows += _square_sums(np.bincount(labels), n_items, None)
            cols.append(col_sq)
        return PairSums(cells, rows, cols, n_items)
    return block_pair_sums(iter_tables(codes_ref, k_ref, codes_pred, k_pred), n_items)


def block_pair_sums(blocks: Iterable[tuple[slice, np.ndarray]], n_items: int) -> PairSums:
    """Pair sums of blocks of tables, as yielded by :func:`iter_tables`."""
    parts = [table_pair_sums(tables, n_items) for _, tables in blocks]
    return PairSums(
        [x for part in parts for x in part.cells],
        [x for part in parts for x in part.rows],
        [x for part in parts for x in part.cols],
        n_items,
    )


def pair_counts(sq_cells: int, sq_rows: int, sq_cols: int, n: int) -> tuple[int, int, int, int]:
    """(a, b, c, d): pairs together in both, only in the rows, only in the cols, in neither."""
    together = (sq_cells - n) // 2
    rows = (sq_rows - n) // 2
    cols = (sq_cols - n) // 2
    total = n * (n - 1) // 2
    return together, rows - together, cols - together, total - rows - cols + together


def ari_from_counts(a: int, b: int, c: int, d: int) -> float:
    """Hubert-Arabie ARI = 2(ad - bc) / ((a+b)(b+d) + (a+c)(c+d)), exactly."""
    if b == 0 and c == 0:
        return 1.0
    return 2 * (a * d - b * c) / ((a + b) * (b + d) + (a + c) * (c + d))


def rand_from_counts(a: int, b: int, c: int, d: int) -> float:
    total = a + b + c + d
    return 1.0 if total == 0 else (a + d) / total


def finish(values: Sequence[float], batched: bool) -> FloatOrArray:
    if batched:
        return np.asarray(values, dtype=np.float64)
    return float(values[0])


class TableStack:
    """Contingency tables of every label set against one prediction, shape (S, k, k')
    (the conditional risk's matching, :mod:`lbm_bench.metrics.risk`).

    Kept in memory when small, otherwise rebuilt block by block on each pass; or built
    from tables counted elsewhere (:meth:`of_tables`, e.g. block by block from a file),
    with the same rule for what :meth:`stacked` gives, so that the results are the same.
    """

    def __init__(self, ref: np.ndarray, k_ref: int, pred: np.ndarray, k_pred: int) -> None:
        self.ref, self.k_ref, self.pred, self.k_pred = ref, k_ref, pred, k_pred
        self.n_items = int(pred.size)
        self.n_sets = int(ref.shape[0])
        self._tables: np.ndarray | None = None
        self._cache: list[tuple[slice, np.ndarray]] | None = None
        if self.n_sets * k_ref * k_pred <= CELL_BUDGET:
            self._cache = list(iter_tables(ref, k_ref, pred, k_pred))

    @classmethod
    def of_tables(cls, tables: np.ndarray) -> TableStack:
        """The stack of the tables ``tables`` (S, k, k'), int64, whose predicted clusters are
        all non-empty (``k`` is one more than the largest reference label)."""
        stack = cls.__new__(cls)
        stack.ref = stack.pred = None
        stack.n_sets, stack.k_ref, stack.k_pred = (int(v) for v in tables.shape)
        stack.n_items = int(tables[0].sum()) if stack.n_sets else 0
        stack._tables = tables
        stack._cache = None
        if stack.n_sets * stack.k_ref * stack.k_pred <= CELL_BUDGET:
            stack._cache = list(stack._table_blocks())
        return stack

    def _table_blocks(self) -> Iterator[tuple[slice, np.ndarray]]:
        step = max(1, CELL_BUDGET // max(self.k_ref * self.k_pred, self.n_items))
        for start in range(0, self.n_sets, step):
            sets = slice(start, min(start + step, self.n_sets))
            yield sets, self._tables[sets]

    def blocks(self) -> Iterator[tuple[slice, np.ndarray]]:
        if self._cache is not None:
            return iter(self._cache)
        if self._tables is not None:
            return self._table_blocks()
        return iter_tables(self.ref, self.k_ref, self.pred, self.k_pred)

    def stacked(self) -> np.ndarray | None:
        """All tables as one array of shape (S, k, k'), or None when not kept."""
        if self._cache is None:
            return None
        return np.concatenate([tables for _, tables in self._cache])

    def pred_sizes(self) -> np.ndarray:
        """Items of every predicted cluster, shape (k',)."""
        if self._tables is not None:
            return self._tables[0].sum(axis=0)
        return np.bincount(self.pred, minlength=self.k_pred)

    def weighted_sum(self, weights: np.ndarray) -> np.ndarray:
        """``sum_s weights[s] * N_s`` of shape (k, k')."""
        total = np.zeros((self.k_ref, self.k_pred), dtype=np.float64)
        for sets, tables in self.blocks():
            total += np.einsum("s,skl->kl", weights[sets].astype(np.float64), tables)
        return total

    def hits(self, matching: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
        """Correctly classified counts of every set under ``matching`` (int64, (S,))."""
        ref_idx, pred_idx = matching
        out = np.empty(self.n_sets, dtype=np.int64)
        for sets, tables in self.blocks():
            out[sets] = tables[:, ref_idx, pred_idx].sum(axis=1)
        return out

    def pair_sums(self) -> PairSums:
        return block_pair_sums(self.blocks(), self.n_items)


# --------------------------------------------------------------------------- #
# Matchings                                                                   #
# --------------------------------------------------------------------------- #


def best_matching(weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Maximum-weight one-to-one matching of rows and columns (rectangular)."""
    return linear_sum_assignment(np.asarray(weights, dtype=np.float64), maximize=True)


def fraction_sum(numerators: np.ndarray, denominators: np.ndarray) -> Fraction:
    """Exact sum of ``numerators / denominators`` (integer arrays)."""
    return sum(
        (Fraction(a, b) for a, b in zip(numerators.tolist(), denominators.tolist(), strict=True)),
        Fraction(0),
    )


def matched_count(table: np.ndarray) -> int:
    rows, cols = best_matching(table)
    return int(table[rows, cols].sum())


