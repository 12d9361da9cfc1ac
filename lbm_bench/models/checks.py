"""Checks of a data table for a family, dense or sparse, shared by the family modules.

Each family's :meth:`~lbm_bench.models.base.LatentBlockModel.check_table` is one
of these with its own bounds: real entries (:func:`real_table`), or non-negative
integers with an optional maximum (:func:`integer_table`, for a dense array or a
``scipy.sparse`` table, whose storage :class:`~lbm_bench.models.data.TableData`
decides). Messages name the argument and what was seen, on one line.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import sparse as sp

from lbm_bench.models.data import TableData

__all__ = ["integer_table", "real_table", "refuse_sparse"]


def real_table(X: Any, name: str) -> np.ndarray:
    """A non-empty, finite, 2-D float64 array."""
    try:
        array = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be a 2-D array of numbers") from exc
    if array.ndim != 2 or array.size == 0:
        raise ValueError(f"{name} must be a non-empty 2-D array, got shape {array.shape}")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} must be finite")
    return array


def refuse_sparse(X: Any, who: str, *, reason: str, remedy: str) -> None:
    """Refuse a scipy.sparse table given to ``who``, in one line: the package's one sparse refusal.

    A sparse table where only a dense one fits is the wrong kind of object, hence a
    ``TypeError`` (the house rule; the command line prints it as one line, the benchmark
    harness records it in the ``error`` column): ``"<who> does not accept sparse tables
    (<reason>); <remedy>"``. Families whose tables cannot be sparse refuse in their
    ``check_table``, algorithms that would densify one before they start.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> refuse_sparse(sp.eye_array(2).tocsr(), "a gaussian model",
    ...               reason="X is a scipy.sparse table", remedy="densify it with X.toarray()")
    Traceback (most recent call last):
    ...
    TypeError: a gaussian model does not accept sparse tables (X is a scipy.sparse table); densify
    it with X.toarray()
    """
    if TableData.of(X).is_sparse:
        raise TypeError(f"{who} does not accept sparse tables ({reason}); {remedy}")


def integer_table(X: Any, name: str, dtype: type, max_value: int | None = None) -> Any:
    """A table of non-negative integers at most ``max_value``: a dense integer array, or for
    a sparse table a canonical ``csr_array`` of ``dtype`` (no copy when it already is one)."""
    data = TableData.of(X)
    if data.is_sparse:
        return _sparse_integer_table(data.table, name, dtype, max_value)
    array = _dense_integer_table(data.table, name)
    if max_value is not None and array.max() > max_value:
        raise ValueError(f"{name} must hold {_range_text(max_value)} values, got max "
                         f"{int(array.max())}")
    return array


def _range_text(max_value: int) -> str:
    return "0/1" if max_value == 1 else f"0..{max_value}"


def _dense_integer_table(X: Any, name: str) -> np.ndarray:
    array = np.asarray(X)
    if array.dtype.kind == "b":
        array = array.astype(np.int64)
    if array.dtype.kind == "f":
        real = real_table(array, name)
        if np.any(real != np.round(real)):
            raise ValueError(f"{name} must hold integers, got non-integer values")
        array = real.astype(np.int64)
    if array.dtype.kind not in "iu":
        raise TypeError(f"{name} must hold integers, got dtype {array.dtype}")
    if array.ndim != 2 or array.size == 0:
        raise ValueError(f"{name} must be a non-empty 2-D array, got shape {array.shape}")
    if array.min() < 0:
        raise ValueError(f"{name} must be non-negative, got min {int(array.min())}")
    return array


def _sparse_integer_table(X: sp.csr_array, name: str, dtype: type,
                          max_value: int | None) -> sp.csr_array:
    if X.ndim != 2 or X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"{name} must be a non-empty 2-D table, got shape {X.shape}")
    table = X
    if not table.has_canonical_format:
        table = table.copy()
        table.sum_duplicates()
    data = table.data
    if data.dtype.kind == "b":
        data = data.astype(np.int64)
    if data.dtype.kind == "f":
        if not np.all(np.isfinite(data)) or np.any(data != np.round(data)):
            raise ValueError(f"{name} must hold finite integers, got non-integer values")
    elif data.dtype.kind not in "iu":
        raise TypeError(f"{name} must hold integers, got dtype {data.dtype}")
    if data.size and data.min() < 0:
        raise ValueError(f"{name} must be non-negative, got min {int(data.min())}")
    if max_value is not None and data.size and data.max() > max_value:
        raise ValueError(f"{name} must hold {_range_text(max_value)} values, got max "
                         f"{int(data.max())}")
    if table.data.dtype != dtype or not np.all(data):
        table = sp.csr_array(
            (data.astype(dtype), table.indices.copy(), table.indptr.copy()), shape=table.shape
        )
        table.eliminate_zeros()
    return table
