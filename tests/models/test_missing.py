"""Missing entries in the models (lbm_bench.models.missing): the mechanisms' design and masks drawn
from noise (the table-data adapter's conventions: tests/models/test_data.py)."""

import numpy as np
import pytest

from lbm_bench import GaussianLBM, random_design
from lbm_bench.models.missing import (
    MaskNoise,
    MissingDesign,
    draw_missing_pattern,
    expand_missing,
    mask_table,
    unreachable_risk,
)


def test_block_probabilities_keep_the_rate_and_vanish_at_scale_zero():
    design = random_design("gaussian", 3, 2, missing={"rate": 0.3, "mechanism": "block"}, rng=2)
    pi, rho = design.row_proportions, design.col_proportions
    previous = 0.0
    for scale in (1e-6, 0.5, 1.0, 3.0):
        q = design.missing_probs(scale)
        assert float(pi @ q @ rho) == pytest.approx(0.3, abs=1e-10)
        assert np.all((q > 0) & (q < 1))
        spread = float(np.ptp(q))
        assert spread >= previous  # the mask informs more as the scale grows
        previous = spread
    np.testing.assert_allclose(design.missing_probs(1e-6), 0.3, atol=1e-6)
    assert design.model(1.0).missing_probs is not None
    random_ = random_design("gaussian", 3, 2, missing=0.3, rng=2)
    assert random_.model(1.0).missing_probs is None  # ignorable: no mask terms
    np.testing.assert_array_equal(random_.missing_probs(2.0), np.full((3, 2), 0.3))
    # the other parameters do not depend on the missing options (drawn last)
    complete = random_design("gaussian", 3, 2, rng=2)
    for name in ("pattern", "dispersion", "row_proportions"):
        np.testing.assert_array_equal(getattr(design, name), getattr(complete, name))
    pattern = draw_missing_pattern(3, 2, np.random.default_rng(0))
    assert abs(pattern.mean()) < 1e-12 and pattern.std() == pytest.approx(1.0)


@pytest.mark.parametrize("bad, message", [
    ({"missing": {"rate": 0.2, "kind": "x"}}, "missing must be a rate in"),
    ({"missing": {"rate": 0.2, "mechanism": "block"}, "missing_mechanism": "random"}, "given twice"),
])
def test_expand_missing_refuses(bad, message):
    with pytest.raises(ValueError, match=message):
        expand_missing(bad)


def test_missing_design_checks():
    with pytest.raises(ValueError, match="missing must lie in"):
        MissingDesign(0.0)
    with pytest.raises(ValueError, match="needs its pattern"):
        MissingDesign(0.3, "block")
    with pytest.raises(ValueError, match="missing_mechanism must be one of"):
        MissingDesign(0.3, "nmar")


def test_masks_from_noise_dense_and_sparse():
    rng = np.random.default_rng(0)
    z, w = rng.integers(0, 2, 400), rng.integers(0, 2, 300)
    missing = MissingDesign(0.2, "block", np.array([[1.0, -1.0], [-1.0, 1.0]]), 0.5)
    probs = np.array([[0.1, 0.3], [0.3, 0.1]])
    dense = MaskNoise(400, 300, missing, False, rng=np.random.default_rng(1))
    observed = dense.observed(probs, z, w)
    blocks = np.array([[1 - observed[np.ix_(z == k, w == l)].mean() for l in range(2)] for k in range(2)])
    np.testing.assert_allclose(blocks, probs, atol=0.02)
    again = MaskNoise(400, 300, missing, False, rng=np.random.default_rng(1)).observed(probs, z, w)
    assert np.array_equal(observed, again)
    sparse = MaskNoise(400, 300, missing, True, rng=np.random.default_rng(1)).missing_csr(probs, z, w)
    rows = np.repeat(np.arange(400), np.diff(sparse.indptr))
    counts = np.zeros((2, 2))
    np.add.at(counts, (z[rows], w[sparse.indices]), 1)
    sizes = np.outer(np.bincount(z), np.bincount(w))
    np.testing.assert_allclose(counts / sizes, probs, atol=0.02)
    assert sparse.has_canonical_format and sparse.dtype == np.uint8
    # random: the mask itself is kept (one byte per entry), not the uniforms
    kept = MaskNoise(400, 300, MissingDesign(0.2), False, rng=np.random.default_rng(1))
    assert kept.nbytes == 400 * 300


def test_mask_table_zeroes_missing_entries_without_signed_zeros():
    model = GaussianLBM([0.5, 0.5], [0.5, 0.5], [[-3.0, 0.0], [1.0, 2.0]], [[1.0, 1.0], [1.0, 1.0]])
    X, z, w = model.sample(50, 40, rng=0)
    noise = MaskNoise(50, 40, MissingDesign(0.4), False, rng=np.random.default_rng(3))
    data = mask_table(X, noise, np.full((2, 2), 0.4), z, w)
    assert data.n_missing == (~data.observed).sum() and np.all(data.table[~data.observed] == 0)
    assert not np.signbit(data.table[~data.observed]).any()
    np.testing.assert_array_equal(data.table[data.observed], X[data.observed])
    assert np.array_equal(X, model.sample(50, 40, rng=0)[0])  # copy=True leaves the input alone


def test_unreachable_risk_bound():
    assert unreachable_risk(0.5, 100, 10, [0.5, 0.5], [0.6, 0.4]) == pytest.approx(0.5**10 * 0.5)
    assert unreachable_risk(0.9, 5, 40, [0.5, 0.5], [0.7, 0.3]) == pytest.approx(0.9**5 * 0.3)
