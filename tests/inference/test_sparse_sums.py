"""The sparse storage of the engine (lbm_bench.inference.sparse_sums) against the dense one, on the same tables."""

import numpy as np
import pytest
from scipy import sparse

from lbm_bench.inference import sparse_sums
from lbm_bench.inference.chains import run_chains
from lbm_bench.inference.classifier import map_labels
from lbm_bench.inference.engine import BlockSums, Sweeper
from lbm_bench.inference.gibbs import gibbs_labels
from lbm_bench.models.design import random_design


def _sparse_model_and_table(kind, n_rows, n_cols, density, scale, seed, effects=False):
    options = {"effects": (n_rows, n_cols), "effects_spread": 0.5} if effects else {}
    design = random_design(kind, 3, 3, density=density, rng=seed, **options)
    model = design.model(scale)
    X, z, w = model.sample(n_rows, n_cols, rng=seed + 1)
    assert isinstance(X, sparse.csr_array)
    return model, X, z, w


CASES = [("bernoulli", False), ("poisson", False), ("poisson", True)]


@pytest.mark.parametrize("kind, effects", CASES)
def test_sparse_and_dense_gibbs_draw_the_same_label_sets(kind, effects):
    """Integer block sums are exact in both engines: same starts and stream, same draws."""
    model, X, z, w = _sparse_model_and_table(kind, 600, 300, 0.05, 1.0, 3, effects)
    starts = [(z, w), model.sample_labels(600, 300, rng=4)]
    a = gibbs_labels(model, X, n_samples=160, n_chains=4, burn_in=5, init=starts, rng=5)
    b = gibbs_labels(model, X.toarray(), n_samples=160, n_chains=4, burn_in=5, init=starts, rng=5)
    assert np.array_equal(a.rows, b.rows) and np.array_equal(a.cols, b.cols)


@pytest.mark.parametrize("kind", ["bernoulli", "poisson"])
def test_sparse_gibbs_risk_agrees_with_dense_within_monte_carlo_error(kind):
    """3000x600 at 2%: independent runs (default MAP starts) of the two engines agree."""
    model, X, z, w = _sparse_model_and_table(kind, 3000, 600, 0.02, 1.2, 11)
    result = map_labels(model, X, rng=0)
    sparse_risk = gibbs_labels(model, X, n_samples=1000, rng=1).risk(result.rows, result.cols)
    dense_risk = gibbs_labels(model, X.toarray(), n_samples=1000, rng=2).risk(result.rows, result.cols)
    assert 0.005 < sparse_risk.risk < 0.6
    tolerance = 4 * np.hypot(sparse_risk.mcse, dense_risk.mcse) + 1e-3
    assert abs(sparse_risk.risk - dense_risk.risk) <= tolerance


@pytest.mark.parametrize("kind, effects", CASES)
def test_incremental_sparse_block_sums_are_bit_identical_to_full_products(kind, effects, monkeypatch):
    """Index updates (forced) on two sparse tables, both steps, against full recomputes
    and against the dense engine's full products (gathers in small chunks too)."""
    monkeypatch.setattr(sparse_sums, "_GATHER_CHUNK", 500)
    model, X, _, _ = _sparse_model_and_table(kind, 400, 250, 0.05, 1.0, 21, effects)
    Y = model.table_from_noise(model.draw_noise(400, 250, rng=np.random.default_rng(9)),
                               *model.sample_labels(400, 250, rng=10))
    sweeper = Sweeper(model, [X, Y])
    dense = Sweeper(model, np.stack([X.toarray(), Y.toarray()]))
    assert sweeper.is_sparse and not dense.is_sparse
    rng = np.random.default_rng(12)
    for side, n_other, k in (("rows", 250, 3), ("cols", 400, 3)):
        sums = BlockSums(sweeper, side, max_changed=10**9, recompute_every=10**9)
        labels = rng.integers(0, k, size=(2, 5, n_other)).astype(np.uint8)
        routes = []
        for step in range(12):
            flip = rng.random(labels.shape) < (0.3 if step % 3 == 0 else 0.02)
            labels = np.where(flip, rng.integers(0, k, size=labels.shape), labels).astype(np.uint8)
            routes.append(sums.update(labels))
            full = getattr(sweeper, side).full_sums(labels)
            assert np.array_equal(sums.sums, full)
            assert np.array_equal(full, getattr(dense, side).full_sums(labels))
        assert routes.count("index") >= 10 and sums.n_row_adds > 0


def test_sparse_updates_fall_back_to_the_full_product_when_many_labels_move():
    model, X, _, _ = _sparse_model_and_table("bernoulli", 500, 400, 0.05, 1.0, 31)
    sweeper = Sweeper.for_table(model, X)
    sums = BlockSums(sweeper, "rows")
    rng = np.random.default_rng(0)
    sums.update(rng.integers(0, 3, size=(1, 8, 400)).astype(np.uint8))
    assert sums.update(rng.integers(0, 3, size=(1, 8, 400)).astype(np.uint8)) == "fallback"


@pytest.mark.parametrize("kind, effects", CASES)
def test_sparse_logits_likelihood_and_entrywise_scores_match_dense(kind, effects):
    model, X, z, w = _sparse_model_and_table(kind, 60, 50, 0.1, 1.0, 41, effects)
    sp, de = Sweeper.for_table(model, X), Sweeper.for_table(model, X.toarray())
    zz, ww = z[None, None].astype(np.int64), w[None, None].astype(np.int64)
    assert np.array_equal(sp.row_logits(ww), de.row_logits(ww))
    assert np.array_equal(sp.col_logits(zz), de.col_logits(zz))
    assert sp.complete_log_likelihood(zz, ww) == pytest.approx(de.complete_log_likelihood(zz, ww), rel=1e-12)
    # entrywise starts: exact zeros' terms (fewer than 64 rows and columns: groups are exact)
    for s, d in zip(sp.entrywise_scores(), de.entrywise_scores(), strict=True):
        np.testing.assert_allclose(s, d, rtol=1e-4)


@pytest.mark.parametrize("kind", ["bernoulli", "poisson"])
def test_entrywise_scores_over_ranges_of_rows_are_those_of_one_pass(monkeypatch, kind):
    """The scores without effects are summed over ranges of rows (and of the transposed
    table's rows) of about ``_SCORE_CHUNK`` entries, each row's and column's gains in the
    order of one pass over all entries: the same bits at every range size."""
    model, X, _, _ = _sparse_model_and_table(kind, 400, 300, 0.05, 1.0, 43)
    sweeper = Sweeper.for_table(model, X)
    monkeypatch.setattr(sparse_sums, "_SCORE_CHUNK", 1 << 30)
    rows, cols = sweeper.entrywise_scores()
    for chunk in (1, 3, 100):
        monkeypatch.setattr(sparse_sums, "_SCORE_CHUNK", chunk)
        for got, want in zip(sweeper.entrywise_scores(), (rows, cols), strict=True):
            assert np.array_equal(got, want)
    assert kind == "bernoulli" or np.unique(X.data).size > 1


def test_sparse_map_equals_dense_map_on_the_same_table():
    model, X, _, _ = _sparse_model_and_table("bernoulli", 1500, 500, 0.03, 1.0, 51)
    a, b = map_labels(model, X, rng=3), map_labels(model, X.toarray(), rng=3)
    assert a.log_likelihood == pytest.approx(b.log_likelihood, rel=1e-12)
    assert np.array_equal(a.rows, b.rows) and np.array_equal(a.cols, b.cols)


def test_sparse_chains_take_index_updates():
    model, X, z, w = _sparse_model_and_table("poisson", 2000, 800, 0.02, 1.5, 61)
    run = run_chains(Sweeper.for_table(model, X), w[None, None].repeat(4, 1), 20, np.random.default_rng(0), burn_in=5)
    assert run.row_sums.n_index + run.col_sums.n_index > 20


def test_sweeper_refuses_mixed_or_gaussian_sparse_tables():
    model, X, _, _ = _sparse_model_and_table("bernoulli", 30, 20, 0.1, 1.0, 71)
    with pytest.raises(TypeError, match="sparse"):
        Sweeper(model, [X, X.toarray()])
    with pytest.raises(TypeError, match="dense statistics"):
        _ = Sweeper.for_table(model, X).stats


@pytest.mark.parametrize("n_terms", [1, 2, 3, 7, 8, 11])
@pytest.mark.parametrize("axis", [1, 2])
def test_logsumexp_is_scipy_s_bit_for_bit(n_terms, axis):
    """The scores with effects use a lean logsumexp: the same bits as scipy's on arrays with
    ties, wide ranges and either axis (numpy adds fewer than 8 terms left to right)."""
    from scipy.special import logsumexp

    rng = np.random.default_rng(n_terms * 10 + axis)
    for other in (1, 3, 9):
        shape = [5000, 0, 0]
        shape[axis], shape[3 - axis] = n_terms, other
        for scale in (1e-3, 1.0, 1e3):
            x = rng.normal(size=shape) * scale
            x[::3] = np.round(x[::3], 1)  # ties, several maxima
            x[1::7] = 0.5  # every term the maximum
            got = sparse_sums._logsumexp(x, axis)
            want = logsumexp(x, axis=axis)
            assert got.shape == want.shape
            assert np.array_equal(got, want), (shape, scale)
