"""The engine on tables with missing entries, against exact enumeration on tiny tables.

6x5 tables with 30% of entries missing and 2x2 clusters: the exact posterior of the
observed-data likelihood (tests/exact.py, scipy densities times the mask, plus the
mask's Bernoulli terms for missing by block) is compared with the MAP, the complete
log-likelihood and the Gibbs kernel, for every family, missing at random and by block.
Tolerances as in test_inference.py: marginals within 0.02 and the risk within 0.005
(standard errors below 0.004 and 0.002 with 20,000 chains).
"""

import numpy as np
import pytest
import scipy.sparse as sp

from lbm_bench import gibbs_labels, map_labels
from lbm_bench.inference.classifier import alternate, initial_column_labels
from lbm_bench.inference.engine import BlockSums, Sweeper
from lbm_bench.metrics.risk import set_item_losses
from lbm_bench.models import TableData
from tests.exact import exact_posterior, posterior_summaries
from tests.inference.test_inference import TINY_MODELS

BLOCK_PROBS = np.array([[0.15, 0.5], [0.4, 0.2]])


def _mask(shape, rate, seed):
    return np.random.default_rng(seed).random(shape) >= rate


@pytest.fixture(params=[(kind, mech) for kind in sorted(TINY_MODELS) for mech in ("random", "block")],
                ids=lambda p: f"{p[0]}-{p[1]}")
def tiny_incomplete(request):
    kind, mechanism = request.param
    model = TINY_MODELS[kind]
    if mechanism == "block":
        model = model.with_missing_probs(BLOCK_PROBS)
    X, z, w = model.sample(6, 5, rng=11)
    observed = _mask(X.shape, 0.3, 5)
    return model, X, observed, z, w


def test_complete_log_likelihood_matches_enumeration(tiny_incomplete):
    model, X, observed, z, w = tiny_incomplete
    Z, W, log_joint = exact_posterior(model, X, observed)
    a = int(np.flatnonzero((Z == z).all(1))[0])
    b = int(np.flatnonzero((W == w).all(1))[0])
    nan_table = np.where(observed, X, np.nan)
    assert model.complete_log_likelihood(X, z, w, observed=observed) == pytest.approx(log_joint[a, b], rel=1e-12)
    assert model.complete_log_likelihood(nan_table, z, w) == pytest.approx(log_joint[a, b], rel=1e-12)
    masked = np.ma.MaskedArray(X, mask=~observed)
    assert model.complete_log_likelihood(masked, z, w) == pytest.approx(log_joint[a, b], rel=1e-12)


def test_map_reaches_exact_maximum(tiny_incomplete):
    model, X, observed, _, _ = tiny_incomplete
    result = map_labels(model, X, observed=observed, n_init=20, rng=0)
    exact = posterior_summaries(model, X, result.rows, result.cols, observed)
    assert result.log_likelihood == pytest.approx(exact["max_log_joint"], abs=1e-9)


def test_gibbs_kernel_leaves_exact_posterior_invariant(tiny_incomplete):
    """20,000 chains started at exact posterior draws of the observed-data posterior,
    3 sweeps: still exact draws (marginals within 0.02, risk within 4 standard errors of
    the mean of 20,000 independent sets: about 0.012; chain seeds 8 to 13 of the bernoulli
    table give deviations of -1.1 to 2.2 standard errors)."""
    model, X, observed, _, _ = tiny_incomplete
    Z, W, log_joint = exact_posterior(model, X, observed)
    post = np.exp(log_joint - log_joint.max()).ravel()
    post /= post.sum()
    draws = np.random.default_rng(7).choice(post.size, size=20_000, p=post)
    a, b = np.unravel_index(draws, log_joint.shape)
    samples = gibbs_labels(model, X, observed=observed, n_samples=20_000, n_chains=20_000,
                           init=list(zip(Z[a], W[b], strict=True)), burn_in=2, rng=8)
    result = map_labels(model, X, observed=observed, rng=0)
    exact = posterior_summaries(model, X, result.rows, result.cols, observed)
    g, m = model.block_shape
    rows = np.stack([(samples.rows == k).mean(0) for k in range(g)], axis=1)
    cols = np.stack([(samples.cols == l).mean(0) for l in range(m)], axis=1)
    np.testing.assert_allclose(rows, exact["row_marginals"], atol=0.02)
    np.testing.assert_allclose(cols, exact["col_marginals"], atol=0.02)
    row_loss, col_loss = set_item_losses(samples.rows, samples.cols, result.rows, result.cols)
    losses = row_loss + col_loss - row_loss * col_loss  # one set per chain: independent draws
    assert samples.risk(result.rows, result.cols).risk == pytest.approx(
        exact["risk"], abs=4 * losses.std() / np.sqrt(losses.size))


def test_a_row_with_no_observed_entry_has_the_prior_as_posterior():
    """Missing at random: a row whose entries are all missing has p(z_i = k | w, X_obs) = pi_k."""
    model = TINY_MODELS["gaussian"]
    X, _, _ = model.sample(6, 5, rng=11)
    observed = _mask(X.shape, 0.3, 5)
    observed[2] = False
    sweeper = Sweeper.for_table(model, model.check_data(X, observed))
    w = np.random.default_rng(0).integers(0, 2, size=(1, 3, 5))
    logits = sweeper.row_logits(w)[0, :, 2]  # (C, g)
    posterior = np.exp(logits - logits.max(-1, keepdims=True))
    posterior /= posterior.sum(-1, keepdims=True)
    np.testing.assert_allclose(posterior, np.broadcast_to(model.row_proportions, posterior.shape), atol=1e-12)


@pytest.mark.parametrize("mechanism", ["random", "block"])
@pytest.mark.parametrize("kind", ["bernoulli", "poisson", "poisson-effects"])
def test_sparse_and_dense_engines_agree_on_incomplete_tables(kind, mechanism, monkeypatch):
    """Missing entries held sparsely (a CSR of the missing set) give the same block sums,
    logits and MAP as the dense mask, exactly (integer sums), through index updates too."""
    from lbm_bench.inference import dense_sums, sparse_sums

    monkeypatch.setattr(dense_sums, "MIN_FULL_WORK", 0)
    monkeypatch.setattr(sparse_sums, "SPARSE_MIN_FULL_WORK", 0)
    model = TINY_MODELS[kind]
    if kind == "poisson-effects":
        model = type(model)(model.row_proportions, model.col_proportions, model.rates,
                            np.random.default_rng(1).lognormal(0, 0.3, 60),
                            np.random.default_rng(2).lognormal(0, 0.3, 40))
    if mechanism == "block":
        model = model.with_missing_probs(BLOCK_PROBS)
    X, _, _ = model.sample(60, 40, rng=3)
    observed = _mask(X.shape, 0.3, 4)
    dense = model.check_data(X, observed)
    sparse_data = model.check_data(sp.csr_array(np.where(observed, X, 0)), observed)
    assert sparse_data.is_sparse and sparse_data.n_missing == dense.n_missing
    a, b = Sweeper.for_table(model, dense), Sweeper.for_table(model, sparse_data)
    assert b.is_sparse and not a.is_sparse
    w = np.random.default_rng(0).integers(0, 2, size=(1, 4, 40))
    exact = kind != "poisson-effects"  # effects: float exposures, equal up to rounding
    compare = np.testing.assert_array_equal if exact else (
        lambda x, y: np.testing.assert_allclose(x, y, rtol=1e-12, atol=1e-9))
    compare(a.row_logits(w), b.row_logits(w))
    z = np.random.default_rng(1).integers(0, 2, size=(1, 4, 60))
    compare(a.col_logits(z), b.col_logits(z))
    starts_a = initial_column_labels(a, 6, np.random.default_rng(5))
    starts_b = initial_column_labels(b, 6, np.random.default_rng(5))
    za, wa, _, _ = alternate(a, starts_a)
    zb, wb, _, _ = alternate(b, starts_a)
    assert np.array_equal(za, zb) and np.array_equal(wa, wb)
    compare(a.complete_log_likelihood(za, wa), b.complete_log_likelihood(zb, wb))
    assert starts_b.shape == starts_a.shape
    # index updates of the sparse engine with several channels move the right entries
    sums = BlockSums(b, "rows", max_changed=10**9)
    sums.update(w)
    w2 = w.copy()
    w2[..., :7] = 1 - w2[..., :7]
    assert sums.update(w2) == "index"
    compare(sums.sums, b.rows.full_sums(w2))
    assert b.rows.exact_sums == exact  # float exposures are recomputed periodically


def test_incremental_and_full_gibbs_agree_with_missing_entries():
    model = TINY_MODELS["bernoulli"].with_missing_probs(BLOCK_PROBS)
    X, _, _ = model.sample(40, 30, rng=3)
    observed = _mask(X.shape, 0.4, 6)
    one = gibbs_labels(model, X, observed=observed, n_samples=200, n_chains=4, rng=5)
    two = gibbs_labels(model, X, observed=observed, n_samples=200, n_chains=4, method="full", rng=5)
    assert one.rows.tobytes() == two.rows.tobytes() and one.cols.tobytes() == two.cols.tobytes()


def test_entrywise_scores_are_the_observed_log_mixtures():
    """The X-only start scores of an incomplete table: sums over observed entries of the
    log-mixtures (and, by block, of the mask's terms) they claim to be."""
    from scipy.special import logsumexp

    model = TINY_MODELS["gaussian"].with_missing_probs(BLOCK_PROBS)
    X, _, _ = model.sample(20, 15, rng=2)
    observed = _mask(X.shape, 0.3, 3)
    rows, cols = Sweeper.for_table(model, model.check_data(X, observed)).entrywise_scores()
    stats, eta, A = model.sufficient_statistics(X), model.natural_parameters, model.log_partition
    dens = (np.einsum("pij,pkl->klij", stats, eta) - A[:, :, None, None]) * observed
    q = BLOCK_PROBS[:, :, None, None]
    dens = dens + np.where(observed, np.log1p(-q), np.log(q))
    log_pi, log_rho = np.log(model.row_proportions), np.log(model.col_proportions)
    expected_rows = logsumexp(dens + log_rho[None, :, None, None], axis=1).sum(-1).T + log_pi
    expected_cols = logsumexp(dens + log_pi[:, None, None, None], axis=0).sum(-2).T + log_rho
    np.testing.assert_allclose(rows[0], expected_rows, rtol=1e-4)
    np.testing.assert_allclose(cols[0], expected_cols, rtol=1e-4)


def test_masks_in_every_convention_agree():
    model = TINY_MODELS["poisson"]
    X, z, w = model.sample(8, 6, rng=1)
    observed = _mask(X.shape, 0.3, 2)
    reference = model.complete_log_likelihood(X, z, w, observed=observed)
    assert model.complete_log_likelihood(np.where(observed, X, np.nan), z, w) == reference
    assert model.complete_log_likelihood(np.ma.MaskedArray(X, mask=~observed), z, w) == reference
    nan_csr = sp.csr_array(np.where(observed, X, np.nan))
    assert model.complete_log_likelihood(nan_csr, z, w) == pytest.approx(reference, rel=1e-12)
    data = TableData.incomplete(nan_csr)
    assert data.is_sparse and data.n_missing == int((~observed).sum())
    with pytest.raises(ValueError, match="observed must have shape"):
        map_labels(model, X, observed=observed[:, :3])
    with pytest.raises(ValueError, match="at entries that observed says are observed"):
        map_labels(model, np.where(observed, X, np.nan), observed=np.ones(X.shape, bool))
    with pytest.raises(ValueError, match="only 0 and 1"):
        map_labels(model, X, observed=observed * 2)
