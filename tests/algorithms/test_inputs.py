"""Input checks and family inference (lbm_bench.algorithms.inputs)."""

import numpy as np
import pytest

from lbm_bench.algorithms import (
    cem,
    double_kmeans,
    infer_kind,
    vem,
)


@pytest.mark.parametrize(
    "table, kind",
    [
        (np.array([[0, 1], [1, 0]], dtype=np.uint8), "bernoulli"),
        (np.array([[True, False], [True, True]]), "bernoulli"),
        (np.array([[0, 3], [2, 1]]), "poisson"),
        (np.array([[0, -3], [2, 1]]), "gaussian"),
        (np.array([[0.0, 3.0], [2.0, 1.0]]), "poisson"),  # the values decide, not the dtype (issue 47)
        (np.array([[0.0, 1.0], [1.0, 0.0]], dtype=np.float32), "bernoulli"),  # AnnData's binary X
        (np.array([[0.0, -3.0], [2.0, 1.0]]), "gaussian"),
        (np.array([[0.0, 2.0**60], [2.0, 1.0]]), "gaussian"),  # beyond 2^53: not counts
        (np.array([[0.5, -1.2]]), "gaussian"),
    ],
)
def test_infer_kind(table, kind):
    assert infer_kind(table) == kind


@pytest.mark.parametrize("fit", [cem, vem, double_kmeans])
@pytest.mark.parametrize(
    "X, g, m, error, match",
    [
        (np.zeros(5), 1, 1, ValueError, "X must be a 2-D array"),
        (np.zeros((0, 3)), 1, 1, ValueError, "X must not be empty"),
        (np.array([[1.0, np.inf], [0.0, 1.0]]), 1, 1, ValueError, "X must be finite"),
        (np.array([["a", "b"]]), 1, 1, TypeError, "X must be a 2-D array of numbers"),
        (np.ones((4, 3)), 0, 1, ValueError, "n_row_clusters must be >= 1"),
        (np.ones((4, 3)), 1, 0, ValueError, "n_col_clusters must be >= 1"),
        (np.ones((4, 3)), 5, 1, ValueError, r"n_row_clusters must be <= the number of rows \(4\)"),
        (np.ones((4, 3)), 2, 4, ValueError, r"n_col_clusters must be <= the number of col"),
        (np.ones((4, 3)), 2.0, 1, TypeError, "n_row_clusters must be an integer"),
        (np.ones((4, 3)), 2, True, TypeError, "n_col_clusters must be an integer"),
    ],
)
def test_bad_inputs_raise(fit, X, g, m, error, match):
    with pytest.raises(error, match=match):
        fit(X, g, m, rng=0)
