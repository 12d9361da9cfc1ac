"""The search over the numbers of clusters ``(g, m)`` of :func:`~lbm_bench.algorithms.select_lbm`.

A :class:`CellSearch` holds a table's criterion, its row and column embeddings, and the best
labelling found at each cell ``(g, m)`` (a :class:`SearchCell`); it runs EM tasks (each from
given labels) in this process or as tasks of a pool, and keeps each cell's best labelling,
the tasks' order deciding between equal criteria, so that the result does not depend on the
number of workers. :func:`grid_search` starts at every cell of the grid; the path of splits
and merges is :mod:`lbm_bench.algorithms.path_search`'s.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from lbm_bench._seeds import stream
from lbm_bench.algorithms.criteria import Criterion
from lbm_bench.algorithms.embedding import embed_rows
from lbm_bench.algorithms.kmeans import kmeans
from lbm_bench.algorithms.lbm_em import EMRun, em_run, run_at_labels
from lbm_bench.algorithms.moves import greedy_moves
from lbm_bench.metrics.contingency_tables import compact_labels
from lbm_bench.tasks.pool import TaskPool

__all__ = ["SPLIT_ITER", "CellSearch", "EMTask", "SearchCell", "grid_search", "run_em_tasks"]


#: Lloyd iterations of the 2-means that splits a cluster.
SPLIT_ITER = 10


@dataclass
class SearchCell:
    """The best labelling found at one cell, and the EM criteria of every run that ended there."""

    value: float
    rows: np.ndarray
    cols: np.ndarray
    run: EMRun
    fit_criteria: list = field(default_factory=list)
    version: int = 0


#: One EM run to make: (g, m, starting row labels, starting column labels), labels using every
#: cluster.
EMTask = tuple[int, int, np.ndarray, np.ndarray]


def run_em_tasks(criterion: Criterion, method: str, tasks: list[EMTask]) -> list:
    """EM runs from the tasks' labels, each with the criterion of its (compacted) labels."""
    out = []
    for g, m, rows, cols in tasks:
        run = em_run(criterion.problem, g, m, method=method, labels=(rows, cols))
        rows, cols = compact_labels(run.rows), compact_labels(run.cols)
        out.append((criterion(rows, cols), rows, cols, run))
    return out


class CellSearch:
    """A table's criterion, its row and column embeddings, the best labelling found at each
    cell, and the runner of EM tasks (in order, or in ``jobs`` contiguous chunks).

    ``bounds`` are the largest counts of the search; ``limit`` (at most ``bounds``, the same by
    default) the counts of the cells the search may make now: the path search raises it stage
    by stage, so that a search of larger bounds goes through the whole search of smaller ones
    first. The embeddings have the rank of the larger side of the limit (``embeddings``)."""

    def __init__(self, criterion: Criterion, method: str, bounds: tuple[int, int], jobs: int,
                 pool: TaskPool | None) -> None:
        self.criterion, self.method, self.bounds = criterion, method, bounds
        self.jobs, self.pool = jobs, pool
        self.limit = bounds
        self._points = criterion.problem.seed_points()
        self._embeddings: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self.cells: dict[tuple[int, int], SearchCell] = {}
        self.n_runs = 0

    @property
    def embeddings(self) -> tuple[np.ndarray, np.ndarray]:
        """The rows' and columns' coordinates on the leading singular vectors, of the rank of
        the larger side of ``limit`` (computed once per rank)."""
        rank = max(self.limit)
        if rank not in self._embeddings:
            self._embeddings[rank] = (embed_rows(self._points[0], rank),
                                      embed_rows(self._points[1], rank))
        return self._embeddings[rank]

    def run(self, tasks: list[EMTask]) -> None:
        """Make the EM runs of ``tasks`` and keep each cell's best labelling (the tasks'
        order decides between equal criteria: the same result whatever ``jobs``)."""
        if not tasks:
            return
        if self.pool is None or len(tasks) == 1:
            results = run_em_tasks(self.criterion, self.method, tasks)
        else:  # each chunk a task of the pool, on one BLAS thread: the bytes of this process
            chunks = [
                list(c) for c in np.array_split(np.arange(len(tasks)), min(self.jobs, len(tasks)))
            ]
            calls = [(self.criterion, self.method, [tasks[i] for i in chunk]) for chunk in chunks]
            parts = self.pool.map(run_em_tasks, calls, pin=True)
            results = [result for part in parts for result in part]
        self.n_runs += len(tasks)
        for value, rows, cols, run in results:
            key = (int(rows.max()) + 1, int(cols.max()) + 1)
            if not self.inside(key):
                continue
            cell = self.cells.get(key)
            if cell is None:
                cell = self.cells[key] = SearchCell(value, rows, cols, run)
            elif value > cell.value:
                cell.value, cell.rows, cell.cols, cell.run = value, rows, cols, run
                cell.version += 1
            cell.fit_criteria.append(run.criterion)

    def polish(self, key: tuple[int, int]) -> None:
        """The best labelling of the cell ``key`` improved by greedy single-item moves, its
        model re-estimated at the new labels."""
        cell = self.cells[key]
        rows, cols, value = greedy_moves(self.criterion, cell.rows, cell.cols)
        if value > cell.value:
            cell.value, cell.rows, cell.cols = value, rows, cols
            cell.run, cell.version = run_at_labels(self.criterion.problem, cell.run, rows,
                                                   cols), cell.version + 1

    def best(self) -> tuple[int, int]:
        """The cell of highest criterion (the fewer clusters between equals)."""
        return max(self.cells, key=lambda key: (self.cells[key].value, -key[0] - key[1], -key[0]))

    def value(self, key: tuple[int, int]) -> float:
        return self.cells[key].value if key in self.cells else -np.inf

    def inside(self, key: tuple[int, int]) -> bool:
        """Whether the cell ``key`` is within the current ``limit``."""
        return 1 <= key[0] <= self.limit[0] and 1 <= key[1] <= self.limit[1]

    def around(self, key: tuple[int, int]) -> list[tuple[int, int]]:
        """The cells next to ``key`` within the limit: a cluster more or less on a side, or
        both."""
        near = [(key[0] + a, key[1] + b) for a in (-1, 0, 1) for b in (-1, 0, 1)
                if (a, b) != (0, 0)]
        return [cell for cell in near if self.inside(cell)]

    def starts(self, key: tuple[int, int], n_starts: int, rng: np.random.Generator) -> list[EMTask]:
        """``n_starts`` tasks at the cell ``key`` from k-means on the row and column embeddings."""
        g, m = key
        rows, cols = self.embeddings
        return [(g, m, kmeans(rows, g, n_init=1, max_iter=SPLIT_ITER, rng=rng),
                 kmeans(cols, m, n_init=1, max_iter=SPLIT_ITER, rng=rng)) for _ in range(n_starts)]


def grid_search(search: CellSearch, n_init: int, root: np.random.SeedSequence) -> None:
    """``n_init`` k-means++ seeded starts at every cell of the grid, each cell's from its own
    named stream (``"cell"`` of ``"grid search"``)."""
    G, M = search.bounds
    cells = [(g, m) for g in range(1, G + 1) for m in range(1, M + 1)]
    tasks = []
    for i, key in enumerate(cells):
        rng = np.random.default_rng(stream(root, "grid search", "cell", i))
        tasks += search.starts(key, n_init, rng)
    search.run(tasks)
