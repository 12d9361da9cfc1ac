"""Bernoulli blocks (lbm_bench.models.bernoulli): the exponential-family form and the likelihood against
scipy, the design at a scale (chance at scale 0), binaries from common noise, the M-step, and tables
that are not 0/1 refused."""

import numpy as np
import pytest

from lbm_bench import BernoulliLBM, random_design
from tests.models.family_checks import check_complete_log_likelihood, check_exponential_family_form


@pytest.fixture(scope="module")
def model():
    return BernoulliLBM([0.4, 0.6], [0.3, 0.7], [[0.9, 0.2], [0.3, 0.6]])


def test_formulas_against_scipy(model):
    X, z, w = model.sample(14, 11, rng=0)
    assert X.dtype == np.uint8 and set(np.unique(X)) <= {0, 1}
    check_exponential_family_form(model, X)
    check_complete_log_likelihood(model, X, z, w)
    assert np.array_equal(model.entry_means(), model.probs)


def test_the_design_at_a_scale():
    design = random_design("bernoulli", 3, 2, rng=4)
    for scale in (0.5, 2.0):
        expected = 0.5 + 0.5 * design.pattern * np.tanh(scale * design.dispersion)
        np.testing.assert_allclose(design.model(scale).probs, expected)
    np.testing.assert_allclose(BernoulliLBM.family.designs.model_at_scale(design, 0.0).probs, 0.5)  # chance
    assert np.all(design.model(50.0).probs < 1)  # clipped away from 0 and 1


def test_binaries_are_uniforms_below_the_probability(model):
    z, w = np.array([0, 1, 1]), np.array([1, 0, 1, 1])
    noise = model.draw_noise(3, 4, rng=np.random.default_rng(1))
    X = model.table_from_noise(noise, z, w)
    assert np.array_equal(X, (noise < model.probs[np.ix_(z, w)]).astype(np.uint8))


def test_the_m_step_is_the_blocks_share_of_ones(model):
    X, z, w = model.sample(60, 50, rng=2)
    totals = np.array([[[X[np.ix_(z == k, w == l)].sum() for l in range(2)] for k in range(2)]], dtype=float)
    sizes = np.array([[np.sum(z == k) * np.sum(w == l) for l in range(2)] for k in range(2)], dtype=float)
    m_step = BernoulliLBM.family.estimation.estimate_blocks
    np.testing.assert_allclose(m_step(totals, sizes, 0.0)["probs"], totals[0] / sizes)
    clipped = m_step(np.array([[[0.0, 5.0]]]), np.array([[5.0, 5.0]]), 0.0)["probs"]
    assert 0 < clipped[0, 0] and clipped[0, 1] < 1  # an all-0 or all-1 block stays a probability


def test_tables_that_are_not_binary_are_refused(model):
    with pytest.raises(ValueError, match="X must hold 0/1 values"):
        model.check_table(np.array([[0, 2]]))
    with pytest.raises(ValueError, match="probs must be < 1"):
        BernoulliLBM([1.0], [1.0], [[1.0]])
