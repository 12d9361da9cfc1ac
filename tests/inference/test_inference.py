"""MAP classifier and Gibbs sampler against the exact posterior on tiny tables.

Tables of 6x5 entries with 2x2 clusters have 2^6 * 2^5 = 2,048 labelings, so the
posterior p(z, w | X) is computed exactly by enumeration (tests/exact.py, with
scipy densities, independent of the package's engine).

Tolerances (seeded runs): Gibbs marginals within 0.03 of the exact ones, and the
Gibbs risk within max(0.015, 4 MCSE) of the exact conditional risk.

Such tiny tables are very ambiguous: their posterior has a second, label-switched
mode (rows and columns swapped together) holding several percent of the mass, and
the sampler crosses between the modes only every few thousand sweeps. Short chains
from dispersed starts then weight the modes by their basins, not their mass, so
these tests run a few long chains (40,000 sweeps in all) that cross many times.
"""

import numpy as np
import pytest

from lbm_bench import gibbs_labels, map_labels
from tests.exact import exact_posterior, posterior_summaries
from tests.inference.tiny import TINY_MODELS


@pytest.fixture(params=sorted(TINY_MODELS))
def tiny(request):
    model = TINY_MODELS[request.param]
    X, z, w = model.sample(6, 5, rng=11)
    return model, X, z, w


def test_map_reaches_exact_maximum(tiny):
    model, X, _, _ = tiny
    result = map_labels(model, X, n_init=20, rng=0)
    exact = posterior_summaries(model, X, result.rows, result.cols)
    assert result.log_likelihood == pytest.approx(exact["max_log_joint"], abs=1e-9)
    assert model.complete_log_likelihood(X, result.rows, result.cols) == pytest.approx(
        exact["max_log_joint"], abs=1e-9
    )


def test_complete_log_likelihood_matches_enumeration(tiny):
    model, X, z, w = tiny
    Z, W, log_joint = exact_posterior(model, X)
    a = int(np.flatnonzero((Z == z).all(1))[0])
    b = int(np.flatnonzero((W == w).all(1))[0])
    assert model.complete_log_likelihood(X, z, w) == pytest.approx(log_joint[a, b], rel=1e-12)


def _marginals(samples, model):
    g, m = model.block_shape
    rows = np.stack([(samples.rows == k).mean(0) for k in range(g)], axis=1)
    cols = np.stack([(samples.cols == l).mean(0) for l in range(m)], axis=1)
    return rows, cols


def test_gibbs_kernel_leaves_exact_posterior_invariant(tiny):
    """The sharpest test of the sampler, immune to slow mixing: start 20,000 chains
    at independent exact posterior draws (from the enumeration), run 3 sweeps; the
    labels must still be exact posterior draws. Marginals within 0.02 (their
    standard error is below 0.004), the risk of the MAP labels within 0.005 (its
    standard error is below 0.002)."""
    model, X, _, _ = tiny
    Z, W, log_joint = exact_posterior(model, X)
    post = np.exp(log_joint - log_joint.max()).ravel()
    post /= post.sum()
    rng = np.random.default_rng(7)
    draws = rng.choice(post.size, size=20_000, p=post)
    a, b = np.unravel_index(draws, log_joint.shape)
    starts = list(zip(Z[a], W[b], strict=True))
    samples = gibbs_labels(
        model, X, n_samples=20_000, n_chains=20_000, init=starts, burn_in=2, rng=8
    )
    result = map_labels(model, X, rng=0)
    exact = posterior_summaries(model, X, result.rows, result.cols)
    row_marg, col_marg = _marginals(samples, model)
    np.testing.assert_allclose(row_marg, exact["row_marginals"], atol=0.02)
    np.testing.assert_allclose(col_marg, exact["col_marginals"], atol=0.02)
    assert samples.risk(result.rows, result.cols).risk == pytest.approx(exact["risk"], abs=0.005)


def test_gibbs_ergodic_average_matches_exact_posterior():
    """Long chains from dispersed starts reach the exact posterior (a table whose
    label-switched mode holds little mass, so the chains mix)."""
    model = TINY_MODELS["gaussian"]
    X, _, _ = model.sample(6, 5, rng=11)
    result = map_labels(model, X, rng=0)
    exact = posterior_summaries(model, X, result.rows, result.cols)
    samples = gibbs_labels(model, X, n_samples=60_000, n_chains=2, init="random", burn_in=200, rng=1)
    row_marg, col_marg = _marginals(samples, model)
    np.testing.assert_allclose(row_marg, exact["row_marginals"], atol=0.03)
    np.testing.assert_allclose(col_marg, exact["col_marginals"], atol=0.03)
    estimate = samples.risk(result.rows, result.cols)
    assert abs(estimate.risk - exact["risk"]) <= max(0.015, 4 * estimate.mcse)


def test_short_chains_from_dispersed_starts_flag_poor_mixing():
    """Diagnostics do their job: 16 short chains on a bimodal tiny posterior give
    a split R-hat well above 1."""
    model = TINY_MODELS["gaussian"]
    X, _, _ = model.sample(6, 5, rng=11)
    result = map_labels(model, X, rng=0)
    samples = gibbs_labels(model, X, n_samples=16_000, n_chains=16, init="random", rng=1)
    assert samples.risk(result.rows, result.cols).rhat > 1.1


def test_gibbs_chain_started_at_truth_is_stationary():
    """A chain started at the generating labels is an exact posterior draw: with no
    burn-in its risk agrees with a long burned-in run."""
    model = TINY_MODELS["poisson"]
    X, z, w = model.sample(6, 5, rng=4)
    result = map_labels(model, X, rng=0)
    exact = posterior_summaries(model, X, result.rows, result.cols)
    samples = gibbs_labels(model, X, n_samples=30_000, n_chains=2, init=(z, w), burn_in=0, rng=3)
    estimate = samples.risk(result.rows, result.cols)
    assert abs(estimate.risk - exact["risk"]) <= max(0.02, 4 * estimate.mcse)
