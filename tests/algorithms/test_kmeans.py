"""k-means and double k-means (lbm_bench.algorithms.kmeans)."""

from lbm_bench import random_model
from lbm_bench.algorithms import (
    double_kmeans,
)
from tests.algorithms.common import (
    matching_error,
)


def test_double_kmeans_recovers_easy_gaussian_tables():
    model = random_model("gaussian", 3, 3, scale=3.0, rng=0)
    X, z, w = model.sample(100, 80, rng=1)
    rows, cols = double_kmeans(X, 3, 3, rng=0)
    assert matching_error(z, rows) <= 0.02
    assert matching_error(w, cols) <= 0.02
