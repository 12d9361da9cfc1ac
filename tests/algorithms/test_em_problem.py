"""A table prepared for block EM (lbm_bench.algorithms.em_problem): its products with assignments are the
block sums, the row step's logits are the label posteriors' (against scipy's densities), the M-step is
the blocks' estimates, missing entries count out of every sum, and sparse tables give the dense
numbers."""

import numpy as np
import pytest
import scipy.sparse as sp

from lbm_bench import PoissonLBM, random_model
from lbm_bench.algorithms.em_problem import EMProblem, one_hot_codes, proportions
from lbm_bench.models.data import TableData
from lbm_bench.models.registry import get_family
from tests.exact import entry_log_densities

MODEL = PoissonLBM([0.4, 0.6], [0.3, 0.3, 0.4], [[0.5, 3.0, 1.0], [2.0, 0.8, 6.0]])


@pytest.fixture(scope="module")
def drawn():
    X, z, w = MODEL.sample(30, 20, rng=0)
    return X, z, w, np.eye(2)[z], np.eye(3)[w]


def test_block_sums_and_the_expected_log_joint(drawn):
    X, z, w, Z, W = drawn
    problem = EMProblem(X, get_family("poisson"))
    totals = problem.block_totals(Z, W)
    assert totals.shape == (1, 2, 3) and totals[0, 1, 2] == X[np.ix_(z == 1, w == 2)].sum()
    assert np.array_equal(problem.exposure(Z, W, totals), np.outer(Z.sum(0), W.sum(0)))
    assert problem.expected_log_joint(MODEL, Z, W, totals) == pytest.approx(MODEL.complete_log_likelihood(X, z, w))


def test_the_row_step_logits_are_the_label_posteriors(drawn):
    X, z, w, Z, W = drawn
    _, logits = EMProblem(X, get_family("poisson")).row_step(MODEL, W)
    dens = entry_log_densities(MODEL, X)  # (n, d, g, m)
    expected = np.log(MODEL.row_proportions) + dens[:, np.arange(20), :, w].sum(axis=0)  # (n, g)
    gap = logits - expected
    assert np.allclose(gap, gap[:, :1])  # equal up to a constant per row (the base measure)


def test_the_m_step_is_the_blocks_estimates_and_the_labels_shares(drawn):
    X, z, w, Z, W = drawn
    problem = EMProblem(X, get_family("poisson"))
    fitted = problem.m_step(Z, W, problem.block_totals(Z, W), previous=None)
    sizes = np.outer(Z.sum(0), W.sum(0))
    assert np.allclose(fitted.rates, problem.block_totals(Z, W)[0] / sizes)
    assert np.allclose(fitted.row_proportions, Z.mean(0)) and np.allclose(fitted.col_proportions, W.mean(0))
    empty = W.copy()
    empty[:, 2] = 0.0  # a column cluster with no mass keeps the previous parameters
    empty[:, 0] += W[:, 2]
    kept = problem.m_step(Z, empty, problem.block_totals(Z, empty), previous=MODEL)
    assert np.array_equal(kept.rates[:, 2], MODEL.rates[:, 2])


def test_missing_entries_count_out_of_every_sum(drawn):
    X, z, w, Z, W = drawn
    holes = X.astype(float)
    holes[0, :5] = np.nan
    problem = EMProblem(TableData.incomplete(holes), get_family("poisson"))  # the boundary reads the NaN once
    assert problem.masked
    totals = problem.block_totals(Z, W)
    assert totals.shape == (2, 2, 3)  # the observed counts, one more channel
    observed = ~np.isnan(holes)
    assert np.array_equal(problem.exposure(Z, W, totals), Z.T @ observed @ W)
    assert totals[0].sum() == np.nansum(holes)


def test_sparse_tables_give_the_dense_numbers_and_others_are_refused(drawn):
    X, z, w, Z, W = drawn
    dense, sparse = EMProblem(X, get_family("poisson")), EMProblem(sp.csr_array(X), get_family("poisson"))
    assert sparse.sparse and np.allclose(sparse.block_totals(Z, W), dense.block_totals(Z, W))
    assert sparse.expected_log_joint(MODEL, Z, W, sparse.block_totals(Z, W)) == pytest.approx(
        dense.expected_log_joint(MODEL, Z, W, dense.block_totals(Z, W)))
    with pytest.raises(TypeError, match="^cem with gaussian blocks does not accept sparse tables .*poisson or bern"):
        EMProblem(sp.csr_array(np.eye(3)), get_family("gaussian"))


def test_gaussian_tables_are_centred_and_restored():
    model = random_model("gaussian", 2, 2, scale=1.0, rng=1)
    X, z, w = model.sample(25, 20, rng=2)
    problem = EMProblem(X + 100.0, get_family("gaussian"))
    Z, W = np.eye(2)[z], np.eye(2)[w]
    fitted = problem.restore(problem.m_step(Z, W, problem.block_totals(Z, W), previous=None))
    block = (X + 100.0)[np.ix_(z == 1, w == 0)]
    # the block's variance shrunk by one pseudo-entry at the table's variance (estimate_blocks' prior_var)
    shrunk = (block.var() * block.size + X.var()) / (block.size + 1)
    assert fitted.means[1, 0] == pytest.approx(block.mean()) and fitted.stds[1, 0] == pytest.approx(np.sqrt(shrunk))


def test_the_helpers():
    assert np.allclose(proportions(np.array([2.0, 0.0, 6.0])), [0.25, 0.0, 0.75], atol=1e-10)
    assert proportions(np.array([1.0, 0.0])).min() > 0  # floored, never zero
    codes = one_hot_codes(np.array([[0, 2], [1, 0]]))
    assert codes.toarray().tolist() == [[1, 0, 0, 0, 0, 1], [0, 1, 0, 1, 0, 0]]
    partial = one_hot_codes(np.array([[0, 2], [1, 0]]), observed=np.array([[True, False], [True, True]]))
    assert partial.toarray().tolist() == [[1, 0, 0, 0, 0, 0], [0, 1, 0, 1, 0, 0]]
