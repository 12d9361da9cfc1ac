"""Gaussian blocks (lbm_bench.models.gaussian): the exponential-family form and the likelihood against
scipy, the design at a scale, tables from common noise, and the M-step of the EM baselines."""

import numpy as np
import pytest

from lbm_bench import GaussianLBM, random_design
from tests.models.family_checks import check_complete_log_likelihood, check_exponential_family_form


@pytest.fixture(scope="module")
def model():
    return GaussianLBM([0.3, 0.7], [0.5, 0.25, 0.25], [[0.0, 1.0, -2.0], [0.5, -0.5, 3.0]],
                       [[1.0, 0.5, 2.0], [1.5, 1.0, 0.7]])


def test_formulas_against_scipy(model):
    X, z, w = model.sample(14, 11, rng=0)
    assert X.dtype == np.float64
    check_exponential_family_form(model, X)
    check_complete_log_likelihood(model, X, z, w)
    assert model.n_stats == 2 and np.array_equal(model.entry_means(), model.means)


def test_the_design_at_a_scale():
    design = random_design("gaussian", 3, 2, rng=4)
    for scale in (0.0, 0.5, 2.0):
        at = design.model(scale) if scale else GaussianLBM.family.designs.model_at_scale(design, 0.0)
        np.testing.assert_allclose(at.means, scale * design.pattern)
        np.testing.assert_allclose(at.stds, design.dispersion ** scale)  # scale 0: every block N(0, 1)


def test_tables_are_the_noise_moved_and_stretched(model):
    z, w = np.array([0, 1, 1, 0]), np.array([2, 0, 1])
    noise = model.draw_noise(4, 3, rng=np.random.default_rng(1))
    X = model.table_from_noise(noise, z, w)
    np.testing.assert_allclose(X, model.means[np.ix_(z, w)] + model.stds[np.ix_(z, w)] * noise)
    assert np.array_equal(model.table_from_noise(noise, z, w), X)  # common random numbers


def test_the_m_step_is_the_blocks_sample_mean_and_deviation(model):
    X, z, w = model.sample(60, 50, rng=2)
    stats = model.sufficient_statistics(X)
    totals = np.array([[[stats[p][np.ix_(z == k, w == l)].sum() for l in range(3)] for k in range(2)]
                       for p in range(2)])
    sizes = np.array([[np.sum(z == k) * np.sum(w == l) for l in range(3)] for k in range(2)], dtype=float)
    m_step = GaussianLBM.family.estimation.estimate_blocks
    fitted = m_step(totals, sizes, var_floor=1e-6)
    for k in range(2):
        for l in range(3):
            block = X[np.ix_(z == k, w == l)]
            assert fitted["means"][k, l] == pytest.approx(block.mean())
            assert fitted["stds"][k, l] == pytest.approx(block.std())
    floored = m_step(np.array([[[2.0]], [[4.0]]]), np.array([[1.0]]), var_floor=0.25)
    assert floored["stds"][0, 0] == 0.5  # a block of one value: the variance floor
