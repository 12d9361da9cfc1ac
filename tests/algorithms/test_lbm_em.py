"""Block CEM and VEM (lbm_bench.algorithms.lbm_em): recovery of easy tables, criteria, options."""

import itertools

import numpy as np
import pytest
from scipy.special import logsumexp

from lbm_bench import GaussianLBM, algorithms, map_labels, random_model
from lbm_bench.algorithms import (
    LBMFit,
    cem,
    fit_lbm,
)
from tests.algorithms.common import (
    EASY_SCALES,
    KINDS,
    OPTIONS,
    matching_error,
)
from tests.exact import exact_posterior


def test_easy_tables_are_easy_for_the_true_map(easy):
    _, model, X, z, w = easy
    result = map_labels(model, X, rng=0)
    assert matching_error(z, result.rows) == 0.0
    assert matching_error(w, result.cols) == 0.0


@pytest.mark.parametrize("method", ["cem", "vem"])
def test_lbm_with_estimated_parameters_recovers_easy_tables(easy, method):
    kind, _, X, z, w = easy
    fit = getattr(algorithms, f"{kind}_{method}")
    rows, cols = fit(X, 3, 3, rng=5)
    assert matching_error(z, rows) <= 0.02
    assert matching_error(w, cols) <= 0.02


def _closed_form(kind, X, rows, cols, g, m):
    """Block parameters of the M-step, computed block by block."""
    X = np.asarray(X, dtype=float)
    blocks = [[X[np.ix_(rows == k, cols == l)] for l in range(m)] for k in range(g)]
    means = np.array([[b.mean() for b in line] for line in blocks])
    if kind == "gaussian":  # one pseudo-entry at the table's variance, then the floor
        floor, prior = 1e-6 * X.var(), X.var()
        stds = np.array([[np.sqrt(max((b.var() * b.size + prior) / (b.size + 1), floor)) for b in line]
                         for line in blocks])
        return {"means": means, "stds": stds}
    if kind == "poisson":
        return {"rates": np.maximum(means, 1e-10)}
    if kind == "categorical":
        K = int(X.max()) + 1
        probs = np.maximum([[[np.mean(b == c) for c in range(K)] for b in line] for line in blocks], 1e-6)
        return {"probs": probs / probs.sum(axis=2, keepdims=True)}
    return {"probs": np.clip(means, 1e-6, 1 - 1e-6)}


@pytest.mark.parametrize("kind", KINDS)
def test_cem_ends_at_a_fixed_point_of_its_criterion(small_tables, kind):
    X = small_tables[kind]
    fit = fit_lbm(X, 3, 2, method="cem", kind=kind, rng=0)
    assert isinstance(fit, LBMFit) and fit.kind == kind and fit.converged
    # the M-step of the final labels gives back the fitted parameters ...
    for name, value in _closed_form(kind, X, fit.rows, fit.cols, 3, 2).items():
        np.testing.assert_allclose(fit.model.block_parameters()[name], value, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(fit.model.row_proportions, np.bincount(fit.rows, minlength=3) / 30)
    # ... and the criterion is log p(X, rows, cols; theta_hat), as models.py computes it
    expected = fit.model.complete_log_likelihood(X, fit.rows, fit.cols)
    assert fit.criterion == pytest.approx(expected, rel=1e-10)
    assert fit.criterion == pytest.approx(fit.start_criteria.max())
    assert fit.start_criteria.shape == (10,)


@pytest.mark.parametrize("kind", KINDS)
def test_vem_bound_is_below_the_exact_log_likelihood(kind):
    model = random_model(kind, 2, 2, scale=EASY_SCALES[kind] / 2, rng=7, **OPTIONS.get(kind, {}))
    X, _, _ = model.sample(7, 6, rng=8)
    fit = fit_lbm(X, 2, 2, method="vem", kind=kind, rng=0)
    assert fit.start_criteria.shape == (10,)
    _, _, log_joint = exact_posterior(fit.model, X)
    log_likelihood = logsumexp(log_joint)  # log p(X; theta_hat) by enumeration
    assert fit.criterion <= log_likelihood + 1e-8
    assert fit.criterion >= log_likelihood - 0.1 * abs(log_likelihood)


def test_cem_does_not_beat_the_true_map_under_the_true_model():
    """On a harder table (item risk about 10%), CEM's labels are not more probable
    than the MAP's under the true model (whatever the label permutation), while
    its estimated parameters fit the table at least as well as the true ones."""
    model = GaussianLBM(
        [0.378, 0.335, 0.287],
        [0.274, 0.357, 0.369],
        [[0.453, -0.329, -0.145], [0.171, -0.153, 0.653], [-0.401, -0.248, -0.001]],
        [[1.226, 1.22, 1.117], [0.815, 0.85, 1.199], [1.213, 0.935, 1.075]],
    )
    X, z, w = model.sample(100, 80, rng=3)
    truth = map_labels(model, X, rng=0)
    item_error = 1 - (1 - matching_error(z, truth.rows)) * (1 - matching_error(w, truth.cols))
    assert 0.05 <= item_error <= 0.2
    fit = fit_lbm(X, 3, 3, method="cem", rng=0)
    perms = list(itertools.permutations(range(3)))
    under_truth = max(
        model.complete_log_likelihood(X, np.array(s)[fit.rows], np.array(t)[fit.cols])
        for s in perms
        for t in perms
    )
    assert under_truth <= truth.log_likelihood + 1e-9 * abs(truth.log_likelihood)
    assert fit.criterion >= truth.log_likelihood


def test_float_counts_are_counts_and_reals_with_an_explicit_kind():
    """The values decide the family, not the dtype (issue 47); kind= still decides."""
    model = random_model("poisson", 2, 2, scale=2.0, rng=0)
    X, _, _ = model.sample(30, 20, rng=1)
    fit = fit_lbm(X.astype(float), 2, 2, rng=0)
    assert fit.kind == "poisson" and fit.model.rates.shape == (2, 2)
    assert fit_lbm(X.astype(float), 2, 2, kind="gaussian", rng=0).kind == "gaussian"


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"kind": "normal"}, ValueError, "kind must be one of"),
        ({"kind": "bernoulli"}, ValueError, "X must hold 0/1 values"),
        ({"method": "sem"}, ValueError, "method must be one of 'cem', 'vem'"),
        ({"n_init": 0}, ValueError, "n_init must be >= 1"),
        ({"max_iter": 0}, ValueError, "max_iter must be >= 1"),
        ({"tol": -1.0}, ValueError, "tol must be finite and > 0"),
    ],
)
def test_bad_fit_options_raise(kwargs, error, match):
    X = np.array([[0, 2, 1], [3, 0, 1], [1, 1, 0]])
    with pytest.raises(error, match=match):
        fit_lbm(X, 2, 2, rng=0, **kwargs)


def test_poisson_kind_rejects_non_integer_tables():
    with pytest.raises(ValueError, match="X must hold integers"):
        cem(np.array([[0.5, 1.0], [2.0, 0.0]]), 1, 1, kind="poisson", rng=0)


@pytest.mark.parametrize(
    "X, error, match",
    [
        ([[0, -1], [2, 1]], ValueError, "X must hold category codes 0..254, got a negative code -1"),
        ([[0, 1.5], [2, 1]], ValueError, "non-integer"),
        ([[0, 300], [2, 1]], ValueError, "got code 300"),
        ([[0, np.inf], [2, 1]], ValueError, "finite"),
    ],
)
def test_categorical_fit_refuses_bad_codes_in_one_line(X, error, match):
    with pytest.raises(error, match=match) as info:
        fit_lbm(np.array(X), 2, 2, kind="categorical", rng=0)
    assert "\n" not in str(info.value)


def test_categorical_fit_reads_nan_as_a_missing_entry():
    """NaN is a missing entry (issue 25), of a categorical table too: the observed codes are fitted."""
    fit = fit_lbm(np.array([[0, np.nan], [2, 1]]), 2, 2, kind="categorical", rng=0)
    assert fit.model.categories == 3 and sorted(fit.rows.tolist()) == [0, 1]


def test_categorical_fit_counts_categories():
    """K is one more than the largest code; the M-step gives (g, m, K) block frequencies."""
    model = random_model("categorical", 2, 2, scale=2.0, categories=6, rng=3)
    X, z, w = model.sample(80, 60, rng=4)
    fit = fit_lbm(X, 2, 2, kind="categorical", rng=0)
    assert fit.model.probs.shape == (2, 2, int(X.max()) + 1)
    assert matching_error(z, fit.rows) == 0 and matching_error(w, fit.cols) == 0
