"""The first guess of the scale from the design alone (lbm_bench.protocol.separation): the blocks'
symmetrised divergences against their closed forms, the predicted error and how it moves with the
scale, the table's size and missing entries, the scale that meets a target, and the targets no scale
can reach."""

import numpy as np
import pytest
from scipy import special

from lbm_bench import random_design
from lbm_bench.protocol.separation import (
    SideError,
    block_divergences,
    check_target,
    first_guess,
    guessing_risk,
    predicted_error,
)


def _kl_bernoulli(a, b):
    return a * np.log(a / b) + (1 - a) * np.log((1 - a) / (1 - b))


@pytest.mark.parametrize("kind", ["gaussian", "poisson", "bernoulli"])
def test_divergences_are_the_closed_forms(kind):
    """From the exponential-family form with each family's mean statistics: the closed forms
    (equal-variance Gaussian delta^2 / 2 sigma^2, Poisson and Bernoulli KL) up to rounding."""
    design = random_design(kind, 3, 2, equal_dispersions=True, rng=0)
    model = design.without_effects().model(1.5)
    J = block_divergences(design, 1.5)
    assert J.shape == (3, 2, 3, 2)
    if kind == "gaussian":
        a, b = model.means[:, :, None, None], model.means[None, None]
        exact = (a - b) ** 2 / (2 * model.stds[:, :, None, None] ** 2)
    elif kind == "poisson":
        a, b = model.rates[:, :, None, None], model.rates[None, None]
        exact = 0.5 * ((a * np.log(a / b) - a + b) + (b * np.log(b / a) - b + a))
    else:
        a, b = model.probs[:, :, None, None], model.probs[None, None]
        exact = 0.5 * (_kl_bernoulli(a, b) + _kl_bernoulli(b, a))
    np.testing.assert_allclose(J, exact, rtol=1e-9, atol=1e-12 * exact.max())
    assert np.array_equal(J, J.transpose(2, 3, 0, 1)) and np.all(J >= 0)
    assert np.all(np.einsum("klkl->kl", J) == 0)  # a block against itself


def test_the_predicted_error_falls_with_the_scale_and_the_size():
    design = random_design("gaussian", 3, 2, equal_dispersions=True, rng=0)
    errors = [predicted_error(design, 100, 80, scale) for scale in (0.3, 0.6, 1.2)]
    assert errors[0] > errors[1] > errors[2] >= 0
    assert errors[0] <= guessing_risk(design.row_proportions, design.col_proportions)
    assert predicted_error(design, 50, 40, 0.6) > errors[1]  # fewer entries per row and column


def test_missing_entries_count_as_fewer_entries():
    """A row sees (1 - rate) of its entries: half of a 100x80 table informs as a 50x40 one."""
    complete = random_design("gaussian", 3, 2, equal_dispersions=True, rng=0)
    halved = random_design("gaussian", 3, 2, equal_dispersions=True, missing=0.5, rng=0)
    assert np.array_equal(halved.pattern, complete.pattern)
    assert predicted_error(halved, 100, 80, 0.6) == pytest.approx(predicted_error(complete, 50, 40, 0.6), rel=1e-12)


@pytest.mark.parametrize("kind", ["gaussian", "poisson", "bernoulli"])
def test_the_first_guess_meets_the_target_and_slopes_down(kind):
    design = random_design(kind, 3, 3, rng=1)
    scale, slope = first_guess(design, 150, 120, 0.08)
    assert predicted_error(design, 150, 120, scale) == pytest.approx(0.08, abs=2e-3)
    assert slope < -0.1
    smaller, _ = first_guess(design, 150, 120, 0.2)
    assert smaller < scale  # an easier target needs less separation


def test_a_sparse_designs_prediction_is_smooth_in_the_scale():
    """A million-row sparse design (rates near 0.001): the predicted error falls smoothly with
    the scale and the first guess's slope is that of the curve. With mean statistics estimated
    on a 48 x 48 sample per block, its blocks held a few non-zeros: the prediction jumped from
    0.35 to 0.001 between two scales 5% apart and the slope came out at -65 (issue 33)."""
    design = random_design("bernoulli", 3, 3, density=0.001, rng=1)
    n_rows, n_cols = 1_000_000, 100_000
    scale, slope = first_guess(design, n_rows, n_cols, 0.1)
    xs = np.log(scale) + np.linspace(-0.2, 0.2, 41)
    errors = np.array([predicted_error(design, n_rows, n_cols, np.exp(x)) for x in xs])
    assert np.all(np.diff(errors) < 0)
    logits = np.log(errors) - np.log1p(-errors)
    steps = np.diff(logits) / np.diff(xs)  # the curve's slope between neighbours
    assert slope == pytest.approx(np.interp(np.log(scale), xs[1:] - 0.005, steps), rel=0.05)
    assert np.ptp(steps) < 0.5 * abs(slope)  # no jump: the slope changes little over +-20%
    assert -6 < slope < -1.5


def test_categorical_divergences_are_the_closed_form():
    design = random_design("categorical", 3, 2, categories=4, rng=0)
    probs = design.without_effects().model(1.5).probs  # (g, m, categories)
    a, b = probs[:, :, None, None], probs[None, None]
    kl_ab = (a * np.log(a / b)).sum(axis=-1)
    exact = 0.5 * (kl_ab + kl_ab.transpose(2, 3, 0, 1))
    np.testing.assert_allclose(block_divergences(design, 1.5), exact, rtol=1e-9, atol=1e-12 * exact.max())


def test_guessing_risk():
    assert guessing_risk(np.array([0.5, 0.5]), np.array([0.25, 0.75])) == pytest.approx(0.625)
    assert guessing_risk(np.array([1.0]), np.array([1.0])) == 0.0


def test_unreachable_targets_are_refused_in_words():
    design = random_design("bernoulli", 2, 2, equal_proportions=True, rng=0)
    check_target(0.1, design, 100, 80)  # reachable: no error
    with pytest.raises(ValueError, match="guessing without the table already has risk 0.7500"):
        check_target(0.8, design, 100, 80)
    sparse_rows = random_design("bernoulli", 2, 2, equal_proportions=True, missing=0.9, rng=0)
    with pytest.raises(ValueError, match="with 90% of the entries missing: rows or columns with no observed entry"):
        check_target(0.1, sparse_rows, 100, 5)  # 0.9^5 of the rows see nothing


def _tails(separations):
    return 0.5 * special.erfc(np.sqrt(separations / 2) / np.sqrt(2))


def test_two_classes_err_as_their_test():
    """One competitor: the side's error is the pairwise test's, Phi(-sqrt(D / 2)), weighted by the
    proportions (the factor's grid integrates a constant)."""
    D = np.array([[0.0, 3.0], [3.0, 0.0]])
    props = np.array([0.3, 0.7])
    assert SideError(D, props).error() == pytest.approx(_tails(3.0), rel=1e-12)
    assert SideError(D, props).error(0.5) == pytest.approx(_tails(1.5), rel=1e-12)


def test_a_sides_error_is_at_most_the_union_bound_and_at_least_its_largest_term():
    """Several competitors: the probability that one of them wins lies between the largest
    pairwise error and their sum, for separations of a real design (a distance's squares)."""
    rng = np.random.default_rng(3)
    for g in (3, 6, 12):
        points = rng.normal(size=(g, 4))
        D = 4.0 * ((points[:, None] - points[None]) ** 2).sum(axis=-1)
        props = np.full(g, 1.0 / g)
        tails = _tails(D)
        np.fill_diagonal(tails, 0.0)
        error = SideError(D, props).error()
        assert (props * tails.max(axis=1)).sum() - 1e-12 <= error <= (props * tails.sum(axis=1)).sum() + 1e-12


def test_identical_competitors_count_little_more_than_once():
    """Two classes at the same place, seen from a third: their ratios against it are one ratio
    (correlation 1, kept at MOST_CORRELATION 0.9): the error is a third more than one pairwise
    error (0.105 against 0.079), not twice it as in the union bound."""
    D = np.array([[0.0, 4.0, 4.0], [4.0, 0.0, 0.0], [4.0, 0.0, 0.0]])
    single = _tails(4.0)
    assert single <= SideError(D, np.full(3, 1 / 3)).class_errors()[0] < 1.4 * single
