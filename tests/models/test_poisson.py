"""Poisson blocks (lbm_bench.models.poisson): the exponential-family form and the likelihood against
scipy (row and column effects too), the design at a scale, counts from common noise (monotone in the
rates), the M-step, and the checks of the design options."""

import numpy as np
import pytest
from scipy import stats

from lbm_bench import PoissonLBM, random_design
from lbm_bench.models.poisson import poisson_cdf_tables, poisson_inverse_cdf
from tests.models.family_checks import check_complete_log_likelihood, check_exponential_family_form


@pytest.fixture(scope="module")
def model():
    return PoissonLBM([0.4, 0.6], [0.5, 0.5], [[0.5, 4.0], [2.0, 12.0]])


def test_formulas_against_scipy(model):
    X, z, w = model.sample(14, 11, rng=0)
    assert X.dtype == np.int64
    check_exponential_family_form(model, X)
    check_complete_log_likelihood(model, X, z, w)
    effects = PoissonLBM([0.4, 0.6], [0.5, 0.5], [[0.5, 4.0], [2.0, 12.0]],
                         row_effects=np.linspace(0.5, 1.5, 14), col_effects=np.linspace(1.2, 0.8, 11))
    X, z, w = effects.sample(14, 11, rng=1)
    check_complete_log_likelihood(effects, X, z, w)


def test_the_design_at_a_scale():
    design = random_design("poisson", 3, 2, base_rate=3.0, rng=4)
    for scale in (0.5, 2.0):
        np.testing.assert_allclose(design.model(scale).rates, 3.0 * np.exp(scale * design.pattern))
    np.testing.assert_allclose(PoissonLBM.family.designs.model_at_scale(design, 0.0).rates, 3.0)  # scale 0: one rate


def test_counts_from_uniforms_by_the_inverse_cdf():
    u = np.random.default_rng(0).random(50_000)
    for rate in (0.3, 5.0, 80.0):
        counts = poisson_inverse_cdf(u, rate)
        assert np.array_equal(counts, stats.poisson.ppf(u, rate).astype(np.int64))
    low, high = poisson_inverse_cdf(u, 2.0), poisson_inverse_cdf(u, 3.0)
    assert np.all(high >= low)  # the same uniforms: more counts at a higher rate (common random numbers)


def test_cdf_tables_at_once_are_scipys_cdf_bit_for_bit():
    """The tables of many rates in one call hold the same bits as scipy.stats.poisson.cdf of
    each rate (what the counts were drawn with before: the same tables, the same counts)."""
    rates = np.concatenate([np.random.default_rng(3).lognormal(0.0, 2.5, 400), [1e-9, 1e-3, 0.5, 700.0, 2000.0]])
    tables = poisson_cdf_tables(rates)
    assert len(tables) == rates.size and poisson_cdf_tables(np.empty(0)) == []
    for rate, table in zip(rates, tables, strict=True):
        upper = int(rate + 12 * np.sqrt(rate) + 40)
        assert np.array_equal(table, stats.poisson.cdf(np.arange(upper + 1), rate))


def test_the_m_step_is_the_blocks_mean_count(model):
    X, z, w = model.sample(60, 50, rng=2)
    totals = np.array([[[X[np.ix_(z == k, w == l)].sum() for l in range(2)] for k in range(2)]], dtype=float)
    sizes = np.array([[np.sum(z == k) * np.sum(w == l) for l in range(2)] for k in range(2)], dtype=float)
    m_step = PoissonLBM.family.estimation.estimate_blocks
    fitted = m_step(totals, sizes, var_floor=0.0)["rates"]
    np.testing.assert_allclose(fitted, totals[0] / sizes)
    assert m_step(np.zeros((1, 1, 1)), np.ones((1, 1)), 0.0)["rates"][0, 0] > 0  # never 0


def test_design_options_are_checked_in_words():
    with pytest.raises(ValueError, match="base_rate"):
        random_design("poisson", 2, 2, base_rate=-1.0, rng=0)
    with pytest.raises(ValueError, match="rates must be > 0"):
        PoissonLBM([1.0], [1.0], [[0.0]])
    with pytest.raises(ValueError, match="given together"):
        PoissonLBM([1.0], [1.0], [[1.0]], row_effects=[1.0])
