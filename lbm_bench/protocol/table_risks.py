"""What the calibration measures on each of its tables, a batch at a time.

``criterion="map"``: the apparent error of the X-only MAP (:func:`classifier_labels`, which
sees the table and the table's own seed only); ``criterion="bayes"``: the floor estimated on a
short Gibbs run started at the generating labels (:func:`short_run_floors`). A batch's tables
are made from their draws (:mod:`lbm_bench.protocol.table_draws`) at one scale.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from lbm_bench._seeds import TableStreams, stream
from lbm_bench.inference.classifier import alternate, best_of_starts, initial_column_labels
from lbm_bench.inference.engine import Sweeper
from lbm_bench.inference.floor import floor_risk
from lbm_bench.models.missing import mask_table
from lbm_bench.protocol.short_run import short_runs

__all__ = [
    "BATCH_STATISTICS", "batch_errors", "batch_floors", "batch_tables", "classifier_labels",
    "short_run_floors"
]


def batch_tables(model, labels, noise, missing=None) -> list:
    """The tables of a batch; with ``missing`` (the tables' mask noise and the blocks' missing
    probabilities), each with its mask (:class:`~lbm_bench.models.data.TableData`)."""
    # a list: sparse tables (scipy.sparse) cannot be stacked; Sweeper stacks dense ones
    tables = [model.table_from_noise(e, z, w) for e, (z, w) in zip(noise, labels, strict=True)]
    if missing is None:
        return tables
    masks, probs = missing
    return [mask_table(X, mask, probs, z, w, copy=False)
            for X, mask, (z, w) in zip(tables, masks, labels, strict=True)]


def batch_errors(model, labels, noise, seeds, n_init, incremental, missing=None) -> np.ndarray:
    """Apparent errors of one batch of tables: the MAP sees the tables only (their observed
    entries; :func:`classifier_labels`); the generating ``labels`` only score it."""
    tables = batch_tables(model, labels, noise, missing)
    found = classifier_labels(model, tables, seeds, n_init, incremental=incremental)
    errors = np.empty(len(seeds))
    for b, ((z0, w0), (rows, cols)) in enumerate(zip(labels, found, strict=True)):
        row = np.mean(rows != z0)
        col = np.mean(cols != w0)
        errors[b] = row + col - row * col
    return errors


def batch_floors(model, labels, noise, seeds, n_init, incremental, missing=None) -> np.ndarray:
    """Short-run floors of one batch of tables (:func:`short_run_floors`): the generating
    ``labels`` build the tables (with their masks of missing entries) and start their chains."""
    return short_run_floors(model, batch_tables(model, labels, noise, missing), labels, seeds)


#: The statistic of a batch of tables, by the name the calibration's workers are given.
BATCH_STATISTICS = {"error": batch_errors, "floor": batch_floors}


def classifier_labels(
    model: Any,
    tables: np.ndarray,
    seeds: Sequence[np.random.SeedSequence],
    n_init: int,
    *,
    incremental: bool = True,
) -> list[tuple[np.ndarray, np.ndarray]]:
    """The X-only MAP of the calibration on a stack of tables.

    Parameters
    ----------
    model : LatentBlockModel
    tables : ndarray of shape (B, n_rows, n_cols), or a list of B tables (dense or scipy.sparse,
        or :class:`~lbm_bench.models.data.TableData` with their missing entries)
    seeds : sequence of B SeedSequence
        Each table's seed: its ``"map starts"`` child draws its MAP's random starts (the
        layout of a ``"calibration table"``, :class:`~lbm_bench._seeds.TableStreams`).
        Nothing else (no labels, no other scale) enters.
    n_init : int
        Random starts of the MAP.
    incremental : bool, default=True
        Update the block sums for the labels that changed.

    Returns
    -------
    list of (rows, cols)
    """
    sweeper = Sweeper(model, tables)
    # as draw_candidate lays out a calibration table: a fresh stream at every scale
    start_rngs = [TableStreams(seed, "calibration table").rng("map starts") for seed in seeds]
    w0 = initial_column_labels(sweeper, n_init, start_rngs)
    z, w, _, _ = alternate(sweeper, w0, incremental=incremental)
    best, _ = best_of_starts(sweeper, z, w, base_measure=False)
    return [(z[b, best[b]], w[b, best[b]]) for b in range(len(seeds))]


def short_run_floors(
    model: Any,
    tables: Any,
    labels: Sequence[tuple[np.ndarray, np.ndarray]],
    seeds: Sequence[np.random.SeedSequence],
) -> np.ndarray:
    """The floor of each calibration table, estimated by a short Gibbs run (``criterion="bayes"``).

    One short run per table (:func:`~lbm_bench.protocol.short_run.short_runs`:
    ``SHORT_RUN_SAMPLES`` sets in ``SHORT_RUN_CHAINS`` chains started at the table's
    generating labels, an exact posterior draw, so no burn-in), and the cross-fitted
    floor of its sets (:func:`~lbm_bench.inference.floor.floor_risk`: the certificate's
    estimator, its descent started from the sets' marginal modes and from sets). The
    generating labels only start the chains; no MAP is needed.

    Parameters
    ----------
    model : LatentBlockModel
    tables : ndarray of shape (B, n_rows, n_cols), or a list of B tables
        (arrays, scipy.sparse, or :class:`~lbm_bench.models.data.TableData` with their
        missing entries)
    labels : sequence of B (z0, w0)
        Each table's generating labels.
    seeds : sequence of B SeedSequence
        Each table's seed: its ``"short run"`` child draws its run.

    Returns
    -------
    ndarray of shape (B,)
    """
    rngs = [np.random.default_rng(stream(seed, "calibration table", "short run")) for seed in seeds]
    runs = short_runs(Sweeper(model, tables), labels, rngs)
    g, m = model.block_shape
    return np.array([floor_risk(run, n_row_clusters=g, n_col_clusters=m).risk for run in runs])
