"""Built-in co-clustering algorithms: recovery, contracts, criteria and the registry.

Easy tables: 3x3-cluster models at a large scale, sampled at 100x80, on which the
true-parameter MAP makes no error; LBM algorithms with *estimated* parameters
must recover the labels up to a permutation (matching error <= 0.02 per side).
"""

import itertools
import sys

import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment
from scipy.special import logsumexp

from lbm_bench import GaussianLBM, algorithms, map_labels, random_model
from lbm_bench.algorithms import (
    ALGORITHMS,
    LBMFit,
    cem,
    double_kmeans,
    fit_lbm,
    infer_kind,
    resolve_algorithm,
    vem,
)

from .exact import exact_posterior

KINDS = ("gaussian", "poisson", "bernoulli")
EASY_SCALES = {"gaussian": 3.0, "poisson": 2.0, "bernoulli": 2.0}
SKLEARN_NAMES = ("spectral-coclustering", "spectral-biclustering")


def matching_error(truth, labels):
    """1 - (best one-to-one matching of clusters) / n, via the Hungarian algorithm."""
    truth, labels = np.asarray(truth), np.asarray(labels)
    table = np.zeros((truth.max() + 1, labels.max() + 1))
    np.add.at(table, (truth, labels), 1)
    r, c = linear_sum_assignment(-table)
    return 1.0 - table[r, c].sum() / truth.size


@pytest.fixture(scope="module", params=KINDS)
def easy(request):
    kind = request.param
    model = random_model(kind, 3, 3, scale=EASY_SCALES[kind], rng=0)
    X, z, w = model.sample(100, 80, rng=1)
    return kind, model, X, z, w


@pytest.fixture(scope="module")
def small_tables():
    """A 30x20 table of each family with 3x2 clusters."""
    tables = {}
    for kind in KINDS:
        model = random_model(kind, 3, 2, scale=EASY_SCALES[kind], rng=3)
        tables[kind] = model.sample(30, 20, rng=4)[0]
    return tables


def _builtins():
    """Registry names, with the scikit-learn ones skipped when it is missing."""
    try:
        import sklearn  # noqa: F401
    except ImportError:
        return [name for name in ALGORITHMS if name not in SKLEARN_NAMES]
    return list(ALGORITHMS)


# -- recovery ---------------------------------------------------------------------------
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


@pytest.mark.parametrize("name", ["cem", "vem"])
def test_builtin_lbm_infers_the_family(easy, name):
    kind, _, X, z, w = easy
    assert infer_kind(X) == kind
    rows, cols = resolve_algorithm(name)[1](X, 3, 3, rng=6)
    assert matching_error(z, rows) <= 0.02
    assert matching_error(w, cols) <= 0.02


def test_double_kmeans_recovers_easy_gaussian_tables():
    model = random_model("gaussian", 3, 3, scale=3.0, rng=0)
    X, z, w = model.sample(100, 80, rng=1)
    rows, cols = double_kmeans(X, 3, 3, rng=0)
    assert matching_error(z, rows) <= 0.02
    assert matching_error(w, cols) <= 0.02


# -- criteria ----------------------------------------------------------------------------
def _closed_form(kind, X, rows, cols, g, m):
    """Block parameters of the M-step, computed block by block."""
    X = np.asarray(X, dtype=float)
    blocks = [[X[np.ix_(rows == k, cols == l)] for l in range(m)] for k in range(g)]
    means = np.array([[b.mean() for b in line] for line in blocks])
    if kind == "gaussian":
        floor = 1e-6 * X.var()
        stds = np.array([[np.sqrt(max(b.var(), floor)) for b in line] for line in blocks])
        return {"means": means, "stds": stds}
    if kind == "poisson":
        return {"rates": np.maximum(means, 1e-10)}
    return {"probs": np.clip(means, 1e-6, 1 - 1e-6)}


@pytest.mark.parametrize("kind", KINDS)
def test_cem_ends_at_a_fixed_point_of_its_criterion(small_tables, kind):
    X = small_tables[kind]
    fit = fit_lbm(X, 3, 2, method="cem", rng=0)
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
    model = random_model(kind, 2, 2, scale=EASY_SCALES[kind] / 2, rng=7)
    X, _, _ = model.sample(7, 6, rng=8)
    fit = fit_lbm(X, 2, 2, method="vem", rng=0)
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


# -- output contract and reproducibility ---------------------------------------------------
@pytest.mark.parametrize("name", _builtins())
@pytest.mark.parametrize("kind", KINDS)
def test_builtins_honour_the_output_contract(small_tables, name, kind):
    X = small_tables[kind]
    rows, cols = ALGORITHMS[name](X, 3, 2, rng=0)
    for labels, size, k in ((rows, 30, 3), (cols, 20, 2)):
        assert isinstance(labels, np.ndarray) and labels.shape == (size,)
        assert labels.dtype == np.int64
        assert labels.min() >= 0 and labels.max() < k


@pytest.mark.parametrize("name", _builtins())
def test_same_rng_gives_same_labels(small_tables, name):
    X = small_tables["gaussian"]
    first = ALGORITHMS[name](X, 3, 2, rng=11)
    second = ALGORITHMS[name](X, 3, 2, rng=np.random.default_rng(11))
    np.testing.assert_array_equal(first[0], second[0])
    np.testing.assert_array_equal(first[1], second[1])


def test_family_wrappers_have_the_algorithm_signature(small_tables):
    for kind in KINDS:
        for method in ("cem", "vem"):
            rows, cols = getattr(algorithms, f"{kind}_{method}")(small_tables[kind], 3, 2, rng=0)
            assert rows.shape == (30,) and cols.shape == (20,)


def test_single_clusters_and_tiny_tables():
    X = np.random.default_rng(0).normal(size=(3, 2))
    for fit in (cem, vem, double_kmeans):
        rows, cols = fit(X, 1, 1, rng=0)
        assert rows.tolist() == [0, 0, 0] and cols.tolist() == [0, 0]
        rows, cols = fit(X, 3, 2, rng=0)  # as many clusters as rows and columns
        assert sorted(rows.tolist()) == [0, 1, 2] and sorted(cols.tolist()) == [0, 1]


# -- family inference --------------------------------------------------------------------
@pytest.mark.parametrize(
    "table, kind",
    [
        (np.array([[0, 1], [1, 0]], dtype=np.uint8), "bernoulli"),
        (np.array([[True, False], [True, True]]), "bernoulli"),
        (np.array([[0, 3], [2, 1]]), "poisson"),
        (np.array([[0, -3], [2, 1]]), "gaussian"),
        (np.array([[0.0, 3.0], [2.0, 1.0]]), "gaussian"),  # float counts stay Gaussian
        (np.array([[0.0, 1.0], [1.0, 0.0]]), "gaussian"),
        (np.array([[0.5, -1.2]]), "gaussian"),
    ],
)
def test_infer_kind(table, kind):
    assert infer_kind(table) == kind


def test_float_counts_are_counts_with_an_explicit_kind():
    model = random_model("poisson", 2, 2, scale=2.0, rng=0)
    X, _, _ = model.sample(30, 20, rng=1)
    assert fit_lbm(X.astype(float), 2, 2, rng=0).kind == "gaussian"
    fit = fit_lbm(X.astype(float), 2, 2, kind="poisson", rng=0)
    assert fit.kind == "poisson" and fit.model.rates.shape == (2, 2)


# -- bad inputs -------------------------------------------------------------------------
@pytest.mark.parametrize("fit", [cem, vem, double_kmeans])
@pytest.mark.parametrize(
    "X, g, m, error, match",
    [
        (np.zeros(5), 1, 1, ValueError, "X must be a 2-D array"),
        (np.zeros((0, 3)), 1, 1, ValueError, "X must not be empty"),
        (np.array([[1.0, np.nan], [0.0, 1.0]]), 1, 1, ValueError, "X must be finite"),
        (np.array([[1.0, np.inf], [0.0, 1.0]]), 1, 1, ValueError, "X must be finite"),
        (np.array([["a", "b"]]), 1, 1, TypeError, "X must be a 2-D array of numbers"),
        (np.ones((4, 3)), 0, 1, ValueError, "n_row_clusters must be >= 1"),
        (np.ones((4, 3)), 1, 0, ValueError, "n_col_clusters must be >= 1"),
        (np.ones((4, 3)), 5, 1, ValueError, r"n_row_clusters must be <= the number of rows \(4\)"),
        (np.ones((4, 3)), 2, 4, ValueError, r"n_col_clusters must be <= the number of col"),
        (np.ones((4, 3)), 2.0, 1, TypeError, "n_row_clusters must be an integer"),
        (np.ones((4, 3)), 2, True, TypeError, "n_col_clusters must be an integer"),
    ],
)
def test_bad_inputs_raise(fit, X, g, m, error, match):
    with pytest.raises(error, match=match):
        fit(X, g, m, rng=0)


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"kind": "normal"}, ValueError, "kind must be one of"),
        ({"kind": "bernoulli"}, ValueError, "X must hold 0/1 values"),
        ({"method": "sem"}, ValueError, "method must be 'cem' or 'vem'"),
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


# -- spectral wrappers ------------------------------------------------------------------
def test_spectral_coclustering_separates_a_diagonal_table():
    pytest.importorskip("sklearn")
    X = np.kron(np.eye(2), np.ones((5, 4))) + 0.01 * np.arange(80).reshape(10, 8) % 0.05
    X -= 0.5  # negative entries are shifted
    rows, cols = algorithms.spectral_coclustering(X, 2, 2, rng=0)
    assert matching_error(np.repeat([0, 1], 5), rows) == 0.0
    assert matching_error(np.repeat([0, 1], 4), cols) == 0.0


def test_spectral_wrappers_handle_zero_rows():
    pytest.importorskip("sklearn")
    X = np.zeros((10, 8), dtype=np.uint8)
    X[:5, :4] = 1
    X[5:9, 4:] = 1  # row 9 is all zeros
    for name in SKLEARN_NAMES:
        rows, cols = ALGORITHMS[name](X, 2, 2, rng=0)
        assert rows.shape == (10,) and cols.shape == (8,)


def test_spectral_wrappers_explain_a_missing_sklearn(monkeypatch):
    monkeypatch.setitem(sys.modules, "sklearn.cluster", None)
    for name in SKLEARN_NAMES:
        with pytest.raises(ImportError, match=r"pip install 'lbm-bench\[sklearn\]'"):
            ALGORITHMS[name](np.ones((4, 3)), 2, 2, rng=0)


# -- registry -----------------------------------------------------------------------------
def test_registry_names():
    assert set(ALGORITHMS) == {
        "cem",
        "vem",
        "double-kmeans",
        "spectral-coclustering",
        "spectral-biclustering",
    }
    for name, fit in ALGORITHMS.items():
        assert resolve_algorithm(name) == (name, fit)
    assert resolve_algorithm("Double_KMeans") == ("double-kmeans", double_kmeans)


def test_resolve_module_function():
    name, fit = resolve_algorithm("lbm_bench.algorithms:double_kmeans")
    assert name == "lbm_bench.algorithms:double_kmeans" and fit is double_kmeans
    assert resolve_algorithm("lbm_bench.algorithms:poisson_vem")[1] is algorithms.poisson_vem


@pytest.mark.parametrize(
    "name, match",
    [
        ("kmeans", "unknown algorithm 'kmeans'"),
        ("", "unknown algorithm"),
        ("lbm_bench.no_such_module:fit", "cannot import module 'lbm_bench.no_such_module'"),
        ("lbm_bench.algorithms:no_such_function", "has no attribute 'no_such_function'"),
        ("lbm_bench.algorithms:ALGORITHMS", "is not callable"),
        ("lbm_bench.algorithms:", "must be a registry name or 'module:function'"),
        (":cem", "must be a registry name or 'module:function'"),
    ],
)
def test_resolve_algorithm_errors(name, match):
    with pytest.raises(ValueError, match=match):
        resolve_algorithm(name)


def test_resolve_algorithm_needs_a_string():
    with pytest.raises(TypeError, match="must be a string"):
        resolve_algorithm(cem)
