"""The path search of :func:`~lbm_bench.algorithms.select_lbm`: splits and merges.

As sparsebm's and blockmodels' explorations do: from the best cell so far, every cluster of
one side is split in two (by 2-means on its rows, or columns, and on their profiles over the
other side's clusters), the candidates ranked by their criterion before any EM and the best
few refined by EM; the ascent goes on a few steps past the best cell; then every cell at or
above the best one proposes merges of two of its clusters (ranked from the block sums alone,
which add up), refined the same way; and k-means++ starts are made at the best cell and at
the cells with one more cluster, rounds repeating until the best criterion stops growing.
Before returning, the search checks the cells next to its choice, then polishes the best
labellings there by greedy single-item moves (the module documentation of
:mod:`lbm_bench.algorithms.selection` tells the whole search). Each round draws from its own
named stream (``"round"`` of ``"path search"``, numbered across the stages).

**Stages: monotone in the limit.** The search of bounds ``(G, M)`` runs in stages of limits
``(min(G, s), min(M, s))`` for ``s = 2 .. max(G, M)`` (:func:`stages`), each the whole search
above within its limit, from the cells the stages before found: the search of a larger limit
goes through every stage of a smaller one first, the same draws from the same streams, so its
choice has a criterion at least that of the smaller limit's (raising both limits from a square
``GxG``, or only the larger one, never returns a worse criterion).
"""

from __future__ import annotations

import math

import numpy as np

from lbm_bench._seeds import stream
from lbm_bench.algorithms.cell_search import SPLIT_ITER, CellSearch, EMTask
from lbm_bench.algorithms.criteria import LabelSums
from lbm_bench.algorithms.em_problem import col_totals, row_totals
from lbm_bench.algorithms.kmeans import kmeans, onehot

__all__ = [
    "KEEP", "MAX_ROUNDS", "NEIGHBOUR_STARTS", "PATIENCE", "PERTURB", "RESTARTS", "UP_STARTS",
    "path_search", "stages"
]

#: Split or merge candidates of one move refined by EM (the best by their criterion before EM).
KEEP = 2
#: Steps the ascent goes on past the best cell so far.
PATIENCE = 2
#: Largest number of rounds (ascent, descent, starts) of the path search.
MAX_ROUNDS = 4
#: Shares of ``n_init`` (rounded up) the k-means++ starts of each cell with one more cluster
#: in a round of the path search, and of each other cell next to the choice before it returns.
UP_STARTS = 0.4
NEIGHBOUR_STARTS = 0.1
#: Runs from the chosen labelling perturbed, before the path search returns, and the
#: probability that a row or column is moved to a cluster drawn at random.
RESTARTS = 2
PERTURB = 0.25


def _splits(search: CellSearch, key: tuple[int, int], side: int,
            rng: np.random.Generator) -> list[tuple]:
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
    # (p, items, clusters)
    sums = problem.row_sums(other_onehot) if side == 0 else problem.col_sums(other_onehot)
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


def _split_tasks(search: CellSearch, key: tuple[int, int],
                 rng: np.random.Generator) -> list[EMTask]:
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
        pairs = sorted(
            ((search.criterion(rows, cols), i, j, rows, cols) for i, (_, rows) in enumerate(best[0])
             for j, (_, cols) in enumerate(best[1])), key=lambda item: (-item[0], item[1], item[2]))
        tasks += [(g + 1, m + 1, rows, cols) for *_, rows, cols in pairs[:KEEP]]
    return tasks


def _merge_tasks(search: CellSearch, key: tuple[int, int], side: int) -> list[EMTask]:
    """EM tasks from the ``KEEP`` best merges of two clusters of ``side`` of the cell ``key``,
    ranked by their criterion from the block sums (which add up: no pass over the table)."""
    crit, cell = search.criterion, search.cells[key]
    own = cell.rows if side == 0 else cell.cols
    k = int(own.max()) + 1
    if k < 2:
        return []
    sums = crit.sums(cell.rows, cell.cols)
    ranked = sorted(((crit.of_sums(crit.merged(sums, side, a, b)), a, b) for a in range(k)
                     for b in range(a + 1, k)), key=lambda item: (-item[0], item[1], item[2]))
    g, m = key
    tasks = []
    for _, a, b in ranked[:KEEP]:
        labels = np.where(own == b, a, own)
        labels = np.where(labels > b, labels - 1, labels)
        tasks.append((g - 1, m, labels, cell.cols) if side == 0 else (g, m - 1, cell.rows, labels))
    return tasks


def _ascend(search: CellSearch, start: tuple[int, int], explored: set,
            rng: np.random.Generator) -> tuple[int, int]:
    """Splits from ``start``, moving to the best of the cells with one more cluster on one
    side or both, until ``PATIENCE`` steps pass without a better criterion than the best so far."""
    current, stall = start, 0
    best = search.value(search.best())
    while True:
        g, m = current
        mark = _split_mark(search, current)
        if mark not in explored:
            explored.add(mark)
            search.run(_split_tasks(search, current, rng))
        ups = [t for t in ((g + 1, m), (g, m + 1), (g + 1, m + 1))
               if t in search.cells and search.inside(t)]
        if not ups:
            return current
        current = max(ups, key=search.value)
        if search.value(current) > best:
            best, stall = search.value(current), 0
        else:
            stall += 1
            if stall > PATIENCE:
                return current


def _descend(search: CellSearch, explored: set, top: tuple[int, int]) -> None:
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


def stages(bounds: tuple[int, int]) -> list[tuple[int, int]]:
    """The limits of the stages of a path search of ``bounds``: ``(min(G, s), min(M, s))`` for
    ``s = 2 .. max(G, M)`` (``[(1, 1)]`` for bounds of one cluster).

    Examples
    --------
    >>> stages((3, 5))
    [(2, 2), (3, 3), (3, 4), (3, 5)]
    """
    G, M = bounds
    return [(min(G, s), min(M, s)) for s in range(min(2, max(G, M)), max(G, M) + 1)]


def path_search(search: CellSearch, n_init: int, root: np.random.SeedSequence) -> None:
    """The path of splits and merges, stage by stage (:func:`stages`), from the one-cluster
    cell; each stage's rounds numbered after the stages before it."""
    n_rows, n_cols = search.criterion.shape
    search.limit = (1, 1)
    search.run([(1, 1, np.zeros(n_rows, np.int64), np.zeros(n_cols, np.int64))])
    done = {"explored": set(), "started": {}, "polished": set(), "restarted": set(), "round": 0}
    for limit in stages(search.bounds):
        search.limit = limit
        _stage(search, n_init, root, done)
    search.limit = search.bounds


def _stage(search: CellSearch, n_init: int, root: np.random.SeedSequence, done: dict) -> None:
    """Rounds until the best criterion stops growing, then the check of the cells next to the
    choice and the polish, within the search's current limit."""
    explored, started = done["explored"], done["started"]
    for number in range(MAX_ROUNDS + 1):
        before = search.value(search.best())
        rng = np.random.default_rng(stream(root, "path search", "round", done["round"]))
        done["round"] += 1
        if number < MAX_ROUNDS:
            _round(search, n_init, explored, started, rng)
            if search.value(search.best()) > before:
                continue
        chosen = search.best()
        _check(search, n_init, explored, started, rng, done["restarted"])
        if search.best() == chosen:  # no better model next to it (a better labelling of it, maybe)
            break
    _polish(search, done["polished"])


def _split_mark(search: CellSearch, key: tuple[int, int]) -> tuple:
    """What makes the splits of a cell's labelling the same: the cell, its labelling's version,
    and which cells above it the limit lets them reach."""
    g, m = key
    return ("split", key, search.cells[key].version,
            tuple(search.inside(t) for t in ((g + 1, m), (g, m + 1), (g + 1, m + 1))))


def _round(search: CellSearch, n_init: int, explored: set, started: dict,
           rng: np.random.Generator) -> None:
    """One round of the path: the ascent from the best cell, the descent from its top, and
    k-means++ starts at the best cell (``n_init`` in all) and at the three cells with one
    more cluster on one side or both (``UP_STARTS`` of ``n_init`` each), where a search that
    stops too early misses the counts (the ascent reaches the cell with one more cluster on
    both sides from splits alone). ``started`` counts the starts made at each cell."""
    top = _ascend(search, search.best(), explored, rng)
    _descend(search, explored, top)
    g, m = search.best()
    wanted = {(g, m): n_init,
              **{c: _starts(UP_STARTS, n_init)
                 for c in ((g + 1, m), (g, m + 1), (g + 1, m + 1))}}
    more = {
        c: n - started.get(c, 0)
        for c, n in wanted.items() if search.inside(c) and n > started.get(c, 0)
    }
    for cell, n in more.items():
        started[cell] = started.get(cell, 0) + n
    search.run([task for cell, n in more.items() for task in search.starts(cell, n, rng)])
    for cell in more:
        _descend(search, explored, cell)


def _starts(share: float, n_init: int) -> int:
    return max(1, math.ceil(share * n_init))


def _check(search: CellSearch, n_init: int, explored: set, started: dict,
           rng: np.random.Generator, restarted: set) -> None:
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
        mark = _split_mark(search, cell) if cell in search.cells else None
        if sum(cell) < g + m and mark is not None and mark not in explored:
            explored.add(mark)
            tasks += _split_tasks(search, cell, rng)
    search.run(tasks)
    for cell in around:
        if sum(cell) > g + m:
            _descend(search, explored, cell)
    _restarts(search, search.best(), rng, restarted)


def _restarts(search: CellSearch, key: tuple[int, int], rng: np.random.Generator,
              restarted: set) -> None:
    """``RESTARTS`` runs at the cell ``key``, each from its best labelling so far with every
    row and column moved to a cluster drawn at random with probability ``PERTURB`` (once per
    labelling: ``restarted`` holds the cells and versions done)."""
    g, m = key
    mark = (key, search.cells[key].version)
    if (g == 1 and m == 1) or mark in restarted:
        return
    restarted.add(mark)
    for _ in range(RESTARTS):
        cell = search.cells[key]
        rows, cols = cell.rows.copy(), cell.cols.copy()
        moved_rows, moved_cols = rng.random(rows.size) < PERTURB, rng.random(cols.size) < PERTURB
        rows[moved_rows] = rng.integers(0, g, int(moved_rows.sum()))
        cols[moved_cols] = rng.integers(0, m, int(moved_cols.sum()))
        if np.unique(rows).size == g and np.unique(cols).size == m:
            search.run([(g, m, rows, cols)])


def _polish(search: CellSearch, polished: set) -> None:
    """Greedy single-item moves (:func:`~lbm_bench.algorithms.moves.greedy_moves`) on the best
    labelling of the chosen cell and of every cell next to it, until all are polished (the
    choice may move); ``polished`` holds the cells and versions done (a labelling polished in a
    stage before is not polished again)."""
    while todo := [
            c for c in (search.best(), *search.around(search.best()))
            if c in search.cells and (c, search.cells[c].version) not in polished
    ]:
        for cell in todo:
            search.polish(cell)
            polished.add((cell, search.cells[cell].version))
