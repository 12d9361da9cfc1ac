"""Input checks shared by the built-in algorithms, and the family inferred from a table.

Family inference (``kind=None``, and the built-ins ``"cem"`` and ``"vem"``) follows
the values, not the dtype, see :func:`infer_kind`: a table whose observed
values are 0 and 1 is Bernoulli, one of non-negative whole numbers Poisson, in any
dtype (AnnData stores a binary matrix as float32, a CSV has no dtype); any other is
Gaussian. A real-valued table that happens to hold whole numbers is fitted as reals
with ``kind="gaussian"``.

**Missing entries.** Tables with missing entries reach the algorithms as float
arrays with NaN there (scikit-learn's and pandas' convention; what
:func:`lbm_bench.load_table` returns), as NumPy masked arrays (their dtype kept),
or as sparse tables with explicit NaN values. :func:`check_incomplete_inputs`
reads any of them into a :class:`~lbm_bench.models.data.TableData` with its mask;
:func:`imputed_table` fills the missing entries with their column's mean (the
baselines that need a complete table say so). :func:`infer_kind` infers the
family of a table with missing entries from its observed values.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from lbm_bench._validation import check_count
from lbm_bench.models.data import TableData
from lbm_bench.models.family import Family
from lbm_bench.models.registry import FAMILIES

__all__ = [
    "check_cluster_counts",
    "check_incomplete_inputs",
    "check_inputs",
    "check_observed_table",
    "few_values",
    "check_numeric_table",
    "imputed_table",
    "infer_family",
    "infer_kind",
    "reject_missing",
]


def check_numeric_table(X: Any, name: str = "X") -> np.ndarray | sp.csr_array:
    """A non-empty, finite, 2-D array of booleans, integers or reals (dtype kept).

    A scipy.sparse table is returned as a :class:`scipy.sparse.csr_array`.
    """
    data = TableData.of(X)
    if data.is_sparse:
        return _check_sparse_table(data.table, name)
    array = data.table
    if array.dtype.kind not in "biuf":
        raise TypeError(f"{name} must be a 2-D array of numbers, got dtype {array.dtype}")
    if array.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array, got shape {array.shape}")
    if array.size == 0:
        raise ValueError(f"{name} must not be empty, got shape {array.shape}")
    if array.dtype.kind == "f" and not np.all(np.isfinite(array)):
        raise ValueError(f"{name} must be finite, got NaN or infinite values")
    return array


def _check_sparse_table(X: Any, name: str) -> sp.csr_array:
    """A non-empty, finite, 2-D scipy.sparse table as CSR (dtype kept)."""
    table = sp.csr_array(X)
    if table.dtype.kind not in "biuf":
        raise TypeError(f"{name} must be a sparse table of numbers, got dtype {table.dtype}")
    if len(table.shape) != 2 or 0 in table.shape:
        raise ValueError(f"{name} must be a non-empty 2-D table, got shape {table.shape}")
    if table.dtype.kind == "f" and not np.all(np.isfinite(table.data)):
        raise ValueError(f"{name} must be finite, got NaN or infinite values")
    return table


def check_cluster_counts(
    shape: tuple[int, int], n_row_clusters: Any, n_col_clusters: Any
) -> tuple[int, int]:
    """``(g, m)``: positive integers, at most the table's numbers of rows and columns ``shape``."""
    g = check_count("n_row_clusters", n_row_clusters)
    m = check_count("n_col_clusters", n_col_clusters)
    if g > shape[0]:
        raise ValueError(f"n_row_clusters must be <= the number of rows ({shape[0]}), got {g}")
    if m > shape[1]:
        raise ValueError(f"n_col_clusters must be <= the number of columns ({shape[1]}), got {m}")
    return g, m


def check_inputs(X: Any, n_row_clusters: Any, n_col_clusters: Any) -> tuple[np.ndarray, int, int]:
    table = check_numeric_table(X)
    g, m = check_cluster_counts(table.shape, n_row_clusters, n_col_clusters)
    return table, g, m


def check_incomplete_inputs(X: Any, n_row_clusters: Any,
                            n_col_clusters: Any) -> tuple[TableData, int, int]:
    """The table with its missing entries (NaN, a masked array, explicit NaN of a sparse
    table) as a :class:`~lbm_bench.models.data.TableData` holding 0 there, checked as
    :func:`check_inputs` checks a complete one."""
    data = check_observed_table(X)
    g, m = check_cluster_counts(data.shape, n_row_clusters, n_col_clusters)
    return data, g, m


def check_observed_table(X: Any, name: str = "X") -> TableData:
    """The table with its missing entries kept aside (:meth:`TableData.incomplete`), its values
    checked (:func:`check_numeric_table`), and at least one entry observed: a table whose every
    entry is missing holds nothing to cluster (ValueError)."""
    data = TableData.incomplete(X, name=name)
    table = check_numeric_table(data.table, name)
    if data.n_missing and data.n_missing >= table.shape[0] * table.shape[1]:
        raise ValueError(f"{name} has no observed entry (all {data.n_missing} entries are "
                         "missing): "
                         "there is nothing to cluster")
    return data.with_table(table)


def reject_missing(X: Any, algorithm: str) -> None:
    """Refuse a table with missing entries in one line naming ``algorithm`` (ValueError)."""
    if TableData.incomplete(X).n_missing:
        raise ValueError(
            f"{algorithm} does not fit tables with missing entries (it has no mask); use cem or "
            "vem, which fit the observed entries, or double-kmeans, which imputes column means"
        )


def imputed_table(data: TableData) -> Any:
    """The table as float64 with each missing entry replaced by the mean of its column's
    observed entries (the table's observed mean for a column with none); a sparse table
    stays sparse (its missing set is sparse). A complete table is returned as float64."""
    values = data.as_float()
    if not data.has_missing or data.n_missing == 0:
        return values.table
    n, d = data.shape
    observed = n - data.missing_col_counts()
    sums = values.col_totals()
    overall = float(sums.sum() / max(observed.sum(), 1))
    means = np.where(observed > 0, sums / np.maximum(observed, 1), overall)
    if data.is_sparse:
        missing = data.missing_indicator()
        fill = sp.csr_array((means[missing.indices], missing.indices, missing.indptr),
                            shape=missing.shape)
        return sp.csr_array(values.table + fill)
    table = np.array(values.table)
    where = ~data.observed
    table[where] = np.broadcast_to(means, table.shape)[where]
    return table


def infer_kind(X: ArrayLike) -> str:
    """Infer the latent block model family of a table from its values.

    The values decide, whatever the dtype: ``"bernoulli"`` when the observed values lie
    in {0, 1}, ``"poisson"`` when they are non-negative whole numbers (below 2^53), and
    ``"gaussian"`` otherwise (a real-valued table of whole numbers is Gaussian only with
    ``kind="gaussian"``). A table with missing entries is inferred from its observed
    entries.

    Parameters
    ----------
    X : array-like or scipy.sparse matrix of shape (n_rows, n_cols)

    Returns
    -------
    str
        ``"gaussian"``, ``"poisson"`` or ``"bernoulli"``.

    Examples
    --------
    >>> infer_kind([[0, 1], [1, 1]]), infer_kind([[0, 3], [2, 1]]), infer_kind([[0.5, 3.0]])
    ('bernoulli', 'poisson', 'gaussian')
    >>> infer_kind([[0.0, 1.0], [1.0, 1.0]]), infer_kind([[0.0, float("nan")], [2.0, 1.0]])
    ('bernoulli', 'poisson')
    """
    data = TableData.incomplete(X)
    return infer_family(data.with_table(check_numeric_table(data.table))).kind


def infer_family(data: TableData) -> Family:
    """The family :func:`infer_kind` infers, of a table read already: a
    :class:`~lbm_bench.models.data.TableData` whose table :func:`check_numeric_table` checked
    (the boundary of the EM baselines reads its input once, then asks this)."""
    table = data.table
    low = high = None
    dtype_kind = table.dtype.kind
    if dtype_kind == "f":  # the values decide: whole numbers are read as integers
        values = data.observed_values(implicit_zero=True)
        if values.size and np.all(np.abs(values) < 2.0**53) and np.all(values == np.round(values)):
            dtype_kind = "i"
    if dtype_kind != "f":
        values = data.observed_values(implicit_zero=True) if data.n_missing else None
        if values is None:
            low, high = int(table.min()), int(table.max())
        else:
            low, high = (int(values.min()), int(values.max())) if values.size else (0, 0)
    candidates = [family for family in FAMILIES if family.estimation.inference_order is not None]
    ordered = sorted(candidates, key=lambda family: family.estimation.inference_order)
    return next(family for family in ordered if family.estimation.describes(dtype_kind, low, high))


def few_values(data: TableData, most: int = 2) -> list[float] | None:
    """The distinct values of the observed entries, sorted, when there are at most ``most``
    of them (a 0/1 table: ``[0.0, 1.0]``); None otherwise. Stops at the first ``most + 1``."""
    values = data.observed_values(implicit_zero=True).ravel()
    found: list[float] = []
    while values.size and len(found) <= most:
        found.append(float(values[0]))
        values = values[values != values[0]]
    return sorted(found) if len(found) <= most else None
