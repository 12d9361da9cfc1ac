"""Families, designs and symmetry checks: sampling, validation, reproducibility."""

import numpy as np
import pytest

from lbm_bench import (
    BernoulliLBM,
    GaussianLBM,
    PoissonLBM,
    find_symmetry,
    model_from_parameters,
    random_design,
    random_model,
)


def _block_average(X, z, w, g, m):
    X = np.asarray(X, dtype=float)
    out = np.empty((g, m))
    for k in range(g):
        for l in range(m):
            out[k, l] = X[np.ix_(z == k, w == l)].mean()
    return out


@pytest.mark.parametrize("kind", ["gaussian", "poisson", "bernoulli"])
def test_sampled_block_means_match_parameters(kind):
    """Block averages of a 600x500 table within 5 standard errors of the block means."""
    model = random_model(kind, 3, 2, scale=1.0, rng=0)
    X, z, w = model.sample(600, 500, rng=1)
    means = model.entry_means()
    got = _block_average(X, z, w, 3, 2)
    sizes = np.outer(np.bincount(z, minlength=3), np.bincount(w, minlength=2))
    if kind == "gaussian":
        variances = model.stds**2
    elif kind == "poisson":
        variances = means
    else:
        variances = means * (1 - means)
    np.testing.assert_array_less(np.abs(got - means), 5 * np.sqrt(variances / sizes))


def test_gaussian_block_stds_match():
    model = GaussianLBM([0.5, 0.5], [0.3, 0.7], [[0, 1], [2, 3]], [[0.5, 1.0], [1.5, 2.0]])
    X, z, w = model.sample(400, 300, rng=2)
    for k in range(2):
        for l in range(2):
            block = X[np.ix_(z == k, w == l)]
            assert block.std() == pytest.approx(model.stds[k, l], rel=0.05)


def test_label_frequencies_match_proportions():
    model = BernoulliLBM([0.2, 0.3, 0.5], [0.6, 0.4], np.full((3, 2), 0.5))
    z, w = model.sample_labels(20_000, 20_000, rng=3)
    np.testing.assert_allclose(np.bincount(z) / z.size, [0.2, 0.3, 0.5], atol=0.015)
    np.testing.assert_allclose(np.bincount(w) / w.size, [0.6, 0.4], atol=0.015)


def test_poisson_with_effects_means():
    rng = np.random.default_rng(0)
    mu, nu = rng.uniform(0.5, 1.5, 300), rng.uniform(0.5, 1.5, 200)
    model = PoissonLBM([0.5, 0.5], [0.5, 0.5], [[1.0, 4.0], [3.0, 0.5]], mu, nu)
    X, z, w = model.sample(300, 200, rng=4)
    expected = np.outer(mu, nu) * model.rates[np.ix_(z, w)]
    assert X.dtype == np.int64
    assert abs(X.sum() - expected.sum()) < 5 * np.sqrt(expected.sum())
    with pytest.raises(ValueError, match="fix the table shape"):
        model.sample(10, 10, rng=0)


@pytest.mark.parametrize("kind, dtype", [("gaussian", np.float64), ("poisson", np.int64), ("bernoulli", np.uint8)])
def test_sample_reproducible_and_dtype(kind, dtype):
    model = random_model(kind, 2, 3, scale=0.7, rng=5)
    a = model.sample(20, 15, rng=9)
    b = model.sample(20, 15, rng=9)
    assert a[0].dtype == dtype
    for x, y in zip(a, b, strict=True):
        assert x.tobytes() == y.tobytes()
    assert a[1].min() >= 0 and a[1].max() < 2 and a[2].max() < 3


def test_random_design_reproducible():
    a = random_design("gaussian", 3, 4, rng=7)
    b = random_design("gaussian", 3, 4, rng=7)
    for key, value in a.to_dict().items():
        np.testing.assert_array_equal(value, b.to_dict()[key])


@pytest.mark.parametrize("kind", ["gaussian", "poisson", "bernoulli"])
@pytest.mark.parametrize("shape", [(2, 2), (3, 3), (3, 2), (4, 5)])
def test_random_design_is_asymmetric_and_balanced(kind, shape):
    design = random_design(kind, *shape, equal_proportions=True, equal_dispersions=True, rng=11)
    assert find_symmetry(design.model(1.0)) is None
    pattern = design.pattern
    # distinct rows and columns
    assert len({tuple(r) for r in pattern}) == shape[0]
    assert len({tuple(c) for c in pattern.T}) == shape[1]


def test_gaussian_pattern_roughly_symmetric_separations():
    """Pairwise row and column separations within a factor 2 of each other."""
    design = random_design("gaussian", 4, 4, rng=3)
    for vectors in (design.pattern, design.pattern.T):
        i, j = np.triu_indices(4, 1)
        dist = np.sqrt(np.mean((vectors[i] - vectors[j]) ** 2, axis=1))
        assert dist.max() / dist.min() < 2.0


@pytest.mark.parametrize("kind", ["gaussian", "poisson", "bernoulli"])
def test_scale_sets_difficulty(kind):
    """The apparent error of the true-parameter MAP decreases with the scale."""
    from lbm_bench import map_labels

    design = random_design(kind, 3, 3, rng=1)
    errors = []
    for scale in (0.3, 0.6, 1.5):
        model = design.model(scale)
        err = []
        for t in range(8):
            X, z, w = model.sample(40, 40, rng=t)
            r = map_labels(model, X, rng=t)
            lr, lc = np.mean(r.rows != z), np.mean(r.cols != w)
            err.append(lr + lc - lr * lc)
        errors.append(np.mean(err))
    assert errors[0] > errors[1] > errors[2]


def test_find_symmetry_detects_latin_square_and_swaps():
    latin = np.array([[0.0, 1.0, 2.0], [1.0, 2.0, 0.0], [2.0, 0.0, 1.0]])
    model = GaussianLBM([1 / 3] * 3, [1 / 3] * 3, latin, np.ones((3, 3)))
    sigma, tau = find_symmetry(model)
    np.testing.assert_array_equal(latin[np.ix_(sigma, tau)], latin)
    # unequal proportions break it
    assert find_symmetry(GaussianLBM([0.2, 0.3, 0.5], [1 / 3] * 3, latin, np.ones((3, 3)))) is None
    # a plain swap of two identical column classes
    twin = BernoulliLBM([0.5, 0.5], [0.5, 0.5], [[0.9, 0.9], [0.1, 0.1]])
    assert find_symmetry(twin) is not None
    swap = BernoulliLBM([0.5, 0.5], [0.5, 0.5], [[0.9, 0.1], [0.1, 0.9]])
    sigma, tau = find_symmetry(swap)
    assert sigma.tolist() == [1, 0] and tau.tolist() == [1, 0]


def test_model_from_parameters_round_trip():
    model = random_model("poisson", 2, 3, scale=1.0, rng=0)
    again = model_from_parameters("poisson", model.row_proportions, model.col_proportions, **model.block_parameters())
    np.testing.assert_array_equal(again.rates, model.rates)


@pytest.mark.parametrize(
    "build, match",
    [
        (lambda: GaussianLBM([0.5, 0.6], [1.0], [[0], [1]], [[1], [1]]), "row_proportions must sum to 1"),
        (lambda: GaussianLBM([1.2, -0.2], [1.0], [[0], [1]], [[1], [1]]), "row_proportions must be positive"),
        (lambda: GaussianLBM([0.5, 0.5], [1.0], [[0, 1]], [[1], [1]]), r"means must have shape \(2, 1\)"),
        (lambda: GaussianLBM([0.5, 0.5], [1.0], [[0], [1]], [[1], [0]]), "stds must be > 0"),
        (lambda: PoissonLBM([1.0], [1.0], [[0.0]]), "rates must be > 0"),
        (lambda: PoissonLBM([1.0], [1.0], [[1.0]], row_effects=[1.0]), "given together"),
        (lambda: BernoulliLBM([1.0], [1.0], [[1.0]]), "probs must be < 1"),
        (lambda: BernoulliLBM([1.0], [1.0], [[np.nan]]), "probs must be finite"),
        (lambda: random_design("cauchy", 2, 2), "kind must be one of"),
        (lambda: random_design("gaussian", 1, 2), "n_row_clusters must be >= 2"),
        (lambda: random_design("bernoulli", 5, 2), "impossible with 5x2"),
        (lambda: random_model("gaussian", 2, 2, scale=-1.0), "scale must be finite and > 0"),
        (lambda: random_design("gaussian", 2, 2, effects=(3, 3)), "effects is defined for the poisson kind"),
    ],
)
def test_bad_parameters(build, match):
    with pytest.raises((ValueError, TypeError), match=match):
        build()


@pytest.mark.parametrize(
    "model, X, match",
    [
        (GaussianLBM([1.0], [1.0], [[0.0]], [[1.0]]), [[np.inf]], "X must be finite"),
        (GaussianLBM([1.0], [1.0], [[0.0]], [[1.0]]), [1.0, 2.0], "non-empty 2-D"),
        (PoissonLBM([1.0], [1.0], [[1.0]]), [[-1, 2]], "non-negative"),
        (PoissonLBM([1.0], [1.0], [[1.0]]), [[0.5, 2]], "integers"),
        (BernoulliLBM([1.0], [1.0], [[0.5]]), [[0, 2]], "0/1"),
        (BernoulliLBM([1.0], [1.0], [[0.5]]), [["a"]], "integers"),
    ],
)
def test_bad_tables(model, X, match):
    with pytest.raises((ValueError, TypeError), match=match):
        model.check_table(X)


def test_bad_labels_name_the_argument():
    model = GaussianLBM([0.5, 0.5], [1.0], [[0.0], [1.0]], [[1.0], [1.0]])
    X = np.zeros((3, 2))
    with pytest.raises(ValueError, match="z must have length 3"):
        model.complete_log_likelihood(X, [0, 1], [0, 0])
    with pytest.raises(ValueError, match=r"w must lie in \[0, 1\)"):
        model.complete_log_likelihood(X, [0, 1, 1], [0, 1])
    with pytest.raises(TypeError, match="z must hold integer labels"):
        model.complete_log_likelihood(X, [0.5, 1, 1], [0, 0])


def test_poisson_cdf_tables_cached_per_rates():
    """table_from_noise tabulates each block's CDF once per model; the cache follows
    the rates if they are changed in place, and equals the uncached inverse CDF."""
    from lbm_bench import random_model
    from lbm_bench.models.poisson import poisson_inverse_cdf as _poisson_inverse_cdf

    model = random_model("poisson", 2, 2, scale=1.0, rng=0)
    rng = np.random.default_rng(1)
    z, w = rng.integers(0, 2, 30), rng.integers(0, 2, 20)
    noise = model.draw_noise(30, 20, rng=rng)
    first = model.table_from_noise(noise, z, w)
    expected = np.empty_like(first)
    for i in range(30):
        for j in range(20):
            expected[i, j] = _poisson_inverse_cdf(noise[i : i + 1, j], model.rates[z[i], w[j]])[0]
    assert np.array_equal(first, expected)
    assert np.array_equal(model.table_from_noise(noise, z, w), first)  # from the cache
    model.rates[...] = model.rates * 10
    assert model.table_from_noise(noise, z, w).mean() > 5 * first.mean()
