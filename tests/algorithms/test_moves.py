"""Greedy single-item moves (lbm_bench.algorithms.moves) and the move gains of the exact ICL
(Criterion.move_gains): every gain against the criterion recomputed after the move, for each
family, dense, sparse and with missing entries; the greedy labelling never below the start,
deterministic, and a local optimum (no single move raises the criterion, by brute force) on
tiny tables drawn at random."""

import numpy as np
import pytest
import scipy.sparse as sp

from lbm_bench import random_model
from lbm_bench.algorithms.criteria import Criterion
from lbm_bench.algorithms.em_problem import EMProblem
from lbm_bench.algorithms.kmeans import onehot
from lbm_bench.algorithms.moves import MOVE_TOLERANCE, greedy_moves
from lbm_bench.models.data import TableData
from lbm_bench.models.registry import get_family

from .common import KINDS, OPTIONS


def _table(kind, seed, n=14, d=10, missing=0.0, sparse=False):
    """A tiny table of ``kind`` drawn from a random 3x2 model, with a share of missing entries."""
    X = random_model(kind, 3, 2, scale=1.0, rng=seed, **OPTIONS.get(kind, {})).sample(n, d, rng=seed + 1)[0]
    if sparse:
        return sp.csr_array(X)
    if missing:
        mask = np.random.default_rng(seed + 2).random(X.shape) < missing
        mask[0, 0] = False  # an observed entry in every row and column
        mask[:, 0], mask[0, :] = False, False
        return TableData.incomplete(np.ma.masked_array(X, mask))
    return X


def _labels(seed, n, k):
    """Random labels ``0 .. k - 1`` of ``n`` items, every cluster used."""
    labels = np.random.default_rng(seed).integers(0, k, n)
    labels[:k] = np.arange(k)
    return labels


def _brute_gains(crit, rows, cols, side):
    """The criterion after each single move minus before (-inf where a cluster would empty)."""
    base = crit(rows, cols)
    own = rows if side == 0 else cols
    k = int(own.max()) + 1
    gains = np.zeros((own.size, k))
    for item in range(own.size):
        for target in range(k):
            moved = own.copy()
            moved[item] = target
            if np.bincount(moved, minlength=k).min() == 0:
                gains[item, target] = -np.inf
                continue
            gains[item, target] = (crit(moved, cols) if side == 0 else crit(rows, moved)) - base
    return gains


def _gains(crit, rows, cols, side):
    own, other = (rows, cols) if side == 0 else (cols, rows)
    other_onehot = onehot(other, int(other.max()) + 1)
    items = crit.problem.row_sums(other_onehot) if side == 0 else crit.problem.col_sums(other_onehot)
    return crit.move_gains(items, own, int(own.max()) + 1, other_onehot.sum(0))


CASES = [(kind, "dense") for kind in KINDS] + [(kind, "missing") for kind in KINDS] + [
    ("poisson", "sparse"), ("bernoulli", "sparse")]


@pytest.mark.parametrize(("kind", "storage"), CASES)
@pytest.mark.parametrize("side", [0, 1])
def test_every_move_gain_is_the_criterion_recomputed_after_the_move(kind, storage, side):
    """Criterion.move_gains from block sums equals the exact ICL of the moved labelling minus
    the ICL before, for every item and cluster (to 1e-9), -inf where a cluster would empty,
    and one item's gains (``only``) are its row of the whole."""
    X = _table(kind, 3, missing=0.2 if storage == "missing" else 0.0, sparse=storage == "sparse")
    crit = Criterion(EMProblem(TableData.of(X), get_family(kind)), "exact-icl")
    rows, cols = _labels(4, 14, 3), _labels(5, 10, 2)
    rows[3:] = np.where(rows[3:] == 2, 0, rows[3:])  # cluster 2 of a single row: its move is refused
    expected = _brute_gains(crit, rows, cols, side)
    gains = _gains(crit, rows, cols, side)
    assert np.array_equal(np.isinf(gains), np.isinf(expected))
    assert np.allclose(gains[np.isfinite(gains)], expected[np.isfinite(expected)], rtol=0, atol=1e-9)
    if side == 0:
        assert np.isinf(gains[2]).sum() == 2 and gains[2, 2] == 0.0
    own, other = (rows, cols) if side == 0 else (cols, rows)
    other_onehot = onehot(other, int(other.max()) + 1)
    items = crit.problem.row_sums(other_onehot) if side == 0 else crit.problem.col_sums(other_onehot)
    assert np.array_equal(crit.move_gains(items, own, int(own.max()) + 1, other_onehot.sum(0), only=7), gains[7])


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("seed", range(6))
def test_greedy_moves_end_at_a_local_optimum_never_below_the_start(kind, seed):
    """Property, on tiny tables and random labellings drawn from ``seed``: the greedy labelling
    keeps the numbers of clusters (every cluster used), scores at least the start's exact ICL
    and the value it returns, and no single move of a row or a column to another cluster
    raises its exact ICL (every move recomputed from the table)."""
    X = _table(kind, 10 * seed, missing=0.15 if seed % 2 else 0.0)
    crit = Criterion(EMProblem(TableData.of(X), get_family(kind)), "exact-icl")
    rows, cols = _labels(seed + 100, 14, 3), _labels(seed + 200, 10, 2)
    new_rows, new_cols, value = greedy_moves(crit, rows, cols)
    assert value == pytest.approx(crit(new_rows, new_cols), abs=1e-9)
    assert value >= crit(rows, cols)
    assert set(new_rows) == {0, 1, 2} and set(new_cols) == {0, 1}
    tolerance = MOVE_TOLERANCE * max(1.0, abs(value))
    for side in (0, 1):
        assert _brute_gains(crit, new_rows, new_cols, side).max() <= tolerance


def test_greedy_moves_improve_a_poor_labelling_deterministically():
    """From a labelling with a third of its rows and columns moved at random, the moves raise
    the ICL; the same input gives the same labels (its arrays left unchanged), and the
    BIC-type form is returned as it is."""
    X, z, w = random_model("poisson", 3, 3, scale=1.5, rng=1).sample(60, 40, rng=2)
    crit = Criterion(EMProblem(X, get_family("poisson")), "exact-icl")
    rng = np.random.default_rng(3)
    rows = np.where(rng.random(60) < 1 / 3, rng.integers(0, 3, 60), z)
    cols = np.where(rng.random(40) < 1 / 3, rng.integers(0, 3, 40), w)
    kept = rows.copy(), cols.copy()
    first, second = greedy_moves(crit, rows, cols), greedy_moves(crit, rows, cols)
    assert first[2] > crit(rows, cols) + 10
    assert np.array_equal(first[0], second[0]) and np.array_equal(first[1], second[1]) and first[2] == second[2]
    assert np.array_equal(rows, kept[0]) and np.array_equal(cols, kept[1])
    bic = Criterion(EMProblem(X, get_family("poisson")), "bic-icl")
    same = greedy_moves(bic, rows, cols)
    assert np.array_equal(same[0], rows) and np.array_equal(same[1], cols) and same[2] == bic(rows, cols)


def test_move_gains_are_the_same_in_chunks(monkeypatch):
    """On a tall table the gains are computed a few items at a time: the same values."""
    from lbm_bench.algorithms import criteria

    X = _table("poisson", 2, n=200)
    crit = Criterion(EMProblem(X, get_family("poisson")), "exact-icl")
    rows, cols = _labels(6, 200, 3), _labels(7, 10, 2)
    whole = _gains(crit, rows, cols, 0)
    monkeypatch.setattr(criteria, "MOVE_CHUNK", 3 * 2 * 7)  # 7 items at a time
    assert np.array_equal(_gains(crit, rows, cols, 0), whole)


def test_move_gains_refuse_the_bic_type_form():
    X = _table("bernoulli", 1)
    crit = Criterion(EMProblem(X, get_family("bernoulli")), "bic-icl")
    with pytest.raises(ValueError, match="exact ICL"):
        _gains(crit, _labels(1, 14, 3), _labels(2, 10, 2), 0)
