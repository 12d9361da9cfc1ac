"""Categorical blocks (lbm_bench.models.categorical): sampling, the exponential-family form,
the design at a scale, the dominant categories, checks, and the K = 2 identity with Bernoulli."""

import numpy as np
import pytest
from scipy import stats

from lbm_bench import (
    BernoulliLBM,
    CategoricalLBM,
    find_symmetry,
    gibbs_labels,
    map_labels,
    model_from_parameters,
    random_design,
    random_model,
)
from lbm_bench.models.categorical import dominant_categories


def _frequencies(X, z, w, g, m, K):
    out = np.empty((g, m, K))
    for k in range(g):
        for l in range(m):
            block = X[np.ix_(z == k, w == l)].ravel()
            out[k, l] = np.bincount(block, minlength=K) / block.size
    return out


def test_sampled_category_frequencies_match_the_probabilities():
    """Per-block category frequencies of a 600x500 table within 5 standard errors."""
    model = random_model("categorical", 3, 2, scale=0.6, categories=5, rng=0)
    X, z, w = model.sample(600, 500, rng=1)
    assert X.dtype == np.uint8 and X.max() <= 4
    got = _frequencies(X, z, w, 3, 2, 5)
    sizes = np.outer(np.bincount(z, minlength=3), np.bincount(w, minlength=2))[:, :, None]
    np.testing.assert_array_less(np.abs(got - model.probs), 5 * np.sqrt(model.probs * (1 - model.probs) / sizes))


def test_sample_reproducible_and_statistics():
    model = random_model("categorical", 2, 3, scale=0.7, categories=4, rng=5)
    a, b = model.sample(20, 15, rng=9), model.sample(20, 15, rng=9)
    for x, y in zip(a, b, strict=True):
        assert x.tobytes() == y.tobytes()
    X = a[0]
    T = model.sufficient_statistics(X)
    assert T.shape == (3, 20, 15) and T.dtype == np.float64
    np.testing.assert_array_equal(T.sum(axis=0), X > 0)
    for c in range(1, 4):
        np.testing.assert_array_equal(T[c - 1], X == c)


def test_exponential_family_form_gives_the_log_probabilities():
    """eta . T(x) - A = log probs[k, l, x] for every code (category 0 the reference)."""
    model = random_model("categorical", 2, 2, scale=0.8, categories=6, rng=2)
    eta, A = model.natural_parameters, model.log_partition
    assert eta.shape == (5, 2, 2) and A.shape == (2, 2)
    codes = np.arange(6)[:, None]
    T = model.sufficient_statistics(codes)  # (5, 6, 1)
    log_density = np.einsum("qx,qkl->xkl", T[:, :, 0], eta) - A
    np.testing.assert_allclose(log_density, np.log(model.probs).transpose(2, 0, 1), atol=1e-12)
    X, z, w = model.sample(7, 5, rng=3)
    expected = np.log(model.probs[z[:, None], w[None, :], X]).sum()
    assert model.log_likelihood(X, z, w) == pytest.approx(expected, rel=1e-12)


def test_two_categories_draw_the_bernoulli_table():
    """Same uniforms, probs[..., 1] = Bernoulli probs: the same table, natural parameters and
    log-partition (to rounding)."""
    p = np.array([[0.8, 0.3], [0.25, 0.6]])
    binary = BernoulliLBM([0.4, 0.6], [0.5, 0.5], p)
    coded = CategoricalLBM([0.4, 0.6], [0.5, 0.5], np.stack([1 - p, p], axis=2))
    a, b = binary.sample(300, 200, rng=4), coded.sample(300, 200, rng=4)
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x, y)
    np.testing.assert_allclose(coded.natural_parameters, binary.natural_parameters, rtol=1e-14)
    np.testing.assert_allclose(coded.log_partition, binary.log_partition, rtol=1e-14)


def test_two_categories_give_the_bernoulli_map_and_gibbs_label_sets():
    """The K = 2 identity: the same data, proportions and probabilities give the same MAP
    labels and the same Gibbs label sets for the same seed. The natural parameters agree to
    about 1e-16, and the engines' integer block sums are exact, so the logits differ by
    rounding only: a draw could flip only if its uniform fell within ~1e-16 of a class
    boundary, which none of these ~10^6 draws does."""
    design = random_design("bernoulli", 3, 2, rng=6)
    binary = design.model(0.5)
    coded = CategoricalLBM(binary.row_proportions, binary.col_proportions,
                           np.stack([1 - binary.probs, binary.probs], axis=2))
    X, _, _ = binary.sample(60, 50, rng=7)
    a, b = map_labels(binary, X, rng=8), map_labels(coded, X, rng=8)
    np.testing.assert_array_equal(a.rows, b.rows)
    np.testing.assert_array_equal(a.cols, b.cols)
    sa = gibbs_labels(binary, X, n_samples=400, n_chains=4, rng=9)
    sb = gibbs_labels(coded, X, n_samples=400, n_chains=4, rng=9)
    np.testing.assert_array_equal(sa.rows, sb.rows)
    np.testing.assert_array_equal(sa.cols, sb.cols)
    assert sa.risk(a.rows, a.cols).risk == sb.risk(b.rows, b.cols).risk


def test_two_categories_design_is_the_bernoulli_design():
    """With K = 2 the design's probabilities at a scale are Bernoulli's formula on the same pattern."""
    design = random_design("categorical", 3, 3, categories=2, rng=3)
    signs = np.where(design.pattern[:, :, 1] == 1, 1.0, -1.0)
    for scale in (0.2, 1.0, 3.0):
        p = design.model(scale).probs[:, :, 1]
        np.testing.assert_allclose(p, 0.5 + 0.5 * signs * np.tanh(scale * design.dispersion), rtol=1e-12)


def test_design_goes_from_chance_to_separable():
    """Scale 0+: every block uniform; the dominant share rises monotonically to one."""
    design = random_design("categorical", 3, 2, categories=5, rng=1)
    np.testing.assert_allclose(design.model(1e-12).probs, 0.2, atol=1e-9)
    codes = design.pattern.argmax(axis=2)
    shares = [np.take_along_axis(design.model(s).probs, codes[:, :, None], 2)[:, :, 0] for s in (0.1, 0.5, 1, 3)]
    for low, high in zip(shares, shares[1:], strict=False):
        assert np.all(high > low)
    assert shares[-1].min() > 0.9
    huge = design.model(1e6).probs
    assert huge.min() >= 1e-10 and np.allclose(huge.sum(axis=2), 1.0)


def test_scale_sets_difficulty():
    """The apparent error of the true-parameter MAP decreases with the scale."""
    design = random_design("categorical", 3, 3, categories=4, rng=1)
    errors = []
    for scale in (0.2, 0.4, 0.9):
        model = design.model(scale)
        err = []
        for t in range(8):
            X, z, w = model.sample(40, 40, rng=t)
            r = map_labels(model, X, rng=t)
            lr, lc = np.mean(r.rows != z), np.mean(r.cols != w)
            err.append(lr + lc - lr * lc)
        errors.append(np.mean(err))
    assert errors[0] > errors[1] > errors[2]


@pytest.mark.parametrize("K", [2, 3, 5, 40])
@pytest.mark.parametrize("shape", [(2, 2), (3, 3), (3, 2), (4, 5)])
def test_dominant_categories_separate_every_pair_of_classes_without_symmetry(K, shape):
    design = random_design("categorical", *shape, categories=K, equal_proportions=True, equal_dispersions=True, rng=11)
    assert design.pattern.shape == shape + (K,)
    assert find_symmetry(design.model(1.0)) is None
    codes = design.pattern.argmax(axis=2)
    np.testing.assert_array_equal(design.pattern, np.eye(K)[codes])
    assert len({tuple(r) for r in codes}) == shape[0]  # any two row classes differ on a column class
    assert len({tuple(c) for c in codes.T}) == shape[1]
    assert len(np.unique(codes)) == min(K, shape[0] * shape[1]) or K == 2  # as many categories as blocks allow


def test_dominant_categories_have_near_equal_separations():
    codes = dominant_categories(4, 4, 5, np.random.default_rng(0))
    for vectors in (codes, codes.T):
        i, j = np.triu_indices(4, 1)
        share = np.mean(vectors[i] != vectors[j], axis=1)
        assert share.min() > 0 and share.max() / share.min() <= 1.5


def test_model_from_parameters_round_trip():
    model = random_model("categorical", 2, 3, scale=1.0, categories=3, rng=0)
    again = model_from_parameters("categorical", model.row_proportions, model.col_proportions,
                                  **model.block_parameters())
    np.testing.assert_array_equal(again.probs, model.probs)
    assert again.family.storage.header_values(again) == {"categories": 3} and again.n_levels == 3


@pytest.mark.parametrize(
    "build, match",
    [
        (lambda: CategoricalLBM([1.0], [1.0], [[0.5, 0.5]]), r"probs must have shape \(1, 1, 'K'\)"),
        (lambda: CategoricalLBM([1.0], [1.0], [[[1.0]]]), "between 2 and 255 categories"),
        (lambda: CategoricalLBM([1.0], [1.0], np.full((1, 1, 256), 1 / 256)), "between 2 and 255 categories"),
        (lambda: CategoricalLBM([1.0], [1.0], [[[0.6, 0.6]]]), "sum to 1"),
        (lambda: CategoricalLBM([1.0], [1.0], [[[1.0, 0.0]]]), "probs must be > 0"),
        (lambda: CategoricalLBM([1.0], [1.0], [[[np.nan, 0.5]]]), "finite"),
        (lambda: random_design("categorical", 2, 2), "categorical tables need categories"),
        (lambda: random_design("categorical", 2, 2, categories=1), "categories must be between 2 and 255, got 1"),
        (lambda: random_design("categorical", 2, 2, categories=300), "between 2 and 255, got 300"),
        (lambda: random_design("categorical", 2, 2, categories=2.5), "categories must be an integer"),
        (lambda: random_design("categorical", 5, 2, categories=2), "impossible with 5x2 clusters and 2 categories"),
        (lambda: random_design("gaussian", 2, 2, categories=3), "categories is defined for the categorical kind"),
        (lambda: random_design("categorical", 2, 2, categories=3, density=0.1), "density is defined for"),
    ],
)
def test_bad_parameters(build, match):
    with pytest.raises((ValueError, TypeError), match=match):
        build()


@pytest.mark.parametrize(
    "X, match",
    [
        ([[0, 4]], r"category codes 0\.\.3 \(4 categories\), got code 4"),
        ([[0, -1]], "a negative code -1"),
        ([[0.5, 1]], "non-integer"),
        ([[np.nan, 1]], "non-integer"),
        ([["a"]], "integers"),
        ([1, 2], "non-empty 2-D"),
    ],
)
def test_bad_tables(X, match):
    model = CategoricalLBM([1.0], [1.0], [[[0.25] * 4]])
    with pytest.raises((ValueError, TypeError), match=match):
        model.check_table(X)


def test_tables_are_dense_codes():
    import scipy.sparse as sp

    model = CategoricalLBM([1.0], [1.0], [[[0.5, 0.3, 0.2]]])
    assert model.check_table(np.array([[2.0, 0.0]])).dtype == np.uint8
    assert model.check_table([[True, False]]).tolist() == [[1, 0]]
    with pytest.raises(TypeError, match="scipy.sparse"):
        model.check_table(sp.csr_array(np.eye(2, dtype=np.uint8)))


def test_exact_reference_uses_scipy():
    """tests/exact.py's log-density of categorical blocks is scipy's one-draw multinomial."""
    from tests.exact import entry_log_densities

    model = random_model("categorical", 2, 2, scale=0.5, categories=3, rng=4)
    X, _, _ = model.sample(3, 4, rng=5)
    E = entry_log_densities(model, X)
    one_hot = np.eye(3)[X]
    for i in range(3):
        for j in range(4):
            np.testing.assert_allclose(E[i, j], stats.multinomial.logpmf(one_hot[i, j], 1, model.probs))


def test_find_symmetry_sees_categorical_parameters():
    """find_symmetry compares the (K - 1, g, m) natural parameters: a swap of two row and two
    column classes with the same dominant categories is found, another category breaks it."""
    probs = np.full((2, 2, 3), 0.1)
    codes = np.array([[0, 1], [1, 0]])
    probs[np.arange(2)[:, None], np.arange(2)[None, :], codes] = 0.8
    swap = CategoricalLBM([0.5, 0.5], [0.5, 0.5], probs)
    sigma, tau = find_symmetry(swap)
    assert sigma.tolist() == [1, 0] and tau.tolist() == [1, 0]
    probs[1, 0] = [0.1, 0.1, 0.8]
    assert find_symmetry(CategoricalLBM([0.5, 0.5], [0.5, 0.5], probs)) is None
