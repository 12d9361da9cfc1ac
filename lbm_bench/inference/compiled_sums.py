"""The compiled kernel of sparse tables: scipy's kernel with its sums in numba's loops.

:class:`CompiledStatistics` holds the tables as :class:`~lbm_bench.inference.sparse_sums.
SparseStatistics` does (the same CSR arrays, no other copy) and replaces three of its
computations by the loops of :mod:`lbm_bench.inference.compiled_loops`:

- **the full block sums** ``X @ onehot(w)`` of every chain at once: for each row, the
  indicators of its stored entries' columns (``C o`` small integers, contiguous: every
  chain's class of the column) are added into the row's integer accumulator, where
  scipy's ``csr_matvecs`` multiplies float64 one-hots column by column;
- **the index updates**: the stored entries of the positions whose label moved are
  added to their new class and subtracted from their old one in place, where scipy's
  kernel gathers them and scatters them with ``np.bincount`` over the whole sums;
- **the X-only start scores** (no row or column effects): each row's gains summed in its
  entries' order, as ``np.bincount`` sums them.

The statistics must be integers (Bernoulli and Poisson entries, with or without row and
column effects, and the missing entries' indicators; not the missing entries' exposures
with effects, which stay with scipy's kernel, :func:`compiled_applies`): their sums are
exact in any order, so every block sum, hence every logit, draw and table, is the
scipy kernel's bit for bit. The scores' float sums keep ``np.bincount``'s order. The
kernel is chosen by :mod:`lbm_bench.inference.kernel_choice` (numba installed, the
tables large enough, or asked for).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import sparse

from lbm_bench.inference.compiled_loops import compiled_loops
from lbm_bench.inference.kernel_choice import use_compiled
from lbm_bench.inference.sparse_sums import SparseSide, SparseStatistics
from lbm_bench.models.observed import EntryFamily

__all__ = ["COMPILED_UPDATE_COST", "CompiledSide", "CompiledStatistics", "compiled_applies"]

#: The compiled index update's cost per stored entry moved, in multiply-adds of the compiled
#: full product (``C o`` per stored entry): the update is used while
#: ``2 * entries_moved * COMPILED_UPDATE_COST <= B C o nnz``.
COMPILED_UPDATE_COST = 6.0
#: Largest work space of the two-stage index update (bytes: a row of sums per move).
_PAIR_BYTES = 64 * 2**20
#: The widest range of stored values whose start-score rows are looked up by value.
_LOOKUP_VALUES = 4096
#: The values of a binary side (never read).
_NO_VALUES = np.empty(0, dtype=np.uint8)
#: Largest row sum an int32 accumulator holds.
_INT32_SUMS = 2**31 - 1


def compiled_applies(model: Any, layout: Any) -> bool:
    """Whether the compiled kernel sums the tables of ``layout``
    (:class:`~lbm_bench.inference.kernels.TableLayout`): sparse tables whose statistics are
    integers (not the missing entries' exposures with row or column effects), under the
    choice in force (:func:`~lbm_bench.inference.kernel_choice.use_compiled`)."""
    if not layout.is_sparse or not all(t.is_sparse for t in layout.tables):
        return False  # (scipy's kernel refuses tables of mixed storage)
    family = EntryFamily(model, layout.incomplete)
    if family.incomplete and family.weighted:
        return False
    return use_compiled(sum(int(t.table.nnz) for t in layout.tables))


class CompiledSide(SparseSide):
    """:class:`~lbm_bench.inference.sparse_sums.SparseSide` whose full block sums and index
    updates are compiled loops; its statistics must be integers.

    Raises
    ------
    TypeError
        When a stored statistic is not an integer (its sums would not be exact).
    """

    update_cost = COMPILED_UPDATE_COST

    def __init__(self, own: list, other: list, n_stats: int, *model: np.ndarray | None) -> None:
        super().__init__(own, other, n_stats, *model)
        if not self.exact_sums:
            raise TypeError("the compiled kernel sums integer statistics only")
        self.loops = compiled_loops()
        # the largest magnitude from the extremes: np.abs would copy every stored value (800 MB
        # for a table of 1e8 entries, in each worker)
        largest = max((max(-float(t.data.min()), float(t.data.max())) for t in own if t.nnz),
                      default=0.0)
        longest = max((int(np.diff(t.indptr).max()) for t in own if t.shape[0]), default=0)
        #: the accumulator of a row's sums: int32 while every row's sum fits
        self.sum_dtype = np.int32 if largest * longest <= _INT32_SUMS else np.int64
        #: the stored values as the loops read them (:meth:`use_values`)
        self.own_data = [_NO_VALUES] * len(own)
        self.other_data = _NO_VALUES

    def use_values(self, compact: Any) -> None:
        """Read the stored values of the tables as ``compact(csr)`` gives them (small unsigned
        integers, shared by the two sides: a byte per count below 256, read at a quarter of
        float64's bandwidth); a binary side reads none."""
        if not self.binary:
            self.own_data = [compact(t) for t in self.own]
            self.other_data = compact(self.stacked_other)

    def full_sums(self, other: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        B, C, n_other = other.shape
        o, n, p = self.n_other_classes, self.n_own, self.n_stats
        if out is None:
            out = np.empty((B, C, o, p, n))
        if not out.flags.c_contiguous:
            raise ValueError("out must be C-contiguous")
        onehot = np.empty((n_other, C * o), dtype=np.uint8)
        acc = np.empty(C * o, dtype=self.sum_dtype)
        for b in range(B):
            self.loops.fill_onehot(other[b], o, onehot)
            table = self.own[b]
            self.loops.class_sums(table.indptr, table.indices, self.own_data[b], self.binary,
                                  onehot, acc, out[b].reshape(C * o, p * n))
        return out

    def _move_entries(self, sums: np.ndarray, old: np.ndarray, new: np.ndarray,
                      changed: np.ndarray, max_work: float | None) -> int | None:
        """The stored entries of the changed positions moved between the rows of ``sums`` in
        place; the entries moved, or None (nothing done) when that exceeds ``max_work``."""
        B, C, o, p, n = sums.shape
        b, c, j = np.nonzero(changed)
        position = b * self.n_other + j
        moved = 2 * int(self.other_row_nnz[position].sum())
        if max_work is not None and moved > max_work:
            return None
        slot = (b * C + c) * o
        old_rows = slot + old[b, c, j].astype(np.int64)
        new_rows = slot + new[b, c, j].astype(np.int64)
        table, flat = self.stacked_other, sums.reshape(B * C * o, p * n)
        ids = old_rows * o + new_rows - slot  # the move (chain, old class, new class)
        moves = np.flatnonzero(np.bincount(ids, minlength=B * C * o * o))
        cells = moves.size * flat.shape[1]  # the work space, zeroed and added once
        if cells <= moved and cells * np.dtype(self.sum_dtype).itemsize <= _PAIR_BYTES:
            compact = np.empty(B * C * o * o, dtype=np.int64)
            compact[moves] = np.arange(moves.size)
            firsts = moves // o
            self.loops.move_entries_by_pair(
                table.indptr, table.indices, self.other_data, self.binary, position, compact[ids],
                firsts - firsts % o + moves % o, firsts, np.empty((moves.size, flat.shape[1]),
                                                                  dtype=self.sum_dtype), flat)
        else:
            self.loops.move_entries(table.indptr, table.indices, self.other_data, self.binary,
                                    position, old_rows, new_rows, flat)
        return moved


class CompiledStatistics(SparseStatistics):
    """:class:`~lbm_bench.inference.sparse_sums.SparseStatistics` on :class:`CompiledSide`
    sides, its X-only start scores without effects summed by a compiled loop.

    Parameters
    ----------
    family, tables, sides
        As :class:`~lbm_bench.inference.sparse_sums.SparseStatistics`.
    """

    side_class = CompiledSide

    def __init__(self, family: Any, tables: list, sides: tuple[tuple, tuple]) -> None:
        # by table (its id: only tables this object holds, the sides' CSR and their
        # transposes, so no id is reused while it lives): X and X^T serve both sides
        self._compacted: dict[int, np.ndarray] = {}
        super().__init__(family, tables, sides)
        self.rows.use_values(self._compact)
        self.cols.use_values(self._compact)

    def transposed(self, table: Any) -> Any:
        """The CSR of ``table``'s transpose with its values as the loops read them (small
        unsigned integers: a byte per count below 256, where scipy's kernel holds 8; the
        values of ``table`` compacted on the way, once)."""
        values = self._compact(table)
        if values is table.data:  # not small integers: as scipy's kernel holds them
            return super().transposed(table)
        compact = sparse.csr_array((values, table.indices, table.indptr), shape=table.shape)
        out = compact.T.tocsr()
        self._compacted[id(out)] = out.data
        return out

    def _compact(self, table: Any) -> np.ndarray:
        """The stored values of the CSR ``table`` (a side's, held as long as this object) as
        small unsigned integers, made once."""
        if id(table) not in self._compacted:
            self._compacted[id(table)] = _small_integers(table.data)
        return self._compacted[id(table)]

    @staticmethod
    def logsumexp(x: np.ndarray, axis: int) -> np.ndarray:
        """scipy's ``logsumexp`` over axis 1 or 2 of ``x`` (e, g, m), fewer than 8 terms, bit
        for bit: the maxima, the shifted terms, their sum and the division in two compiled
        passes, ``exp``, ``log1p`` and ``log`` numpy's, on arrays of the same layout as
        :func:`~lbm_bench.inference.sparse_sums.SparseStatistics.logsumexp`'s (so the same
        loops: the same bits); other shapes are that function's."""
        if x.ndim != 3 or axis not in (1, 2) or x.shape[axis] >= 8 or x.dtype != np.float64:
            return SparseStatistics.logsumexp(x, axis)
        x = np.ascontiguousarray(x)
        last = axis == 2
        shape = x.shape[:2] if last else (x.shape[0], x.shape[2])
        terms, top, count, total = np.empty_like(x), np.empty(shape), np.empty(shape), \
            np.empty(shape)
        loops = compiled_loops()
        loops.logsumexp_parts(x, last, terms, top, count)
        np.exp(terms, out=terms)
        loops.logsumexp_total(terms, count, last, total)
        out = np.log1p(total)
        out += np.log(count)
        out += top
        return out

    def add_gains(self, scores: np.ndarray, X: Any, values: np.ndarray,
                  gains: np.ndarray) -> None:
        lowest, highest = int(values[0]), int(values[-1])
        if highest - lowest > _LOOKUP_VALUES:  # counts too spread for a table of their rows
            super().add_gains(scores, X, values, gains)
            return
        index_of = np.zeros(highest - lowest + 1, dtype=np.int64)
        index_of[values.astype(np.int64) - lowest] = np.arange(values.size)
        data = self._compacted.get(id(X))  # a side's table, or one made for these scores
        data = _small_integers(X.data) if data is None else data
        compiled_loops().add_row_gains(X.indptr, data, index_of, lowest,
                                       np.ascontiguousarray(gains), np.empty(gains.shape[1]),
                                       scores)


def _small_integers(values: np.ndarray) -> np.ndarray:
    """``values`` (non-negative integers, as float64) in the smallest unsigned dtype that holds
    them; as they are when one does not."""
    if values.size == 0:
        return _NO_VALUES
    top = float(values.max())
    for dtype in (np.uint8, np.uint16, np.uint32):
        if top <= np.iinfo(dtype).max:
            return values.astype(dtype, copy=False) if float(values.min()) >= 0 else values
    return values
