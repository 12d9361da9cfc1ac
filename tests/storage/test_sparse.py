"""The canonical CSR encoding of sparse tables (lbm_bench.storage.sparse)."""

from __future__ import annotations

import re

import numpy as np
import pytest
import scipy.sparse as sp

from lbm_bench.models import TableData
from lbm_bench.storage.sparse import csr_arrays, csr_from_arrays, csr_problems


def _matrix(seed=0, shape=(30, 20), density=0.1):
    rng = np.random.default_rng(seed)
    dense = (rng.random(shape) < density).astype(np.uint8)
    return sp.csr_array(dense), dense


def test_round_trip_and_canonical_form():
    matrix, dense = _matrix()
    arrays = csr_arrays(matrix, np.dtype(np.uint8))
    assert arrays["indptr"].dtype == np.int32 and arrays["indices"].dtype == np.int32
    assert arrays["values"].dtype == np.uint8
    assert csr_problems(dense.shape, **arrays) == []
    back = csr_from_arrays(dense.shape, **arrays)
    assert isinstance(back, sp.csr_array) and TableData.of(back).is_sparse and not TableData.of(dense).is_sparse
    np.testing.assert_array_equal(back.toarray(), dense)


def test_one_matrix_one_encoding():
    """Duplicates summed, zeros dropped, indices sorted, whatever the input format."""
    matrix, dense = _matrix(1)
    coo = sp.coo_array(matrix)
    # the same matrix with shuffled entries, a duplicate split in two and an explicit zero
    order = np.random.default_rng(2).permutation(coo.nnz)
    rows = np.concatenate([coo.row[order], [0, 0]])
    cols = np.concatenate([coo.col[order], [0, 1]])
    vals = np.concatenate([coo.data[order], [0, 0]]).astype(np.int64)
    messy = sp.coo_array((vals, (rows, cols)), shape=dense.shape)
    reference = csr_arrays(matrix, np.dtype(np.uint8))
    for other in (messy, sp.csc_array(matrix), sp.csr_matrix(dense)):
        arrays = csr_arrays(other, np.dtype(np.uint8))
        for name in reference:
            np.testing.assert_array_equal(arrays[name], reference[name])


def test_values_must_survive_the_dtype():
    with pytest.raises(ValueError, match="not exactly representable"):
        csr_arrays(sp.csr_array(np.array([[0.5, 0.0]])), np.dtype(np.int64))


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda a: a.update(indptr=a["indptr"][:-1]), "indptr has shape"),
        (lambda a: a["indptr"].__setitem__(-1, a["indptr"][-1] - 1), "from 0 to nnz"),
        (lambda a: a["indptr"].__setitem__(0, 1), "from 0 to nnz"),
        (lambda a: a["indptr"].__setitem__(slice(5, 7), a["indptr"][[6, 5]]), "non-decreasing"),
        (lambda a: a["indices"].__setitem__(0, 20), "outside \\[0, 20\\)"),
        (lambda a: a["indices"].__setitem__(0, -1), "outside"),
        (lambda a: a["indices"].__setitem__(slice(0, 2), a["indices"][[1, 0]]), "strictly increasing"),
        (lambda a: a["values"].__setitem__(3, 0), "holds a zero"),
        (lambda a: a.update(values=a["values"][:-1]), "hold"),
        (lambda a: a.update(indices=a["indices"].astype(np.float64)), "integer array"),
    ],
)
def test_inconsistent_arrays_are_named(change, message):
    matrix, dense = _matrix(3, density=0.3)
    arrays = {k: v.copy() for k, v in csr_arrays(matrix, np.dtype(np.uint8)).items()}
    assert arrays["indptr"][1] >= 2  # the first row holds two entries or more
    change(arrays)
    problems = csr_problems(dense.shape, **arrays)
    assert problems and any(re.search(message, p) for p in problems), problems


def test_empty_table():
    arrays = csr_arrays(sp.csr_array((4, 3), dtype=np.int64), np.dtype(np.int64))
    assert [len(arrays[k]) for k in ("indptr", "indices", "values")] == [5, 0, 0]
    assert csr_problems((4, 3), **arrays) == []
    assert csr_from_arrays((4, 3), **arrays).nnz == 0
