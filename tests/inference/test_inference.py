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

from lbm_bench import (
    BernoulliLBM,
    CategoricalLBM,
    GaussianLBM,
    PoissonLBM,
    gibbs_labels,
    map_labels,
)
from tests.exact import exact_posterior, posterior_summaries

TINY_MODELS = {
    "gaussian": GaussianLBM([0.6, 0.4], [0.45, 0.55], [[0.0, 1.0], [0.9, -0.4]], [[1.0, 0.8], [1.2, 0.9]]),
    "poisson": PoissonLBM([0.55, 0.45], [0.5, 0.5], [[1.0, 3.0], [2.5, 0.8]]),
    "bernoulli": BernoulliLBM([0.5, 0.5], [0.6, 0.4], [[0.8, 0.3], [0.25, 0.7]]),
    "categorical": CategoricalLBM(
        [0.45, 0.55], [0.5, 0.5],
        [[[0.6, 0.3, 0.1], [0.2, 0.2, 0.6]], [[0.1, 0.7, 0.2], [0.5, 0.1, 0.4]]],
    ),
    "poisson-effects": PoissonLBM(
        [0.55, 0.45],
        [0.5, 0.5],
        [[1.0, 3.0], [2.5, 0.8]],
        row_effects=[0.8, 1.2, 1.0, 0.9, 1.1, 1.0],
        col_effects=[1.3, 0.7, 1.0, 1.0, 0.9],
    ),
}


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


def test_gibbs_reproducible_and_dtypes():
    model = TINY_MODELS["bernoulli"]
    X, z, w = model.sample(30, 20, rng=3)
    a = gibbs_labels(model, X, n_samples=100, n_chains=4, rng=5)
    b = gibbs_labels(model, X, n_samples=100, n_chains=4, rng=5)
    assert a.rows.dtype == np.uint8 and a.cols.dtype == np.uint8
    assert a.rows.tobytes() == b.rows.tobytes() and a.cols.tobytes() == b.cols.tobytes()
    c = gibbs_labels(model, X, n_samples=100, n_chains=4, rng=6)
    assert c.rows.tobytes() != a.rows.tobytes()


def test_gibbs_uneven_chains_and_thinning():
    model = TINY_MODELS["gaussian"]
    X, z, w = model.sample(12, 9, rng=3)
    samples = gibbs_labels(model, X, n_samples=10, n_chains=3, thin=2, burn_in=0, init=(z, w), rng=0)
    assert samples.chain_lengths.tolist() == [4, 3, 3]
    assert samples.rows.shape == (10, 12)
    assert samples.cols.shape == (10, 9)


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


def test_map_reproducible_and_x_only():
    model = TINY_MODELS["gaussian"]
    X, z, w = model.sample(40, 30, rng=8)
    a = map_labels(model, X, rng=1)
    b = map_labels(model, X, rng=1)
    assert np.array_equal(a.rows, b.rows) and np.array_equal(a.cols, b.cols)
    assert a.n_starts == 12  # 10 random + 2 entrywise-marginal starts
    with_truth = map_labels(model, X, init=(z, w), rng=1)
    assert with_truth.n_starts == 13
    only_truth = map_labels(model, X, init=(z, w), n_init=0)
    assert only_truth.n_starts == 1 and only_truth.converged


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"n_samples": 0}, "n_samples"),
        ({"n_chains": 0}, "n_chains"),
        ({"n_samples": 3, "n_chains": 4}, "n_chains"),
        ({"burn_in": -1}, "burn_in"),
        ({"thin": 0}, "thin"),
        ({"init": "bogus"}, "init"),
        ({"init": (np.zeros(5, int), np.zeros(5, int))}, r"init\[0\]\[0\]"),
    ],
)
def test_gibbs_bad_arguments(kwargs, match):
    model = TINY_MODELS["gaussian"]
    X, _, _ = model.sample(6, 5, rng=0)
    with pytest.raises((ValueError, TypeError), match=match):
        gibbs_labels(model, X, **kwargs)


def test_map_bad_arguments():
    model = TINY_MODELS["bernoulli"]
    X, z, w = model.sample(6, 5, rng=0)
    with pytest.raises(ValueError, match="n_init"):
        map_labels(model, X, n_init=0)
    with pytest.raises(ValueError, match=r"init\[1\]"):
        map_labels(model, X, init=(z, np.full(5, 7)))
    with pytest.raises(ValueError, match="X must hold 0/1"):
        map_labels(model, X * 2)


@pytest.mark.parametrize("kind", ["gaussian", "poisson", "bernoulli", "categorical"])
def test_incremental_map_equals_full_recompute(kind, monkeypatch):
    """Algorithm 1 with block sums updated for the changed labels reaches the same
    labels, iteration counts and likelihoods as with full products at every step."""
    from lbm_bench.inference import code_sums as _codes
    from lbm_bench.inference import dense_sums as _dense
    from lbm_bench.inference import engine as _engine
    from lbm_bench.inference.classifier import alternate, initial_column_labels
    from lbm_bench.models.design import random_model

    monkeypatch.setattr(_dense, "MIN_FULL_WORK", 0)  # small tables: force the index route
    monkeypatch.setattr(_codes, "CODE_MIN_FULL_WORK", 0)
    monkeypatch.setattr(_codes, "CODE_MIN_TABLE_BYTES", 0)  # categorical: the code storage
    routes = []
    update = _engine.BlockSums.update
    monkeypatch.setattr(
        _engine.BlockSums, "update", lambda self, labels: routes.append(update(self, labels)) or routes[-1]
    )
    model = random_model(kind, 3, 3, scale=0.7, rng=1, **({"categories": 5} if kind == "categorical" else {}))
    tables = np.stack([model.sample(200, 150, rng=s)[0] for s in range(4)])
    sweeper = _engine.Sweeper(model, tables)
    w0 = initial_column_labels(sweeper, 10, np.random.default_rng(2))
    full = alternate(sweeper, w0, incremental=False)
    assert set(routes) == {"full"}
    routes.clear()
    fast = alternate(sweeper, w0)
    for a, b in zip(full, fast, strict=True):
        assert np.array_equal(a, b)
    assert routes.count("index") >= 2, routes  # the index updates were exercised


def test_map_starts_one_stream_per_table():
    """Starts drawn with one Generator per table do not depend on the other tables."""
    from lbm_bench.inference.classifier import initial_column_labels
    from lbm_bench.inference.engine import Sweeper

    model = TINY_MODELS["bernoulli"]
    tables = np.stack([model.sample(20, 15, rng=s)[0] for s in range(3)])
    together = initial_column_labels(
        Sweeper(model, tables), 4, [np.random.default_rng(s) for s in range(3)]
    )
    for b in range(3):
        alone = initial_column_labels(Sweeper(model, tables[b : b + 1]), 4, np.random.default_rng(b))
        assert np.array_equal(together[b], alone[0])
    with pytest.raises(ValueError, match="3 Generators"):
        initial_column_labels(Sweeper(model, tables), 4, [np.random.default_rng(0)])
    # the entrywise scores are the sums of log-mixtures they claim to be
    from scipy.special import logsumexp

    X = tables[0]
    rows, cols = Sweeper(model, X[None]).entrywise_scores()
    # log-densities up to the base measure (the same for every class): eta . T(x) - A
    stats, eta, A = model.sufficient_statistics(X), model.natural_parameters, model.log_partition
    dens = np.einsum("pij,pkl->klij", stats, eta) - A[:, :, None, None]  # (g, m, n, d)
    log_pi, log_rho = np.log(model.row_proportions), np.log(model.col_proportions)
    expected_rows = logsumexp(dens + log_rho[None, :, None, None], axis=1).sum(-1).T + log_pi
    expected_cols = logsumexp(dens + log_pi[:, None, None, None], axis=0).sum(-2).T + log_rho
    np.testing.assert_allclose(rows[0], expected_rows, rtol=1e-5)
    np.testing.assert_allclose(cols[0], expected_cols, rtol=1e-5)
