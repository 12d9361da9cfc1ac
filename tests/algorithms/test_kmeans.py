"""k-means and double k-means (lbm_bench.algorithms.kmeans)."""

import numpy as np
import pytest

from lbm_bench import random_model
from lbm_bench.algorithms import (
    double_kmeans,
)
from lbm_bench.algorithms.kmeans import kmeans as _kmeans
from tests.algorithms.common import (
    matching_error,
)


def test_double_kmeans_recovers_easy_gaussian_tables():
    model = random_model("gaussian", 3, 3, scale=3.0, rng=0)
    X, z, w = model.sample(100, 80, rng=1)
    rows, cols = double_kmeans(X, 3, 3, rng=0)
    assert matching_error(z, rows) <= 0.02
    assert matching_error(w, cols) <= 0.02


def _inertia(data, labels):
    return sum(((data[labels == k] - data[labels == k].mean(0)) ** 2).sum() for k in set(labels))


def test_kmeans_is_reproducible_from_the_generator_and_finds_separated_blobs():
    rng = np.random.default_rng(0)
    truth = np.repeat([0, 1, 2, 3], 25)
    data = 10.0 * truth[:, None] * np.eye(4)[truth] + rng.normal(size=(100, 4))
    first = _kmeans(data, 4, n_init=3, max_iter=300, rng=np.random.default_rng(5))
    again = _kmeans(data, 4, n_init=3, max_iter=300, rng=np.random.default_rng(5))
    np.testing.assert_array_equal(first, again)
    assert first.dtype == np.int64 and matching_error(truth, first) == 0.0


def test_kmeans_keeps_the_best_of_its_starts():
    """The best of n_init runs has an inertia no larger than any single run from the
    same stream of seeds (the runs of n_init=5 are the five single runs in turn)."""
    data = np.random.default_rng(1).normal(size=(60, 5))
    best = _kmeans(data, 4, n_init=5, max_iter=300, rng=np.random.default_rng(2))
    rng = np.random.default_rng(2)
    singles = [_kmeans(data, 4, n_init=1, max_iter=300, rng=rng) for _ in range(5)]
    assert _inertia(data, best) == pytest.approx(min(_inertia(data, s) for s in singles))


def test_kmeans_uses_every_cluster_on_duplicated_points():
    data = np.array([[0.0, 0.0]] * 4 + [[1.0, 1.0]] * 3)  # two distinct points, three clusters
    labels = _kmeans(data, 3, n_init=2, max_iter=50, rng=np.random.default_rng(0))
    assert sorted(set(labels.tolist())) == [0, 1, 2]


def test_double_kmeans_same_seed_same_labels():
    X = np.random.default_rng(3).poisson(2.0, size=(40, 30))
    first = double_kmeans(X, 3, 2, rng=7)
    second = double_kmeans(X, 3, 2, rng=np.random.default_rng(7))
    for a, b in zip(first, second, strict=True):
        np.testing.assert_array_equal(a, b)
