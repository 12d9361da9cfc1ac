"""Batched conditional label steps shared by the MAP classifier and the Gibbs sampler.

The engine works on a stack of ``B`` tables drawn from one model and ``C``
label configurations per table (starts of the MAP, or Gibbs chains). For the
row step, the block sums ``S_p = T_p(X) @ onehot(w)`` of every configuration
come out of one matrix product covering all sufficient statistics; the column
step is the same computation on the transposed table. Nothing here depends on
the family beyond the exponential-family interface of :mod:`lbm_bench.models.families`.

Public shapes (used by :mod:`lbm_bench.inference.classifier`): ``z`` is (B, C, n_rows),
``w`` is (B, C, n_cols), logits are (B, C, n_rows, g) or (B, C, n_cols, m).

Internal layout
---------------
The statistics are stored twice, "other index first": ``by_col`` of shape
(B, n_cols, p, n_rows) holds, for every column ``j``, its ``p`` statistic
vectors over the rows (so that column ``j`` of every ``T_p`` is one contiguous
row), and ``by_row`` of shape (B, n_rows, p, n_cols) the same for rows. Block
sums are kept class-major, (B, C, o, p, n_own), where ``o`` counts the classes
of the other side, and logits are computed class-major, (B, C, k, n_own): the
categorical sampler then works on contiguous vectors of length ``n_own``.

Incremental block sums (:class:`BlockSums`)
-------------------------------------------
Between two Gibbs sweeps only a few labels change. :class:`BlockSums` keeps the
block sums of every chain and, for the labels that moved (column ``j`` of chain
``c`` from class ``l`` to ``l'``), subtracts column ``j`` of ``T_p`` from
``S[c, l]`` and adds it to ``S[c, l']``: products of sparse +-1 matrices with
the statistics (scipy CSR). It falls
back to the full product when so many labels changed that the product is
cheaper (cost model: :data:`INDEX_UPDATE_COST`, :data:`MIN_FULL_WORK`), and
recomputes the sums in full every :data:`RECOMPUTE_EVERY` updates so that
float sums (Gaussian blocks) cannot drift. Integer statistics (Poisson,
Bernoulli) are summed exactly in float64 by both routes, so the block sums,
hence the logits, are identical bit for bit; the logits are computed from the
block sums by the same code (:meth:`_Side.logits`) whichever route produced
them.

Sparse tables (storage strategy)
--------------------------------
:class:`Sweeper` looks at its tables once: dense arrays get the layout above;
``scipy.sparse`` tables (Bernoulli and Poisson, one statistic: the entry) get
:class:`_SparseSide` steps, which hold each table as CSR twice, ``X`` and
``X^T``. The full block sums are the sparse products ``X @ onehot(w)`` and
``X^T @ onehot(z)`` (``O(nnz C o)``); an index update adds and subtracts the
rows of the other-major CSR for the labels that moved (a sparse +-1 matrix
times it, ``O(nnz of the moved rows)``) and scatters the result into the sums.
The zeros need no term of their own: the logits' ``A_kl`` times the class
masses counts every entry of a block, zero or not. Sums of integers are exact
in float64 by every route, so the sparse and dense engines give the same block
sums, logits and draws on the same table. Nothing else in the classifier or
the sampler sees the storage.
"""

from __future__ import annotations

import numpy as np
from scipy import sparse

from lbm_bench.models.families import LatentBlockModel

try:  # the kernel of ``csr_array @ dense`` (scipy >= 0.14), called directly by index updates
    from scipy.sparse._sparsetools import csr_matvecs as _csr_matvecs
except ImportError:  # pragma: no cover - see _csr_times_dense
    _csr_matvecs = None

__all__ = [
    "BlockSums",
    "Sweeper",
    "sample_categorical",
    "smallest_uint",
    "RECOMPUTE_EVERY",
    "INDEX_UPDATE_COST",
    "INDEX_MAX_FRACTION",
    "MIN_FULL_WORK",
    "SINGLE_STAT_FACTOR",
    "SPARSE_UPDATE_COST",
    "SPARSE_MIN_FULL_WORK",
]

#: Incremental block sums are recomputed in full after this many updates (one per sweep).
RECOMPUTE_EVERY = 50
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
#: Sparse tables: cost of one stored entry moved by an index update (sparse-sparse
#: product and scatter) relative to one multiply-add of the full product
#: ``X @ onehot`` (``C o`` per stored entry). The index update is used while
#: ``2 * entries_moved * SPARSE_UPDATE_COST <= B C o nnz``.
SPARSE_UPDATE_COST = 4.0
#: Sparse tables whose full product is below this many multiply-adds (``C o nnz``)
#: always take the full product.
SPARSE_MIN_FULL_WORK = 200_000


def smallest_uint(n_values: int) -> np.dtype:
    """Smallest unsigned integer dtype holding ``0 .. n_values - 1``."""
    for dtype in (np.uint8, np.uint16, np.uint32):
        if n_values - 1 <= np.iinfo(dtype).max:
            return np.dtype(dtype)
    return np.dtype(np.uint64)


def _onehot_t(labels: np.ndarray, n_classes: int) -> np.ndarray:
    """(B, C, n) labels -> (B, C, n_classes, n) float64 indicators ``labels[b, c, i] == k``."""
    out = np.empty(labels.shape[:-1] + (n_classes, labels.shape[-1]))
    classes = np.arange(n_classes, dtype=labels.dtype if labels.dtype.kind in "iu" else None)
    np.equal(labels[..., None, :], classes[:, None], out=out, casting="unsafe")
    return out


def _class_mass(labels: np.ndarray, n_classes: int, weights: np.ndarray | None) -> np.ndarray:
    """(B, C, n) labels -> (B, C, n_classes) counts (or sums of weights) per class."""
    B, C, n = labels.shape
    flat = (np.arange(B * C)[:, None] * n_classes + labels.reshape(B * C, n)).ravel()
    w = None if weights is None else np.broadcast_to(weights, (B * C, n)).ravel()
    mass = np.bincount(flat, weights=w, minlength=B * C * n_classes)
    return mass.reshape(B, C, n_classes).astype(np.float64)


def _sample_class_major(logits: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Inverse-CDF draws from class-major logits (..., k, n); ``u`` (..., n) uniforms.

    Overwrites ``logits``. Elementwise the same arithmetic as
    :func:`sample_categorical` (max shift, exp, running sum, ``u * total``,
    count of CDF values ``<= u * total``), so both give the same labels.
    Returns the smallest unsigned dtype.
    """
    k = logits.shape[-2]
    logits -= logits.max(axis=-2, keepdims=True)
    np.exp(logits, out=logits)
    for r in range(1, k):  # np.cumsum along a middle axis is ~10x slower
        logits[..., r, :] += logits[..., r - 1, :]
    threshold = u * logits[..., k - 1, :]
    # cdf is non-decreasing, so counting the first k - 1 entries is min(count, k - 1)
    return (logits[..., : k - 1, :] <= threshold[..., None, :]).sum(axis=-2, dtype=smallest_uint(k))


def sample_categorical(logits: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Draw one label per row of unnormalised log-probabilities ``logits`` (..., k).

    Inverse-CDF sampling with one uniform per draw, so the draws are a fixed
    function of the uniforms (the same random stream gives the same labels).
    Returns int64 labels.
    """
    class_major = np.array(np.moveaxis(logits, -1, -2), dtype=np.float64, order="C")
    u = rng.random(logits.shape[:-1])
    return _sample_class_major(class_major, u).astype(np.int64)


class _Side:
    """Everything one conditional step (rows or columns) needs, class-major."""

    def __init__(self, stats: np.ndarray, *model: np.ndarray | None) -> None:
        # stats (B, n_other, p, n_own); model: the arguments of _set_model
        self.stats = stats
        self.n_tables, self.n_other, self.n_stats, self.n_own = stats.shape
        self._set_model(*model)

    def _set_model(
        self,
        eta: np.ndarray,
        log_partition: np.ndarray,
        log_prior: np.ndarray,
        own_weights: np.ndarray | None,
        other_weights: np.ndarray | None,
    ) -> None:
        """The model's part of the step (dense and sparse): eta (p, k, o), log_partition (k, o)."""
        p, k, o = eta.shape
        self.n_classes, self.n_other_classes = k, o
        self.eta = np.ascontiguousarray(eta.transpose(1, 2, 0).reshape(k, o * p))  # [k, (o, p)]
        self.log_partition_t = np.ascontiguousarray(log_partition.T)  # (o, k)
        self.log_prior = log_prior[:, None]
        self.own_weights = own_weights
        self.other_weights = other_weights

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
        onehot = _onehot_t(other, o).reshape(B, C * o, self.n_other)
        # 2-D BLAS products per table (numpy's stacked matmul does not call BLAS
        # for a stack and was 4-5x slower on the calibration's many small tables).
        if n * self.n_other * C * o < 2**20:
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

    def logits(self, sums: np.ndarray, other: np.ndarray) -> np.ndarray:
        """Class-major logits (B, C, k, n_own) from block sums and the other side's labels."""
        B, C, o, p, n = sums.shape
        logits = np.matmul(self.eta, sums.reshape(B * C, o * p, n)).reshape(B, C, self.n_classes, n)
        penalty = _class_mass(other, o, self.other_weights) @ self.log_partition_t  # (B, C, k)
        if self.own_weights is None:
            logits -= penalty[..., None]
        else:
            logits -= self.own_weights * penalty[..., None]
        logits += self.log_prior
        return logits


class _SparseSide(_Side):
    """One conditional step on sparse tables (one statistic: the entry).

    ``own[b]`` is table ``b`` as CSR with the own items as rows (n_own, n_other),
    ``other[b]`` the same table with the other items as rows (n_other, n_own);
    ``model`` is the model's part, as for the dense step (:meth:`_Side._set_model`).
    """

    def __init__(self, own: list, other: list, *model: np.ndarray | None) -> None:
        self.own, self.other = own, other
        self.n_tables = len(own)
        self.n_own, self.n_other = own[0].shape
        self.n_stats = 1
        self._set_model(*model)
        self.nnz = sum(int(t.nnz) for t in own)
        #: the tables' other-major CSR stacked (B n_other, n_own), for index updates
        self.stacked_other = other[0] if len(other) == 1 else sparse.vstack(other, format="csr")
        self.other_row_nnz = np.diff(self.stacked_other.indptr)
        #: binary tables: the gathered entries are counted, without weights
        self.binary = bool(np.all(self.stacked_other.data == 1.0))

    def full_work(self, n_tables: int, n_configs: int) -> int:
        return n_configs * self.n_other_classes * self.nnz

    def always_full(self, full_work: int) -> bool:
        return full_work < SPARSE_MIN_FULL_WORK

    def full_sums(self, other: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        B, C, n_other = other.shape
        o, n = self.n_other_classes, self.n_own
        if out is None:
            out = np.empty((B, C, o, 1, n))
        flat = out.reshape(B, C * o, n)
        classes = np.arange(o, dtype=other.dtype)
        onehot = np.empty((n_other, C, o))
        for b in range(B):
            np.equal(other[b].T[:, :, None], classes, out=onehot, casting="unsafe")
            flat[b] = (self.own[b] @ onehot.reshape(n_other, C * o)).T
        return out

    def index_update(self, sums: np.ndarray, old: np.ndarray, new: np.ndarray, changed: np.ndarray,
                     max_work: float | None) -> int | None:
        """Move the rows of the other-major tables for the changed labels; returns the stored
        entries moved, or None (nothing done) when that exceeds ``max_work``.

        The stored entries of the changed positions are gathered and summed into the
        affected ``(chain, class)`` rows of the sums by ``np.bincount`` (added to the
        new class, subtracted from the old one), in chunks of about
        :data:`_GATHER_CHUNK` entries: integer sums, exact in float64.
        """
        B, C, o, _, n = sums.shape
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
        bounds = np.searchsorted(ends, np.arange(_GATHER_CHUNK, ends[-1] if ends.size else 0, _GATHER_CHUNK))
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


#: Stored entries gathered at once by a sparse index update (bounds its temporaries).
_GATHER_CHUNK = 1 << 21


def _ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Concatenation of ``arange(s, s + n)`` for the pairs ``(s, n)``."""
    total = int(lengths.sum())
    shift = np.repeat(starts - (np.cumsum(lengths) - lengths), lengths)
    return shift + np.arange(total, dtype=np.int64)


def _as_csr_float(table) -> sparse.csr_array:
    return sparse.csr_array(table, dtype=np.float64)


class Sweeper:
    """Precomputed statistics of ``B`` tables for conditional label steps.

    Parameters
    ----------
    model : LatentBlockModel
        The model with its true parameters.
    tables : ndarray of shape (B, n_rows, n_cols), or a sequence of B tables
        Tables, already validated for the model's family (``model.check_table``).
        scipy.sparse tables (Bernoulli, Poisson) select the sparse engine, which
        never densifies them.

    Attributes
    ----------
    is_sparse : bool
        Whether the tables are held as scipy.sparse (chosen once, here).
    """

    def __init__(self, model: LatentBlockModel, tables) -> None:
        self.model = model
        self.g, self.m = model.block_shape
        self.eta = model.natural_parameters  # (p, g, m)
        self.log_partition = model.log_partition  # (g, m)
        self.log_row_prior = np.log(model.row_proportions)
        self.log_col_prior = np.log(model.col_proportions)
        self._base_measure: np.ndarray | None = None
        if not isinstance(tables, np.ndarray) and any(sparse.issparse(t) for t in tables):
            self._init_sparse(list(tables))
            return
        if not isinstance(tables, np.ndarray):
            tables = np.stack([np.asarray(t) for t in tables])
        self.is_sparse = False
        B, n, d = tables.shape
        self.n_rows, self.n_cols = n, d
        self._n_tables = B
        p = model.n_stats
        # two layouts of the statistics, filled table by table (no (B, p, n, d) temporary)
        self.by_col = np.empty((B, d, p, n))  # by_col[b, j, q, i] = T_q(X_b)[i, j]
        self.by_row = np.empty((B, n, p, d))  # by_row[b, i, q, j] = T_q(X_b)[i, j]
        for b, table in enumerate(tables):
            stats = model.sufficient_statistics(table)  # (p, n, d)
            self.by_row[b] = stats.transpose(1, 0, 2)
            self.by_col[b] = stats.transpose(2, 0, 1)
        self.row_weights = model.row_weights(n)
        self.col_weights = model.col_weights(d)
        self._tables = tables  # for the base measure, computed when first needed
        self.rows = _Side(
            self.by_col, self.eta, self.log_partition, self.log_row_prior,
            self.row_weights, self.col_weights,
        )
        self.cols = _Side(
            self.by_row, self.eta.swapaxes(1, 2), self.log_partition.T, self.log_col_prior,
            self.col_weights, self.row_weights,
        )

    @classmethod
    def for_table(cls, model: LatentBlockModel, X) -> Sweeper:
        """A Sweeper of the single table ``X`` (dense ndarray or scipy.sparse)."""
        return cls(model, [X] if sparse.issparse(X) else np.asarray(X)[None])

    def _init_sparse(self, tables: list) -> None:
        if self.model.n_stats != 1 or not all(sparse.issparse(t) for t in tables):
            raise TypeError(
                "sparse tables need a one-statistic family (bernoulli, poisson) and every table sparse"
            )
        self.is_sparse = True
        self.n_rows, self.n_cols = tables[0].shape
        self._n_tables = len(tables)
        self.by_col = self.by_row = None
        by_rows = [_as_csr_float(t) for t in tables]  # (n_rows, n_cols)
        by_cols = [t.T.tocsr() for t in by_rows]  # (n_cols, n_rows)
        self.row_weights = self.model.row_weights(self.n_rows)
        self.col_weights = self.model.col_weights(self.n_cols)
        self._tables = tables
        self.sparse_rows, self.sparse_cols = by_rows, by_cols
        self.rows = _SparseSide(
            by_rows, by_cols, self.eta, self.log_partition, self.log_row_prior,
            self.row_weights, self.col_weights,
        )
        self.cols = _SparseSide(
            by_cols, by_rows, self.eta.swapaxes(1, 2), self.log_partition.T, self.log_col_prior,
            self.col_weights, self.row_weights,
        )

    @property
    def base_measure(self) -> np.ndarray:
        """``log h(X_b)`` of every table, shape (B,): the label-free term of the likelihood."""
        if self._base_measure is None:
            self._base_measure = np.array([self.model.log_base_measure(t) for t in self._tables])
        return self._base_measure

    @property
    def n_tables(self) -> int:
        return self._n_tables

    def _dense_only(self) -> None:
        if self.is_sparse:
            raise TypeError("a sparse Sweeper holds no dense statistics (use sparse_rows / sparse_cols)")

    @property
    def stats(self) -> np.ndarray:
        """(B, p, n_rows, n_cols) view of the sufficient statistics (dense tables)."""
        self._dense_only()
        return self.by_row.transpose(0, 2, 1, 3)

    @property
    def stats_t(self) -> np.ndarray:
        """(B, p, n_cols, n_rows) view of the transposed sufficient statistics (dense tables)."""
        self._dense_only()
        return self.by_col.transpose(0, 2, 1, 3)

    def row_logits(self, w: np.ndarray) -> np.ndarray:
        """Unnormalised ``log p(z_i = k | w, x_i)``: (B, C, n_rows, g) from w of (B, C, n_cols)."""
        return self.rows.logits(self.rows.full_sums(w), w).swapaxes(-1, -2)

    def col_logits(self, z: np.ndarray) -> np.ndarray:
        """Unnormalised ``log p(w_j = l | z, x^j)``: (B, C, n_cols, m) from z of (B, C, n_rows)."""
        return self.cols.logits(self.cols.full_sums(z), z).swapaxes(-1, -2)

    def complete_log_likelihood(
        self, z: np.ndarray, w: np.ndarray, *, base_measure: bool = True
    ) -> np.ndarray:
        """``log p(X_b, z_bc, w_bc)`` for every table and configuration: (B, C).

        ``base_measure=False`` leaves out ``log h(X_b)``, the same for every
        configuration of a table (enough to compare configurations)."""
        B, C, n = z.shape
        m, p = self.m, self.model.n_stats
        sums = self.rows.full_sums(w).reshape(B, C, m * p, n)  # [b, c, (l, q), i]
        onehot_z = _onehot_t(z, self.g).swapaxes(-1, -2)  # (B, C, n, g)
        totals = np.matmul(sums, onehot_z).reshape(B, C, m, p, self.g)  # [b, c, l, q, k]
        row_mass = _class_mass(z, self.g, self.row_weights)
        col_mass = _class_mass(w, self.m, self.col_weights)
        exposure = row_mass[..., :, None] * col_mass[..., None, :]
        value = np.einsum("bclpk,pkl->bc", totals, self.eta)
        value -= np.einsum("bckl,kl->bc", exposure, self.log_partition)
        value += self.log_row_prior[z].sum(-1) + self.log_col_prior[w].sum(-1)
        return value + self.base_measure[:, None] if base_measure else value

    def sample_rows(self, sums: BlockSums, rng: np.random.Generator) -> np.ndarray:
        """Draw z (B, C, n_rows), smallest unsigned dtype, given the row-step block sums."""
        logits = self.rows.logits(sums.sums, sums.labels)
        return _sample_class_major(logits, rng.random(logits.shape[:2] + logits.shape[3:]))

    def sample_cols(self, sums: BlockSums, rng: np.random.Generator) -> np.ndarray:
        """Draw w (B, C, n_cols), smallest unsigned dtype, given the column-step block sums."""
        logits = self.cols.logits(sums.sums, sums.labels)
        return _sample_class_major(logits, rng.random(logits.shape[:2] + logits.shape[3:]))


def _csr_rows(rows: np.ndarray, n_rows: int) -> tuple[np.ndarray, np.ndarray]:
    """(order, indptr) of entries in rows ``rows``: sorted stably, duplicates kept."""
    order = np.argsort(rows, kind="stable")
    indptr = np.zeros(n_rows + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n_rows), out=indptr[1:])
    return order, indptr


def _csr_times_dense(
    indptr: np.ndarray, indices: np.ndarray, data: np.ndarray, dense: np.ndarray, out: np.ndarray
) -> None:
    """``out[...] = A @ dense``, ``A = (data, indices, indptr)`` CSR; C-contiguous float64.

    Rows accumulated from zero in CSR order by scipy's ``csr_matvecs``, the kernel of
    ``csr_array @ dense``, without the matrix object, its checks and a fresh result
    (a third of the update's time at 1000x1000); the public product if it moves.
    """
    out.fill(0.0)
    if _csr_matvecs is not None:
        _csr_matvecs(out.shape[0], dense.shape[0], dense.shape[1], indptr, indices, data, dense, out)
    else:  # pragma: no cover - scipy without the private kernel
        shape = (out.shape[0], dense.shape[0])
        out += sparse.csr_array((data, indices, indptr), shape=shape) @ dense


def _growing_buffer(buffer: np.ndarray | None, n_rows: int, width: int) -> np.ndarray:
    """A reused float64 buffer of at least ``n_rows`` rows (fresh ones cost page faults)."""
    if buffer is None or buffer.shape[0] < n_rows:
        buffer = np.empty((n_rows, width))
    return buffer


class BlockSums:
    """Block sums of one conditional step for every chain, kept in step with labels.

    ``BlockSums(sweeper, "rows")`` holds ``T(X) @ onehot(w)`` for the row step
    (it follows the column labels ``w``); ``"cols"`` holds ``T(X)^T @ onehot(z)``.

    An index update moves, for every changed label (position ``j`` of chain
    ``c`` from class ``l`` to ``l'``), the statistics of position ``j`` from
    ``sums[c, l]`` to ``sums[c, l']``. Two kernels:

    - ``"sparse"`` (default): products of scipy CSR matrices with the
      statistics, on one thread. (Splitting the rows over two threads was
      slower: after each multi-threaded BLAS call, OpenBLAS's worker thread
      keeps spinning on the second core for a while.) Directly, ``sums += D @ stats`` with ``D`` holding
      +1 at ``((c, l'), j)`` and -1 at ``((c, l), j)``: ``2 K`` row additions
      for ``K`` changed labels. When the changes fall into few ``(c, l, l')``
      moves (``U`` of them, at most ``C o (o - 1)``), in two stages: the
      statistics of each move are summed first (``K`` row additions), then
      each move sum is added to ``sums[c, l']`` and subtracted from
      ``sums[c, l]`` (``2 U``);
    - ``"dense"``: gathers the statistics of the ``K'`` positions changed in at
      least one chain and multiplies them by the dense +-1 difference of
      one-hots (BLAS): ``K' / n_other`` of the full product, multi-threaded,
      but ``C o / 2`` times more multiply-adds than the sparse kernel. Kept
      for comparison (``python scripts/benchmarks/bench_gibbs_map.py --threshold``).

    Parameters
    ----------
    sweeper : Sweeper
    side : {"rows", "cols"}
    incremental : bool, default=True
        Update by index when few labels changed; otherwise always recompute
        the full product (the baseline).
    recompute_every : int, optional
        Every ``recompute_every``-th update after a full product is a full
        product again (default :data:`RECOMPUTE_EVERY`: updates 0, 50, 100, ...
        when no fallback intervenes; never for sparse tables, whose integer
        sums are exact).
    max_changed : int, optional
        Largest number of changed labels handled by an index update; more fall
        back to the full product. Default: the cost model (sparse kernel: the
        index update's row additions times :data:`INDEX_UPDATE_COST` against
        the full product's ``B C o n_other`` row multiply-adds; dense kernel:
        at most ``INDEX_MAX_FRACTION * n_other`` changed positions), and
        always the full product when it is below :data:`MIN_FULL_WORK` (times
        :data:`SINGLE_STAT_FACTOR` for one statistic). A
        value replaces both the cost model and that cut-off (tests use it to
        force a route); -1 means always the full product.
    kernel : {"sparse", "dense"}, default="sparse"

    Attributes
    ----------
    sums : ndarray of shape (B, C, o, p, n_own)
    labels : ndarray of shape (B, C, n_other)
        The labels the sums correspond to (a private copy).
    n_full : int
        Updates done by a full product (all reasons).
    n_recompute, n_fallback : int
        Full products done because ``recompute_every`` updates had passed, or
        because too many labels had changed.
    n_index, n_unchanged : int
        Updates done by index update, and updates with no changed label.
    n_changed : int
        Labels moved by index updates, in all.
    n_row_adds : int
        Row additions (of ``p n_own`` entries) done by sparse index updates.
    """

    def __init__(
        self,
        sweeper: Sweeper,
        side: str,
        *,
        incremental: bool = True,
        recompute_every: int | None = None,
        max_changed: int | None = None,
        kernel: str = "sparse",
    ) -> None:
        if side not in ("rows", "cols"):
            raise ValueError(f"side must be 'rows' or 'cols', got {side!r}")
        if kernel not in ("dense", "sparse"):
            raise ValueError(f"kernel must be 'dense' or 'sparse', got {kernel!r}")
        self.side = sweeper.rows if side == "rows" else sweeper.cols
        self.incremental = incremental
        self.recompute_every = RECOMPUTE_EVERY if recompute_every is None else recompute_every
        self.max_changed = max_changed
        self.kernel = kernel
        self.sums: np.ndarray | None = None
        self.labels: np.ndarray | None = None
        self.full_work = 0  # B C o n_other: row multiply-adds of the full product
        self.always_full = False
        self.since_full = 0
        self.n_full = self.n_recompute = self.n_fallback = 0
        self.n_index = self.n_unchanged = self.n_changed = self.n_row_adds = 0
        self._delta = self._summed = None  # buffers of the sparse kernel, reused
        # the update kernel, chosen once by the storage of the tables; a plain function
        # (a bound method on self is a reference cycle: it kept the tables' statistics alive)
        if isinstance(self.side, _SparseSide):
            self._index_update = type(self)._table_sparse_update
            if recompute_every is None:  # integer sums cannot drift: no periodic recompute
                self.recompute_every = np.inf
        elif kernel == "dense":
            self._index_update = type(self)._dense_update
        else:
            self._index_update = type(self)._sparse_update

    def update(self, labels: np.ndarray) -> str:
        """Bring the sums in step with ``labels`` (B, C, n_other); returns the route taken:
        ``"full"``, ``"recompute"`` (periodic full product), ``"fallback"`` (full
        product because many labels changed), ``"index"`` or ``"unchanged"``."""
        if self.sums is None:
            return self._first(labels)
        if not self.incremental or self.always_full:
            return self._full(labels, "full")
        self.since_full += 1
        if self.since_full >= self.recompute_every:
            self.n_recompute += 1
            return self._full(labels, "recompute")
        changed = labels != self.labels
        n_changed = int(np.count_nonzero(changed))
        if n_changed == 0:
            self.n_unchanged += 1
            return "unchanged"
        if self.max_changed is not None and n_changed > self.max_changed:
            self.n_fallback += 1
            return self._full(labels, "fallback")
        done = self._index_update(self, labels, changed)
        if not done:
            self.n_fallback += 1
            return self._full(labels, "fallback")
        self.labels[...] = labels
        self.n_index += 1
        self.n_changed += n_changed
        return "index"

    def _first(self, labels: np.ndarray) -> str:
        s = self.side
        B, C, _ = labels.shape
        self.full_work = s.full_work(B, C)
        self.always_full = s.always_full(self.full_work)
        if self.max_changed is not None:
            self.always_full = self.max_changed < 0
        self.labels = labels.copy()
        self.sums = s.full_sums(labels)
        return self._after_full("full")

    def _full(self, labels: np.ndarray, route: str) -> str:
        self.labels[...] = labels
        self.side.full_sums(labels, out=self.sums)
        return self._after_full(route)

    def _after_full(self, route: str) -> str:
        self.since_full = 0
        self.n_full += 1
        return route

    def _table_sparse_update(self, labels: np.ndarray, changed: np.ndarray) -> bool:
        """Sparse tables: move the changed positions' stored entries (see :class:`_SparseSide`)."""
        max_work = None if self.max_changed is not None else self.full_work / SPARSE_UPDATE_COST
        moved = self.side.index_update(self.sums, self.labels, labels, changed, max_work)
        if moved is None:
            return False
        self.n_row_adds += moved
        return True

    def _dense_update(self, labels: np.ndarray, changed: np.ndarray) -> bool:
        """``sums += (onehot(new) - onehot(old)) @ stats`` over the changed positions."""
        s = self.side
        positions = np.flatnonzero(changed.any(axis=(0, 1)))
        if self.max_changed is None and positions.size > INDEX_MAX_FRACTION * s.n_other:
            return False
        B, C, o, p, n = self.sums.shape
        k = positions.size
        diff = _onehot_t(labels[..., positions], o)
        diff -= _onehot_t(self.labels[..., positions], o)  # (B, C, o, k) of -1, 0, 1
        gathered = s.stats[:, positions].reshape(B, k, p * n)
        diff = diff.reshape(B, C * o, k)
        flat = self.sums.reshape(B, C * o, p * n)
        for b in range(B):  # one 2-D BLAS product per table (see _Side.full_sums)
            flat[b] += diff[b] @ gathered[b]
        return True

    def _sparse_update(self, labels: np.ndarray, changed: np.ndarray) -> bool:
        """``sums += D @ stats``, or ``D2 @ (D1 @ stats)`` through the sums of the
        (c, l, l') moves; products by :func:`_csr_times_dense` into reused buffers."""
        s = self.side
        B, C, o, p, n = self.sums.shape
        n_other, width = s.n_other, p * n
        flat = np.flatnonzero(changed)  # chain-major order
        k = flat.size
        chain_slot, j = np.divmod(flat, n_other)  # chain_slot = b * C + c for now
        old = self.labels.reshape(-1)[flat].astype(np.int64)
        new = labels.reshape(-1)[flat].astype(np.int64)
        position = j if B == 1 else chain_slot // C * n_other + j  # row of the stacked stats
        chain_slot *= o
        moves = (chain_slot + old) * o + new  # id of the move (c, l, l')
        counts = np.bincount(moves, minlength=B * C * o * o)
        used = np.flatnonzero(counts)
        u = used.size
        two_stage = k + 2 * u < 2 * k
        row_adds = k + 2 * u if two_stage else 2 * k
        if self.max_changed is None and row_adds * INDEX_UPDATE_COST > self.full_work:
            return False
        stats = s.stats.reshape(B * n_other, width)
        self._delta = delta = _growing_buffer(self._delta, B * C * o, width)
        if two_stage:
            # stage 1: the statistics of each move summed (moves sorted, chain-major within)
            order = np.argsort(moves, kind="stable")
            indptr = np.zeros(u + 1, dtype=np.int64)
            np.cumsum(counts[used], out=indptr[1:])
            self._summed = summed = _growing_buffer(self._summed, u, width)
            _csr_times_dense(indptr, position[order], np.ones(k), stats, summed[:u])
            # stage 2: each move sum added to its new class, subtracted from its old one
            order, indptr = _csr_rows(
                np.concatenate([used // (o * o) * o + used % o, used // o]), B * C * o
            )
            columns = np.tile(np.arange(u, dtype=np.int64), 2)[order]
            signs = np.repeat(np.array([1.0, -1.0]), u)[order]
            _csr_times_dense(indptr, columns, signs, summed[:u], delta[: B * C * o])
        else:
            order, indptr = _csr_rows(np.concatenate([chain_slot + new, chain_slot + old]), B * C * o)
            columns = np.tile(position, 2)[order]
            signs = np.repeat(np.array([1.0, -1.0]), k)[order]
            _csr_times_dense(indptr, columns, signs, stats, delta[: B * C * o])
        self.sums.reshape(B * C * o, width)[...] += delta[: B * C * o]
        self.n_row_adds += row_adds
        return True
