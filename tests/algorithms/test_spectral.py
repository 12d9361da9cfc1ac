"""Spectral wrappers (lbm_bench.algorithms.spectral)."""

import sys

import numpy as np
import pytest

from lbm_bench import algorithms
from lbm_bench.algorithms import (
    ALGORITHMS,
)
from tests.algorithms.common import (
    SKLEARN_NAMES,
    matching_error,
)


def test_spectral_coclustering_separates_a_diagonal_table():
    pytest.importorskip("sklearn")
    X = np.kron(np.eye(2), np.ones((5, 4))) + 0.01 * np.arange(80).reshape(10, 8) % 0.05
    X -= 0.5  # negative entries are shifted
    rows, cols = algorithms.spectral_coclustering(X, 2, 2, rng=0)
    assert matching_error(np.repeat([0, 1], 5), rows) == 0.0
    assert matching_error(np.repeat([0, 1], 4), cols) == 0.0


def test_spectral_wrappers_handle_zero_rows():
    pytest.importorskip("sklearn")
    X = np.zeros((10, 8), dtype=np.uint8)
    X[:5, :4] = 1
    X[5:9, 4:] = 1  # row 9 is all zeros
    for name in SKLEARN_NAMES:
        rows, cols = ALGORITHMS[name](X, 2, 2, rng=0)
        assert rows.shape == (10,) and cols.shape == (8,)


def test_spectral_wrappers_explain_a_missing_sklearn(monkeypatch):
    monkeypatch.setitem(sys.modules, "sklearn.cluster", None)
    for name in SKLEARN_NAMES:
        with pytest.raises(ImportError, match=r"pip install 'lbm-bench\[sklearn\]'"):
            ALGORITHMS[name](np.ones((4, 3)), 2, 2, rng=0)
