"""The checks of a data table for a family (lbm_bench.models.checks): real tables, non-negative integer
tables with a maximum, dense or sparse (made canonical, explicit zeros dropped, no copy when nothing
changes), and sparse tables refused to families that cannot hold them; messages name the argument
and what was seen."""

import numpy as np
import pytest
import scipy.sparse as sp

from lbm_bench import GaussianLBM
from lbm_bench.models.checks import integer_table, real_table


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
