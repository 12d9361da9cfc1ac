"""The baselines on tables with missing entries: CEM/VEM fit the observed entries, k-means and
spectral impute column means, sparsebm refuses in one line."""

import numpy as np
import pytest
import scipy.sparse as sp

from lbm_bench import random_model
from lbm_bench.algorithms import ALGORITHMS, double_kmeans, fit_lbm, infer_kind, sparsebm_lbm
from lbm_bench.algorithms.inputs import imputed_table
from lbm_bench.metrics import ari
from lbm_bench.models import TableData
from tests.algorithms.common import EASY_SCALES, KINDS, OPTIONS, builtins


def _incomplete(kind, rate=0.3, shape=(120, 80), seed=1):
    model = random_model(kind, 3, 2, scale=EASY_SCALES[kind], rng=0, **OPTIONS.get(kind, {}))
    X, z, w = model.sample(*shape, rng=seed)
    observed = np.random.default_rng(seed + 1).random(X.shape) >= rate
    return model, X, observed, z, w


@pytest.mark.parametrize("method", ["cem", "vem"])
@pytest.mark.parametrize("kind", KINDS)
def test_block_em_fits_the_observed_entries(kind, method):
    """The criterion of the kept CEM start is the fitted model's complete log-likelihood of the
    observed entries (the package's observed-data likelihood, an independent computation); the
    labels of an easy table are found from 70% of its entries."""
    model, X, observed, z, w = _incomplete(kind)
    nan_table = np.where(observed, X, np.nan)
    fit = fit_lbm(nan_table, 3, 2, method=method, kind=kind, rng=0)
    assert ari(z, fit.rows) > 0.95 and ari(w, fit.cols) > 0.95
    if method == "cem":
        expected = fit.model.complete_log_likelihood(nan_table, fit.rows, fit.cols)
        assert fit.criterion == pytest.approx(expected, rel=1e-9, abs=1e-6)
    masked = fit_lbm(np.ma.MaskedArray(X, mask=~observed), 3, 2, method=method, kind=kind, rng=0)
    assert np.array_equal(masked.rows, fit.rows) and np.array_equal(masked.cols, fit.cols)
    # the missing entries' values play no part
    other = np.where(observed, X, X[::-1])
    again = fit_lbm(np.ma.MaskedArray(other, mask=~observed), 3, 2, method=method, kind=kind, rng=0)
    assert np.array_equal(again.rows, fit.rows) and np.array_equal(again.cols, fit.cols)


@pytest.mark.parametrize("kind", ["bernoulli", "poisson"])
def test_sparse_tables_with_missing_entries_fit_like_dense_ones(kind):
    model = random_model(kind, 3, 2, scale=EASY_SCALES[kind], rng=0, density=0.1)
    X, z, w = model.sample(300, 200, rng=1)
    dense = X.toarray().astype(float)
    observed = np.random.default_rng(2).random(dense.shape) >= 0.05
    nan_dense = np.where(observed, dense, np.nan)
    nan_sparse = sp.csr_array(nan_dense)
    assert TableData.incomplete(nan_sparse).is_sparse
    a, b = fit_lbm(nan_dense, 3, 2, kind=kind, rng=0), fit_lbm(nan_sparse, 3, 2, kind=kind, rng=0)
    assert np.array_equal(a.rows, b.rows) and np.array_equal(a.cols, b.cols)
    assert a.criterion == pytest.approx(b.criterion, rel=1e-10)


def test_double_kmeans_imputes_column_means():
    _, X, observed, z, w = _incomplete("gaussian")
    nan_table = np.where(observed, X, np.nan)
    means = np.nanmean(nan_table, axis=0)
    imputed = np.where(observed, X, means)
    np.testing.assert_allclose(imputed_table(TableData.incomplete(nan_table)), imputed)
    assert [a.tolist() for a in double_kmeans(nan_table, 3, 2, rng=4)] == [
        a.tolist() for a in double_kmeans(imputed, 3, 2, rng=4)]
    # a column with no observed entry takes the table's observed mean
    nan_table[:, 0] = np.nan
    filled = imputed_table(TableData.incomplete(nan_table))
    assert np.allclose(filled[:, 0], np.nanmean(nan_table))


@pytest.mark.parametrize("name", builtins())
def test_every_builtin_takes_a_nan_table(name):
    _, X, observed, z, w = _incomplete("gaussian", shape=(60, 40))
    rows, cols = ALGORITHMS[name](np.where(observed, X, np.nan), 3, 2, rng=0)
    assert rows.shape == (60,) and cols.shape == (40,)


def test_sparsebm_refuses_missing_entries_in_one_line():
    _, X, observed, _, _ = _incomplete("bernoulli", shape=(30, 20))
    with pytest.raises(ValueError, match=r"^sparsebm does not fit tables with missing entries") as info:
        sparsebm_lbm(np.where(observed, X, np.nan), 2, 2, rng=0)
    assert "\n" not in str(info.value)


def test_family_of_an_incomplete_table_comes_from_its_observed_entries():
    nan = np.nan
    assert infer_kind(np.array([[0.0, nan], [1.0, 1.0]])) == "bernoulli"
    assert infer_kind(np.array([[0.0, nan], [3.0, 1.0]])) == "poisson"
    assert infer_kind(np.array([[0.5, nan], [3.0, 1.0]])) == "gaussian"
    assert infer_kind(np.ma.MaskedArray(np.array([[0, 7], [1, 1]], np.uint8), mask=[[0, 1], [0, 0]])) == "bernoulli"
    assert infer_kind(sp.csr_array(np.array([[0.0, nan], [2.0, 0.0]]))) == "poisson"
    # a complete float table too: the values decide, not the dtype (issue 47)
    assert infer_kind(np.array([[0.0, 1.0], [1.0, 1.0]])) == "bernoulli"


@pytest.mark.parametrize("kind", ["bernoulli", "poisson", "gaussian"])
def test_cem_does_not_empty_a_cluster_into_a_singleton_on_weak_rows(kind):
    """60x8 tables with about 55% of their entries missing by block: each row holds a few
    observed entries. The proportions of an unbalanced start emptied the smaller cluster at the
    first step and CEM ended on rows [59, 1] (a re-seeded item fitted exactly) on 3 or 4 of 4
    seeds; classifying with equal proportions until the labels settle keeps both clusters, and
    Gaussian block variances shrunk by one pseudo-entry at the table's variance keep a lone row's
    blocks of one observed entry from being fitted exactly (at the variance floor). A Bernoulli
    or Gaussian cluster of one or two rows still happens on about 1 table in 12 (measured on
    seeds 0-11 once the chains drew from their own streams: Bernoulli seed 3, Gaussian seed 11),
    so the test allows two such tables in twelve, against 3 or 4 of 4 before the fix. CEM's
    median excess risk over twelve tables stays well below a collapsed fit's (about 0.45): at
    the first guess of 2026-11-27 0.126, 0.207 and 0.245 for Bernoulli, Poisson and Gaussian
    tables (0.098, 0.219 and 0.239 before it); a median over six seeds swung from 0.13 to 0.26
    between the two, too noisy for its bound."""
    from lbm_bench import evaluate, generate_table
    from lbm_bench.algorithms import cem

    smallest, excess = [], []
    for seed in range(12):
        table = generate_table(kind, 60, 8, 2, 2, 0.15, tolerance=0.05, screen_samples=0, n_calibration_tables=6,
                               n_init=3, missing=0.55, missing_mechanism="block", rng=seed)
        rows, cols = cem(table.data, 2, 2, kind=kind, rng=seed)
        smallest.append(int(np.bincount(rows, minlength=2).min()))
        excess.append(evaluate(table, rows, cols).excess_risk)
    assert sum(size < 3 for size in smallest) <= 2, smallest
    assert np.median(excess) < (0.35 if kind == "gaussian" else 0.3), excess
