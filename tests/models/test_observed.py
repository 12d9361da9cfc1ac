"""The observed-data family (lbm_bench.models.observed): the statistic channels of a table
with missing entries, for each mechanism, with and without row and column effects."""

import numpy as np

from lbm_bench import GaussianLBM, PoissonLBM
from lbm_bench.models.observed import EntryFamily


def test_entry_family_channels():
    plain = GaussianLBM([0.5, 0.5], [0.5, 0.5], [[0.0, 1.0], [1.0, 0.0]], [[1.0, 1.0], [1.0, 1.0]])
    assert EntryFamily(plain, False).n_stats == 2 and EntryFamily(plain, True).n_stats == 3
    block = plain.with_missing_probs([[0.1, 0.4], [0.3, 0.2]])
    assert EntryFamily(block, True).n_stats == 3  # no effects: the two missing channels are one
    effects = PoissonLBM([0.5, 0.5], [0.5, 0.5], [[1.0, 2.0], [3.0, 1.0]], [1.0, 2.0, 1.0], [0.5, 1.5])
    assert EntryFamily(effects, True).n_stats == 2
    assert EntryFamily(effects.with_missing_probs([[0.1, 0.4], [0.3, 0.2]]), True).n_stats == 3
    fam = EntryFamily(effects, True)
    X = np.array([[1, 0], [2, 3], [0, 1]])
    observed = np.array([[True, False], [True, True], [False, True]])
    stats = fam.dense_statistics(X * observed, observed)
    np.testing.assert_array_equal(stats[0], X * observed)
    np.testing.assert_allclose(stats[1], np.outer([1.0, 2.0, 1.0], [0.5, 1.5]) * ~observed)
    assert block.missing_probs.shape == (2, 2) and plain.missing_probs is None  # a copy
