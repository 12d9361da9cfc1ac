"""Sparse tables in files: the canonical CSR encoding of ``data`` (format 1.1).

A sparse table's ``data`` is a group holding three 1-D datasets and two
attributes (``docs/format.md``, "Sparse tables"):

``data/indptr``
    row pointers, ``n_rows + 1`` integers, ``indptr[0] = 0``, non-decreasing,
    ``indptr[-1] = nnz``; row ``i`` holds the entries ``indptr[i]:indptr[i+1]``;
``data/indices``
    the column of each stored entry, ``nnz`` integers in ``[0, n_cols)``,
    strictly increasing within each row;
``data/values``
    the value of each stored entry, ``nnz`` values of the kind's dtype, none zero;
``data@shape``
    ``(n_rows, n_cols)`` as int64;
``data@encoding``
    the string ``"csr"``.

The encoding is *canonical* (sorted indices, no duplicates, no stored zeros),
so that one matrix has exactly one encoding and writing it twice gives the
same bytes. Writers use int32 for ``indices`` and for ``indptr`` when ``nnz``
fits (int64 otherwise): every HDF5 tool and R read them natively. This module
has no HDF5 code: it turns a matrix into those arrays and checks arrays read
from a file before they become a :class:`scipy.sparse.csr_array`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

__all__ = [
    "CSR_ENCODING",
    "CSR_ITEMS",
    "csr_arrays",
    "csr_from_arrays",
    "csr_problems",
]

#: Value of the ``data@encoding`` attribute.
CSR_ENCODING = "csr"
#: The datasets of a sparse ``data`` group.
CSR_ITEMS = ("indptr", "indices", "values")
_INT32_MAX = np.iinfo(np.int32).max


def csr_arrays(data: Any, dtype: np.dtype) -> dict[str, np.ndarray]:
    """The canonical CSR arrays of a sparse matrix: ``{"indptr", "indices", "values"}``.

    Parameters
    ----------
    data : scipy.sparse matrix or array of shape (n_rows, n_cols)
        Any sparse format; duplicates are summed, zeros dropped, indices sorted.
    dtype : numpy.dtype
        dtype of the stored values (the kind's).

    Returns
    -------
    dict of str to ndarray
        ``indptr`` (n_rows + 1,), ``indices`` (nnz,) and ``values`` (nnz,);
        ``indptr`` and ``indices`` are int32 when they fit, else int64.

    Raises
    ------
    ValueError
        When a value does not survive the conversion to ``dtype``.
    """
    matrix = sp.csr_array(data, copy=True)
    matrix.sum_duplicates()  # also sorts the indices
    matrix.eliminate_zeros()
    matrix.sort_indices()
    values = matrix.data
    converted = values.astype(dtype)
    if converted.shape != values.shape or not np.array_equal(converted, values):
        raise ValueError("data holds values that are not exactly representable as "
                         f"{np.dtype(dtype)}")
    nnz = int(matrix.nnz)
    index_dtype = np.int32 if max(nnz, matrix.shape[1]) <= _INT32_MAX else np.int64
    return {
        "indptr": np.ascontiguousarray(matrix.indptr,
                                       dtype=np.int32 if nnz <= _INT32_MAX else np.int64),
        "indices": np.ascontiguousarray(matrix.indices, dtype=index_dtype),
        "values": np.ascontiguousarray(converted),
    }


def csr_problems(
    shape: tuple[int, int], indptr: np.ndarray, indices: np.ndarray, values: np.ndarray
) -> list[str]:
    """Why the arrays are not the canonical CSR encoding of a ``shape`` table (empty: they are).

    Checks the shapes and integer dtypes, ``indptr`` (starts at 0,
    non-decreasing, ends at ``nnz``), the column indices (in range, strictly
    increasing within each row) and that no stored value is zero. The values'
    dtype and range by kind are checked by the caller.
    """
    n_rows, n_cols = shape
    problems = []
    for name, array in (("indptr", indptr), ("indices", indices)):
        if array.ndim != 1 or array.dtype.kind not in "iu":
            problems.append(f"dataset data/{name} must be a 1-D integer array, got {array.dtype} "
                            f"{array.shape}")
    if values.ndim != 1:
        problems.append(f"dataset data/values must be 1-D, got shape {values.shape}")
    if problems:
        return problems
    if indptr.shape != (n_rows + 1,):
        return [f"dataset data/indptr has shape {indptr.shape}, expected ({n_rows + 1},) for "
                f"{n_rows} rows"]
    nnz = len(indices)
    if len(values) != nnz:
        return [f"datasets data/indices and data/values hold {nnz} and {len(values)} entries"]
    pointers = indptr.astype(np.int64)
    if pointers[0] != 0 or pointers[-1] != nnz:
        return [f"dataset data/indptr must run from 0 to nnz = {nnz}, got {pointers[0]} to "
                f"{pointers[-1]}"]
    if np.any(np.diff(pointers) < 0):
        return ["dataset data/indptr must be non-decreasing"]
    if nnz:
        columns = indices.astype(np.int64)
        low, high = int(columns.min()), int(columns.max())
        if low < 0 or high >= n_cols:
            problems.append(f"dataset data/indices holds a column outside [0, {n_cols}) "
                            f"({low if low < 0 else high})")
        row_start = np.zeros(nnz, dtype=bool)
        row_start[pointers[:-1][pointers[:-1] < nnz]] = True
        if not np.all((np.diff(columns) > 0) | row_start[1:]):
            problems.append("dataset data/indices must be strictly increasing within each row")
        if np.any(values == 0):
            problems.append("dataset data/values holds a zero (zeros are not stored)")
    return problems


def csr_from_arrays(
    shape: tuple[int, int], indptr: np.ndarray, indices: np.ndarray, values: np.ndarray
) -> sp.csr_array:
    """A :class:`scipy.sparse.csr_array` from arrays that passed :func:`csr_problems`."""
    matrix = sp.csr_array((values, indices, indptr), shape=shape)
    matrix.has_canonical_format = True  # checked: sorted, no duplicates
    return matrix
