"""The sparsebm algorithm: binary tables dense or sparse, reproducible, global state restored."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from lbm_bench.algorithms.sparsebm import global_numpy_seed, sparsebm_lbm
from lbm_bench.metrics import ari
from lbm_bench.models import BernoulliLBM

#: Skipped without sparsebm, except in CI (CI=true), where the skip fails the run (tests/conftest.py).
pytestmark = pytest.mark.sparsebm


@pytest.fixture(autouse=True)
def _sparsebm_installed():
    pytest.importorskip("sparsebm", reason="sparsebm is not installed (pip install 'lbm-bench[sparsebm]')")


def _table(density_high: bool, seed: int = 0):
    probs = [[0.9, 0.55], [0.6, 0.95]] if density_high else [[0.02, 0.2], [0.25, 0.03]]
    model = BernoulliLBM([0.5, 0.5], [0.4, 0.6], probs)
    return model.sample(80, 60, rng=np.random.default_rng(seed))


@pytest.mark.parametrize("density_high", [True, False])
def test_finds_clear_blocks_dense_or_sparse(density_high):
    X, z, w = _table(density_high)
    assert (X.mean() > 0.5) == density_high  # the complement path and the direct path
    rows, cols = sparsebm_lbm(X, 2, 2, rng=0)
    assert rows.dtype == np.int64 and rows.shape == (80,) and cols.shape == (60,)
    assert ari(z, rows) == 1.0 and ari(w, cols) == 1.0
    rows_sparse, cols_sparse = sparsebm_lbm(sp.csr_array(X), 2, 2, rng=0)
    np.testing.assert_array_equal(rows_sparse, rows)
    np.testing.assert_array_equal(cols_sparse, cols)


def test_same_rng_same_labels_and_global_state_restored():
    X, _, _ = _table(False, seed=1)
    np.random.seed(123)
    before = np.random.get_state()[1].copy()
    first = sparsebm_lbm(X, 3, 2, rng=7)
    after = np.random.get_state()[1]
    np.testing.assert_array_equal(before, after)
    np.random.seed(999)  # another global state does not change the result
    second = sparsebm_lbm(X, 3, 2, rng=np.random.default_rng(7))
    for a, b in zip(first, second, strict=True):
        np.testing.assert_array_equal(a, b)


def test_global_seed_context_restores_on_error():
    np.random.seed(5)
    state = np.random.get_state()[1].copy()
    with pytest.raises(RuntimeError), global_numpy_seed(1):
        np.random.random()
        raise RuntimeError("boom")
    np.testing.assert_array_equal(np.random.get_state()[1], state)


def test_refuses_non_binary_tables_in_one_line():
    with pytest.raises(ValueError, match="sparsebm fits Bernoulli \\(0/1\\) tables only"):
        sparsebm_lbm(np.array([[0, 2], [1, 0]]), 1, 1, rng=0)
    with pytest.raises(ValueError, match="sparsebm: 3x1 clusters"):
        sparsebm_lbm(np.array([[0, 1], [1, 0]]), 3, 1, rng=0)


def test_registered_for_benchmark():
    from lbm_bench.algorithms import resolve_algorithm

    name, fit = resolve_algorithm("sparsebm")
    assert name == "sparsebm" and fit is sparsebm_lbm
