"""Sparse designs (density, effects) and sparse tables of the models layer (the noise they are drawn
from: tests/models/test_sparse_noise.py)."""

import numpy as np
import pytest
from scipy import sparse

from lbm_bench.models import BernoulliLBM, GaussianLBM, PoissonLBM
from lbm_bench.models.design import random_design


def _expected_density(model, n_rows=None, n_cols=None):
    mass = np.outer(model.row_proportions, model.col_proportions)
    if model.kind == "bernoulli":
        return float(np.sum(mass * model.probs))
    a = np.ones(1) if model.row_effects is None else model.row_effects
    b = np.ones(1) if model.col_effects is None else model.col_effects
    nonzero = [[np.mean(-np.expm1(-np.outer(a, b) * r)) for r in row] for row in model.rates]
    return float(np.sum(mass * np.array(nonzero)))


@pytest.mark.parametrize("kind", ["bernoulli", "poisson"])
@pytest.mark.parametrize("density", [0.001, 0.02, 0.3])
def test_density_holds_at_every_scale(kind, density):
    design = random_design(kind, 3, 4, density=density, rng=1)
    for scale in (0.01, 0.5, 1.0, 3.0, 10.0):
        model = design.model(scale)
        assert model.sparse
        assert _expected_density(model) == pytest.approx(density, rel=1e-6)  # probabilities floored at 1e-9


def test_poisson_density_with_effects_is_close_to_exact():
    """Effects are summarised by 64 groups when solving for the offset: relative error < 1e-3."""
    design = random_design("poisson", 4, 3, density=0.02, effects=(700, 300), effects_spread=0.8, rng=2)
    for scale in (0.2, 1.0, 3.0):
        assert _expected_density(design.model(scale)) == pytest.approx(0.02, rel=1e-3)


def test_scale_near_zero_makes_blocks_alike_and_scale_separates():
    design = random_design("bernoulli", 3, 3, density=0.01, rng=0)
    flat = design.model(1e-6).probs
    assert np.ptp(flat) < 1e-7
    sharp = design.model(3.0).probs
    assert sharp.max() / sharp.min() > 50  # separation relative to the density


def test_sparse_design_validation():
    with pytest.raises(ValueError, match="density"):
        random_design("gaussian", 2, 2, density=0.1, rng=0)
    with pytest.raises(ValueError, match="density"):
        random_design("bernoulli", 2, 2, density=1.5, rng=0)
    with pytest.raises(ValueError, match="table shape"):
        random_design("poisson", 2, 2, effects=True, rng=0)
    with pytest.raises(ValueError, match="effects_spread"):
        random_design("poisson", 2, 2, effects=(5, 5), effects_spread=-1.0, rng=0)
    assert PoissonLBM.family.options.resolve({"effects": True, "density": 0.1}, 30, 20) == {
        "effects": (30, 20), "density": 0.1}
    assert PoissonLBM.family.options.resolve({"effects": False}, 30, 20) == {}
    assert random_design("poisson", 2, 2, density=0.1, rng=0).to_dict()["density"] == 0.1


def test_effects_spread_controls_the_effects():
    narrow = random_design("poisson", 2, 2, effects=(2000, 50), effects_spread=0.1, rng=0)
    wide = random_design("poisson", 2, 2, effects=(2000, 50), effects_spread=1.0, rng=0)
    assert np.std(np.log(narrow.row_effects)) == pytest.approx(0.1, rel=0.1)
    assert np.std(np.log(wide.row_effects)) == pytest.approx(1.0, rel=0.1)


# -- sparse tables ------------------------------------------------------------------------
def test_sparse_bernoulli_tables_follow_their_blocks_and_share_noise_across_scales():
    design = random_design("bernoulli", 2, 3, density=0.02, rng=5)
    low, high = design.model(0.5), design.model(2.0)
    rng = np.random.default_rng(6)
    z, w = low.sample_labels(3000, 1500, rng=rng)
    noise = low.draw_noise(3000, 1500, rng=rng)
    X_low, X_high = low.table_from_noise(noise, z, w), high.table_from_noise(noise, z, w)
    assert isinstance(X_low, sparse.csr_array) and X_low.dtype == np.uint8
    dense_low, dense_high = X_low.toarray(), X_high.toarray()
    for k in range(2):
        for l in range(3):
            block = np.ix_(z == k, w == l)
            size = dense_low[block].size
            p = low.probs[k, l]
            assert abs(dense_low[block].mean() - p) < 5 * np.sqrt(p * (1 - p) / size)
            # common random numbers: where the probability grows, the ones are kept
            if high.probs[k, l] >= p:
                assert np.all(dense_high[block] >= dense_low[block])
            else:
                assert np.all(dense_high[block] <= dense_low[block])


def test_sparse_poisson_tables_with_effects_have_the_model_means():
    design = random_design("poisson", 3, 2, density=0.05, effects=(2000, 800), effects_spread=0.5, rng=8)
    model = design.model(1.0)
    X, z, w = model.sample(2000, 800, rng=9)
    assert isinstance(X, sparse.csr_array) and X.dtype == np.int64 and X.data.min() > 0
    mean = np.outer(model.row_effects, model.col_effects) * model.rates[np.ix_(z, w)]
    assert abs(X.sum() - mean.sum()) < 5 * np.sqrt(mean.sum())
    assert abs(X.nnz - (-np.expm1(-mean)).sum()) < 5 * np.sqrt(X.nnz)


@pytest.mark.parametrize("kind", ["bernoulli", "poisson"])
def test_sparse_likelihood_equals_dense(kind):
    design = random_design(kind, 3, 2, density=0.1, rng=10)
    model = design.model(1.0)
    X, z, w = model.sample(60, 40, rng=11)
    dense_model = design.model(1.0)
    for Xs in (X, sparse.coo_array(X), X.tocsc()):
        assert model.complete_log_likelihood(Xs, z, w) == pytest.approx(
            dense_model.complete_log_likelihood(X.toarray(), z, w), rel=1e-12
        )


def test_check_table_on_sparse_input():
    model = BernoulliLBM([0.5, 0.5], [0.5, 0.5], [[0.1, 0.2], [0.3, 0.4]])
    coo = sparse.coo_array((np.array([1, 0, 1]), (np.array([0, 1, 1]), np.array([1, 0, 0]))), shape=(2, 3))
    checked = model.check_table(coo)
    assert isinstance(checked, sparse.csr_array) and checked.dtype == np.uint8 and checked.nnz == 2
    assert checked is model.check_table(checked)  # no copy of a canonical table
    with pytest.raises(ValueError, match="0/1"):
        model.check_table(sparse.csr_array(np.array([[0, 2], [1, 0]])))
    poisson = PoissonLBM([0.5, 0.5], [0.5, 0.5], [[1.0, 2.0], [3.0, 4.0]])
    with pytest.raises(ValueError, match="non-negative"):
        poisson.check_table(sparse.csr_array(np.array([[0, -2], [1, 0]])))
    with pytest.raises(ValueError, match="integers"):
        poisson.check_table(sparse.csr_array(np.array([[0, 0.5], [1, 0]])))
    gaussian = GaussianLBM([0.5, 0.5], [0.5, 0.5], [[0, 1], [1, 0]], [[1, 1], [1, 1]])
    with pytest.raises(TypeError, match="sparse"):
        gaussian.check_table(sparse.csr_array(np.eye(3)))
