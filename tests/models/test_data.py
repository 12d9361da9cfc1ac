"""A table's storage decided once (lbm_bench.models.data): the dense and the CSR adapter give the same
sums, conversions and norms; the boundary's conventions of missing entries (NaN, masked arrays,
explicit NaN of a sparse table, an observed mask) are read once; a sparse table is never densified."""

import numpy as np
import pytest
import scipy.sparse as sp

from lbm_bench.models.data import DenseTableData, SparseTableData, TableData

X = np.array([[0, 3, 0, 1], [2, 0, 0, 0], [0, 0, 5, 4]], dtype=np.int64)


def test_the_storage_is_decided_once():
    dense, sparse = TableData.of(X), TableData.of(sp.coo_matrix(X))
    assert isinstance(dense, DenseTableData) and not dense.is_sparse
    assert isinstance(sparse, SparseTableData) and sparse.is_sparse and sparse.table.format == "csr"
    assert TableData.of(dense) is dense  # an adapter is taken as it is
    assert TableData.of([[1, 2]]).table.tolist() == [[1, 2]]
    assert dense.shape == sparse.shape == (3, 4) and (dense.n_rows, dense.n_cols) == (3, 4)
    assert dense.n_stored == 12 and sparse.n_stored == 5
    assert sorted(sparse.stored_values().tolist()) == [1, 2, 3, 4, 5] and dense.stored_values().size == 12
    assert dense.storage_text() == "" and sparse.storage_text() == "sparse (41.67% non-zero)"


@pytest.mark.parametrize("make", [np.asarray, sp.csr_array], ids=["dense", "sparse"])
def test_both_storages_give_the_same_numbers(make):
    data = TableData.of(make(X))
    assert data.row_totals().tolist() == [4.0, 2.0, 9.0] and data.col_totals().tolist() == [2.0, 3.0, 5.0, 5.0]
    left = sp.csr_array(np.array([[1, 1, 0], [0, 0, 1]]))  # rows {0, 1} and {2}
    right = sp.csr_array(np.array([[1, 0, 0, 1], [0, 1, 1, 0]]))  # columns {0, 3} and {1, 2}
    assert data.group_sums(left, right).tolist() == [[3.0, 3.0], [4.0, 5.0]]
    assert data.observed_counts(left, right).tolist() == [[4, 4], [2, 2]]
    assert np.array_equal(data.densify(), X) and np.array_equal(data.to_csr().toarray(), X)
    assert data.to_csr(np.float32).dtype == np.float32
    assert data.as_float().table.dtype == np.float64 and data.as_float().is_sparse == data.is_sparse
    assert data.row_squared_norms().tolist() == [10.0, 4.0, 41.0]
    assert data.dense_row(2).tolist() == [0, 0, 5, 4]
    flipped = data.transposed()
    assert flipped.is_sparse == data.is_sparse and np.array_equal(flipped.densify(), X.T)


def test_dense_group_sums_in_bands_are_the_product(monkeypatch):
    from lbm_bench.models import data as module

    monkeypatch.setattr(module, "_BAND_BYTES", 8 * 3)  # one column per band
    table = np.random.default_rng(0).poisson(2.0, size=(3, 7))
    left, right = sp.csr_array(np.eye(3)), sp.csr_array(np.eye(7)[[0, 2, 4]] + np.eye(7)[[1, 3, 5]])
    assert np.array_equal(TableData.of(table).group_sums(left, right), table @ right.toarray().T)


def test_a_sparse_table_is_never_densified(monkeypatch):
    table = sp.csr_array(X)
    data = TableData.incomplete(table, [[1, 1, 0, 1], [1, 1, 1, 1], [0, 1, 1, 1]])

    def refuse(*args, **kwargs):
        raise AssertionError("densified")

    monkeypatch.setattr(sp.csr_array, "toarray", refuse)
    assert data.is_sparse and data.n_missing == 2 and data.table.nnz == 5  # no stored value at a missing entry
    assert data.row_totals().tolist() == [4.0, 2.0, 9.0]
    assert data.missing_row_counts().tolist() == [1, 0, 1] and data.missing_col_counts().tolist() == [1, 0, 1, 0]
    assert data.with_nan().nnz == 7  # the five values and two explicit NaN


def test_conflicting_marks_of_missing_entries_are_refused():
    with pytest.raises(ValueError, match="observed"):
        TableData.incomplete(np.array([[np.nan, 1.0]]), [[1, 1]])  # NaN where the mask says observed
    with pytest.raises(ValueError):
        TableData.incomplete(np.ones((2, 2)), [[1, 0, 1]])  # a mask of another shape
    nan_and_mask = TableData.incomplete(np.array([[np.nan, 1.0, 2.0]]), [[0, 0, 1]])
    assert nan_and_mask.n_missing == 2 and nan_and_mask.table.tolist() == [[0.0, 0.0, 2.0]]


def test_table_data_conventions_and_conversions():
    X = np.array([[1.0, np.nan, 3.0], [np.nan, 5.0, 6.0]])
    data = TableData.incomplete(X)
    assert data.n_missing == 2 and data.missing_fraction == pytest.approx(1 / 3)
    np.testing.assert_array_equal(data.with_nan(), X)
    np.testing.assert_array_equal(data.missing_row_counts(), [1, 1])
    np.testing.assert_array_equal(data.missing_col_counts(), [1, 1, 0])
    flipped = data.transposed()
    np.testing.assert_array_equal(flipped.observed, data.observed.T)
    left = sp.csr_array(np.ones((1, 2)))
    right = sp.csr_array(np.eye(3))
    np.testing.assert_array_equal(data.observed_counts(left, right), [[1, 1, 2]])
    masked = data.masked()
    assert masked.mask.tolist() == [[False, True, False], [True, False, False]]
    assert TableData.of(masked).n_missing == 2  # a masked array is read by the plain adapter too
    sparse = TableData.incomplete(sp.csr_array(X))
    assert sparse.is_sparse and sparse.n_missing == 2 and sparse.table.nnz == 4
    np.testing.assert_array_equal(sparse.with_nan().toarray(), X)
    np.testing.assert_array_equal(sparse.observed_counts(left, right), [[1, 1, 2]])
    np.testing.assert_array_equal(sparse.transposed().missing.toarray(), np.isnan(X).T)
    complete = TableData.incomplete(np.ones((2, 2)))
    assert not complete.has_missing and complete.n_missing == 0
    explicit = TableData.incomplete(np.arange(4).reshape(2, 2), [[1, 0], [1, 1]])
    assert explicit.table.tolist() == [[0, 0], [2, 3]] and explicit.n_missing == 1


def test_observed_values_are_the_observed_entries_held_and_a_sparse_tables_zero_when_asked():
    """One definition of a table's observed values (the EM baselines' family inference and the
    user's-table checks each wrote their own)."""
    import scipy.sparse as sp

    from lbm_bench.models.data import TableData

    dense = TableData.incomplete(np.array([[1.0, np.nan], [3.0, 0.0]]))
    assert sorted(dense.observed_values().tolist()) == [0.0, 1.0, 3.0]
    assert TableData.of(np.eye(2)).observed_values().tolist() == [1.0, 0.0, 0.0, 1.0]
    sparse = TableData.incomplete(sp.csr_array(np.array([[2.0, 0.0], [np.nan, 5.0]])))
    assert sparse.observed_values().tolist() == [2.0, 5.0]  # the stored values, the NaN missing
    assert sparse.observed_values(implicit_zero=True).tolist() == [2.0, 5.0, 0.0]
    full = TableData.of(sp.csr_array(np.array([[2, 1], [4, 5]])))
    assert full.observed_values(implicit_zero=True).tolist() == [2, 1, 4, 5]  # no zero to add
