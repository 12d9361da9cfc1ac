"""Built-in algorithms on scipy.sparse tables: same labels as dense where they accept them,
one-line errors naming the algorithm where they do not."""

import numpy as np
import pytest
import scipy.sparse as sp

from lbm_bench import random_model
from lbm_bench.algorithms import ALGORITHMS, fit_lbm, infer_kind
from lbm_bench.algorithms.em_problem import EMProblem
from lbm_bench.models.registry import get_family
from tests.algorithms.common import EASY_SCALES, SKLEARN_NAMES


@pytest.fixture(scope="module", params=["bernoulli", "poisson"])
def count_table(request):
    kind = request.param
    X, z, w = random_model(kind, 3, 2, scale=EASY_SCALES[kind], rng=5).sample(60, 40, rng=6)
    return kind, X, z, w


@pytest.mark.parametrize("name", ["cem", "vem", "double-kmeans", "bernoulli-cem", "poisson-vem"])
def test_sparse_input_gives_the_dense_labels(count_table, name):
    kind, X, _, _ = count_table
    if name.split("-")[0] in ("bernoulli", "poisson") and not name.startswith(kind):
        pytest.skip("family algorithm of the other family")
    fit = ALGORITHMS[name]
    dense = fit(X, 3, 2, rng=3)
    for matrix in (sp.csr_array(X), sp.csc_matrix(X)):
        sparse = fit(matrix, 3, 2, rng=3)
        np.testing.assert_array_equal(sparse[0], dense[0])
        np.testing.assert_array_equal(sparse[1], dense[1])


def test_sparse_fit_has_the_dense_criterion_and_model(count_table):
    kind, X, _, _ = count_table
    for method in ("cem", "vem"):
        dense = fit_lbm(X, 3, 2, method=method, rng=1)
        sparse = fit_lbm(sp.csr_array(X), 3, 2, method=method, rng=1)
        assert sparse.kind == dense.kind == kind == infer_kind(sp.csr_array(X))
        assert sparse.criterion == pytest.approx(dense.criterion, rel=1e-10)
        for name, values in dense.model.block_parameters().items():
            np.testing.assert_allclose(sparse.model.block_parameters()[name], values, rtol=1e-10)


def test_sparse_problem_never_densifies(count_table):
    kind, X, _, _ = count_table
    prob = EMProblem(sp.csr_array(X), get_family(kind))
    assert sp.issparse(prob.values) and all(sp.issparse(t) for t in (*prob.T, *prob.T_t))
    dense = EMProblem(X, get_family(kind))
    assert prob.base_measure == pytest.approx(dense.base_measure, rel=1e-12)
    np.testing.assert_allclose(prob.row_base(), dense.row_base(), rtol=1e-12)
    np.testing.assert_allclose(prob.col_base(), dense.col_base(), rtol=1e-12)
    W = np.eye(2)[np.arange(40) % 2]
    np.testing.assert_allclose(prob.row_sums(W), dense.row_sums(W))


@pytest.mark.parametrize("name", ["cem", "vem", "gaussian-cem"])
def test_gaussian_blocks_refuse_sparse_tables_in_one_line(name):
    X = sp.csr_array(np.array([[0.0, 1.5], [2.0, 0.0], [0.0, 0.5]]))
    with pytest.raises(TypeError) as info:  # the wrong kind of table (models.checks.refuse_sparse)
        ALGORITHMS[name](X, 2, 1, rng=0)
    message = str(info.value)
    assert "\n" not in message and "sparse table with poisson or bernoulli blocks only" in message
    assert message.startswith(name.split("-")[-1])


@pytest.mark.parametrize("name", SKLEARN_NAMES)
def test_spectral_methods_refuse_sparse_tables_in_one_line(name):
    pytest.importorskip("sklearn")
    X = sp.csr_array(np.eye(4, dtype=np.uint8))
    with pytest.raises(TypeError, match=f"^{name} does not accept sparse tables") as info:
        ALGORITHMS[name](X, 2, 2, rng=0)
    assert "\n" not in str(info.value) and "X.toarray()" in str(info.value)


def test_sparse_values_are_checked():
    with pytest.raises(ValueError, match="X must hold 0/1 values, got max 2"):
        fit_lbm(sp.csr_array(np.array([[0, 2], [1, 0]])), 1, 1, kind="bernoulli", rng=0)
    with pytest.raises(ValueError, match="X must hold finite integers"):
        fit_lbm(sp.csr_array(np.array([[0, 2.5], [1, 0]])), 1, 1, kind="poisson", rng=0)
    with pytest.raises(ValueError, match="finite"):
        fit_lbm(sp.csr_array(np.array([[0, np.inf], [1, 0]])), 1, 1, rng=0)
    # explicit NaN values of a sparse table are its missing entries (tests/algorithms/test_missing.py)
    assert fit_lbm(sp.csr_array(np.array([[0, np.nan], [1, 0]])), 1, 1, rng=0).rows.tolist() == [0, 0]


#: Registry names that refuse sparse tables (Gaussian and categorical blocks, scikit-learn's
#: spectral methods).
REFUSE_SPARSE = {"gaussian-cem", "gaussian-vem", "categorical-cem", "categorical-vem", *SKLEARN_NAMES}


@pytest.mark.parametrize(
    "name", [pytest.param(name, marks=pytest.mark.sparsebm) if name == "sparsebm" else name
             for name in sorted(ALGORITHMS)],
)
def test_every_algorithm_takes_a_sparse_binary_table_or_refuses_in_one_line(name):
    """Every registered algorithm (a new one included): on a binary scipy.sparse table,
    either the labels it gives the same table dense, or a one-line TypeError about sparse input."""
    if name in SKLEARN_NAMES:
        pytest.importorskip("sklearn")
    if name == "sparsebm":
        pytest.importorskip("sparsebm")
    X, _, _ = random_model("bernoulli", 2, 2, scale=EASY_SCALES["bernoulli"], rng=5).sample(60, 40, rng=6)
    if name in REFUSE_SPARSE:
        with pytest.raises(TypeError, match="does not accept sparse tables") as info:
            ALGORITHMS[name](sp.csr_array(X), 2, 2, rng=0)
        assert "\n" not in str(info.value)
        return
    rows, cols = ALGORITHMS[name](sp.csr_array(X), 2, 2, rng=0)
    dense_rows, dense_cols = ALGORITHMS[name](X, 2, 2, rng=0)
    np.testing.assert_array_equal(rows, dense_rows)
    np.testing.assert_array_equal(cols, dense_cols)
