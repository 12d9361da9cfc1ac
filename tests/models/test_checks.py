"""The checks of a data table for a family (lbm_bench.models.checks): real tables, non-negative integer
tables with a maximum, dense or sparse (made canonical, explicit zeros dropped, no copy when nothing
changes), and the package's one refusal of a sparse table where only a dense one fits (families that
cannot hold them, algorithms that would densify them); messages name the argument and what was seen."""

import ast
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from lbm_bench import GaussianLBM
from lbm_bench.algorithms import ALGORITHMS
from lbm_bench.models.checks import integer_table, real_table, refuse_sparse
from lbm_bench.models.design import random_model
from lbm_bench.models.registry import FAMILIES
from tests.algorithms.common import OPTIONS

PACKAGE = Path(__file__).resolve().parents[2] / "lbm_bench"


def test_real_tables():
    assert real_table([[1, 2], [3, 4]], "X").dtype == np.float64
    with pytest.raises(TypeError, match="X must be a 2-D array of numbers"):
        real_table([["a"]], "X")
    with pytest.raises(ValueError, match=r"X must be a non-empty 2-D array, got shape \(3,\)"):
        real_table([1, 2, 3], "X")
    with pytest.raises(ValueError, match="table must be finite"):
        real_table([[np.nan]], "table")


def test_dense_integer_tables():
    assert integer_table(np.array([[True, False]]), "X", np.uint8).dtype == np.int64
    assert integer_table([[1.0, 2.0]], "X", np.int64).tolist() == [[1, 2]]  # integral floats accepted
    with pytest.raises(ValueError, match="X must hold integers, got non-integer values"):
        integer_table([[0.5]], "X", np.int64)
    with pytest.raises(TypeError, match="X must hold integers, got dtype <U1"):
        integer_table([["a"]], "X", np.int64)
    with pytest.raises(ValueError, match="X must be non-negative, got min -1"):
        integer_table([[-1, 2]], "X", np.int64)
    with pytest.raises(ValueError, match="X must hold 0/1 values, got max 2"):
        integer_table([[0, 2]], "X", np.uint8, max_value=1)
    with pytest.raises(ValueError, match="X must hold 0..4 values, got max 7"):
        integer_table([[7]], "X", np.uint8, max_value=4)


def test_sparse_integer_tables_are_made_canonical():
    canonical = sp.csr_array(np.array([[0, 1], [2, 0]], dtype=np.int64))
    assert integer_table(canonical, "X", np.int64) is canonical  # nothing to change: no copy
    duplicated = sp.csr_array((np.array([1.0, 1.0, 0.0]), np.array([1, 1, 0]), np.array([0, 3, 3])), shape=(2, 2))
    table = integer_table(duplicated, "X", np.uint8)
    assert table.dtype == np.uint8 and table.has_canonical_format and table.nnz == 1
    assert table.toarray().tolist() == [[0, 2], [0, 0]]  # duplicates summed, the explicit zero dropped
    with pytest.raises(ValueError, match="X must hold finite integers"):
        integer_table(sp.csr_array(np.array([[0.5, 0.0]])), "X", np.int64)
    with pytest.raises(ValueError, match="X must hold 0/1 values, got max 3"):
        integer_table(sp.csr_array(np.array([[3, 0]])), "X", np.uint8, max_value=1)
    with pytest.raises(ValueError, match="X must be non-negative"):
        integer_table(sp.csr_array(np.array([[-3, 0]])), "X", np.int64)


def test_a_family_without_sparse_tables_refuses_them_in_words():
    model = GaussianLBM([1.0], [1.0], [[0.0]], [[1.0]])
    with pytest.raises(TypeError, match="sparse"):  # one line saying so, and what to do
        model.check_table(sp.csr_array(np.eye(2)))


def test_refuse_sparse_passes_dense_tables_and_refuses_sparse_ones_in_one_line():
    refuse_sparse(np.eye(3), "who", reason="why", remedy="what to do")  # dense: nothing to say
    for table in (sp.csr_array(np.eye(3)), sp.coo_matrix(np.eye(3)), sp.csc_array(np.eye(3))):
        with pytest.raises(TypeError) as info:
            refuse_sparse(table, "who", reason="why", remedy="what to do")
        assert str(info.value) == "who does not accept sparse tables (why); what to do"


@pytest.mark.parametrize("kind", [f.kind for f in FAMILIES if not f.model.can_be_sparse])
def test_families_without_sparse_tables_refuse_them_naming_the_argument(kind):
    model = random_model(kind, 2, 2, scale=1.0, rng=0, **OPTIONS.get(kind, {}))
    with pytest.raises(TypeError) as info:
        model.check_table(sp.csr_array(np.eye(3, dtype=np.uint8)), name="data")
    assert str(info.value) == (
        f"a {kind} model does not accept sparse tables (data is a scipy.sparse table); "
        "densify it with data.toarray()"
    )


@pytest.mark.parametrize("name, who", [("gaussian-cem", "cem with gaussian blocks"),
                                       ("spectral-coclustering", "spectral-coclustering")])
def test_algorithms_refuse_with_the_same_error(name, who):
    if name.startswith("spectral"):
        pytest.importorskip("sklearn")
    with pytest.raises(TypeError, match=f"^{who} does not accept sparse tables \\(.+\\); .+toarray"):
        ALGORITHMS[name](sp.csr_array(np.eye(4)), 2, 2, rng=0)


def test_the_sparse_refusal_is_written_once():
    """Every refusal of a sparse table goes through refuse_sparse: no other module raises its words."""
    writers = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and (
                "does not accept sparse" in node.value or "sparse tables are supported" in node.value
            ):
                writers.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    assert [w.split(":")[0] for w in writers] == ["models/checks.py"] * len(writers) and writers
