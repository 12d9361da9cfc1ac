"""Block sums of dense tables: the statistics held twice, products and index updates.

The statistics of ``B`` tables are stored twice, "other index first":
``by_col`` of shape (B, n_cols, p, n_rows) holds, for every column ``j``, its
``p`` statistic vectors over the rows (so that column ``j`` of every ``T_p`` is
one contiguous row), and ``by_row`` of shape (B, n_rows, p, n_cols) the same for
rows. Block sums are kept class-major, (B, C, o, p, n_own), where ``o`` counts
the classes of the other side.

Full block sums are one 2-D BLAS product per table. An index update (between two
Gibbs sweeps only a few labels change) moves, for every changed label (column
``j`` of chain ``c`` from class ``l`` to ``l'``), the statistics of position
``j`` from ``S[c, l]`` to ``S[c, l']``, by one of two kernels (see
:class:`~lbm_bench.inference.engine.BlockSums`): ``"sparse"`` (products of
sparse +-1 matrices with the statistics, scipy's CSR kernel) or ``"dense"``
(the changed positions gathered and multiplied by a dense difference of
one-hots). The cost model below says when the full product is cheaper.

The X-only starts of the MAP score every row and column entry by entry with the
other labels integrated out (:meth:`DenseStatistics.entrywise_scores`).

A table with missing entries has its statistics zeroed there and one or two more
channels (:class:`~lbm_bench.models.observed.EntryFamily`): ``p`` counts them all,
and nothing below depends on what they are.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import sparse

from lbm_bench.inference.side import Side, onehot_t
from lbm_bench.models.observed import EntryFamily

try:  # the kernel of ``csr_array @ dense`` (scipy >= 0.14), called directly by index updates
    from scipy.sparse._sparsetools import csr_matvecs as _csr_matvecs
except ImportError:  # pragma: no cover - see csr_times_dense
    _csr_matvecs = None

__all__ = [
    "DenseSide",
    "DenseStatistics",
    "EntrywiseScores",
    "INDEX_MAX_FRACTION",
    "INDEX_UPDATE_COST",
    "MIN_FULL_WORK",
    "SINGLE_STAT_FACTOR",
    "csr_rows",
    "csr_times_dense",
]

#: Cost of one row addition of the sparse index update relative to one row
#: multiply-add of the full product. The sparse update (``2 K`` or ``K + 2 U``
#: row additions, see :class:`BlockSums`) is used while
#: ``row_additions * INDEX_UPDATE_COST <= B * C * o * n_other``, else the full
#: product is recomputed. Measured on 1000x1000 Gaussian tables, 3x3 clusters,
#: 8 chains (docs/performance.md): the two routes break even near 8 with one
#: BLAS thread and near 16 with two; 12 is in between. It only matters above
#: about 25% risk, where both routes are within ~15% of each other.
INDEX_UPDATE_COST = 12.0
#: The dense index update gathering ``K'`` changed positions (out of ``n_other``)
#: costs about ``K' / n_other`` of the full product plus the gather; it is used
#: while ``K' <= INDEX_MAX_FRACTION * n_other``.
INDEX_MAX_FRACTION = 0.6
#: Below this many multiply-adds (``B C o n_other p n_own``), the full product is
#: cheaper than the fixed overhead of an index update (about 50-100 microseconds;
#: measured crossover near 3e6 on Gaussian tables, 8 chains, 3x3 clusters:
#: 250x250 0.99x, 350x350 1.23x).
MIN_FULL_WORK = 3_000_000
#: With a single statistic (Poisson, Bernoulli) the full product is relatively
#: cheaper and the crossover is higher, near ``SINGLE_STAT_FACTOR * MIN_FULL_WORK``
#: (8 chains, 3x3 clusters: Poisson 500x500 0.91x, Bernoulli 600x600 1.06x,
#: Poisson 700x700 1.66x; docs/performance.md).
SINGLE_STAT_FACTOR = 3
#: Bytes of the (g, m, B, chunk, n_cols) entrywise log-density array of the starts.
_MARGINAL_CHUNK_BYTES = 16 * 2**20


class DenseSide(Side):
    """One conditional step on dense tables: ``stats`` (B, n_other, p, n_own), the
    other-index-first layout, and the model's part (:meth:`Side.set_model`).

    ``per_statistic``: the full products are taken one statistic at a time at every
    size (tables with missing entries, whose mask channels make the product wider). One
    product over all statistics crossed OpenBLAS's threshold for two threads on 120x80
    tables with 3 channels and took 20x longer on a loaded 2-core machine (2.5 ms against
    0.12 ms; ``scripts/benchmarks/bench_missing.py --quick``); complete tables keep their
    single product, and so their bytes.
    """

    def __init__(self, stats: np.ndarray, *model: np.ndarray | None,
                 per_statistic: bool = False) -> None:
        self.stats = stats
        self.n_tables, self.n_other, self.n_stats, self.n_own = stats.shape
        self.per_statistic = per_statistic
        self.set_model(*model)

    def full_work(self, n_tables: int, n_configs: int) -> int:
        """Row multiply-adds of one full product (the unit of the index-update cost model)."""
        return n_tables * n_configs * self.n_other_classes * self.n_other

    def always_full(self, full_work: int) -> bool:
        """Whether the full product is cheaper than any index update."""
        cutoff = MIN_FULL_WORK * (SINGLE_STAT_FACTOR if self.n_stats == 1 else 1)
        return full_work * self.n_stats * self.n_own < cutoff

    def full_sums(self, other: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """Block sums (B, C, o, p, n_own) of configurations ``other`` (B, C, n_other)."""
        B, C, _ = other.shape
        o, p, n = self.n_other_classes, self.n_stats, self.n_own
        if out is None:
            out = np.empty((B, C, o, p, n))
        onehot = onehot_t(other, o).reshape(B, C * o, self.n_other)
        # 2-D BLAS products per table (numpy's stacked matmul does not call BLAS
        # for a stack and was 4-5x slower on the calibration's many small tables).
        if self.per_statistic and n * self.n_other * C * o < 2**20:
            flat = out.reshape(B, C * o, p, n)
            for b in range(B):
                for q in range(p):
                    np.matmul(onehot[b], self.stats[b, :, q, :], out=flat[b, :, q, :])
        elif n * self.n_other * C * o < 2**20:
            stats = self.stats.reshape(B, self.n_other, p * n)
            flat = out.reshape(B, C * o, p * n)
            for b in range(B):
                np.matmul(onehot[b], stats[b], out=flat[b])
        else:
            # one per statistic too, oriented (n_own x n_other) @ (n_other x C o):
            # OpenBLAS splits this shape better over 2 threads (1.5 vs 1.9 ms at
            # 1000x1000, 8 chains, 3 classes); the transposed copy is negligible
            flat = out.reshape(B, C * o, p, n)
            for b in range(B):
                for q in range(p):
                    flat[b, :, q, :] = np.matmul(self.stats[b, :, q, :].T, onehot[b].T).T
        return out

    def index_update(self, bs: Any, labels: np.ndarray, changed: np.ndarray) -> bool:
        """Bring ``bs.sums`` from ``bs.labels`` to ``labels`` by ``bs.kernel``; False (nothing
        done) when the cost model prefers the full product."""
        kernel = _dense_kernel if bs.kernel == "dense" else _sparse_kernel
        return kernel(bs, self, labels, changed)


def _dense_kernel(bs: Any, s: DenseSide, labels: np.ndarray, changed: np.ndarray) -> bool:
    """``sums += (onehot(new) - onehot(old)) @ stats`` over the changed positions."""
    positions = np.flatnonzero(changed.any(axis=(0, 1)))
    if bs.max_changed is None and positions.size > INDEX_MAX_FRACTION * s.n_other:
        return False
    B, C, o, p, n = bs.sums.shape
    k = positions.size
    diff = onehot_t(labels[..., positions], o)
    diff -= onehot_t(bs.labels[..., positions], o)  # (B, C, o, k) of -1, 0, 1
    gathered = s.stats[:, positions].reshape(B, k, p * n)
    diff = diff.reshape(B, C * o, k)
    flat = bs.sums.reshape(B, C * o, p * n)
    for b in range(B):  # one 2-D BLAS product per table (see DenseSide.full_sums)
        flat[b] += diff[b] @ gathered[b]
    return True


def _sparse_kernel(bs: Any, s: DenseSide, labels: np.ndarray, changed: np.ndarray) -> bool:
    """``sums += D @ stats``, or ``D2 @ (D1 @ stats)`` through the sums of the
    (c, l, l') moves; products by :func:`csr_times_dense` into reused buffers."""
    B, C, o, p, n = bs.sums.shape
    n_other, width = s.n_other, p * n
    flat = np.flatnonzero(changed)  # chain-major order
    k = flat.size
    chain_slot, j = np.divmod(flat, n_other)  # chain_slot = b * C + c for now
    old = bs.labels.reshape(-1)[flat].astype(np.int64)
    new = labels.reshape(-1)[flat].astype(np.int64)
    position = j if B == 1 else chain_slot // C * n_other + j  # row of the stacked stats
    chain_slot *= o
    moves = (chain_slot + old) * o + new  # id of the move (c, l, l')
    counts = np.bincount(moves, minlength=B * C * o * o)
    used = np.flatnonzero(counts)
    u = used.size
    two_stage = k + 2 * u < 2 * k
    row_adds = k + 2 * u if two_stage else 2 * k
    if bs.max_changed is None and row_adds * INDEX_UPDATE_COST > bs.full_work:
        return False
    stats = s.stats.reshape(B * n_other, width)
    bs._delta = delta = _growing_buffer(bs._delta, B * C * o, width)
    if two_stage:
        # stage 1: the statistics of each move summed (moves sorted, chain-major within)
        order = np.argsort(moves, kind="stable")
        indptr = np.zeros(u + 1, dtype=np.int64)
        np.cumsum(counts[used], out=indptr[1:])
        bs._summed = summed = _growing_buffer(bs._summed, u, width)
        csr_times_dense(indptr, position[order], np.ones(k), stats, summed[:u])
        # stage 2: each move sum added to its new class, subtracted from its old one
        order, indptr = csr_rows(
            np.concatenate([used // (o * o) * o + used % o, used // o]), B * C * o
        )
        columns = np.tile(np.arange(u, dtype=np.int64), 2)[order]
        signs = np.repeat(np.array([1.0, -1.0]), u)[order]
        csr_times_dense(indptr, columns, signs, summed[:u], delta[: B * C * o])
    else:
        order, indptr = csr_rows(np.concatenate([chain_slot + new, chain_slot + old]), B * C * o)
        columns = np.tile(position, 2)[order]
        signs = np.repeat(np.array([1.0, -1.0]), k)[order]
        csr_times_dense(indptr, columns, signs, stats, delta[: B * C * o])
    bs.sums.reshape(B * C * o, width)[...] += delta[: B * C * o]
    bs.n_row_adds += row_adds
    return True


def csr_rows(rows: np.ndarray, n_rows: int) -> tuple[np.ndarray, np.ndarray]:
    """(order, indptr) of entries in rows ``rows``: sorted stably, duplicates kept."""
    order = np.argsort(rows, kind="stable")
    indptr = np.zeros(n_rows + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n_rows), out=indptr[1:])
    return order, indptr


def csr_times_dense(
    indptr: np.ndarray, indices: np.ndarray, data: np.ndarray, dense: np.ndarray, out: np.ndarray
) -> None:
    """``out[...] = A @ dense``, ``A = (data, indices, indptr)`` CSR; C-contiguous float64.

    Rows accumulated from zero in CSR order by scipy's ``csr_matvecs``, the kernel of
    ``csr_array @ dense``, without the matrix object, its checks and a fresh result
    (a third of the update's time at 1000x1000); the public product if it moves.
    """
    out.fill(0.0)
    if _csr_matvecs is not None:
        _csr_matvecs(out.shape[0], dense.shape[0], dense.shape[1], indptr, indices, data, dense,
                     out)
    else:  # pragma: no cover - scipy without the private kernel
        shape = (out.shape[0], dense.shape[0])
        out += sparse.csr_array((data, indices, indptr), shape=shape) @ dense


def _growing_buffer(buffer: np.ndarray | None, n_rows: int, width: int) -> np.ndarray:
    """A reused float64 buffer of at least ``n_rows`` rows (fresh ones cost page faults)."""
    if buffer is None or buffer.shape[0] < n_rows:
        buffer = np.empty((n_rows, width))
    return buffer




class DenseStatistics:
    """The statistics of ``B`` dense tables of one model, in both layouts, and their two sides.

    Parameters
    ----------
    family : EntryFamily or LatentBlockModel
        The observed-data family (:class:`~lbm_bench.models.observed.EntryFamily`): the
        model's statistics, with the missing entries' channels when the tables have masks
        (a model: complete tables).
    tables : ndarray of shape (B, n_rows, n_cols), or a sequence of B dense tables
    sides : tuple
        The model's parts of the row and column steps (:meth:`Side.set_model` arguments).
    masks : sequence of B observed masks (bool arrays) or None
        None: every entry of every table is observed.
    """

    exact = False

    def __init__(self, family: Any, tables: Any, sides: tuple[tuple, tuple],
                 masks: Any = None) -> None:
        if not isinstance(family, EntryFamily):
            family = EntryFamily(family, False)
        if not isinstance(tables, np.ndarray):
            tables = np.stack([np.asarray(t) for t in tables])
        B, n, d = tables.shape
        p = family.n_stats
        masks = [None] * B if masks is None else list(masks)
        # two layouts of the statistics, filled table by table (no (B, p, n, d) temporary)
        self.by_col = np.empty((B, d, p, n))  # by_col[b, j, q, i] = T_q(X_b)[i, j]
        self.by_row = np.empty((B, n, p, d))  # by_row[b, i, q, j] = T_q(X_b)[i, j]
        for b, table in enumerate(tables):
            if family.incomplete:  # the mask channels, written in the row layout directly
                family.fill_dense(table, masks[b], self.by_row[b])
                self.by_col[b] = self.by_row[b].transpose(2, 1, 0)
                continue
            stats = family.dense_statistics(table, masks[b])  # (p, n, d)
            self.by_row[b] = stats.transpose(1, 0, 2)
            self.by_col[b] = stats.transpose(2, 0, 1)
            del stats
        self.tables = tables
        self.masks = masks
        self.shape = (B, n, d)
        self.rows = DenseSide(self.by_col, *sides[0], per_statistic=family.incomplete)
        self.cols = DenseSide(self.by_row, *sides[1], per_statistic=family.incomplete)

    @property
    def stats(self) -> np.ndarray:
        """(B, p, n_rows, n_cols) view of the sufficient statistics."""
        return self.by_row.transpose(0, 2, 1, 3)

    def entrywise_scores(self, sweeper: Any) -> tuple[np.ndarray, np.ndarray]:
        """Class scores of rows and columns with the other labels integrated out entry by
        entry (see :func:`lbm_bench.inference.classifier.initial_column_labels`), in
        float32 by bands of rows: (B, n_rows, g) and (B, n_cols, m)."""
        model = sweeper.model
        B, p, n, d = self.stats.shape
        g, m = model.block_shape
        # float32: these scores only choose starts, and float32 exp is several times faster
        eta = sweeper.eta.astype(np.float32)
        A = sweeper.log_partition.astype(np.float32)
        A0 = None if sweeper.count_partition is None else sweeper.count_partition.astype(np.float32)
        exposure = None
        if sweeper.row_weights is not None:
            exposure = np.outer(sweeper.row_weights, sweeper.col_weights).astype(np.float32)
        scores = EntrywiseScores(sweeper, (B, n, d))
        # a lookup of per-value log-densities: complete integer tables without effects (with missing
        # entries the statistics hold mask channels that the values alone do not give)
        complete = all(mask is None for mask in self.masks) and A0 is None
        values = _distinct_values(self.tables) if exposure is None and complete else None
        if values is not None:  # the log-densities of the few values, looked up entry by entry
            # (p, 1, 1, V)
            stats = model.sufficient_statistics(values[None]).astype(np.float32)[:, None]
            scores.set_lookup(values[0], _log_densities(stats, eta, A, None))
        for rows in scores.bands():
            if values is not None:
                scores.add_band_lookup(rows, self.tables[:, rows])
                continue
            stats = self.stats[:, :, rows].astype(np.float32)  # (B, p, r, d)
            exposed = None if exposure is None else exposure[rows]
            dens = _log_densities(stats.transpose(1, 0, 2, 3), eta, A, exposed)
            if A0 is not None:  # the block mechanism's log(1 - q) of every entry
                dens -= A0[:, :, None, None, None]
            scores.add_band(rows, dens)
        return scores.result()


#: Largest range of the values of an integer table whose entrywise log-densities are
#: computed once per value and looked up (:meth:`EntrywiseScores.set_lookup`).
LOOKUP_MAX_VALUES = 4096


def _distinct_values(tables: np.ndarray) -> np.ndarray | None:
    """``lo .. hi``, the range of an integer table's values, when it is at most
    :data:`LOOKUP_MAX_VALUES` wide; None otherwise (or for real tables)."""
    if not np.issubdtype(tables.dtype, np.integer) or tables.size == 0:
        return None
    lo, hi = int(tables.min()), int(tables.max())
    return np.arange(lo, hi + 1) if hi - lo < LOOKUP_MAX_VALUES else None


def _log_densities(stats: np.ndarray, eta: np.ndarray, A: np.ndarray,
                   exposure: np.ndarray | None) -> np.ndarray:
    """Class-major float32 log-densities ``dens[k, l]`` (without the base measure) of
    entries whose statistics are ``stats`` (p, ...): one axpy per statistic."""
    p, g, m = eta.shape
    dens = np.empty((g, m) + stats.shape[1:], dtype=np.float32)
    for k in range(g):
        for l in range(m):
            np.multiply(stats[0], eta[0, k, l], out=dens[k, l])
            for q in range(1, p):
                dens[k, l] += eta[q, k, l] * stats[q]
            if exposure is None:
                dens[k, l] -= A[k, l]
            else:
                dens[k, l] -= A[k, l] * exposure
    return dens


class EntrywiseScores:
    """Class scores of rows and columns with the other labels integrated out entry by entry,
    accumulated band of rows by band of rows from the entries' log-densities (what a
    storage's ``entrywise_scores`` computes; see
    :func:`lbm_bench.inference.classifier.initial_column_labels`).

    Parameters
    ----------
    sweeper : Sweeper
        Its priors and block shape.
    shape : (B, n_rows, n_cols)
    """

    def __init__(self, sweeper: Any, shape: tuple[int, int, int]) -> None:
        B, n, d = shape
        g, m = sweeper.model.block_shape
        self.log_pi = sweeper.log_row_prior.astype(np.float32)
        self.log_rho = sweeper.log_col_prior.astype(np.float32)
        self.row_scores = np.empty((B, n, g))
        self.col_scores = np.zeros((B, d, m))
        self.chunk = max(1, _MARGINAL_CHUNK_BYTES // (4 * B * d * (g * m + max(g, m))))
        self.n_rows = n

    def bands(self) -> list[slice]:
        """The bands of rows whose log-densities fit in about 16 MiB of float32."""
        return [
            slice(start, min(start + self.chunk, self.n_rows))
            for start in range(0, self.n_rows, self.chunk)
        ]

    def add_band(self, rows: slice, dens: np.ndarray) -> None:
        """Add a band's class-major log-densities ``dens[k, l]`` of shape (g, m, B, r, d),
        float32 (overwritten): the column label integrated out for the rows, the row
        label for the columns."""
        g, m = dens.shape[:2]
        for k in range(g):
            scores = _logsumexp_first(dens[k] + self.log_rho[:, None, None, None])  # (B, r, d)
            self.row_scores[:, rows, k] = scores.sum(axis=-1, dtype=np.float64)
        dens += self.log_pi[:, None, None, None, None]
        for l in range(m):
            scores = _logsumexp_first(np.ascontiguousarray(dens[:, l]))
            self.col_scores[:, :, l] += scores.sum(axis=1, dtype=np.float64)

    def set_lookup(self, lowest: int, dens: np.ndarray) -> None:
        """Per-value log-densities ``dens[k, l]`` of shape (g, m, 1, 1, V) of the values
        ``lowest .. lowest + V - 1``: the row and column terms of :meth:`add_band` are
        computed once per value, by the same float32 operations, so that looking them up
        entry by entry gives the same scores bit for bit."""
        g, m = dens.shape[:2]
        self.lowest = lowest
        self.row_terms = [
            _logsumexp_first(dens[k] + self.log_rho[:, None, None, None])[0, 0] for k in range(g)
        ]
        dens += self.log_pi[:, None, None, None, None]
        self.col_terms = [
            _logsumexp_first(np.ascontiguousarray(dens[:, l]))[0, 0] for l in range(m)
        ]

    def add_band_lookup(self, rows: slice, values: np.ndarray) -> None:
        """:meth:`add_band` for a band of an integer table, ``values`` (B, r, d), from the
        terms of :meth:`set_lookup`."""
        index = values - self.lowest if self.lowest else values
        for k, terms in enumerate(self.row_terms):
            self.row_scores[:, rows, k] = terms[index].sum(axis=-1, dtype=np.float64)
        for l, terms in enumerate(self.col_terms):
            self.col_scores[:, :, l] += terms[index].sum(axis=1, dtype=np.float64)

    def result(self) -> tuple[np.ndarray, np.ndarray]:
        """The row scores (B, n_rows, g) and column scores (B, n_cols, m), priors added."""
        return self.row_scores + self.log_pi, self.col_scores + self.log_rho


def _logsumexp_first(values: np.ndarray) -> np.ndarray:
    """``log(sum(exp(values), axis=0))``, shifted by the maximum; overwrites ``values``.

    Reducing over the first axis keeps every operation contiguous (reductions
    over a short last axis are several times slower in numpy).
    """
    top = values.max(axis=0)
    values -= top
    np.exp(values, out=values)
    total = values.sum(axis=0)
    np.log(total, out=total)
    total += top
    return total
