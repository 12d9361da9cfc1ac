"""The one MCSE estimator of the package (batch means within chains) and split R-hat."""

import math

import numpy as np
import pytest

from lbm_bench.metrics.mcmc import MIN_SETS_PER_CHAIN, chain_diagnostics


def test_batch_means_mcse_of_independent_and_correlated_draws():
    rng = np.random.default_rng(0)
    iid = rng.normal(size=10_000)
    mcse, rhat = chain_diagnostics(iid, np.array([10_000]))
    assert mcse == pytest.approx(1 / math.sqrt(10_000), rel=0.25)
    assert rhat == pytest.approx(1.0, abs=0.02)
    # AR(1) with rho = 0.9: variance inflation (1 + rho) / (1 - rho) = 19.
    ar = np.empty(40_000)
    ar[0] = rng.normal()
    noise = rng.normal(scale=math.sqrt(1 - 0.81), size=ar.size)
    for t in range(1, ar.size):
        ar[t] = 0.9 * ar[t - 1] + noise[t]
    mcse, _ = chain_diagnostics(ar, np.array([20_000, 20_000]))
    assert mcse == pytest.approx(math.sqrt(19 / ar.size), rel=0.3)


def test_degenerate_inputs():
    assert chain_diagnostics(np.ones(50), np.array([25, 25]))[0] == 0.0
    assert all(math.isnan(v) for v in chain_diagnostics(np.ones(1), np.array([1])))
    # chains that disagree: R-hat far above one
    _, rhat = chain_diagnostics(np.r_[np.zeros(100), np.ones(100)], np.array([100, 100]))
    assert rhat > 2 or math.isinf(rhat)


def _batch_means(values, lengths):
    """The estimator written out: batches of floor(sqrt(L)) in each chain of L, pooled."""
    total, acc, start = sum(lengths), 0.0, 0
    for length in lengths:
        chain, start = values[start:start + length], start + length
        size = math.isqrt(length)
        means = chain[: length // size * size].reshape(-1, size).mean(axis=1)
        acc += length * size * means.var(ddof=1)
    return math.sqrt(acc) / total


@pytest.mark.parametrize("lengths", [[1] * 8, [5] * 8, [9, 10], [2, 40], [9]])
def test_chains_too_short_for_an_mcse_give_nan(lengths):
    """A chain of one set has no spread: its MCSE was 0, certifying "+- 0.0000" from 8 sets in 8
    chains. Below MIN_SETS_PER_CHAIN sets in a chain, the MCSE is NaN (R-hat is still given)."""
    values = np.random.default_rng(1).random(sum(lengths))
    assert MIN_SETS_PER_CHAIN == 10
    assert math.isnan(chain_diagnostics(values, np.array(lengths))[0])


@pytest.mark.parametrize("lengths", [[10] * 8, [10, 11], [250] * 8, [2000]])
def test_chains_long_enough_keep_the_estimator(lengths):
    values = np.random.default_rng(2).random(sum(lengths))
    assert chain_diagnostics(values, np.array(lengths))[0] == pytest.approx(_batch_means(values, lengths), rel=1e-12)


def test_the_reports_share_the_estimator():
    """The conditional risk of a labelling, the Gibbs risk of a table and the floor use it."""
    from lbm_bench import gibbs_labels, random_model
    from lbm_bench.metrics import conditional_risk
    from lbm_bench.metrics.coclustering import l_item

    model = random_model("bernoulli", 2, 2, scale=1.0, rng=0)
    X, z, w = model.sample(30, 20, rng=1)
    samples = gibbs_labels(model, X, n_samples=120, n_chains=4, rng=2)
    estimate = samples.risk(z, w)
    losses = l_item(samples.rows, samples.cols, z, w, match=False)
    assert estimate.mcse == chain_diagnostics(losses, samples.chain_lengths)[0]
    report = conditional_risk(samples.rows, samples.cols, z, w, chain_lengths=samples.chain_lengths)
    matched = l_item(samples.rows, samples.cols, *report.matched_labels(z, w), match=False)
    assert report.mcse == pytest.approx(chain_diagnostics(matched, samples.chain_lengths)[0], rel=1e-12)
