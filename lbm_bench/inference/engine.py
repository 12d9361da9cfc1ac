"""Batched conditional label steps shared by the MAP classifier and the Gibbs sampler.

The engine works on a stack of ``B`` tables drawn from one model and ``C``
label configurations per table (starts of the MAP, or Gibbs chains). For the
row step, the block sums ``S_p = T_p(X) @ onehot(w)`` of every configuration
come out of one matrix product covering all sufficient statistics; the column
step is the same computation on the transposed table. Nothing here depends on
the family beyond the exponential-family interface of :mod:`lbm_bench.models.base`.

Public shapes (used by :mod:`lbm_bench.inference.classifier`): ``z`` is (B, C, n_rows),
``w`` is (B, C, n_cols), logits are (B, C, n_rows, g) or (B, C, n_cols, m).
Block sums are kept class-major, (B, C, o, p, n_own), where ``o`` counts the
classes of the other side, and logits are computed class-major, (B, C, k, n_own):
the categorical sampler then works on contiguous vectors of length ``n_own``.

**The storage is chosen once.** :class:`Sweeper` wraps its tables in
:class:`~lbm_bench.models.data.TableData`, describes them once
(:class:`~lbm_bench.inference.kernels.TableLayout`) and builds the statistics of the
first registered kernel that accepts them (:mod:`lbm_bench.inference.kernels`, one
door for every storage's kernels): :class:`~lbm_bench.inference.dense_sums.DenseStatistics` (the
statistics twice, BLAS products),
:class:`~lbm_bench.inference.sparse_sums.SparseStatistics` (CSR twice, never
densified) or, for a family whose statistics are the indicators of a code
(``code_statistics``: categorical blocks) on tables above 1 MiB of statistics,
:class:`~lbm_bench.inference.code_sums.CodeStatistics` (the codes packed twice,
counted by words). Each offers its two sides (the row and column steps: full block
sums, index updates, the logits of :class:`~lbm_bench.inference.side.Side`) and
the entrywise scores of the classifier's starts. Nothing else in the classifier
or the sampler sees the storage.

**Missing entries** are the tables' too: a :class:`~lbm_bench.models.data.TableData`
with a mask gives the engine the statistics and natural parameters of the
observed-data family (:class:`~lbm_bench.models.observed.EntryFamily`: the
statistics zeroed at missing entries, plus the missing entries' channels), so the
block sums, index updates and logits below are the same code with one or two more
channels, and integer sums stay exact.

Incremental block sums (:class:`BlockSums`)
-------------------------------------------
Between two Gibbs sweeps only a few labels change. :class:`BlockSums` keeps the
block sums of every chain and, for the labels that moved, asks its side for an
index update (moving the changed positions' statistics between classes). It falls
back to the full product when so many labels changed that the product is cheaper
(the side's cost model), and recomputes the sums in full every
:data:`RECOMPUTE_EVERY` updates so that float sums (Gaussian blocks) cannot drift.
Integer statistics (Poisson, Bernoulli, categorical) are summed exactly in float64 by every
route, so the block sums, hence the logits, are identical bit for bit; the logits
are computed from the block sums by the same code (:meth:`Side.logits`) whichever
route produced them.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from lbm_bench._validation import check_choice
from lbm_bench.inference.dense_sums import DenseStatistics
from lbm_bench.inference.kernels import TableLayout, choose_kernel
from lbm_bench.inference.side import class_mass, onehot_t, sample_categorical, sample_class_major
from lbm_bench.models.base import LatentBlockModel
from lbm_bench.models.data import TableData
from lbm_bench.models.observed import EntryFamily

__all__ = ["RECOMPUTE_EVERY", "BlockSums", "Sweeper", "Uniforms", "sample_categorical"]

#: Incremental block sums are recomputed in full after this many updates (one per sweep).
RECOMPUTE_EVERY = 50


class Uniforms(Protocol):
    """A source of uniforms on [0, 1) for the label draws: a numpy Generator is one (one
    stream for all tables and chains); :class:`~lbm_bench.inference.chains.TableStreams`
    another (one stream per table)."""

    def random(self, shape: tuple[int, ...]) -> np.ndarray:
        """Uniforms on [0, 1) of ``shape`` (B, C, n_own)."""
        ...


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
    kernel : StorageKernel
        The storage's kernel, chosen once by the tables
        (:func:`~lbm_bench.inference.kernels.choose_kernel`).
    storage : DenseStatistics, SparseStatistics, CodeStatistics or a registered kernel's
        The tables' statistics in their storage, with the two sides ``rows`` and ``cols``.
    """

    def __init__(self, model: LatentBlockModel, tables: Any) -> None:
        self.model = model
        self.g, self.m = model.block_shape
        self.log_row_prior = np.log(model.row_proportions)
        self.log_col_prior = np.log(model.col_proportions)
        self._base_measure: np.ndarray | None = None
        self.data = None
        if isinstance(tables, np.ndarray) and tables.ndim == 3:  # a stack of complete dense tables
            layout = TableLayout(tables, False, False, *tables.shape[1:])
        else:
            self.data = wrapped = [TableData.of(t) for t in tables]
            layout = TableLayout(wrapped, wrapped[0].is_sparse, any(t.has_missing for t in wrapped),
                                 *wrapped[0].shape)
        #: The observed-data family: the model's statistics and parameters, with the missing
        #: entries' channels when the tables have masks (:mod:`lbm_bench.models.missing`).
        self.family = EntryFamily(model, layout.incomplete)
        self.eta = self.family.natural_parameters  # (p, g, m)
        self.log_partition = self.family.log_partition  # (g, m)
        self.count_partition = counts = self.family.count_partition  # (g, m) or None
        self._n_tables = len(layout.tables)
        self.n_rows, self.n_cols = layout.n_rows, layout.n_cols
        #: The storage's kernel, chosen once (:mod:`lbm_bench.inference.kernels`).
        self.kernel = choose_kernel(model, layout)
        self.row_weights = model.row_weights(self.n_rows)
        self.col_weights = model.col_weights(self.n_cols)
        row_part = (self.eta, self.log_partition, self.log_row_prior, self.row_weights,
                    self.col_weights, counts)
        col_part = (self.eta.swapaxes(1, 2), self.log_partition.T, self.log_col_prior,
                    self.col_weights, self.row_weights, None if counts is None else counts.T)
        self.storage = self.kernel.build(self.family, layout, (row_part, col_part))
        self.is_sparse = layout.is_sparse
        self.rows, self.cols = self.storage.rows, self.storage.cols

    @classmethod
    def for_table(cls, model: LatentBlockModel, X: Any) -> Sweeper:
        """A Sweeper of the single table ``X`` (dense ndarray or scipy.sparse)."""
        return cls(model, [X])

    def entrywise_scores(self) -> tuple[np.ndarray, np.ndarray]:
        """Class scores of rows (B, n_rows, g) and columns (B, n_cols, m) with the other
        labels integrated out entry by entry (the storage's implementation)."""
        return self.storage.entrywise_scores(self)

    @property
    def base_measure(self) -> np.ndarray:
        """``log h(X_b)`` of every table (over its observed entries), shape (B,): the
        label-free term of the likelihood."""
        if self._base_measure is None:
            tables = self.data if self.data is not None else [
                TableData.of(t) for t in self.storage.tables
            ]
            self._base_measure = np.array([self.family.log_base_measure(t) for t in tables])
        return self._base_measure

    @property
    def n_tables(self) -> int:
        return self._n_tables

    @property
    def stats(self) -> np.ndarray:
        """(B, p, n_rows, n_cols) view of the sufficient statistics (dense tables)."""
        if not isinstance(self.storage, DenseStatistics):
            raise TypeError(f"a {type(self.storage).__name__} storage holds no dense statistics")
        return self.storage.stats

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
        m, p = self.m, self.family.n_stats
        sums = self.rows.full_sums(w).reshape(B, C, m * p, n)  # [b, c, (l, q), i]
        onehot_z = onehot_t(z, self.g).swapaxes(-1, -2)  # (B, C, n, g)
        totals = np.matmul(sums, onehot_z).reshape(B, C, m, p, self.g)  # [b, c, l, q, k]
        row_mass = class_mass(z, self.g, self.row_weights)
        col_mass = class_mass(w, self.m, self.col_weights)
        exposure = row_mass[..., :, None] * col_mass[..., None, :]
        value = np.einsum("bclpk,pkl->bc", totals, self.eta)
        value -= np.einsum("bckl,kl->bc", exposure, self.log_partition)
        if self.count_partition is not None:  # the block mechanism's log(1 - q) of every entry
            counts = class_mass(z, self.g, None)[..., :, None] * class_mass(w, self.m,
                                                                            None)[..., None, :]
            value -= np.einsum("bckl,kl->bc", counts, self.count_partition)
        value += self.log_row_prior[z].sum(-1) + self.log_col_prior[w].sum(-1)
        return value + self.base_measure[:, None] if base_measure else value

    def sample_rows(self, sums: BlockSums, uniforms: Uniforms) -> np.ndarray:
        """Draw z (B, C, n_rows), smallest unsigned dtype, given the row-step block sums,
        from ``uniforms.random((B, C, n_rows))`` (a Generator, or another source)."""
        logits = self.rows.logits(sums.sums, sums.labels)
        return sample_class_major(logits, uniforms.random(logits.shape[:2] + logits.shape[3:]))

    def sample_cols(self, sums: BlockSums, uniforms: Uniforms) -> np.ndarray:
        """Draw w (B, C, n_cols), smallest unsigned dtype, given the column-step block sums."""
        logits = self.cols.logits(sums.sums, sums.labels)
        return sample_class_major(logits, uniforms.random(logits.shape[:2] + logits.shape[3:]))


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
      keeps spinning on the second core for a while.) Directly, ``sums += D @ stats`` with ``D``
      holding +1 at ``((c, l'), j)`` and -1 at ``((c, l), j)``: ``2 K`` row additions
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
        index update's row additions times :data:`~lbm_bench.inference.dense_sums.INDEX_UPDATE_COST`
        against the full product's ``B C o n_other`` row multiply-adds; dense kernel:
        at most ``INDEX_MAX_FRACTION * n_other`` changed positions), and
        always the full product when it is below
        :data:`~lbm_bench.inference.dense_sums.MIN_FULL_WORK` (times
        :data:`~lbm_bench.inference.dense_sums.SINGLE_STAT_FACTOR` for one statistic). A
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
        check_choice("side", side, ("rows", "cols"))
        check_choice("kernel", kernel, ("dense", "sparse"))
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
        if self.side.exact_sums and recompute_every is None:
            self.recompute_every = np.inf  # integer sums cannot drift: no periodic recompute

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
        done = self.side.index_update(self, labels, changed)
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
