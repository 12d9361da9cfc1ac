"""Exact symmetries of a model (lbm_bench.models.symmetry): a joint permutation of classes that leaves
proportions and block parameters unchanged is found when there is one, and only then."""

import numpy as np
import pytest

from lbm_bench import BernoulliLBM, GaussianLBM, PoissonLBM, random_model
from lbm_bench.models.symmetry import find_symmetry

LATIN = np.array([[0.0, 1.0, 2.0], [1.0, 2.0, 0.0], [2.0, 0.0, 1.0]])


def _invariant(model, sigma, tau):
    params = model.natural_parameters
    return (np.array_equal(model.row_proportions[sigma], model.row_proportions)
            and np.array_equal(model.col_proportions[tau], model.col_proportions)
            and np.allclose(params[:, sigma][:, :, tau], params))


def test_a_latin_square_is_symmetric_under_a_joint_cycle():
    model = GaussianLBM([1 / 3] * 3, [1 / 3] * 3, LATIN, np.ones((3, 3)))
    sigma, tau = find_symmetry(model)
    assert sigma.shape == (3,) and tau.shape == (3,)
    assert not (np.array_equal(sigma, np.arange(3)) and np.array_equal(tau, np.arange(3)))
    assert _invariant(model, sigma, tau)


def test_proportions_and_parameters_break_symmetries():
    assert find_symmetry(GaussianLBM([0.2, 0.3, 0.5], [1 / 3] * 3, LATIN, np.ones((3, 3)))) is None
    stds = np.ones((3, 3))
    stds[0, 0] = 2.0  # one block's spread differs: the cycle no longer maps the model to itself
    assert find_symmetry(GaussianLBM([1 / 3] * 3, [1 / 3] * 3, LATIN, stds)) is None
    for seed in range(5):  # generic parameters: no symmetry
        assert find_symmetry(random_model("poisson", 3, 3, scale=1.0, rng=seed)) is None


def test_interchangeable_column_classes_are_swapped():
    twin = BernoulliLBM([0.5, 0.5], [0.5, 0.5], [[0.9, 0.9], [0.1, 0.1]])
    sigma, tau = find_symmetry(twin)
    assert sigma.tolist() == [0, 1] and tau.tolist() == [1, 0] and _invariant(twin, sigma, tau)
    swap = BernoulliLBM([0.5, 0.5], [0.5, 0.5], [[0.9, 0.1], [0.1, 0.9]])
    sigma, tau = find_symmetry(swap)
    assert sigma.tolist() == [1, 0] and tau.tolist() == [1, 0]


def test_equal_within_rtol_counts_as_equal():
    nearly = PoissonLBM([0.5, 0.5], [0.5, 0.5], [[2.0, 1.0], [1.0, 2.0 + 1e-13]])
    assert find_symmetry(nearly) is not None
    assert find_symmetry(nearly, rtol=0) is None


def test_too_many_candidates_are_refused():
    model = GaussianLBM([0.25] * 4, [1.0], np.zeros((4, 1)), np.ones((4, 1)))  # 4! row permutations
    with pytest.raises(ValueError, match="24 candidate row symmetries; too many to check"):
        find_symmetry(model, max_candidates=10)
    assert find_symmetry(model) is not None
