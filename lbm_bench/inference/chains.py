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
- :class:`TableStreams`: one Generator per table, each drawing its ``(C, n_own)``
  uniforms in turn, so that a table's label sets do not depend on the other tables of
  its batch (the short runs). With one table it draws what its Generator alone draws.

A source with one stream per chain (chains run as independent tasks, in any grouping
over processes) is one more class with this ``random(shape)`` method.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from lbm_bench.inference.engine import BlockSums, Sweeper, Uniforms, smallest_uint

__all__ = ["ChainRun", "TableStreams", "run_chains"]


class TableStreams:
    """Uniforms from one Generator per table: ``random((B, C, n))`` stacks each table's
    ``rng.random((C, n))``, table after table.

    Parameters
    ----------
    rngs : sequence of B numpy.random.Generator
    """

    def __init__(self, rngs: Sequence[np.random.Generator]) -> None:
        self.rngs = list(rngs)

    def random(self, shape: tuple[int, ...]) -> np.ndarray:
        if shape[0] != len(self.rngs):
            raise ValueError(f"uniforms for {shape[0]} tables asked of {len(self.rngs)} streams")
        return np.stack([rng.random(shape[1:]) for rng in self.rngs])


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
    uniforms : numpy.random.Generator or TableStreams
        The source of uniforms (see the module documentation): anything with a
        ``random(shape)`` method returning uniforms on [0, 1) of that shape.
    burn_in : int, default=0
        Sweeps discarded at the start of every chain.
    thin : int, default=1
        Sweeps per kept set (the last of every ``thin`` sweeps is kept).
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
            rows[:, :, kept - 1] = z
            cols[:, :, kept - 1] = w
    return ChainRun(rows=rows, cols=cols, row_sums=row_sums, col_sums=col_sums)
