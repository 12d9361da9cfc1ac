"""The search state over the cells (g, m) of select_lbm (lbm_bench.algorithms.cell_search): each
cell keeps its best labelling, the tasks' order decides between equal criteria, and the grid
starts every cell from its own stream."""

import numpy as np

from lbm_bench import random_model
from lbm_bench.algorithms.cell_search import CellSearch, grid_search, run_em_tasks
from lbm_bench.algorithms.criteria import Criterion
from lbm_bench.algorithms.em_problem import EMProblem


def _criterion(seed=0):
    model = random_model("poisson", 2, 2, scale=1.5, rng=seed)
    X, z, w = model.sample(40, 30, rng=seed + 1)
    return Criterion(EMProblem(X, model.family)), z, w


def test_a_cell_keeps_its_best_labelling_and_counts_every_run():
    criterion, z, w = _criterion()
    search = CellSearch(criterion, "cem", (3, 3), 1, None)
    rng = np.random.default_rng(0)
    tasks = [(2, 2, z, w), (2, 2, rng.integers(0, 2, z.size), rng.integers(0, 2, w.size))]
    search.run(tasks)
    cell = search.cells[(2, 2)]
    results = run_em_tasks(criterion, "cem", tasks)
    assert cell.value == max(value for value, *_ in results) and len(cell.fit_criteria) == 2
    assert search.n_runs == 2 and search.best() == (2, 2)
    assert search.around((1, 1)) == [(1, 2), (2, 1), (2, 2)] and not search.inside((4, 1))


def test_the_grid_starts_every_cell_and_gives_the_same_cells_from_the_same_seed():
    criterion, _, _ = _criterion(3)
    values = []
    for _ in range(2):
        search = CellSearch(criterion, "cem", (2, 3), 1, None)
        grid_search(search, 2, np.random.SeedSequence(5))
        assert set(search.cells) <= {(g, m) for g in (1, 2) for m in (1, 2, 3)} and search.n_runs == 12
        values.append({key: cell.value for key, cell in search.cells.items()})
    assert values[0] == values[1]
