"""What every family inherits (lbm_bench.models.base): labels and tables drawn from the proportions and
the noise, block totals and the likelihood over the observed entries (a missing entry counts for
nothing, sparse and dense alike), the shape effects fix, and labels checked by name."""

import numpy as np
import pytest
import scipy.sparse as sp

from lbm_bench import BernoulliLBM, GaussianLBM, PoissonLBM
from tests.exact import entry_log_densities

GAUSSIAN = GaussianLBM([0.3, 0.7], [0.6, 0.4], [[0.0, 2.0], [1.0, -1.0]], [[1.0, 0.5], [2.0, 1.0]])


def test_labels_follow_the_proportions_and_the_seed():
    z, w = GAUSSIAN.sample_labels(20_000, 10_000, rng=0)
    assert z.dtype == w.dtype == np.int64
    assert abs(np.mean(z == 0) - 0.3) < 5 * np.sqrt(0.21 / 20_000)
    assert abs(np.mean(w == 0) - 0.6) < 5 * np.sqrt(0.24 / 10_000)
    X, z1, w1 = GAUSSIAN.sample(30, 20, rng=np.random.default_rng(3))
    X2, z2, w2 = GAUSSIAN.sample(30, 20, rng=3)
    assert np.array_equal(X, X2) and np.array_equal(z1, z2) and np.array_equal(w1, w2)
    noise_rng = np.random.default_rng(3)  # the table is the labels, then the noise, from one stream
    z3, w3 = GAUSSIAN.sample_labels(30, 20, rng=noise_rng)
    assert np.array_equal(GAUSSIAN.table_from_noise(GAUSSIAN.draw_noise(30, 20, rng=noise_rng), z3, w3), X)


def test_block_totals_and_the_likelihood():
    X, z, w = GAUSSIAN.sample(12, 9, rng=1)
    totals, exposure = GAUSSIAN.block_totals(X, z, w)
    assert totals.shape == (2, 2, 2) and exposure.tolist() == [[float(np.sum(z == k) * np.sum(w == l))
                                                                 for l in range(2)] for k in range(2)]
    assert totals[0, 1, 0] == pytest.approx(X[np.ix_(z == 1, w == 0)].sum())
    dens = entry_log_densities(GAUSSIAN, X)[np.arange(12)[:, None], np.arange(9), z[:, None], w]
    assert GAUSSIAN.log_likelihood(X, z, w) == pytest.approx(dens.sum())
    prior = np.log(GAUSSIAN.row_proportions)[z].sum() + np.log(GAUSSIAN.col_proportions)[w].sum()
    assert GAUSSIAN.complete_log_likelihood(X, z, w) == pytest.approx(dens.sum() + prior)


def test_a_missing_entry_counts_for_nothing():
    X, z, w = GAUSSIAN.sample(12, 9, rng=2)
    observed = np.ones(X.shape, dtype=bool)
    observed[3, 4] = observed[0, 0] = False
    dens = entry_log_densities(GAUSSIAN, X)[np.arange(12)[:, None], np.arange(9), z[:, None], w]
    with_mask = GAUSSIAN.log_likelihood(X, z, w, observed=observed)
    assert with_mask == pytest.approx(dens[observed].sum())
    holes = X.copy()
    holes[~observed] = np.nan  # the same, marked by NaN
    assert GAUSSIAN.log_likelihood(holes, z, w) == pytest.approx(with_mask)
    totals, exposure = GAUSSIAN.block_totals(holes, z, w)
    assert exposure.sum() == X.size - 2


def test_sparse_and_dense_tables_give_the_same_numbers():
    model = BernoulliLBM([0.5, 0.5], [0.5, 0.5], [[0.05, 0.2], [0.1, 0.02]])
    X, z, w = model.sample(40, 30, rng=3)
    assert model.log_likelihood(sp.csr_array(X), z, w) == pytest.approx(model.log_likelihood(X, z, w))
    for a, b in zip(model.block_totals(sp.csr_array(X), z, w), model.block_totals(X, z, w), strict=True):
        np.testing.assert_allclose(a, b)


def test_effects_fix_the_shape_and_labels_are_checked_by_name():
    effects = PoissonLBM([0.5, 0.5], [1.0], [[1.0], [2.0]], row_effects=[1.0, 2.0, 1.0], col_effects=[1.0, 1.0])
    assert effects.fixed_shape() == (3, 2) and effects.sample(3, 2, rng=0)[0].shape == (3, 2)
    with pytest.raises(ValueError, match="this model's row/column effects fix the table shape to 3x2"):
        effects.sample(4, 2, rng=0)
    X = np.zeros((3, 2))
    with pytest.raises(ValueError, match="z must have length 3"):
        GAUSSIAN.complete_log_likelihood(X, [0, 1], [0, 1])
    with pytest.raises(ValueError, match=r"w must lie in \[0, 2\)"):
        GAUSSIAN.complete_log_likelihood(X, [0, 1, 1], [0, 2])
    assert repr(GAUSSIAN) == "GaussianLBM(kind='gaussian', clusters=2x2)"
    assert GAUSSIAN.block_shape == (2, 2) and (GAUSSIAN.n_row_clusters, GAUSSIAN.n_col_clusters) == (2, 2)
