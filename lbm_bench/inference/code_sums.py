"""Block sums of code tables: statistics that are the indicators of a small integer code.

A family whose statistics are ``T_q(x) = [x = q + 1]`` for ``q < p`` (``code_statistics``:
categorical blocks, code 0 the reference) needs, for the row step, the counts
``S[c, l, q, i] = #{j : w_cj = l, x_ij = q + 1}``. Held as ``p`` float64 tables,
as the dense storage would, the statistics take ``8 p`` bytes per entry and layout
and every moved label adds ``p`` rows of floats: a Gibbs sweep of a 1000x1000 table
with five categories cost 3.7 times a binary table's, 1.7 times packed
(``scripts/benchmarks/bench_categorical.py``, docs/performance.md).

Here the codes are packed instead: every entry is one ``uint64`` word per four
categories holding ``1 << 16 f`` in the 16-bit field ``f`` of its category (nothing
for code 0), so that adding words adds four counters at once (SWAR: SIMD within a
register). Block sums are first taken on the packed words, by scipy's CSR kernel
(:func:`~lbm_bench.inference.dense_sums.csr_times_dense` with ``uint64`` values),
for at most :data:`FIELD_LIMIT` positions at a time so that no counter overflows,
then unpacked into the float64 sums (B, C, o, p, n_own) the logits read:

- full sums: the one-hot of the other side's labels times the packed words, ``C
  n_other`` word rows per table;
- index updates, as the dense storage's two-stage kernel: the packed words of the
  positions of each move ``(c, l, l')`` summed (one word row per changed label),
  unpacked (one row of ``p`` counters per move), then added to ``S[c, l']`` and
  subtracted from ``S[c, l]``.

Counts are integers, so every route gives the same sums bit for bit (``exact_sums``),
and the same as the dense storage's float64 sums of the indicators: small tables, for
which the dense storage is faster, are held by it (:func:`uses_codes`).
The X-only starts of the MAP score the entries from a table of log-densities by
code (:meth:`CodeStatistics.entrywise_scores`).
"""

from __future__ import annotations

import math
import sys
from typing import Any

import numpy as np

from lbm_bench.inference.dense_sums import EntrywiseScores, csr_rows, csr_times_dense
from lbm_bench.inference.side import Side

__all__ = ["CODE_MIN_TABLE_BYTES", "CODE_UPDATE_COST", "CodeSide", "CodeStatistics", "FIELD_LIMIT",
           "FIELDS_PER_WORD", "pack_codes", "uses_codes", "words_per_entry"]

#: Bits of one counter in a packed word, and counters per word.
FIELD_BITS = 16
FIELDS_PER_WORD = 64 // FIELD_BITS
#: Most positions summed into one packed row (a counter holds at most 2^16 - 1).
FIELD_LIMIT = (1 << FIELD_BITS) - 1
#: Cost of a changed label in an index update (a packed word row, its share of the sort
#: and of the unpacking) relative to one packed word row of the full product. The index
#: update is used while ``changed * CODE_UPDATE_COST <= B C n_other``; the full product
#: is also taken when it is below :data:`CODE_MIN_FULL_WORK` word-row entries. Measured
#: (3x3 clusters, 8 chains, one thread; docs/performance.md): at 1000x1000 with five
#: categories the index update of 20% of the labels takes 1.0 ms, of 50% 7.8 ms, the
#: full product 4.5 ms; the two break even near 35%.
CODE_UPDATE_COST = 2.5
#: Full products below this many packed words added (``B C n_other words n_own``) take
#: the full product (both routes cost about 0.05 ms there: 100x100, 8 chains).
CODE_MIN_FULL_WORK = 50_000
#: Tables whose ``n_stats`` float64 statistics take at most this many bytes per layout
#: are held by the dense storage instead (both give the same exact counts): there the
#: BLAS products of a few small arrays cost less than the packing's fixed overheads.
#: Measured (``generate_table``, K = 5, 3x3 clusters, one thread): 40x30 0.72 s dense
#: against 1.01 s packed, 200x100 even, 500x300 5.0 s against 3.7 s.
CODE_MIN_TABLE_BYTES = 1 << 20
#: Index of field ``f`` of a word in its ``uint16`` view (the machine's byte order).
_FIELD_INDEX = np.arange(FIELDS_PER_WORD) if sys.byteorder == "little" else np.arange(
    FIELDS_PER_WORD)[::-1]


def uses_codes(model: Any, n_rows: int, n_cols: int) -> bool:
    """Whether the engine holds a dense table of ``model`` as packed codes: a family with
    ``code_statistics`` and a table above :data:`CODE_MIN_TABLE_BYTES` of float64 statistics."""
    return bool(
        model.code_statistics) and 8 * model.n_stats * n_rows * n_cols > CODE_MIN_TABLE_BYTES


def words_per_entry(n_stats: int) -> int:
    """``uint64`` words per entry and layout for ``n_stats`` indicator statistics."""
    return max(1, math.ceil(n_stats / FIELDS_PER_WORD))


def pack_codes(codes: np.ndarray, n_stats: int) -> np.ndarray:
    """Packed words of a table of codes, other index first.

    Parameters
    ----------
    codes : ndarray of shape (n_other, n_own)
        Codes ``0 .. n_stats`` (any unsigned or signed integer dtype).
    n_stats : int

    Returns
    -------
    ndarray of shape (n_other, words, n_own) of uint64
        ``1 << 16 f`` in word ``(x - 1) // 4`` with ``f = (x - 1) % 4`` for a code ``x >= 1``.

    Examples
    --------
    >>> pack_codes(np.array([[0, 1, 2, 5]]), 5)[0].tolist()
    [[0, 1, 65536, 0], [0, 0, 0, 1]]
    """
    n_other, n_own = codes.shape
    words = words_per_entry(n_stats)
    out = np.zeros((n_other, words, n_own), dtype=np.uint64)
    index = codes.astype(np.int64) - 1
    field = np.left_shift(np.uint64(1), (FIELD_BITS * (index % FIELDS_PER_WORD)).astype(np.uint64))
    for word in range(words):
        in_word = (index >= 0) & (index // FIELDS_PER_WORD == word)
        out[:, word, :] = np.where(in_word, field, np.uint64(0))
    return out


def _unpack(packed: np.ndarray, n_stats: int, out: np.ndarray) -> None:
    """Counters of packed rows (r, words * n) into ``out`` (r, n_stats, n), float64."""
    r = packed.shape[0]
    words = packed.shape[1] // out.shape[2]
    n = out.shape[2]
    fields = packed.view(np.uint16).reshape(r, words, n, FIELDS_PER_WORD)
    for q in range(n_stats):
        word, field = divmod(q, FIELDS_PER_WORD)
        out[:, q, :] = fields[:, word, :, _FIELD_INDEX[field]]


def _buffer(buffer: np.ndarray | None, shape: tuple[int, int], dtype: Any) -> np.ndarray:
    """A reused buffer of at least ``shape[0]`` rows (fresh ones cost page faults)."""
    if buffer is None or buffer.shape[0] < shape[0] or buffer.shape[1] != shape[1]:
        buffer = np.empty(shape, dtype=dtype)
    return buffer


class CodeSide(Side):
    """One conditional step on code tables: ``packed`` (B, n_other, words, n_own) uint64 and
    the model's part (:meth:`Side.set_model`); integer counts, exact."""

    exact_sums = True

    def __init__(self, packed: np.ndarray, n_stats: int, *model: np.ndarray | None) -> None:
        self.packed = packed
        self.n_tables, self.n_other, self.words, self.n_own = packed.shape
        self.n_stats = n_stats
        self.set_model(*model)
        self._rows = packed.reshape(self.n_tables * self.n_other, self.words * self.n_own)
        self._summed: np.ndarray | None = None
        self._delta: np.ndarray | None = None

    def full_work(self, n_tables: int, n_configs: int) -> int:
        """Packed word rows of one full product (the unit of the index-update cost model)."""
        return n_tables * n_configs * self.n_other

    def always_full(self, full_work: int) -> bool:
        return full_work * self.words * self.n_own < CODE_MIN_FULL_WORK

    def full_sums(self, other: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """Block sums (B, C, o, p, n_own) of configurations ``other`` (B, C, n_other): the
        packed words of every table and chain summed by class at once, by parts of at most
        :data:`FIELD_LIMIT` positions."""
        B, C, n_other = other.shape
        o, p, n = self.n_other_classes, self.n_stats, self.n_own
        if out is None:
            out = np.empty((B, C, o, p, n))
        rows = B * C * o
        self._summed = summed = _buffer(self._summed, (rows, self.words * n), np.uint64)
        flat = out.reshape(rows, p, n)
        chain = (np.arange(B * C) * o).reshape(B, C, 1)
        for start in range(0, n_other, FIELD_LIMIT):
            part = other[:, :, start : start + FIELD_LIMIT].astype(np.int64)
            order, indptr = csr_rows((chain + part).ravel(), rows)  # row (b, c, l) of each position
            width = part.shape[2]
            positions = np.arange(start, start + width) + (np.arange(B) * n_other)[:, None, None]
            positions = np.broadcast_to(positions, part.shape).ravel()[order]
            csr_times_dense(indptr, positions, np.ones(positions.size, dtype=np.uint64), self._rows,
                            summed[:rows])
            if start == 0:
                _unpack(summed[:rows], p, flat)
            else:
                unpacked = np.empty((rows, p, n))
                _unpack(summed[:rows], p, unpacked)
                flat += unpacked
        return out

    def index_update(self, bs: Any, labels: np.ndarray, changed: np.ndarray) -> bool:
        """Bring ``bs.sums`` from ``bs.labels`` to ``labels``: the packed words of each move's
        positions summed, unpacked, added to the new class and subtracted from the old
        one; False (nothing done) when the cost model prefers the full product."""
        B, C, o, p, n = bs.sums.shape
        n_other = self.n_other
        flat = np.flatnonzero(changed)  # chain-major order
        k = flat.size
        if bs.max_changed is None and k * CODE_UPDATE_COST > bs.full_work:
            return False
        chain_slot, j = np.divmod(flat, n_other)  # chain_slot = b * C + c
        old = bs.labels.reshape(-1)[flat].astype(np.int64)
        new = labels.reshape(-1)[flat].astype(np.int64)
        position = chain_slot // C * n_other + j  # row of the stacked packed words
        n_parts = -(-n_other // FIELD_LIMIT)  # moves split so that no counter overflows
        moves = ((chain_slot * o + old) * o + new) * n_parts + j // FIELD_LIMIT
        counts = np.bincount(moves)
        used = np.flatnonzero(counts)
        u = used.size
        order = np.argsort(moves, kind="stable")
        indptr = np.zeros(u + 1, dtype=np.int64)
        np.cumsum(counts[used], out=indptr[1:])
        self._summed = summed = _buffer(self._summed, (max(u, B * C * o), self.words * n),
                                        np.uint64)
        csr_times_dense(indptr, position[order], np.ones(k, dtype=np.uint64), self._rows,
                        summed[:u])
        unpacked = np.empty((u, p, n))
        _unpack(summed[:u], p, unpacked)
        move = used // n_parts
        order, indptr = csr_rows(np.concatenate([move // (o * o) * o + move % o, move // o]),
                                 B * C * o)
        columns = np.tile(np.arange(u, dtype=np.int64), 2)[order]
        signs = np.repeat(np.array([1.0, -1.0]), u)[order]
        self._delta = delta = _buffer(self._delta, (B * C * o, p * n), np.float64)
        csr_times_dense(indptr, columns, signs, unpacked.reshape(u, p * n), delta[: B * C * o])
        bs.sums.reshape(B * C * o, p * n)[...] += delta[: B * C * o]
        bs.n_row_adds += k + 2 * u
        return True


class CodeStatistics:
    """``B`` code tables of one model (a family with ``code_statistics``), packed twice, and
    their two sides.

    Parameters
    ----------
    model : LatentBlockModel
        Its statistics are the indicators of the codes ``1 .. n_stats``.
    tables : ndarray of shape (B, n_rows, n_cols), or a sequence of B dense tables
        Codes, checked by the family (``model.check_table``).
    sides : tuple
        The model's parts of the row and column steps (:meth:`Side.set_model` arguments).
    """

    exact = True

    def __init__(self, model: Any, tables: Any, sides: tuple[tuple, tuple]) -> None:
        if sides[0][3] is not None or sides[1][3] is not None:
            raise TypeError("code statistics take no row or column exposures")
        if not isinstance(tables, np.ndarray):
            tables = np.stack([np.asarray(t) for t in tables])
        B, n, d = tables.shape
        p = model.n_stats
        words = words_per_entry(p)
        self.by_col = np.empty((B, d, words, n), dtype=np.uint64)  # row step: columns first
        self.by_row = np.empty((B, n, words, d), dtype=np.uint64)  # column step: rows first
        for b, table in enumerate(tables):
            self.by_col[b] = pack_codes(table.T, p)
            self.by_row[b] = pack_codes(table, p)
        self.tables = tables
        self.shape = (B, n, d)
        self.rows = CodeSide(self.by_col, p, *sides[0])
        self.cols = CodeSide(self.by_row, p, *sides[1])

    def entrywise_scores(self, sweeper: Any) -> tuple[np.ndarray, np.ndarray]:
        """The dense storage's scores from the codes: the log-density of an entry of code
        ``x`` in block ``(k, l)`` is ``eta[x - 1, k, l] - A[k, l]`` (``-A`` for code 0),
        looked up by code."""
        g, m = sweeper.model.block_shape
        eta, A = sweeper.eta, sweeper.log_partition
        lookup = np.concatenate([np.zeros((1, g, m)), eta]) - A  # (p + 1, g, m) by code
        lookup = np.ascontiguousarray(lookup.transpose(1, 2, 0), dtype=np.float32)  # (g, m, p + 1)
        scores = EntrywiseScores(sweeper, self.shape)
        for rows in scores.bands():
            codes = self.tables[:, rows]  # (B, r, d)
            dens = np.empty((g, m) + codes.shape, dtype=np.float32)
            for k in range(g):
                for l in range(m):
                    np.take(lookup[k, l], codes, out=dens[k, l])
            scores.add_band(rows, dens)
        return scores.result()
