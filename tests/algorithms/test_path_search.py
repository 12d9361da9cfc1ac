"""The path search of select_lbm (lbm_bench.algorithms.path_search): the cells it starts next to
its choice, the climb from better neighbours without splits, and the polish of its choice by
single-item moves."""

import numpy as np
import pytest

from lbm_bench import random_model
from lbm_bench.algorithms import cell_search, path_search, select_lbm
from lbm_bench.algorithms.criteria import Criterion
from lbm_bench.algorithms.em_problem import EMProblem
from lbm_bench.metrics import ari
from tests.algorithms.test_selection import _table


def test_the_path_starts_every_cell_next_to_its_choice(monkeypatch):
    """Before it returns, the path makes k-means++ starts at every cell next to its choice
    (issue 34, item 5): one cluster more or less on either side, or both, within the bounds."""

    started = set()
    original = cell_search.CellSearch.starts

    def record(self, key, n_starts, rng):
        started.add(key)
        return original(self, key, n_starts, rng)

    monkeypatch.setattr(cell_search.CellSearch, "starts", record)
    X, _, _ = _table("poisson", g=3, m=2)
    chosen = select_lbm(X, (5, 4), kind="poisson", n_init=4, rng=1)
    g, m = chosen.n_row_clusters, chosen.n_col_clusters
    around = {(g + a, m + b) for a in (-1, 0, 1) for b in (-1, 0, 1)
              if 1 <= g + a <= 5 and 1 <= m + b <= 4}
    assert around <= started


def test_the_path_goes_on_from_a_better_cell_next_to_its_choice(monkeypatch):
    """Without any split, the path climbs by the starts of its rounds and the cells it checks
    next to its choice, going on from each better one, up to the counts of a clear table."""

    monkeypatch.setattr(path_search, "_split_tasks", lambda search, key, rng: [])
    X, z, w = _table("gaussian", g=4, m=3, shape=(120, 80))
    chosen = select_lbm(X, (6, 5), kind="gaussian", n_init=4, rng=2)
    assert (chosen.n_row_clusters, chosen.n_col_clusters) == (4, 3)
    assert ari(z, chosen.rows) > 0.9 and ari(w, chosen.cols) > 0.9


def test_the_path_polishes_its_choice_to_a_local_optimum_of_single_moves(monkeypatch):
    """On a table where block CEM ends short of it, the path returns a labelling that no move
    of one row or one column to another cluster improves (every move's exact ICL recomputed),
    above the labelling it returns without the polish, with the model estimated at its labels."""
    X, _, _ = random_model("poisson", 3, 2, scale=0.35, rng=1).sample(80, 50, rng=2)
    chosen = select_lbm(X, (4, 3), kind="poisson", n_init=4, rng=1)
    icl = Criterion(EMProblem(X, chosen.fit.family))
    assert chosen.value == pytest.approx(icl(chosen.rows, chosen.cols), abs=1e-9)
    for labels, side in ((chosen.rows, 0), (chosen.cols, 1)):
        k = labels.max() + 1
        for item in range(labels.size):
            for target in range(k):
                moved = labels.copy()
                moved[item] = target
                if np.bincount(moved, minlength=k).min() > 0:
                    pair = (moved, chosen.cols) if side == 0 else (chosen.rows, moved)
                    assert icl(*pair) <= chosen.value + 1e-9 * abs(chosen.value)
    rates = [[X[np.ix_(chosen.rows == k, chosen.cols == l)].mean() for l in range(2)] for k in range(3)]
    assert np.allclose(chosen.fit.model.rates, rates) and np.array_equal(chosen.fit.cols, chosen.cols)
    monkeypatch.setattr(path_search, "_polish", lambda search, polished: None)
    unpolished = select_lbm(X, (4, 3), kind="poisson", n_init=4, rng=1)
    assert (unpolished.n_row_clusters, unpolished.n_col_clusters) == (3, 2) and unpolished.value < chosen.value


def test_stages_grow_the_limit_by_one_on_each_side():
    assert path_search.stages((3, 5)) == [(2, 2), (3, 3), (3, 4), (3, 5)]
    assert path_search.stages((8, 8))[-2:] == [(7, 7), (8, 8)] and path_search.stages((1, 1)) == [(1, 1)]
    assert path_search.stages((1, 3)) == [(1, 2), (1, 3)]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_raising_max_clusters_never_returns_a_worse_criterion(seed):
    """Issue 47, item 4: wine at --max-clusters 12x12 chose 5x8 at ICL -2767.15, below the 6x8 at -2758.53 that
    8x8 found. The search of a larger limit goes through the whole search of the smaller one first (the stages),
    so the criterion never falls as the limit rises: from a square, on both sides or on the larger one."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(90, 14)) + np.outer(rng.normal(size=90), rng.normal(size=14))  # no clean block structure
    values = {bounds: select_lbm(X, bounds, kind="gaussian", n_init=3, rng=seed).value
              for bounds in ((3, 3), (4, 4), (4, 6), (6, 6), (8, 8))}
    assert values[(3, 3)] <= values[(4, 4)] <= values[(4, 6)] and values[(4, 4)] <= values[(6, 6)] <= values[(8, 8)]


def test_a_larger_limit_repeats_the_smaller_search_before_going_on(monkeypatch):
    """The runs of the search of 3x3 are the first runs of the search of 4x4, the same labellings in the same
    order (the same draws from the same streams)."""
    X, _, _ = _table("poisson", g=3, m=2)
    seen = {}
    original = cell_search.run_em_tasks

    def record(criterion, method, tasks):
        seen.setdefault(key, []).extend((g, m, rows.tobytes(), cols.tobytes()) for g, m, rows, cols in tasks)
        return original(criterion, method, tasks)

    monkeypatch.setattr(cell_search, "run_em_tasks", record)
    for key in ((3, 3), (4, 4)):
        select_lbm(X, key, kind="poisson", n_init=3, rng=5)
    small, large = seen[(3, 3)], seen[(4, 4)]
    assert len(large) > len(small) and large[: len(small)] == small
