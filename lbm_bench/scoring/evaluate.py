"""Score a co-clustering against a table's Gibbs ground truths.

The main score is the submission's **conditional risk** ``r_item``: its mean
``l_item`` loss over the table's Gibbs label sets, under the one label matching
that minimises that mean (:func:`lbm_bench.metrics.conditional_risk`). The
table's reference is its **floor** (format 1.1): the cross-fitted risk of the
Bayes labels for ``l_item``, which no labelling beats beyond Monte Carlo error;
the **excess risk** is the difference, with a paired Monte Carlo standard error
(both per-set losses are computed on the same label sets: the floor's are its
cross-fitted losses, :func:`lbm_bench.floor_certificate`). The risk of the MAP
labels (the paper's reference) is reported too, with the excess over it. A
table without a floor (every format 1.0 file, and the tables of later formats made by the
paper's protocol, criterion ``map``) stores none: the report says so, with the file's
format version, and uses the MAP.

"Apparent" scores against the generating labels alone are reported too, so
users can see how noisy a single ground truth is. The scale's other end is the
**chance level**: the expected risk of labels drawn from the model's proportions
independently of X (:func:`lbm_bench.metrics.chance_risk`); the report warns in one
line when the submitted numbers of clusters differ from the table's.
"""

from __future__ import annotations

import contextlib
import math
import os
from typing import Any

import numpy as np

from lbm_bench._validation import check_count, check_labels
from lbm_bench.inference.bayes import check_starts
from lbm_bench.inference.floor import cross_fitted_sides, set_start_indices, side_bounds
from lbm_bench.inference.label_sides import LabelSide
from lbm_bench.metrics import ari, cari, l_item, matching_error
from lbm_bench.metrics.chance import CHANCE_DRAWS, CHANCE_SETS
from lbm_bench.metrics.contingency_tables import (
    TableStack,
    ari_from_counts,
    label_codes,
    pair_counts,
    table_pair_sums,
)
from lbm_bench.metrics.mcmc import chain_diagnostics
from lbm_bench.metrics.risk import conditional_risk_of_tables
from lbm_bench.protocol.table import Table
from lbm_bench.scoring.report import Report
from lbm_bench.scoring.set_counts import Labelling, count_tables
from lbm_bench.tasks.backends import in_threads

__all__ = ["BAND_LABEL_BYTES", "CHANCE_SEED", "FLOOR_SET_BYTES", "TABLE_CELL_BYTES",
           "check_evaluation_memory", "evaluate"]

#: Seed of the random labellings of the chance level, so that a report is reproducible.
CHANCE_SEED = 0
#: The floor's searches, as :func:`~lbm_bench.floor_certificate` runs them by default.
FLOOR_SET_STARTS, FLOOR_MAX_SWEEPS = 4, 1000


def evaluate(table: Table | str | os.PathLike[str], rows: Any, cols: Any, *, jobs: int = 1,
             progress: bool = False) -> Report:
    """Score the co-clustering ``(rows, cols)`` on a benchmark table.

    Every score is computed from the per-set contingency tables of the Gibbs label sets
    (:mod:`lbm_bench.scoring.set_counts`): a table file's sets are read band by band (a few
    thousand items of every set at a time), never all in memory at once, in ``jobs``
    processes; the report does not depend on ``jobs`` nor on the bands (exact integer counts).

    Parameters
    ----------
    table : Table or path
        A table, or the path of its HDF5 file.
    rows : array-like of shape (n_rows,)
        Predicted row labels (non-negative integers, any number of clusters).
    cols : array-like of shape (n_cols,)
        Predicted column labels.
    jobs : int, default=1
        Processes reading and counting the bands of a table file's label sets at once (each
        opens the file itself); then threads for the floor's searches of a large table.
    progress : bool, default=False
        Show a tqdm bar of the items counted.

    Returns
    -------
    Report

    Examples
    --------
    >>> from lbm_bench import load_table
    >>> table = load_table("tests/data/table_v1_1.h5")   # a small table of the test suite
    >>> report = evaluate(table, table.map_rows, table.map_cols)
    >>> report.map_excess_risk, report.reference   # the MAP labels against themselves
    (0.0, 'bayes')
    >>> rng = np.random.default_rng(0)   # a file's name works too; labels are any integers
    >>> guess = evaluate("tests/data/table_v1_1.h5", rng.integers(0, 2, 12), rng.integers(5, 7, 10))
    >>> bool(guess.excess_risk > 3 * guess.excess_mcse)
    True
    >>> old = evaluate("tests/data/table_v1.h5", table.map_rows, table.map_cols)   # format 1.0
    >>> old.reference, old.note[:33]
    ('map', 'format 1.0 file: no floor stored;')
    """
    from lbm_bench.storage import load_table

    name = str(table) if not isinstance(table, Table) else f"{table.kind} table seed {table.seed}"
    jobs = check_count("jobs", jobs)
    if not isinstance(table, Table):
        table = load_table(table, label_sets=False)  # the sets stay in the file: read band by band
    g = table.gibbs
    # Validated once here; the table's own labels were validated when it was read
    # (or produced by the library), so the scores below take the arrays as they are.
    rows = check_labels("rows", rows, length=table.shape[0])
    cols = check_labels("cols", cols, length=table.shape[1])
    check_evaluation_memory(name, table, rows, cols, jobs)  # sized from the declared sets
    counts = _SetCounts(table, rows, cols, jobs, progress)
    result = conditional_risk_of_tables(counts.stack("rows", 0),
                                        counts.stack("cols", 0), counts.labels[0], counts.labels[1],
                                        g.chain_lengths.tolist())
    # per-set losses under the chosen matching (the hits of the matching, as ``rows != matched``
    # counts them)
    row_hits, col_hits = counts.stack("rows", 0).hits(_pairs(result.row_map)), \
        counts.stack("cols", 0).hits(_pairs(result.col_map))
    mine = _item_losses(row_hits, col_hits, table.shape)
    map_losses = _item_losses(counts.map_hits("rows"), counts.map_hits("cols"), table.shape)
    map_excess_mcse, _ = chain_diagnostics(mine - map_losses, g.chain_lengths)
    if table.bayes_risk is not None:
        floor_losses = counts.floor_losses(jobs)
        excess_mcse, _ = chain_diagnostics(mine - floor_losses, g.chain_lengths)
        reference, note = table.bayes_risk, ""
        excess = float(result.risk - floor_losses.mean())
    else:
        reference, excess_mcse = table.risk, map_excess_mcse
        excess = float(result.risk - map_losses.mean())
        note = (f"{table.origin}: no floor stored; the reference is the MAP labels' risk "
                "(an upper bound of the floor)")
    z0, w0 = table.truth_rows, table.truth_cols
    predicted = [int(result.row_labels.size), int(result.col_labels.size)]
    chance = counts.chance_risk()
    return Report(
        table=name,
        risk=float(result.risk),
        risk_mcse=float(result.mcse),
        row_loss=float(result.mean_l_row),
        col_loss=float(result.mean_l_col),
        bayes_risk=float(reference.risk),
        bayes_mcse=float(reference.mcse),
        map_risk=float(table.risk.risk),
        map_mcse=float(table.risk.mcse),
        excess_risk=excess,
        excess_mcse=float(excess_mcse),
        map_excess_risk=float(result.risk - map_losses.mean()),
        map_excess_mcse=float(map_excess_mcse),
        reference="bayes" if table.bayes_risk is not None else "map",
        criterion=table.criterion,
        note=note,
        cari_mean=float(result.cari_mean),
        cari_std=float(result.cari_sd),
        ari_rows=float(np.mean(counts.ari("rows"))),
        ari_cols=float(np.mean(counts.ari("cols"))),
        apparent_l_item=float(l_item(z0, w0, rows, cols)),
        apparent_cari=float(cari(z0, w0, rows, cols)),
        apparent_ari_rows=float(ari(z0, rows)),
        apparent_ari_cols=float(ari(w0, cols)),
        matching_error_rows=float(matching_error(z0, rows)),
        matching_error_cols=float(matching_error(w0, cols)),
        n_samples=int(g.n_samples),
        row_map=[int(v) for v in result.row_map],
        col_map=[int(v) for v in result.col_map],
        row_labels=[int(v) for v in result.row_labels],
        col_labels=[int(v) for v in result.col_labels],
        matching_exact=bool(result.exact),
        chance_risk=chance[0],
        chance_mcse=chance[1],
        table_clusters=[int(table.n_row_clusters), int(table.n_col_clusters)],
        predicted_clusters=predicted,
        warning=_cluster_warning(predicted, [int(table.n_row_clusters), int(table.n_col_clusters)]),
        missing=_missing_note(table),
    )


#: Bytes per set and per cell (reference class, cluster) of a labelling's per-set contingency
#: tables: the int64 table, its trimmed copy, and the two counts of a band (measured: 20 million
#: sets of a 2x2 table, 9 GB at its peak, 29 bytes a set and a cell with the floor's below).
TABLE_CELL_BYTES = 32
#: Bytes per set and per reference class of the floor's sides (its per-set indptr by class) and
#: four more per-set arrays (losses, hits).
FLOOR_SET_BYTES = 16
#: Bytes held per label of a band being counted (the band, comparisons, the minority entries).
BAND_LABEL_BYTES = 4


def check_evaluation_memory(where: str, table: Table, rows: np.ndarray, cols: np.ndarray,
                            jobs: int) -> None:
    """Refuse, before counting, an evaluation whose label sets would not fit: sized from the
    numbers of sets and items the table declares (a file of 68 KB may declare 20 million
    compressed sets: 10 GB and two minutes, or a ``MemoryError``), the numbers of clusters of
    the labels and the table's, and the workers (each counts a band of
    :data:`~lbm_bench.scoring.set_counts.BAND_LABELS` labels at most).

    Raises
    ------
    MemoryLimitError
        (A ValueError.) One line naming ``where`` (the table's file) and the estimate by part.
    """
    from lbm_bench.scoring.set_counts import BAND_LABELS
    from lbm_bench.storage.user_formats import ReadGuard
    from lbm_bench.tasks.backends import worker_count

    n_sets = int(table.gibbs.n_samples)
    g, m = table.model.block_shape
    sides = ((g, rows, table.map_rows), (m, cols, table.map_cols))
    cells = sum(classes * (np.unique(labels).size + int(maps.max()) + 1)
                for classes, labels, maps in sides)
    band = min(n_sets * max(table.shape), max(BAND_LABELS, 64 * n_sets))
    parts = {"per-set tables": TABLE_CELL_BYTES * n_sets * cells,
             "reading": worker_count(jobs, local=True) * BAND_LABEL_BYTES * band}
    if table.bayes_risk is not None:
        parts["floor"] = FLOOR_SET_BYTES * n_sets * (4 + g + m)
    ReadGuard(where, None)(f"{n_sets} Gibbs label sets of the {table.shape[0]}x{table.shape[1]} "
                           "table", "score labels on a machine with more memory", **parts)


def _pairs(cluster_map: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The matching ``(reference clusters, predicted clusters)`` of a cluster map (-1:
    unmatched)."""
    matched = np.flatnonzero(cluster_map >= 0)
    return cluster_map[matched], matched


def _item_losses(row_hits: np.ndarray, col_hits: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    """Per-set ``l_item`` from the rows and columns each set agrees on (as ``np.mean(sets !=
    labels)``
    gives the error rates: an exact count over the items, one division)."""
    row_l = (shape[0] - row_hits).astype(np.float64) / shape[0]
    col_l = (shape[1] - col_hits).astype(np.float64) / shape[1]
    return row_l + col_l - row_l * col_l


def _trimmed(tables: np.ndarray) -> np.ndarray:
    """The tables without the reference classes above the largest one present (the sets'
    ``max() + 1`` classes, as :func:`~lbm_bench.metrics.risk.conditional_risk` counts them)."""
    present = np.flatnonzero(tables.sum(axis=(0, 2)))
    return np.ascontiguousarray(tables[:, : int(present[-1]) + 1 if present.size else 1])


class _SetCounts:
    """Everything :func:`evaluate` needs of the Gibbs label sets, counted in one pass per side
    (:func:`~lbm_bench.scoring.set_counts.count_tables`): the tables of every set against the
    submission and against the MAP labels, of the chance level's sets against its random
    labellings, and (a table with a floor) the sides of the floor's searches."""

    def __init__(self, table: Table, rows: np.ndarray, cols: np.ndarray, jobs: int,
                 progress: bool) -> None:
        from tqdm.auto import tqdm

        self.table = table
        gibbs = table.gibbs
        n_sets = gibbs.n_samples
        self.keep = np.unique(
            np.linspace(0, n_sets - 1, min(n_sets, CHANCE_SETS)).round().astype(np.int64))
        draws = _chance_draws(table, CHANCE_DRAWS)
        (row_codes, row_labels), (col_codes, col_labels) = label_codes(rows), label_codes(cols)
        self.labels = (row_labels, col_labels)
        self.floor = table.bayes_risk is not None
        self.picked = set_start_indices(gibbs.chain_lengths,
                                        FLOOR_SET_STARTS) if self.floor else None
        self.tables: dict[str, list[np.ndarray]] = {}
        self.parts: dict[str, Any] = {}
        self.n_classes: dict[str, int] = {}
        self._stacks: dict[tuple[str, int], Any] = {}
        # no tqdm object without a bar: even a disabled one makes tqdm's inter-process lock (a named
        # semaphore), which a benchmark's worker killed by SIGTERM leaves to the resource tracker
        bar = (tqdm(total=sum(table.shape), desc="evaluate", unit="item", leave=False) if progress
               else contextlib.nullcontext())
        with bar:
            for side, codes, k, (own, maps), side_draws in (
                ("rows", row_codes, row_labels.size, (gibbs.rows, table.map_rows), draws[0]),
                ("cols", col_codes, col_labels.size, (gibbs.cols, table.map_cols), draws[1]),
            ):
                n_classes = _n_classes(own, table.model.block_shape[0 if side == "rows" else 1])
                labellings = [
                    Labelling(_small(codes), int(k)),
                    Labelling(_small(maps),
                              int(maps.max()) + 1)
                ]
                labellings += [
                    Labelling(_small(c),
                              int(c.max()) + 1, self.keep) for c in side_draws
                ]
                counted = count_tables(own, n_classes, labellings, jobs=jobs,
                                       progress=bar.update if progress else None, floor=self.floor,
                                       picked=self.picked)
                self.n_classes[side] = n_classes
                self.tables[side] = counted.tables
                self.parts[side] = counted

    def stack(self, side: str, which: int) -> Any:
        """The table stack of labelling ``which`` (0: the submission; 2 + d: chance draw d)."""
        if (side, which) not in self._stacks:
            self._stacks[side, which] = TableStack.of_tables(_trimmed(self.tables[side][which]))
        return self._stacks[side, which]

    def map_hits(self, side: str) -> np.ndarray:
        """Items on which every set agrees with the MAP labels (identity matching)."""
        tables = self.tables[side][1]
        k = min(tables.shape[1], tables.shape[2])
        return tables[:, np.arange(k), np.arange(k)].sum(axis=1)

    def ari(self, side: str) -> np.ndarray:
        """ARI of every set against the submission's labels of ``side``."""
        tables = self.tables[side][0]
        sums = table_pair_sums(tables, int(tables[0].sum()))
        return np.array([
            ari_from_counts(*pair_counts(t, r, c, sums.n))
            for t, r, c in zip(sums.cells, sums.rows, sums.cols, strict=True)
        ], dtype=np.float64)

    def chance_risk(self) -> tuple[float, float]:
        """:func:`~lbm_bench.metrics.chance_risk` (seed :data:`CHANCE_SEED`) from the draws'
        tables."""
        risks = []
        for d in range(CHANCE_DRAWS):
            rows, cols = self.stack("rows", 2 + d), self.stack("cols", 2 + d)
            labels = [np.arange(stack.k_pred) for stack in (rows, cols)]
            risks.append(conditional_risk_of_tables(rows, cols, *labels, [self.keep.shape[0]]).risk)
        risks = np.array(risks)
        return float(risks.mean()), float(risks.std(ddof=1) / math.sqrt(CHANCE_DRAWS))

    def floor_losses(self, jobs: int) -> np.ndarray:
        """Per-set cross-fitted losses of the floor, recomputed from the stored sets
        (deterministic);
        their mean is the stored ``@bayes_risk`` when the file was written by the same rule."""
        table = self.table
        chain_lengths = table.gibbs.chain_lengths
        sides = []
        for side in ("rows", "cols"):
            part = self.parts[side]
            sides.append(
                LabelSide.of_minority(part.picked_sets(self.picked), self.n_classes[side], part.ref,
                                      table.gibbs.n_samples, part.minority,
                                      bounds=side_bounds(chain_lengths)))
            part.counts, part.items = [], []  # in the side's blocks now
        g, m = table.model.block_shape
        pairs = check_starts([(table.map_rows, table.map_cols)], table.shape[0], table.shape[1], g,
                             m)
        with in_threads():  # the descents share the sides here; their kernels free the GIL
            _, losses, _ = cross_fitted_sides(chain_lengths, *sides, pairs, FLOOR_SET_STARTS,
                                              FLOOR_MAX_SWEEPS, jobs=jobs)
        return losses


def _n_classes(sets: Any, n_clusters: int) -> int:
    """Reference classes to count: the table's (a stored file's sets are checked against it as
    they are read); for sets in memory, also their largest label plus one."""
    if isinstance(sets, np.ndarray):
        return max(int(n_clusters), int(sets.max()) + 1 if sets.size else 1)
    return int(n_clusters)


def _small(codes: np.ndarray) -> np.ndarray:
    """Codes in the smallest unsigned dtype that holds them (what crosses to the workers)."""
    return codes.astype(np.min_scalar_type(max(0, int(codes.max()) if codes.size else 0)))


def _chance_draws(table: Table, n_draws: int) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """The chance level's random labellings (seed :data:`CHANCE_SEED`), drawn in the order of
    :func:`~lbm_bench.metrics.chance.chance_risk_of_sets`, each renumbered ``0..k-1``."""
    rng = np.random.default_rng(CHANCE_SEED)
    pi, rho = table.model.row_proportions, table.model.col_proportions
    n, d = table.shape
    rows, cols = [], []
    for _ in range(n_draws):
        rows.append(_small(label_codes(rng.choice(pi.shape[0], size=n, p=pi))[0]))
        cols.append(_small(label_codes(rng.choice(rho.shape[0], size=d, p=rho))[0]))
    return rows, cols


def _missing_note(table: Table) -> str:
    """One line on the table's missing entries (empty for a complete table)."""
    from lbm_bench._validation import describe_percent
    from lbm_bench.models.data import TableData

    data = TableData.incomplete(table.data, name="data")
    if not data.n_missing:
        return ""
    n, d = table.shape
    return (f"{data.n_missing} of {n * d} ({describe_percent(data.missing_fraction)}; mechanism "
            f"{table.missing_mechanism}): the Gibbs sets, the floor and every risk here are given "
            "the observed "
            "entries; your labels are scored on every row and column")


def _cluster_warning(predicted: list[int], table: list[int]) -> str:
    """One line when the submitted numbers of clusters differ from the table's, else ``""``."""
    if predicted == table:
        return ""
    sides = [f"{p} {side} cluster{'s' if p != 1 else ''} where the table has {t}"
             for side, p, t in zip(("row", "column"), predicted, table, strict=True) if p != t]
    return (f"your labels have {' and '.join(sides)}; the score is still the conditional risk "
            "under the best matching (extra clusters count as errors)")
