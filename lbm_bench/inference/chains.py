"""The one sweep loop of the blockwise Gibbs sampler: chains of ``B`` tables, swept together.

Every Gibbs run of the package is :func:`run_chains`: the certifying and screening runs
of :func:`~lbm_bench.inference.gibbs.gibbs_labels` (one table, its chains started at the
MAP, at given labels or at random) and the calibration's short runs
(:mod:`lbm_bench.protocol.short_run`: many small tables at once, each started at its
generating labels). A sweep draws all row labels given the column labels, then all
column labels given the row labels, for every table and chain at once; the block sums
are kept in step with the labels by :class:`~lbm_bench.inference.engine.BlockSums`
(index updates, or the full product), and the storage's kernels are the sweeper's: the
loop sees neither the family nor the storage.

Sources of uniforms
-------------------
A half-sweep draws one uniform per table, chain and label, an array of shape
``(B, C, n_own)``, by ``uniforms.random(shape)``; the labels are a fixed function of
those uniforms and the block sums (inverse-CDF draws). Where the uniforms come from is
the caller's choice, and decides which runs give the same labels:

- a :class:`numpy.random.Generator`: one stream for every table and chain, one call per
  half-sweep (:func:`~lbm_bench.inference.gibbs.gibbs_labels`);
- :class:`ChainStreams`: one Generator per chain of every table, each drawing its
  ``n_own`` uniforms in turn, so that a chain's label sets depend on its start and its
  stream alone, never on the other chains or tables of its batch (every run of the
  package: :func:`~lbm_bench.inference.gibbs.gibbs_labels` and the calibration's
  short runs). Each chain's stream is a child of one seed (:func:`chain_seeds`).

Chains as tasks
---------------
With one stream per chain, the chains of a table can run in any grouping: all in one
batched loop, or in groups spread over worker processes (:func:`run_chain_tasks`, on
the task service, :func:`~lbm_bench.tasks.pool.run_bundles`, over the backend the
caller configured: loky processes or a Dask cluster). For
integer statistics (Bernoulli, Poisson, categorical tables, with or without missing
entries, dense or sparse) every route of the block sums is exact, so a chain draws the
same labels in any group. Float statistics (Gaussian tables) may round differently in
a batch, so their grouping is fixed by the table alone (one chain per task, whatever
the number of workers). Either way the same seed gives the same label sets whatever
``jobs`` and the backend. The table and the model cross to the workers once
(:mod:`lbm_bench.tasks.shipping`): memory-mapped on loky, scattered once on Dask.
"""

from __future__ import annotations

import math
import os
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from lbm_bench._dtypes import smallest_uint
from lbm_bench._seeds import draw_seed, stream
from lbm_bench.inference.engine import BlockSums, Sweeper, Uniforms
from lbm_bench.models.base import LatentBlockModel
from lbm_bench.tasks.backends import local_backend
from lbm_bench.tasks.bundles import even_bundles
from lbm_bench.tasks.large import is_large
from lbm_bench.tasks.pool import run_bundles

__all__ = ["ChainRun", "ChainStreams", "chain_groups", "chain_seeds", "run_chain_tasks",
           "run_chains", "table_groups"]

#: Uniforms each chain of :class:`ChainStreams` draws at a time for small requests.
AHEAD = 2**12


class ChainStreams:
    """Uniforms from one Generator per chain: ``random((B, C, n))`` fills chain ``c`` of
    table ``b`` with the next ``n`` uniforms of ``rngs[b][c]``, as ``rngs[b][c].random(n)``
    would, bit for bit.

    Requests below :data:`AHEAD` uniforms per chain are served from a buffer each chain
    fills :data:`AHEAD` at a time (a Generator's doubles come one after the other from its
    stream, so drawing ahead gives the same values in the same order): a small table's
    half-sweep asks for a few dozen, and one call of every chain's Generator per half-sweep
    cost a seventh of its Gibbs runs (``scripts/benchmarks/bench_gibbs.py``). Larger requests
    are drawn straight into the result, after what the buffer holds.

    Parameters
    ----------
    rngs : sequence of B sequences of C numpy.random.Generator
    """

    def __init__(self, rngs: Sequence[Sequence[np.random.Generator]]) -> None:
        self.rngs = [list(table) for table in rngs]
        self._ahead: np.ndarray | None = None  # (B, C, AHEAD), served from self._next
        self._next = 0

    def random(self, shape: tuple[int, ...]) -> np.ndarray:
        B, C = shape[:2]
        if B != len(self.rngs) or any(len(table) != C for table in self.rngs):
            held = [len(table) for table in self.rngs]
            raise ValueError(f"uniforms for {B} tables of {C} chains asked of streams for {held} "
                             "chains")
        n = math.prod(shape[2:])
        out = np.empty((B, C, n))
        have = 0
        if self._ahead is not None:  # what was drawn ahead comes first
            have = min(n, AHEAD - self._next)
            out[:, :, :have] = self._ahead[:, :, self._next:self._next + have]
            self._next += have
        if n - have >= AHEAD:  # a large request: straight from the streams
            for b, table in enumerate(self.rngs):
                for c, rng in enumerate(table):
                    rng.random(out=out[b, c, have:])
        elif n > have:  # the buffer is spent: every chain draws AHEAD more
            if self._ahead is None:
                self._ahead = np.empty((B, C, AHEAD))
            for b, table in enumerate(self.rngs):
                for c, rng in enumerate(table):
                    rng.random(out=self._ahead[b, c])
            out[:, :, have:] = self._ahead[:, :, :n - have]
            self._next = n - have
        return out.reshape(shape)


def chain_seeds(rng: np.random.Generator, n_chains: int) -> list[np.random.SeedSequence]:
    """The seeds of ``n_chains`` chains: the ``"chain"`` children 0 to ``n_chains - 1`` of a
    ``"chains"`` root drawn from ``rng`` (one ``integers`` call,
    :func:`~lbm_bench._seeds.draw_seed`)."""
    root = np.random.SeedSequence(draw_seed(rng))
    return [stream(root, "chains", "chain", c) for c in range(n_chains)]


def chain_groups(n_chains: int, jobs: int, *, large: bool, exact: bool) -> list[range]:
    """How the chains of one table are grouped into tasks.

    One group (today's batched loop) for a table that is not large
    (:func:`~lbm_bench.tasks.large.is_large`), or for exact sums with one job; else
    ``min(jobs, n_chains)`` contiguous groups for exact sums (any grouping draws the same
    labels), and one chain per group for float sums (a grouping fixed by the table, not by
    ``jobs``).
    """
    if not large or (exact and jobs == 1):
        return [range(n_chains)]
    return even_bundles(n_chains, min(jobs, n_chains) if exact else n_chains)


@dataclass(frozen=True)
class ChainRun:
    """The label sets kept by :func:`run_chains` and the block sums that produced them.

    Attributes
    ----------
    rows : ndarray of shape (B, C, per_chain, n_rows)
        Row labels of every kept sweep, by table and chain; smallest unsigned dtype.
    cols : ndarray of shape (B, C, per_chain, n_cols)
        Column labels, likewise.
    row_sums, col_sums : BlockSums
        The block sums of the two half-sweeps; their counters tell which update routes
        were taken (index updates, full products, fallbacks).
    """

    rows: np.ndarray
    cols: np.ndarray
    row_sums: BlockSums
    col_sums: BlockSums


def run_chains(
    sweeper: Sweeper,
    w: np.ndarray,
    per_chain: int,
    uniforms: Uniforms,
    *,
    burn_in: int = 0,
    thin: int = 1,
    keep: Callable[[int, np.ndarray, np.ndarray], None] | None = None,
    **block_sums_options: Any,
) -> ChainRun:
    """Run ``C`` chains on each of the sweeper's ``B`` tables, from column labels ``w``.

    Parameters
    ----------
    sweeper : Sweeper
        The tables and the model (with its true parameters).
    w : ndarray of shape (B, C, n_cols)
        Every chain's starting column labels. The first half-sweep draws the row labels
        given them: a start's row labels would be drawn over at once, so none are asked.
    per_chain : int
        Label sets kept per chain.
    uniforms : numpy.random.Generator or ChainStreams
        The source of uniforms (see the module documentation): anything with a
        ``random(shape)`` method returning uniforms on [0, 1) of that shape.
    burn_in : int, default=0
        Sweeps discarded at the start of every chain.
    thin : int, default=1
        Sweeps per kept set (the last of every ``thin`` sweeps is kept).
    keep : callable, optional
        Called as ``keep(index, z, w)`` with every kept set's index and its labels, of shapes
        (B, C, n_rows) and (B, C, n_cols), instead of storing them: the run's ``rows`` and
        ``cols`` are then None (the caller writes them where it needs them).
    **block_sums_options
        Options of both :class:`~lbm_bench.inference.engine.BlockSums`: ``incremental``,
        ``max_changed``, ``recompute_every``, ``kernel``.

    Returns
    -------
    ChainRun
    """
    model = sweeper.model
    B, C = w.shape[:2]
    row_dtype, col_dtype = smallest_uint(model.n_row_clusters), smallest_uint(model.n_col_clusters)
    row_sums = BlockSums(sweeper, "rows", **block_sums_options)
    col_sums = BlockSums(sweeper, "cols", **block_sums_options)
    rows = cols = None
    if keep is None:
        rows = np.empty((B, C, per_chain, sweeper.n_rows), dtype=row_dtype)
        cols = np.empty((B, C, per_chain, sweeper.n_cols), dtype=col_dtype)
    w = w.astype(col_dtype)
    for sweep in range(burn_in + per_chain * thin):
        row_sums.update(w)
        z = sweeper.sample_rows(row_sums, uniforms)
        col_sums.update(z)
        w = sweeper.sample_cols(col_sums, uniforms)
        kept, offset = divmod(sweep - burn_in + 1, thin)
        if sweep >= burn_in and offset == 0:
            if keep is not None:
                keep(kept - 1, z, w)
            else:
                rows[:, :, kept - 1] = z
                cols[:, :, kept - 1] = w
    return ChainRun(rows=rows, cols=cols, row_sums=row_sums, col_sums=col_sums)


def run_chain_tasks(
    model: LatentBlockModel,
    table: Any,
    w: np.ndarray,
    per_chain: int,
    seeds: Sequence[np.random.SeedSequence],
    *,
    jobs: int = 1,
    burn_in: int = 0,
    thin: int = 1,
    **block_sums_options: Any,
) -> tuple[np.ndarray, np.ndarray]:
    """Run the ``C`` chains of one table as tasks (:func:`chain_groups`), chain ``c`` drawing
    from ``seeds[c]``; the label sets do not depend on ``jobs`` or on the backend.

    Parameters
    ----------
    model : LatentBlockModel
    table : ndarray, scipy.sparse or TableData
        The table, checked for the model (with its missing entries).
    w : ndarray of shape (C, n_cols)
        Every chain's starting column labels.
    per_chain : int
        Label sets kept per chain.
    seeds : sequence of C SeedSequence
        Each chain's stream (:func:`chain_seeds`).
    jobs : int, default=1
        Workers of the backend configured by the caller (loky by default). With more than
        one group, the table crosses to each worker once (memory-mapped on loky, scattered
        once on Dask) and each task runs on one BLAS thread.
    burn_in, thin, **block_sums_options
        As :func:`run_chains`.

    Returns
    -------
    rows : ndarray of shape (C, per_chain, n_rows)
    cols : ndarray of shape (C, per_chain, n_cols)
    """
    n_chains, n_cols = w.shape
    if len(seeds) != n_chains:
        raise ValueError(f"seeds must hold {n_chains} entries, got {len(seeds)}")
    n_rows = table.shape[0]
    groups = table_groups(model, table, n_chains, jobs)
    items = [(w[list(g)], [seeds[c] for c in g], g.start) for g in groups]
    sets = _LabelSets(n_chains, per_chain, n_rows, n_cols, smallest_uint(model.n_row_clusters),
                      smallest_uint(model.n_col_clusters))
    args = (per_chain, burn_in, thin, block_sums_options)
    shared = (model, table)
    if min(jobs, len(items)) == 1:  # in this process: the chains write into the arrays
        run_bundles(_chain_task, items, jobs, *args, sets, shared=shared)
    # the workers write to a file the arrays are read from (POSIX)
    elif local_backend() and hasattr(os, "pwrite"):
        with tempfile.TemporaryDirectory(prefix="lbm-bench-chains-") as folder:
            sink = _LabelFile(os.path.join(folder, "labels"), sets)
            run_bundles(_chain_task, items, jobs, *args, sink, shared=shared)
            sink.read_into(sets)
    else:  # a cluster's workers send their sets back
        parts = run_bundles(_chain_task, items, jobs, *args, None, shared=shared)
        for (_, _, first), (rows, cols) in zip(items, parts, strict=True):
            sets.rows[first:first + rows.shape[0]], sets.cols[first:first +
                                                              cols.shape[0]] = rows, cols
    return sets.rows, sets.cols


class _LabelSets:
    """The label sets of a table's chains, ``rows`` (C, per_chain, n_rows) and ``cols``
    (C, per_chain, n_cols), allocated once; ``writer(first)`` keeps a group's sets (chains
    ``first``, ``first + 1``...) in them (:func:`run_chains`'s ``keep``)."""

    def __init__(self, n_chains, per_chain, n_rows, n_cols, row_dtype, col_dtype) -> None:
        self.rows = np.empty((n_chains, per_chain, n_rows), dtype=row_dtype)
        self.cols = np.empty((n_chains, per_chain, n_cols), dtype=col_dtype)

    def writer(self, first: int) -> tuple[Callable, Callable]:
        def keep(index, z, w):
            self.rows[first:first + z.shape[1], index] = z[0]
            self.cols[first:first + w.shape[1], index] = w[0]

        return keep, lambda: None


class _LabelFile:
    """A file holding the label sets of :class:`_LabelSets` (rows, then columns, C-ordered),
    written in place by the chain tasks of the workers (``os.pwrite``: no worker holds its
    sets, and the file's pages are the system's cache, not a process's memory), then read
    into the arrays."""

    def __init__(self, path: str, sets: _LabelSets) -> None:
        self.path = path
        self.row_shape, self.col_shape = sets.rows.shape, sets.cols.shape
        self.row_dtype, self.col_dtype = sets.rows.dtype, sets.cols.dtype
        with open(path, "wb") as handle:
            handle.truncate(sets.rows.nbytes + sets.cols.nbytes)

    def writer(self, first: int) -> tuple[Callable, Callable]:
        fd = os.open(self.path, os.O_WRONLY)
        C, per_chain, n = self.row_shape
        d = self.col_shape[2]
        row_size, col_size = n * self.row_dtype.itemsize, d * self.col_dtype.itemsize
        cols_start = C * per_chain * row_size

        def keep(index, z, w):
            for c in range(z.shape[1]):
                chain = (first + c) * per_chain + index
                os.pwrite(fd, np.ascontiguousarray(z[0, c], dtype=self.row_dtype), chain * row_size)
                os.pwrite(fd, np.ascontiguousarray(w[0, c], dtype=self.col_dtype),
                          cols_start + chain * col_size)

        return keep, lambda: os.close(fd)

    def read_into(self, sets: _LabelSets) -> None:
        with open(self.path, "rb") as handle:
            for array in (sets.rows, sets.cols):
                view, done = memoryview(array.reshape(-1).view(np.uint8)), 0
                while done < array.nbytes:
                    got = handle.readinto(view[done:])
                    if not got:
                        raise OSError(f"{self.path}: the chains' label sets end early")
                    done += got


def table_groups(model: LatentBlockModel, table: Any, n_items: int, jobs: int) -> list[range]:
    """:func:`chain_groups` of ``n_items`` chains or starts of ``table`` (whether it is large,
    and whether the model's sums are exact: integer tables)."""
    exact = np.dtype(model.table_dtype).kind in "biu"
    return chain_groups(n_items, jobs, large=is_large(*table.shape), exact=exact)


def _chain_task(model, table, groups, per_chain, burn_in, thin, options, sink=None):
    """Groups of chains of one table (a bundle of :func:`~lbm_bench.tasks.pool.run_bundles`),
    one after the other on one Sweeper (built once per task), each group one batched loop
    with one stream per chain; each group's label sets are written by ``sink``
    (:class:`_LabelSets`, :class:`_LabelFile`) and None returned for it, or returned as
    ``(rows, cols)`` without one."""
    out = []
    sweeper = Sweeper.for_table(model, table)
    for w, seeds, first in groups:
        streams = ChainStreams([[np.random.default_rng(seed) for seed in seeds]])
        keep, close = (None, None) if sink is None else sink.writer(first)
        try:
            run = run_chains(sweeper, w[None], per_chain, streams, burn_in=burn_in, thin=thin,
                             keep=keep, **options)
        finally:
            if close is not None:
                close()
        out.append(None if sink is not None else (run.rows[0], run.cols[0]))
    return out
