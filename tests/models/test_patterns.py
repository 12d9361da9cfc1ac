"""Block patterns of random designs (lbm_bench.models.patterns): real patterns centred, with near-equal
class separations and far from every joint permutation of themselves; +-1 patterns with distinct rows
and columns and no symmetry; both reproducible from their Generator."""

import itertools

import numpy as np
import pytest

from lbm_bench.models.patterns import binary_pattern, real_pattern


def _separations(vectors):
    i, j = np.triu_indices(vectors.shape[0], 1)
    return np.sqrt(np.mean((vectors[i] - vectors[j]) ** 2, axis=1))


def _joint_permutations(g, m):
    for sigma in itertools.permutations(range(g)):
        for tau in itertools.permutations(range(m)):
            if sigma != tuple(range(g)) or tau != tuple(range(m)):
                yield list(sigma), list(tau)


@pytest.mark.parametrize("shape", [(2, 2), (3, 2), (3, 3), (4, 5)])
def test_real_patterns(shape):
    pattern = real_pattern(*shape, np.random.default_rng(0))
    assert pattern.shape == shape and abs(pattern.mean()) < 1e-12
    separations = np.concatenate([_separations(pattern), _separations(pattern.T)])
    assert separations.mean() == pytest.approx(1.0)  # the scale is the design's, not the pattern's
    assert separations.max() / separations.min() < 2.0  # near-equal separations
    for sigma, tau in _joint_permutations(*shape):  # far from any joint permutation of itself
        assert np.sqrt(np.mean((pattern[np.ix_(sigma, tau)] - pattern) ** 2)) > 0.1
    assert np.array_equal(pattern, real_pattern(*shape, np.random.default_rng(0)))


@pytest.mark.parametrize("shape", [(2, 2), (3, 2), (2, 3), (4, 3), (3, 5)])
def test_binary_patterns(shape):
    pattern = binary_pattern(*shape, np.random.default_rng(1))
    assert set(np.unique(pattern)) <= {-1.0, 1.0}
    assert len({tuple(r) for r in pattern}) == shape[0] and len({tuple(c) for c in pattern.T}) == shape[1]
    assert not any(np.array_equal(pattern[np.ix_(sigma, tau)], pattern) for sigma, tau in _joint_permutations(*shape))
    assert np.array_equal(pattern, binary_pattern(*shape, np.random.default_rng(1)))


def test_a_binary_pattern_needs_distinct_rows_and_columns():
    with pytest.raises(ValueError, match="impossible with 5x2 clusters"):
        binary_pattern(5, 2, np.random.default_rng(0))  # 2 columns give 4 distinct +-1 rows at most
    with pytest.raises(ValueError, match="impossible with 2x5 clusters"):
        binary_pattern(2, 5, np.random.default_rng(0))
