"""Choosing the numbers of clusters of a latent block model: the ICL over (g, m).

:func:`select_lbm` fits block CEM (or VEM) at numbers of clusters ``(g, m)`` up to
``max_clusters`` and keeps the labelling of highest ICL
(:mod:`lbm_bench.algorithms.criteria`). Two searches:

``"grid"``
    Every cell ``(g, m)`` of ``1..G x 1..M``, each from ``n_init`` k-means++ seeded
    starts (the labelling of highest criterion kept per cell).
``"path"``
    Splits from ``(1, 1)`` and merges, as sparsebm's and blockmodels' explorations do:
    from the best cell so far, every cluster of one side is split in two (by 2-means on
    its rows, or columns, and on their profiles over the other side's clusters), the
    candidates ranked by their criterion before any EM and the best few refined by EM;
    the ascent goes on a few steps past the best cell; then every cell at or above the
    best one proposes merges of two of its clusters (ranked from the block sums alone,
    which add up), refined the same way; and k-means++ starts are made at the best cell
    (``n_init``) and at the three cells with one more cluster on one side or both (four
    tenths as many), where a search that stops too early misses the counts. Rounds repeat until the
    best criterion stops growing. Before returning, the search checks the cells next to its
    choice (issue 34): k-means++ starts at those no round started, the merges and splits
    that lead from each back to the choice, and two runs from the chosen labelling with a
    quarter of its rows and columns moved at random; it goes on from any better cell.
    Last, the best labellings of the chosen cell and of the cells next to it are polished by
    greedy single-item moves (:mod:`lbm_bench.algorithms.moves`: a row or a column moved to
    another cluster while that raises the exact ICL), where block CEM, which ends at a
    labelling no move improves by the complete likelihood at the fitted parameters, leaves
    a better one by the criterion; the choice moves if a neighbour ends above it.

Every EM run is a task of its own; the random draws (k-means++ seedings) are made in the main
process from named streams (a grid's ``"cell"``, a path's ``"round"``: ``_seeds.SEED_TREE``), so
that the same ``rng`` gives the same selection whatever ``jobs`` (BLAS pinned to one thread).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from lbm_bench._seeds import draw_seed, stream
from lbm_bench._validation import check_choice, check_count
from lbm_bench.algorithms.criteria import Criterion, LabelSums
from lbm_bench.algorithms.em_problem import EMProblem, col_totals, row_totals
from lbm_bench.algorithms.embedding import embed_rows
from lbm_bench.algorithms.inputs import few_values, infer_kind
from lbm_bench.algorithms.kmeans import kmeans, onehot
from lbm_bench.algorithms.lbm_em import EMRun, LBMFit, em_inputs, em_run, run_at_labels
from lbm_bench.algorithms.moves import greedy_moves
from lbm_bench.metrics.contingency_tables import compact_labels
from lbm_bench.models.data import TableData
from lbm_bench.models.family import Family
from lbm_bench.tasks.pool import TaskPool
from lbm_bench.tasks.threads import single_blas_thread

__all__ = ["DEFAULT_SEARCH", "LBMSelection", "SEARCHES", "cem_icl", "check_max_clusters", "select_lbm", "vem_icl"]

#: The searches of :func:`select_lbm`.
SEARCHES = ("path", "grid")
#: The default search (docs/benchmark.md: as accurate as the grid, at a fraction of its cost).
DEFAULT_SEARCH = "path"
#: Split or merge candidates of one move refined by EM (the best by their criterion before EM).
KEEP = 2
#: Steps the ascent goes on past the best cell so far.
PATIENCE = 2
#: Largest number of rounds (ascent, descent, starts) of the path search.
MAX_ROUNDS = 4
#: Lloyd iterations of the 2-means that splits a cluster.
SPLIT_ITER = 10
#: Shares of ``n_init`` (rounded up) the k-means++ starts of each cell with one more cluster
#: in a round of the path search, and of each other cell next to the choice before it returns.
UP_STARTS = 0.4
NEIGHBOUR_STARTS = 0.1
#: Runs from the chosen labelling perturbed, before the path search returns, and the
#: probability that a row or column is moved to a cluster drawn at random.
RESTARTS = 2
PERTURB = 0.25


@dataclass(frozen=True)
class LBMSelection:
    """The numbers of clusters chosen by :func:`select_lbm`, and the labels.

    Attributes
    ----------
    rows : ndarray of shape (n_rows,) of int64
        Row labels ``0 .. n_row_clusters - 1``.
    cols : ndarray of shape (n_cols,) of int64
        Column labels ``0 .. n_col_clusters - 1``.
    n_row_clusters, n_col_clusters : int
        The chosen numbers of clusters.
    fit : LBMFit
        The fit of the chosen cell (``start_criteria``: the EM criterion of every run
        that ended in that cell).
    criterion_table : ndarray of shape max_clusters
        The best criterion found at each cell ``(g, m)`` (index ``[g - 1, m - 1]``), NaN
        where the search made no fit.
    criterion : str
        The criterion's form (``"exact-icl"`` or ``"bic-icl"``).
    search : str
        ``"path"`` or ``"grid"``.
    n_runs : int
        EM runs made (the cost: a fit at known counts makes ``n_init`` of them).
    """

    rows: np.ndarray
    cols: np.ndarray
    n_row_clusters: int
    n_col_clusters: int
    fit: LBMFit
    criterion_table: np.ndarray
    criterion: str
    search: str
    n_runs: int

    @property
    def value(self) -> float:
        """The criterion of the chosen labelling."""
        return float(self.criterion_table[self.n_row_clusters - 1, self.n_col_clusters - 1])


def check_max_clusters(name: str, value: Any, shape: tuple[int, int] | None = None) -> tuple[int, int]:
    """``(G, M)``: two positive integers, at most the table's ``shape`` when given."""
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence) or len(value) != 2:
        raise TypeError(f"{name} must be a pair of integers (G, M), got {value!r}")
    G, M = check_count(f"{name}[0]", value[0]), check_count(f"{name}[1]", value[1])
    if shape is not None and (G > shape[0] or M > shape[1]):
        raise ValueError(f"{name} ({G}, {M}) exceeds the table's {shape[0]} rows and {shape[1]} columns")
    return G, M


@dataclass
class _Cell:
    """The best labelling found at one cell, and the EM criteria of every run that ended there."""

    value: float
    rows: np.ndarray
    cols: np.ndarray
    run: EMRun
    fit_criteria: list = field(default_factory=list)
    version: int = 0


#: One EM run to make: (g, m, starting row labels, starting column labels), labels using every cluster.
_Task = tuple[int, int, np.ndarray, np.ndarray]


def _run_tasks(criterion: Criterion, method: str, tasks: list[_Task]) -> list:
    """EM runs from the tasks' labels, each with the criterion of its (compacted) labels."""
    out = []
    for g, m, rows, cols in tasks:
        run = em_run(criterion.problem, g, m, method=method, labels=(rows, cols))
        rows, cols = compact_labels(run.rows), compact_labels(run.cols)
        out.append((criterion(rows, cols), rows, cols, run))
    return out


class _Search:
    """A table's criterion, its row and column embeddings, the best labelling found at each
    cell, and the runner of EM tasks (in order, or in ``jobs`` contiguous chunks)."""

    def __init__(self, criterion: Criterion, method: str, bounds: tuple[int, int], jobs: int,
                 pool: TaskPool | None) -> None:
        self.criterion, self.method, self.bounds = criterion, method, bounds
        self.jobs, self.pool = jobs, pool
        rank = max(bounds)
        row_points, col_points = criterion.problem.seed_points()
        self.embeddings = (embed_rows(row_points, rank), embed_rows(col_points, rank))
        self.cells: dict[tuple[int, int], _Cell] = {}
        self.n_runs = 0

    def run(self, tasks: list[_Task]) -> None:
        """Make the EM runs of ``tasks`` and keep each cell's best labelling (the tasks'
        order decides between equal criteria: the same result whatever ``jobs``)."""
        if not tasks:
            return
        if self.pool is None or len(tasks) == 1:
            results = _run_tasks(self.criterion, self.method, tasks)
        else:  # each chunk a task of the pool, on one BLAS thread: the bytes of this process
            chunks = [list(c) for c in np.array_split(np.arange(len(tasks)), min(self.jobs, len(tasks)))]
            calls = [(self.criterion, self.method, [tasks[i] for i in chunk]) for chunk in chunks]
            parts = self.pool.map(_run_tasks, calls, pin=True)
            results = [result for part in parts for result in part]
        self.n_runs += len(tasks)
        for value, rows, cols, run in results:
            key = (int(rows.max()) + 1, int(cols.max()) + 1)
            if key[0] > self.bounds[0] or key[1] > self.bounds[1]:
                continue
            cell = self.cells.get(key)
            if cell is None:
                cell = self.cells[key] = _Cell(value, rows, cols, run)
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
            cell.run, cell.version = run_at_labels(self.criterion.problem, cell.run, rows, cols), cell.version + 1

    def best(self) -> tuple[int, int]:
        """The cell of highest criterion (the fewer clusters between equals)."""
        return max(self.cells, key=lambda key: (self.cells[key].value, -key[0] - key[1], -key[0]))

    def value(self, key: tuple[int, int]) -> float:
        return self.cells[key].value if key in self.cells else -np.inf

    def inside(self, key: tuple[int, int]) -> bool:
        return 1 <= key[0] <= self.bounds[0] and 1 <= key[1] <= self.bounds[1]

    def around(self, key: tuple[int, int]) -> list[tuple[int, int]]:
        """The cells next to ``key`` within the bounds: a cluster more or less on a side, or both."""
        near = [(key[0] + a, key[1] + b) for a in (-1, 0, 1) for b in (-1, 0, 1) if (a, b) != (0, 0)]
        return [cell for cell in near if self.inside(cell)]

    def starts(self, key: tuple[int, int], n_starts: int, rng: np.random.Generator) -> list[_Task]:
        """``n_starts`` tasks at the cell ``key`` from k-means on the row and column embeddings."""
        g, m = key
        rows, cols = self.embeddings
        return [(g, m, kmeans(rows, g, n_init=1, max_iter=SPLIT_ITER, rng=rng),
                 kmeans(cols, m, n_init=1, max_iter=SPLIT_ITER, rng=rng)) for _ in range(n_starts)]


def _grid(search: _Search, n_init: int, root: np.random.SeedSequence) -> None:
    G, M = search.bounds
    cells = [(g, m) for g in range(1, G + 1) for m in range(1, M + 1)]
    tasks = []
    for i, key in enumerate(cells):
        rng = np.random.default_rng(stream(root, "grid search", "cell", i))
        tasks += search.starts(key, n_init, rng)
    search.run(tasks)


# -- the path search: splits and merges ------------------------------------------------------
def _splits(search: _Search, key: tuple[int, int], side: int, rng: np.random.Generator) -> list[tuple]:
    """The splits of one cluster of ``side`` (0 rows, 1 columns) of the cell ``key`` in two,
    best first by their criterion before EM: ``(criterion, labels of that side)``. Each
    cluster of two items or more is split by 2-means on its items' embedding and,
    separately, on their profiles (mean statistics over the other side's clusters)."""
    crit, cell = search.criterion, search.cells[key]
    problem = crit.problem
    own, other = (cell.rows, cell.cols) if side == 0 else (cell.cols, cell.rows)
    k = int(own.max()) + 1
    other_onehot = onehot(other, int(other.max()) + 1)
    other_counts = other_onehot.sum(0)
    sums = problem.row_sums(other_onehot) if side == 0 else problem.col_sums(other_onehot)  # (p, items, clusters)
    profiles = np.concatenate(list(sums / np.maximum(other_counts, 1.0)), axis=1)
    ranked = []
    for c in range(k):
        members = np.flatnonzero(own == c)
        if members.size < 2:
            continue
        for features in (search.embeddings[side], profiles):
            halves = kmeans(features[members], 2, n_init=1, max_iter=SPLIT_ITER, rng=rng)
            labels = own.copy()
            labels[members[halves == 1]] = k
            new = onehot(labels, k + 1)
            if side == 0:
                split = LabelSums(row_totals(new, sums), new.sum(0), other_counts)
            else:
                split = LabelSums(col_totals(sums, new), other_counts, new.sum(0))
            ranked.append((crit.of_sums(split), len(ranked), labels))
    ranked.sort(key=lambda item: (-item[0], item[1]))
    return [(value, labels) for value, _, labels in ranked]


def _split_tasks(search: _Search, key: tuple[int, int], rng: np.random.Generator) -> list[_Task]:
    """EM tasks towards the three cells with one more row, column, or row and column cluster:
    the ``KEEP`` best splits of each side, and the ``KEEP`` best of their pairs."""
    g, m = key
    cell = search.cells[key]
    tasks = []
    best = {}
    for side, target in ((0, (g + 1, m)), (1, (g, m + 1))):
        if search.inside(target):
            best[side] = _splits(search, key, side, rng)[:KEEP]
            tasks += [(*target, labels, cell.cols) if side == 0 else (*target, cell.rows, labels)
                      for _, labels in best[side]]
    if len(best) == 2 and best[0] and best[1] and search.inside((g + 1, m + 1)):
        pairs = sorted(((search.criterion(rows, cols), i, j, rows, cols)
                        for i, (_, rows) in enumerate(best[0]) for j, (_, cols) in enumerate(best[1])),
                       key=lambda item: (-item[0], item[1], item[2]))
        tasks += [(g + 1, m + 1, rows, cols) for *_, rows, cols in pairs[:KEEP]]
    return tasks


def _merge_tasks(search: _Search, key: tuple[int, int], side: int) -> list[_Task]:
    """EM tasks from the ``KEEP`` best merges of two clusters of ``side`` of the cell ``key``,
    ranked by their criterion from the block sums (which add up: no pass over the table)."""
    crit, cell = search.criterion, search.cells[key]
    own = cell.rows if side == 0 else cell.cols
    k = int(own.max()) + 1
    if k < 2:
        return []
    sums = crit.sums(cell.rows, cell.cols)
    ranked = sorted(((crit.of_sums(crit.merged(sums, side, a, b)), a, b) for a in range(k) for b in range(a + 1, k)),
                    key=lambda item: (-item[0], item[1], item[2]))
    g, m = key
    tasks = []
    for _, a, b in ranked[:KEEP]:
        labels = np.where(own == b, a, own)
        labels = np.where(labels > b, labels - 1, labels)
        tasks.append((g - 1, m, labels, cell.cols) if side == 0 else (g, m - 1, cell.rows, labels))
    return tasks


def _ascend(search: _Search, start: tuple[int, int], explored: set, rng: np.random.Generator) -> tuple[int, int]:
    """Splits from ``start``, moving to the best of the cells with one more cluster on one
    side or both, until ``PATIENCE`` steps pass without a better criterion than the best so far."""
    current, stall = start, 0
    best = search.value(search.best())
    while True:
        g, m = current
        mark = ("split", current, search.cells[current].version)
        if mark not in explored:
            explored.add(mark)
            search.run(_split_tasks(search, current, rng))
        ups = [t for t in ((g + 1, m), (g, m + 1), (g + 1, m + 1)) if t in search.cells]
        if not ups:
            return current
        current = max(ups, key=search.value)
        if search.value(current) > best:
            best, stall = search.value(current), 0
        else:
            stall += 1
            if stall > PATIENCE:
                return current


def _descend(search: _Search, explored: set, top: tuple[int, int]) -> None:
    """Merges down from ``top``: from each cell, the best merges of two row clusters and of
    two column clusters, moving to the better of the two cells with one cluster less,
    until the level of the best cell's down-neighbours (sparsebm's merge strategy)."""
    current = top
    while current in search.cells and sum(current) >= sum(search.best()):
        g, m = current
        tasks = []
        for side in (0, 1):
            mark = ("merge", current, side, search.cells[current].version)
            if mark not in explored:
                explored.add(mark)
                tasks += _merge_tasks(search, current, side)
        search.run(tasks)
        downs = [t for t in ((g - 1, m), (g, m - 1)) if t in search.cells]
        if not downs:
            return
        current = max(downs, key=search.value)


def _path(search: _Search, n_init: int, root: np.random.SeedSequence) -> None:
    n_rows, n_cols = search.criterion.shape
    search.run([(1, 1, np.zeros(n_rows, np.int64), np.zeros(n_cols, np.int64))])
    explored: set = set()
    started: dict = {}  # k-means++ starts made at each cell
    for number in range(MAX_ROUNDS + 1):
        before = search.value(search.best())
        rng = np.random.default_rng(stream(root, "path search", "round", number))
        if number < MAX_ROUNDS:
            _round(search, n_init, explored, started, rng)
            if search.value(search.best()) > before:
                continue
        chosen = search.best()
        _check(search, n_init, explored, started, rng)
        if search.best() == chosen:  # no better model next to it (a better labelling of it, maybe)
            break
    _polish(search)


def _round(search: _Search, n_init: int, explored: set, started: dict, rng: np.random.Generator) -> None:
    """One round of the path: the ascent from the best cell, the descent from its top, and
    k-means++ starts at the best cell (``n_init`` in all) and at the three cells with one
    more cluster on one side or both (``UP_STARTS`` of ``n_init`` each), where a search that
    stops too early misses the counts (the ascent reaches the cell with one more cluster on
    both sides from splits alone). ``started`` counts the starts made at each cell."""
    top = _ascend(search, search.best(), explored, rng)
    _descend(search, explored, top)
    g, m = search.best()
    wanted = {(g, m): n_init, **{c: _starts(UP_STARTS, n_init) for c in ((g + 1, m), (g, m + 1), (g + 1, m + 1))}}
    more = {c: n - started.get(c, 0) for c, n in wanted.items() if search.inside(c) and n > started.get(c, 0)}
    for cell, n in more.items():
        started[cell] = started.get(cell, 0) + n
    search.run([task for cell, n in more.items() for task in search.starts(cell, n, rng)])
    for cell in more:
        _descend(search, explored, cell)


def _starts(share: float, n_init: int) -> int:
    return max(1, math.ceil(share * n_init))


def _check(search: _Search, n_init: int, explored: set, started: dict, rng: np.random.Generator) -> None:
    """Before the path returns: k-means++ starts at the cells next to the best one that no
    round started (``NEIGHBOUR_STARTS`` of ``n_init`` each: a cluster less on one side or
    both, or less on one and more on the other), the moves that lead from each cell next to
    it back to it (merges from the cells above, splits from those below), and ``RESTARTS``
    runs from the best labelling perturbed. The search goes on from a better cell."""
    g, m = search.best()
    around = search.around((g, m))
    cells = {c: _starts(NEIGHBOUR_STARTS, n_init) for c in around if c not in started}
    started.update(cells)
    search.run([task for cell, n in cells.items() for task in search.starts(cell, n, rng)])
    tasks = []
    for cell in around:
        mark = ("split", cell, search.cells[cell].version) if cell in search.cells else None
        if sum(cell) < g + m and mark is not None and mark not in explored:
            explored.add(mark)
            tasks += _split_tasks(search, cell, rng)
    search.run(tasks)
    for cell in around:
        if sum(cell) > g + m:
            _descend(search, explored, cell)
    _restarts(search, search.best(), rng)


def _restarts(search: _Search, key: tuple[int, int], rng: np.random.Generator) -> None:
    """``RESTARTS`` runs at the cell ``key``, each from its best labelling so far with every
    row and column moved to a cluster drawn at random with probability ``PERTURB``."""
    g, m = key
    if g == 1 and m == 1:
        return
    for _ in range(RESTARTS):
        cell = search.cells[key]
        rows, cols = cell.rows.copy(), cell.cols.copy()
        moved_rows, moved_cols = rng.random(rows.size) < PERTURB, rng.random(cols.size) < PERTURB
        rows[moved_rows] = rng.integers(0, g, int(moved_rows.sum()))
        cols[moved_cols] = rng.integers(0, m, int(moved_cols.sum()))
        if np.unique(rows).size == g and np.unique(cols).size == m:
            search.run([(g, m, rows, cols)])


def _polish(search: _Search) -> None:
    """Greedy single-item moves (:func:`~lbm_bench.algorithms.moves.greedy_moves`) on the best labelling
    of the chosen cell and of every cell next to it, until all are polished (the choice may move)."""
    polished: set = set()
    while todo := [c for c in (search.best(), *search.around(search.best())) if c in search.cells.keys() - polished]:
        polished.update(todo)
        for cell in todo:
            search.polish(cell)


_SEARCH_FUNCTIONS: dict[str, Callable[[_Search, int, np.random.SeedSequence], None]] = {"path": _path, "grid": _grid}


def select_lbm(
    X: ArrayLike,
    max_clusters: tuple[int, int] = (8, 8),
    *,
    kind: Family | str | None = None,
    method: str = "cem",
    criterion: str = "icl",
    search: str = DEFAULT_SEARCH,
    n_init: int = 10,
    jobs: int = 1,
    rng: np.random.Generator | int | None = None,
) -> LBMSelection:
    """Choose the numbers of clusters of a latent block model by ICL, and fit it.

    Parameters
    ----------
    X : array-like or scipy.sparse matrix of shape (n_rows, n_cols)
        The table (a sparse table stays sparse: every block sum is a sparse product).
    max_clusters : (int, int), default=(8, 8)
        The largest numbers of row and column clusters ``(G, M)`` considered, at most
        the table's numbers of rows and columns.
    kind : {"gaussian", "poisson", "bernoulli", "categorical"} or Family, optional
        Family of the blocks; inferred from the table when None (see :func:`fit_lbm`).
    method : {"cem", "vem"}, default="cem"
        Block CEM or VEM (the criterion is computed at the MAP labels of VEM, which the
        path's polish may move: the model is then the M-step at the labels returned).
    criterion : {"icl", "exact-icl", "bic-icl"}, default="icl"
        The exact ICL or its BIC-type approximation (:mod:`lbm_bench.algorithms.criteria`);
        ``"icl"`` is the family's choice (``default_icl``: exact for Bernoulli, Poisson and
        categorical blocks, see docs/benchmark.md for Gaussian blocks).
    search : {"path", "grid"}, default="path"
        Splits and merges from ``(1, 1)``, or every cell (see the module docstring).
    n_init : int, default=10
        k-means++ seeded starts per cell of the grid; of the path search, at the best
        cell and the two cells with one more cluster (its other runs start from splits
        and merges).
    jobs : int, default=1
        Parallel workers (:mod:`lbm_bench.tasks`) for the EM runs; the result does not depend on it.
    rng : None, int or numpy.random.Generator

    Returns
    -------
    LBMSelection

    Examples
    --------
    >>> from lbm_bench import random_model
    >>> X, z, w = random_model("bernoulli", 3, 2, scale=3.0, rng=0).sample(80, 60, rng=1)
    >>> chosen = select_lbm(X, (4, 4), rng=2)
    >>> (chosen.n_row_clusters, chosen.n_col_clusters), chosen.criterion, chosen.criterion_table.shape
    ((3, 2), 'exact-icl', (4, 4))
    """
    rng = np.random.default_rng(rng)
    data, family = em_inputs(X, kind, method)  # missing entries (NaN, masked, explicit NaN of a sparse table)
    bounds = check_max_clusters("max_clusters", max_clusters, data.shape)
    check_choice("search", search, SEARCHES)
    n_init, jobs = check_count("n_init", n_init), check_count("jobs", jobs)
    crit = Criterion(EMProblem(data, family, method), criterion)
    _warn_continuous_on_few_values(data, family)
    root = np.random.SeedSequence(draw_seed(rng))
    with single_blas_thread():
        if jobs == 1:
            state = _Search(crit, method, bounds, jobs, None)
            _SEARCH_FUNCTIONS[search](state, n_init, root)
        else:
            with TaskPool(jobs) as pool:
                state = _Search(crit, method, bounds, jobs, pool)
                _SEARCH_FUNCTIONS[search](state, n_init, root)
    return _selection(state, search)


def _warn_continuous_on_few_values(data: TableData, family: Family) -> None:
    """Warn when blocks of real values (a family stored as floats) are fitted to a table of two
    values: each split towards purer blocks shrinks their variances without bound, so the
    criterion keeps rising and the choice runs to ``max_clusters`` with small clusters."""
    if np.dtype(family.model.table_dtype).kind != "f":
        return
    values = few_values(data, 2)
    if values is None or len(values) < 2:
        return
    integral = all(v == round(v) for v in values)
    better = infer_kind(np.array(values, dtype=np.int64)[None, :]) if integral else None
    warnings.warn(
        f"the table holds only the values {values[0]:g} and {values[1]:g}: {family.kind} blocks fitted to it have "
        "variances shrinking towards 0 as clusters get purer, so the choice of the numbers of clusters runs to "
        "max_clusters with small clusters" + (f"; use kind={better!r}" if better and better != family.kind else ""),
        UserWarning, stacklevel=3,
    )


def _selection(search: _Search, name: str) -> LBMSelection:
    table = np.full(search.bounds, np.nan)
    for (g, m), cell in search.cells.items():
        table[g - 1, m - 1] = cell.value
    key = search.best()
    cell = search.cells[key]
    fit = LBMFit.from_run(search.criterion.problem, cell.run, cell.fit_criteria, search.method,
                          labels=(cell.rows, cell.cols))
    return LBMSelection(rows=cell.rows, cols=cell.cols, n_row_clusters=key[0], n_col_clusters=key[1], fit=fit,
                        criterion_table=table, criterion=search.criterion.form, search=name, n_runs=search.n_runs)


def cem_icl(
    X: ArrayLike,
    max_row_clusters: int,
    max_col_clusters: int,
    *,
    kind: str | None = None,
    rng: np.random.Generator | int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Block CEM with the numbers of clusters chosen by ICL: :func:`select_lbm` with its
    defaults (the path search, the family's ICL, 10 starts). An algorithm of the
    unknown-clusters track of ``lbm-bench benchmark`` (``cem-icl``).

    Returns
    -------
    rows : ndarray of shape (n_rows,) of int64
    cols : ndarray of shape (n_cols,) of int64
    """
    chosen = select_lbm(X, (max_row_clusters, max_col_clusters), kind=kind, method="cem", rng=rng)
    return chosen.rows, chosen.cols


def vem_icl(
    X: ArrayLike,
    max_row_clusters: int,
    max_col_clusters: int,
    *,
    kind: str | None = None,
    rng: np.random.Generator | int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Block VEM with the numbers of clusters chosen by ICL at its MAP labels (``vem-icl``);
    see :func:`cem_icl`."""
    chosen = select_lbm(X, (max_row_clusters, max_col_clusters), kind=kind, method="vem", rng=rng)
    return chosen.rows, chosen.cols


#: The algorithm each is compared with on the unknown-clusters track: itself told the counts.
cem_icl.given_counts = "cem"
vem_icl.given_counts = "vem"
