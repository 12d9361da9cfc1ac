"""Block sums of sparse tables: CSR products and index updates that never densify.

``scipy.sparse`` tables (Bernoulli and Poisson, one statistic: the entry) are
held as CSR twice, ``X`` and ``X^T``. A table with missing entries has more
statistic channels (the entry, and the missing entries' exposures; see
:class:`~lbm_bench.models.observed.EntryFamily`), all sparse: the ``p`` channels
of a side are stacked into one CSR of ``p n_own`` rows (and its transpose for
index updates), so the products and updates below work on them unchanged. The full block sums are
the sparse products ``X @ onehot(w)`` and ``X^T @ onehot(z)`` (``O(nnz C o)``); an index
update adds and subtracts the rows of the other-major CSR for the labels that
moved (``O(nnz of the moved rows)``) and scatters the result into the sums.
The zeros need no term of their own: the logits' ``A_kl`` times the class
masses counts every entry of a block, zero or not. Sums of integers are exact
in float64 by every route, so the sparse and dense engines give the same block
sums, logits and draws on the same table.

The X-only starts of the MAP score every row and column entry by entry with the
other labels integrated out (:meth:`SparseStatistics.entrywise_scores`): the
stored entries one by one, the zeros in closed form.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import sparse
from scipy.special import logsumexp

from lbm_bench.inference.side import Side
from lbm_bench.models.registry import sparse_family_names

__all__ = ["SPARSE_MIN_FULL_WORK", "SPARSE_UPDATE_COST", "SparseSide", "SparseStatistics"]

#: Sparse tables: cost of one stored entry moved by an index update (sparse-sparse
#: product and scatter) relative to one multiply-add of the full product
#: ``X @ onehot`` (``C o`` per stored entry). The index update is used while
#: ``2 * entries_moved * SPARSE_UPDATE_COST <= B C o nnz``.
SPARSE_UPDATE_COST = 4.0
#: Sparse tables whose full product is below this many multiply-adds (``C o nnz``)
#: always take the full product.
SPARSE_MIN_FULL_WORK = 200_000


#: Stored entries gathered at once by a sparse index update (bounds its temporaries).
_GATHER_CHUNK = 1 << 21


def _all_ones(values: np.ndarray) -> bool:
    """Whether every value is 1, read in ranges of :data:`_GATHER_CHUNK` (a comparison of
    the whole array would hold a byte per stored entry at once)."""
    return all(bool(np.all(values[k:k + _GATHER_CHUNK] == 1))
               for k in range(0, values.size, _GATHER_CHUNK))


def _all_integers(values: np.ndarray) -> bool:
    """Whether every value is an integer, read in ranges (``np.round`` of the whole array
    would hold a copy of every stored value at once: 800 MB for 1e8 entries)."""
    if values.dtype.kind in "iub":
        return True
    for k in range(0, values.size, _GATHER_CHUNK):
        part = values[k:k + _GATHER_CHUNK]
        if not np.all(part == np.round(part)):
            return False
    return True


def _ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Concatenation of ``arange(s, s + n)`` for the pairs ``(s, n)``."""
    total = int(lengths.sum())
    shift = np.repeat(starts - (np.cumsum(lengths) - lengths), lengths)
    return shift + np.arange(total, dtype=np.int64)


class SparseSide(Side):
    """One conditional step on sparse tables; integer sums (of entries and missing
    indicators: without effects), exact (``exact_sums``).

    ``own[b]`` is table ``b``'s ``n_stats`` statistic channels as one CSR with the own
    items as rows, channel-major ((n_stats n_own), n_other); ``other[b]`` its transpose
    (n_other, (n_stats n_own)); ``model`` is the model's part, as for the dense step
    (:meth:`Side.set_model`).
    """

    exact_sums = True
    #: The index update's cost per stored entry moved, in multiply-adds of the full product
    #: (:data:`SPARSE_UPDATE_COST` for scipy's).
    update_cost = SPARSE_UPDATE_COST

    def __init__(self, own: list, other: list, n_stats: int, *model: np.ndarray | None) -> None:
        self.own, self.other = own, other
        self.n_tables = len(own)
        self.n_stats = int(n_stats)
        rows, self.n_other = own[0].shape
        self.n_own = rows // self.n_stats
        self.set_model(*model)
        self.nnz = sum(int(t.nnz) for t in own)
        #: the tables' other-major CSR stacked (B n_other, n_own), for index updates
        self.stacked_other = other[0] if len(other) == 1 else sparse.vstack(other, format="csr")
        self.other_row_nnz = np.diff(self.stacked_other.indptr)
        #: binary tables: the gathered entries are counted, without weights
        self.binary = _all_ones(self.stacked_other.data)
        #: integer statistics are summed exactly by every route (no periodic recomputation);
        #: the missing entries' exposures with row and column effects are not integers
        self.exact_sums = self.binary or _all_integers(self.stacked_other.data)

    def full_work(self, n_tables: int, n_configs: int) -> int:
        return n_configs * self.n_other_classes * self.nnz

    def always_full(self, full_work: int) -> bool:
        return full_work < SPARSE_MIN_FULL_WORK

    def full_sums(self, other: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        B, C, n_other = other.shape
        o, n, p = self.n_other_classes, self.n_own, self.n_stats
        if out is None:
            out = np.empty((B, C, o, p, n))
        flat = out.reshape(B, C * o, p * n)
        classes = np.arange(o, dtype=other.dtype)
        onehot = np.empty((n_other, C, o))
        for b in range(B):
            np.equal(other[b].T[:, :, None], classes, out=onehot, casting="unsafe")
            flat[b] = (self.own[b] @ onehot.reshape(n_other, C * o)).T
        return out

    def index_update(self, bs: Any, labels: np.ndarray, changed: np.ndarray) -> bool:
        """Bring ``bs.sums`` from ``bs.labels`` to ``labels`` by moving the stored entries of
        the changed positions; False (nothing done) when that exceeds the cost model."""
        max_work = None if bs.max_changed is not None else bs.full_work / self.update_cost
        moved = self._move_entries(bs.sums, bs.labels, labels, changed, max_work)
        if moved is None:
            return False
        bs.n_row_adds += moved
        return True

    def _move_entries(self, sums: np.ndarray, old: np.ndarray, new: np.ndarray, changed: np.ndarray,
                      max_work: float | None) -> int | None:
        """Move the rows of the other-major tables for the changed labels; returns the stored
        entries moved, or None (nothing done) when that exceeds ``max_work``.

        The stored entries of the changed positions are gathered and summed into the
        affected ``(chain, class)`` rows of the sums by ``np.bincount`` (added to the
        new class, subtracted from the old one), in chunks of about
        :data:`_GATHER_CHUNK` entries: integer sums, exact in float64.
        """
        B, C, o, p, n = sums.shape
        n = p * n  # the width of a (chain, class) row of the sums: the channels side by side
        b, c, j = np.nonzero(changed)
        position = b * self.n_other + j
        lengths = self.other_row_nnz[position]
        moved = 2 * int(lengths.sum())
        if max_work is not None and moved > max_work:
            return None
        slot = (b * C + c) * o
        new_rows = slot + new[b, c, j].astype(np.int64)
        old_rows = slot + old[b, c, j].astype(np.int64)
        flat = sums.reshape(-1)
        size = flat.size
        ends = np.cumsum(lengths)
        bounds = np.searchsorted(
            ends, np.arange(_GATHER_CHUNK, ends[-1] if ends.size else 0, _GATHER_CHUNK))
        for part in np.split(np.arange(position.size), np.unique(bounds + 1)):
            if part.size == 0:
                continue
            entries = _ranges(self.stacked_other.indptr[position[part]], lengths[part])
            cols = self.stacked_other.indices[entries]
            weights = None if self.binary else self.stacked_other.data[entries]
            del entries
            for target_rows, sign in ((new_rows, 1.0), (old_rows, -1.0)):
                target = np.repeat(target_rows[part] * n, lengths[part])
                target += cols
                counts = np.bincount(target, weights, minlength=size)
                if sign > 0:
                    flat += counts
                else:
                    flat -= counts
        return moved


class SparseStatistics:
    """``B`` sparse tables of one model as CSR twice (float64 values), and their two sides.

    Parameters
    ----------
    family : EntryFamily
        The observed-data family of a model that ``can_be_sparse`` (one statistic: the
        entry), with the missing entries' channels when the tables have masks.
    tables : sequence of B :class:`~lbm_bench.models.data.SparseTableData`
    sides : tuple
        The model's parts of the row and column steps (:meth:`Side.set_model` arguments).
    """

    exact = True
    #: The class of its two sides.
    side_class = SparseSide

    @staticmethod
    def logsumexp(x: np.ndarray, axis: int) -> np.ndarray:
        """``scipy.special.logsumexp(x, axis=axis)`` bit for bit, as the start scores with
        effects take it (:func:`_logsumexp`)."""
        return _logsumexp(x, axis)

    def __init__(self, family: Any, tables: list, sides: tuple[tuple, tuple]) -> None:
        if family.model.n_stats != 1 or not all(t.is_sparse for t in tables):
            raise TypeError(
                f"sparse tables need a one-statistic family ({', '.join(sparse_family_names())})"
                " and every table sparse"
            )
        self.data = list(tables)
        self.tables = [t.table for t in tables]
        # n_stats CSR (n_rows, n_cols) each
        channels = [family.sparse_statistics(t) for t in tables]
        p = family.n_stats
        self.values = [c[0] for c in channels]  # the entries themselves (0 at missing entries)
        if p == 1:
            self.by_rows = self.values  # (n_rows, n_cols)
            self.by_cols = [self.transposed(t) for t in self.by_rows]  # (n_cols, n_rows)
            rows_own, rows_other = self.by_rows, self.by_cols
            cols_own, cols_other = self.by_cols, self.by_rows
        else:
            rows_own = [sparse.vstack(c, format="csr") for c in channels]  # (p n_rows, n_cols)
            rows_other = [self.transposed(t) for t in rows_own]
            # (p n_cols, n_rows)
            cols_own = [sparse.vstack([x.T for x in c], format="csr") for c in channels]
            cols_other = [self.transposed(t) for t in cols_own]
        self.shape = (len(tables),) + tables[0].shape
        self.rows = self.side_class(rows_own, rows_other, p, *sides[0])
        self.cols = self.side_class(cols_own, cols_other, p, *sides[1])

    def transposed(self, table: Any) -> Any:
        """The CSR of ``table``'s transpose (its values float64, as the products read them)."""
        return table.T.tocsr()

    def entrywise_scores(self, sweeper: Any) -> tuple[np.ndarray, np.ndarray]:
        """The dense storage's
        :meth:`~lbm_bench.inference.dense_sums.DenseStatistics.entrywise_scores` on sparse tables:
        the stored entries one by one, the zeros in closed form.

        A zero of row ``i`` adds ``log sum_l rho_l exp(-c_ij A_kl)`` to its score for class
        ``k``: the same for every zero without effects; with effects (``c_ij = a_i b_j``),
        the sum over a row's entries uses the column effects summarised by 64 equal-count
        groups (a start heuristic, like the rest of these scores). Missing entries add
        nothing (their zero terms are taken out); the block mechanism's mask terms are left
        out of these start scores (the steps that follow use them)."""
        eta = sweeper.eta[0]  # (g, m)
        A = sweeper.log_partition
        log_pi, log_rho = sweeper.log_row_prior, sweeper.log_col_prior
        a, b = sweeper.row_weights, sweeper.col_weights
        B, n, d = self.shape
        row_out = np.empty((B, n, A.shape[0]))
        col_out = np.empty((B, d, A.shape[1]))
        for t, X in enumerate(self.values):
            row_scores, col_scores = row_out[t], col_out[t]
            if a is None:
                zero_row = logsumexp(log_rho - A, axis=1)  # (g,)
                zero_col = logsumexp(log_pi[:, None] - A, axis=0)  # (m,)
                values = _stored_values(X)
                dens = eta * values[:, None, None] - A  # (U, g, m)
                row_gain = logsumexp(dens + log_rho, axis=2) - zero_row  # (U, g)
                col_gain = logsumexp(dens + log_pi[:, None], axis=1) - zero_col  # (U, m)
                row_scores[:] = d * zero_row
                col_scores[:] = n * zero_col
                if self.data[t].has_missing:  # missing entries are no zeros: they add nothing
                    row_scores -= self.data[t].missing_row_counts()[:, None] * zero_row
                    col_scores -= self.data[t].missing_col_counts()[:, None] * zero_col
                # each row's gains summed in its entries' order, over ranges of rows; each
                # column's likewise over the transposed table (a column's entries by
                # increasing row, as in the table): the sums of one pass over all entries
                self.add_gains(row_scores, X, values, row_gain)
                self.add_gains(col_scores,
                               self.by_cols[t] if self.rows.n_stats == 1 else X.T.tocsr(),
                               values, col_gain)
            else:
                rows = np.repeat(np.arange(n), np.diff(X.indptr))
                cols, x = X.indices, X.data
                lse = self.logsumexp
                row_scores[:] = _grouped_zero_terms(a, b, log_rho, A, lse)
                col_scores[:] = _grouped_zero_terms(b, a, log_pi, A.T, lse)
                if self.data[t].has_missing:  # the zero terms of the missing entries, taken out
                    missing = self.data[t].missing_indicator()
                    m_rows = np.repeat(np.arange(n), np.diff(missing.indptr))
                    _remove_zero_terms(row_scores, col_scores, m_rows, missing.indices, a, b, A,
                                       log_pi, log_rho)
                for start in range(0, x.size, _SPARSE_CHUNK):
                    part = slice(start, start + _SPARSE_CHUNK)
                    r, c, v = rows[part], cols[part], x[part]
                    exposure = (a[r] * b[c])[:, None, None]
                    zero = -exposure * A  # (e, g, m)
                    dens = zero + eta * v[:, None, None]
                    row_gain = lse(dens + log_rho, axis=2) - lse(zero + log_rho, axis=2)
                    col_gain = (lse(dens + log_pi[:, None], axis=1)
                                - lse(zero + log_pi[:, None], axis=1))
                    for k in range(row_gain.shape[1]):
                        row_scores[:, k] += np.bincount(r, weights=row_gain[:, k], minlength=n)
                    for l in range(col_gain.shape[1]):
                        col_scores[:, l] += np.bincount(c, weights=col_gain[:, l], minlength=d)
        return row_out + log_pi, col_out + log_rho

    def add_gains(self, scores: np.ndarray, X: Any, values: np.ndarray,
                  gains: np.ndarray) -> None:
        """``scores[i, k] += sum of gains[value of entry, k]`` over the stored entries of row
        ``i`` of the CSR ``X`` (``values``: its distinct stored values, increasing), each
        row's sum from 0 in its entries' order (``np.bincount``), then added to its score."""
        _add_gains(scores, X, values, gains)


#: Stored entries per chunk in the sparse entrywise scores with effects.
_SPARSE_CHUNK = 2**18
#: Stored entries per range of rows (or columns) in the sparse entrywise scores without effects.
_SCORE_CHUNK = 1 << 21
#: Exposure groups summarising the other side's effects in the zeros' terms.
_ZERO_GROUPS = 64


def _logsumexp(x: np.ndarray, axis: int) -> np.ndarray:
    """``scipy.special.logsumexp(x, axis=axis)`` of a finite float64 array, bit for bit, at
    about twice its speed on the (2**18, 3, 3) chunks of the scores with effects, where it was
    most of a MAP's time on a sparse Poisson table with effects.

    The same floating-point operations in the same order: the maximum over the axis; every
    other term's ``exp(x - max)`` (on an array of ``x``'s layout, as scipy's); their sum, left
    to right as ``np.sum`` adds fewer than 8 terms (8 or more: ``np.sum`` itself, whose order
    is its own); divided by the count of maxima; ``log1p(sum) + log(count) + max``. Only
    scipy's array-API layer and the reductions over a short axis are gone
    (``tests/inference/test_sparse_sums.py`` compares the two on random arrays with ties).
    Inputs here are finite, so scipy's sign and infinity branches never apply.
    """
    n_terms = x.shape[axis]
    if n_terms >= 8:
        top = x.max(axis=axis)  # exact in any order
        is_max = x == np.expand_dims(top, axis)
        terms = x - np.expand_dims(top, axis)
        np.copyto(terms, -np.inf, where=is_max)  # scipy takes the maxima out: exp(-inf) = 0
        np.exp(terms, out=terms)
        total = terms.sum(axis=axis)
        count = is_max.sum(axis=axis, dtype=np.float64)
    else:
        index = [slice(None)] * x.ndim

        def term(array: np.ndarray, k: int) -> np.ndarray:
            index[axis] = k
            return array[tuple(index)]

        top = term(x, 0).copy()  # the maximum, exact in any order
        for k in range(1, n_terms):
            np.maximum(top, term(x, k), out=top)
        is_max = x == np.expand_dims(top, axis)
        terms = x - np.expand_dims(top, axis)
        np.copyto(terms, -np.inf, where=is_max)
        np.exp(terms, out=terms)
        total = term(terms, 0).copy()
        count = term(is_max, 0).astype(np.float64)
        for k in range(1, n_terms):  # left to right, as np.sum adds fewer than 8 terms
            total += term(terms, k)
            count += term(is_max, k)
    np.divide(total, count, out=total, where=total != 0)
    out = np.log1p(total)
    out += np.log(count)
    out += top
    return out


def _stored_values(X: Any) -> np.ndarray:
    """The distinct stored values of a CSR table, increasing (``np.unique`` of its data, over
    ranges of :data:`_SCORE_CHUNK` entries)."""
    values = np.unique(X.data[:_SCORE_CHUNK])
    for start in range(_SCORE_CHUNK, X.data.size, _SCORE_CHUNK):
        values = np.union1d(values, X.data[start:start + _SCORE_CHUNK])
    return values


def _add_gains(scores: np.ndarray, X: Any, values: np.ndarray, gains: np.ndarray) -> None:
    """``scores[i, k] += sum of gains[value of entry, k]`` over the stored entries of row ``i``
    of the CSR ``X`` (``values``: its distinct stored values), summed in the entries' order
    (``np.bincount``) over ranges of rows of about :data:`_SCORE_CHUNK` entries."""
    indptr, n = X.indptr, X.shape[0]
    start = 0
    while start < n:
        stop = max(start + 1,
                   int(np.searchsorted(indptr, indptr[start] + _SCORE_CHUNK, side="right")) - 1)
        stop = min(stop, n)
        lo, hi = int(indptr[start]), int(indptr[stop])
        rows = np.repeat(np.arange(stop - start), np.diff(indptr[start:stop + 1]))
        inverse = np.searchsorted(values, X.data[lo:hi])
        for k in range(gains.shape[1]):
            scores[start:stop, k] += np.bincount(rows, weights=gains[inverse, k],
                                                 minlength=stop - start)
        start = stop


def _remove_zero_terms(row_scores, col_scores, rows, cols, a, b, A, log_pi, log_rho) -> None:
    """Subtract the zero terms of the entries ``(rows, cols)`` (missing entries) from the scores."""
    n, d = row_scores.shape[0], col_scores.shape[0]
    for start in range(0, rows.size, _SPARSE_CHUNK):
        part = slice(start, start + _SPARSE_CHUNK)
        r, c = rows[part], cols[part]
        zero = -(a[r] * b[c])[:, None, None] * A  # (e, g, m)
        row_terms = _logsumexp(zero + log_rho, axis=2)
        col_terms = _logsumexp(zero + log_pi[:, None], axis=1)
        for k in range(row_terms.shape[1]):
            row_scores[:, k] -= np.bincount(r, weights=row_terms[:, k], minlength=n)
        for l in range(col_terms.shape[1]):
            col_scores[:, l] -= np.bincount(c, weights=col_terms[:, l], minlength=d)


def _grouped_zero_terms(own: np.ndarray, other: np.ndarray, log_prior_other, A: np.ndarray,
                        lse: Any) -> np.ndarray:
    """``sum_j log sum_l prior_l exp(-own_i other_j A_kl)`` for every own item and class ``k``,
    with ``other`` summarised by equal-count groups (their means): (n_own, k); ``lse`` is
    :func:`_logsumexp` or a function of the same bits."""
    groups = np.array_split(np.sort(other), min(_ZERO_GROUPS, other.size))
    means = np.array([grp.mean() for grp in groups])
    sizes = np.array([grp.size for grp in groups], dtype=np.float64)
    out = np.zeros((own.size, A.shape[0]))
    for mean, size in zip(means, sizes, strict=True):
        exposure = (own * mean)[:, None, None]  # (n_own, 1, 1)
        out += size * lse(log_prior_other - exposure * A, axis=2)
    return out
