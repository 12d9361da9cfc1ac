"""A table's storage, decided once: a dense array or a sparse CSR array.

Tables reach the package as NumPy arrays or as ``scipy.sparse`` matrices (Bernoulli and
Poisson tables drawn with a ``density``, or a user's large sparse table). :meth:`TableData.of`
looks at the storage once, at the boundary, and returns a :class:`DenseTableData` or a
:class:`SparseTableData`; everything that needs to know the storage (the inference engine's
statistics, the families' statistics and base measures, the baselines, the pictures, the
writer) asks the adapter instead of testing the table again. Both offer the same operations:

- what is held (:attr:`~TableData.shape`, :meth:`~TableData.stored_values`,
  :attr:`~TableData.n_stored`, :meth:`~TableData.storage_text`);
- sums (:meth:`~TableData.row_totals`, :meth:`~TableData.col_totals`, and
  :meth:`~TableData.group_sums` over groups of rows and columns: block sums, the
  block averages of pictures), a sparse table never densified;
- conversions (:meth:`~TableData.densify` for small tables, :meth:`~TableData.to_csr`).

The zeros of a sparse table are implicit: an operation that needs them says how
they count (sums: not at all; families: through their exposures and a base
measure that vanishes at zero).

**Missing entries** are a property of the table data too. A table may carry a mask of its
missing entries: a dense table an ``observed`` boolean array (one byte per entry), a sparse
table the set of its missing entries as a CSR array of ones (:attr:`~TableData.missing`: the
block sums must stay sparse, so the missing entries are held, never the observed ones). Either
way the table itself holds 0 under the mask, so that sums over the table are sums over its
observed entries; :meth:`~TableData.missing_indicator`, :meth:`~TableData.observed_counts` and
the per-row and per-column counts say how many entries are seen. :meth:`TableData.incomplete`
reads the conventions of the boundary (NaN at the missing entries of a float array, a NumPy
masked array, an explicit ``observed`` mask, explicit NaN values of a sparse table);
:meth:`~TableData.with_nan` and :meth:`~TableData.masked` give the table back in them.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from scipy import sparse as sp

__all__ = ["DenseTableData", "SparseTableData", "TableData"]

#: Bytes of the float64 band of a dense table converted at once by
#: :meth:`DenseTableData.group_sums`.
_BAND_BYTES = 4 * 2**20


class TableData:
    """How the package holds a table: its storage (dense, or ``scipy.sparse`` CSR) decided once
    by :meth:`TableData.of`, and its missing entries, read once by :meth:`TableData.incomplete`.

    Attributes
    ----------
    table : ndarray or scipy.sparse.csr_array
        The table, 0 at its missing entries (the mask aside).

    Examples
    --------
    >>> data = TableData.incomplete([[1.0, np.nan], [0.5, 2.0]])   # NaN: missing
    >>> data.is_sparse, data.shape, data.n_missing
    (False, (2, 2), 1)
    """

    #: Whether the table is held as a ``scipy.sparse`` CSR array.
    is_sparse: ClassVar[bool] = False

    def __init__(self, table: Any) -> None:
        self.table = table

    @staticmethod
    def of(X: Any) -> TableData:
        """The adapter of ``X``: sparse for a ``scipy.sparse`` matrix or array, dense otherwise
        (a NumPy masked array: dense, its masked entries missing; NaN values are not read
        as missing here, see :meth:`incomplete`).

        Examples
        --------
        >>> import scipy.sparse as sp
        >>> TableData.of([[0, 1], [1, 0]]).is_sparse, TableData.of(sp.eye(2)).is_sparse
        (False, True)
        """
        if isinstance(X, TableData):
            return X
        if isinstance(X, np.ma.MaskedArray):
            return _from_masked(X)
        return SparseTableData(X) if sp.issparse(X) else DenseTableData(np.asarray(X))

    @staticmethod
    def incomplete(X: Any, observed: Any = None, *, name: str = "X") -> TableData:
        """The adapter of a table that may have missing entries, in any of the boundary's
        conventions: NaN at the missing entries of a float array (scikit-learn's and
        pandas' convention), a NumPy masked array, explicit NaN values of a sparse table,
        or an ``observed`` mask (booleans or 0/1 of the table's shape, 1: observed).

        The table of the result holds 0 at the missing entries (its dtype is kept, a float
        one for NaN); its mask is None when nothing says an entry is missing.

        Raises
        ------
        ValueError
            For a mask of another shape, or NaN at an entry the mask says is observed.

        Examples
        --------
        >>> data = TableData.incomplete([[1.0, float("nan")], [0.5, 2.0]])
        >>> data.table.tolist(), data.observed.tolist(), data.n_missing
        ([[1.0, 0.0], [0.5, 2.0]], [[True, False], [True, True]], 1)
        """
        from lbm_bench._validation import check_mask

        if isinstance(X, TableData):
            data = X
        elif isinstance(X, np.ma.MaskedArray):
            data = _from_masked(X)
        elif sp.issparse(X):
            data = _sparse_from_nan(sp.csr_array(X))
        else:
            array = np.asarray(X)
            data = _dense_from_nan(array) if array.dtype.kind == "f" else DenseTableData(array)
        if observed is None:
            return data
        mask = check_mask("observed", observed, data.shape)
        if data.is_sparse:
            return data.with_missing_csr(_union(data.missing, sp.csr_array(~mask, dtype=np.uint8)))
        if data.observed is not None and np.any(data.observed < mask):
            raise ValueError(f"{name} holds NaN (or masked values) at entries that observed says "
                             "are observed")
        table = data.table
        if not np.all(mask):
            table = np.where(mask, table, np.zeros(
                (), dtype=table.dtype)) if np.any(table[~mask]) else table
        return DenseTableData(table, mask)

    @property
    def shape(self) -> tuple[int, int]:
        """``(n_rows, n_cols)``."""
        return tuple(self.table.shape)  # type: ignore[return-value]

    @property
    def n_rows(self) -> int:
        return int(self.table.shape[0])

    @property
    def n_cols(self) -> int:
        return int(self.table.shape[1])

    @property
    def n_stored(self) -> int:  # pragma: no cover - defined by the storages
        """Entries held in memory (all of them for a dense table, the non-zeros otherwise)."""
        raise NotImplementedError

    def stored_values(self) -> np.ndarray:  # pragma: no cover - defined by the storages
        """The values held, 1-D (every entry of a dense table, the non-zeros of a sparse one)."""
        raise NotImplementedError

    def observed_values(self, *, implicit_zero: bool = False) -> np.ndarray:  # pragma: no cover
        """The values of the observed entries that the table holds, 1-D: every observed entry of
        a dense table, the stored values of a sparse one; with ``implicit_zero``, one 0 after
        them when a sparse table has observed entries it does not store (its zeros; a copy)."""
        raise NotImplementedError

    def row_totals(self) -> np.ndarray:
        """Sum of each row, float64 of shape (n_rows,)."""
        return np.asarray(self.table.sum(axis=1), dtype=np.float64).ravel()

    def col_totals(self) -> np.ndarray:
        """Sum of each column, float64 of shape (n_cols,)."""
        return np.asarray(self.table.sum(axis=0), dtype=np.float64).ravel()

    def group_sums(self, left: sp.csr_array, right: sp.csr_array) -> np.ndarray:  # pragma: no cover
        """``left @ X @ right.T`` as a dense float64 array of shape (a, b): the sums of the
        entries over groups of rows (0/1 matrix ``left`` of shape (a, n_rows)) and of
        columns (``right`` of shape (b, n_cols))."""
        raise NotImplementedError

    def densify(self) -> np.ndarray:  # pragma: no cover - defined by the storages
        """The table as a dense array (for small tables)."""
        raise NotImplementedError

    def to_csr(self,
               dtype: Any = None) -> sp.csr_array:  # pragma: no cover - defined by the storages
        """The table as a CSR array (optionally of ``dtype``)."""
        raise NotImplementedError

    def storage_text(self) -> str:
        """How the table is stored, for summaries: empty for a dense table."""
        return ""

    # -- missing entries ---------------------------------------------------------------
    @property
    def has_missing(self) -> bool:
        """Whether the table carries a mask of missing entries (possibly with none missing)."""
        raise NotImplementedError  # pragma: no cover - defined by the storages

    @property
    def n_missing(self) -> int:  # pragma: no cover - defined by the storages
        """Number of missing entries (0 without a mask)."""
        raise NotImplementedError

    @property
    def missing_fraction(self) -> float:
        """Fraction of the entries that are missing."""
        n, d = self.shape
        return self.n_missing / (n * d)

    def missing_indicator(self, dtype: Any = np.float64) -> sp.csr_array:  # pragma: no cover
        """The missing entries as a CSR array of ones (empty without a mask)."""
        raise NotImplementedError

    def missing_row_counts(self) -> np.ndarray:  # pragma: no cover - defined by the storages
        """Missing entries of every row, int64 of shape (n_rows,)."""
        raise NotImplementedError

    def missing_col_counts(self) -> np.ndarray:  # pragma: no cover - defined by the storages
        """Missing entries of every column, int64 of shape (n_cols,)."""
        raise NotImplementedError

    def observed_counts(self, left: sp.csr_array, right: sp.csr_array) -> np.ndarray:
        """Observed entries over groups of rows and columns (as :meth:`group_sums`): the
        block sizes ``left @ 1 @ right.T`` less the missing entries."""
        sizes = np.outer(
            np.asarray(left.sum(axis=1)).ravel(),
            np.asarray(right.sum(axis=1)).ravel())
        if not self.has_missing or self.n_missing == 0:
            return sizes
        missing = left @ (self.missing_indicator() @ right.T)
        return sizes - (missing.toarray() if hasattr(missing, "toarray") else np.asarray(missing))

    def with_nan(self) -> Any:  # pragma: no cover - defined by the storages
        """The table with NaN at its missing entries: a float64 array (dense), or a float64 CSR
        array holding the missing entries as explicit NaN values (sparse)."""
        raise NotImplementedError

    def as_float(self) -> TableData:  # pragma: no cover - defined by the storages
        """The table with float64 values, in the same storage."""
        raise NotImplementedError

    def transposed(self) -> TableData:  # pragma: no cover - defined by the storages
        """The transposed table, in the same storage (CSR for a sparse one)."""
        raise NotImplementedError

    def row_squared_norms(self) -> np.ndarray:  # pragma: no cover - defined by the storages
        """Squared Euclidean norm of every row, float64 of shape (n_rows,)."""
        raise NotImplementedError

    def dense_row(self, index: int) -> np.ndarray:  # pragma: no cover - defined by the storages
        """Row ``index`` as a dense 1-D array."""
        raise NotImplementedError


class DenseTableData(TableData):
    """A table held as a dense NumPy array, with its ``observed`` mask (a boolean array of
    the table's shape, or None: every entry observed)."""

    is_sparse = False

    def __init__(self, table: Any, observed: np.ndarray | None = None) -> None:
        super().__init__(table)
        self.observed = observed

    @property
    def has_missing(self) -> bool:
        return self.observed is not None

    @property
    def n_missing(self) -> int:
        return 0 if self.observed is None else int(self.observed.size -
                                                   np.count_nonzero(self.observed))

    def observed_mask(self) -> np.ndarray:
        """The observed mask (all True without one), bool of the table's shape."""
        return np.ones(self.shape, dtype=bool) if self.observed is None else self.observed

    def missing_indicator(self, dtype: Any = np.float64) -> sp.csr_array:
        if self.observed is None:
            return sp.csr_array(self.shape, dtype=dtype)
        return sp.csr_array(~self.observed, dtype=dtype)

    def missing_row_counts(self) -> np.ndarray:
        if self.observed is None:
            return np.zeros(self.n_rows, dtype=np.int64)
        return self.n_cols - np.count_nonzero(self.observed, axis=1).astype(np.int64)

    def missing_col_counts(self) -> np.ndarray:
        if self.observed is None:
            return np.zeros(self.n_cols, dtype=np.int64)
        return self.n_rows - np.count_nonzero(self.observed, axis=0).astype(np.int64)

    def observed_counts(self, left: sp.csr_array, right: sp.csr_array) -> np.ndarray:
        if self.observed is None:
            return super().observed_counts(left, right)
        return DenseTableData(self.observed.view(np.uint8)).group_sums(left, right)

    def with_nan(self) -> np.ndarray:
        values = np.array(self.table, dtype=np.float64)
        if self.observed is not None:
            values[~self.observed] = np.nan
        return values

    def masked(self) -> np.ma.MaskedArray:
        """The table as a NumPy masked array of its dtype (masked: missing)."""
        mask = np.zeros(self.shape, dtype=bool) if self.observed is None else ~self.observed
        return np.ma.MaskedArray(self.table, mask=mask)

    def with_table(self, table: Any) -> DenseTableData:
        """Another table of the same shape with this one's mask."""
        return DenseTableData(table, self.observed)

    @property
    def n_stored(self) -> int:
        return int(self.table.size)

    def stored_values(self) -> np.ndarray:
        return self.table.ravel()

    def observed_values(self, *, implicit_zero: bool = False) -> np.ndarray:
        return self.table.ravel() if self.observed is None else self.table[self.observed]

    def group_sums(self, left: sp.csr_array, right: sp.csr_array) -> np.ndarray:
        """Converted to float64 by bands of columns of at most 4 MiB, so the memory
        beyond the table is bounded whatever its size."""
        data = self.table
        n_rows, n_cols = data.shape
        step = max(1, _BAND_BYTES // (8 * max(n_rows, 1)))
        right_t = sp.csr_array(right.T)
        out = np.zeros((left.shape[0], right.shape[0]))
        for start in range(0, n_cols, step):
            band = np.asarray(data[:, start : start + step], dtype=np.float64)
            out += np.asarray(right_t[start : start + step].T @ (left @ band).T).T
        return out

    def densify(self) -> np.ndarray:
        return self.table

    def to_csr(self, dtype: Any = None) -> sp.csr_array:
        return sp.csr_array(self.table, dtype=dtype)

    def as_float(self) -> DenseTableData:
        return DenseTableData(np.asarray(self.table, dtype=np.float64), self.observed)

    def transposed(self) -> DenseTableData:
        return DenseTableData(self.table.T, None if self.observed is None else self.observed.T)

    def row_squared_norms(self) -> np.ndarray:
        return np.einsum("nd,nd->n", self.table, self.table)

    def dense_row(self, index: int) -> np.ndarray:
        return self.table[index]


class SparseTableData(TableData):
    """A table held as a ``scipy.sparse`` CSR array (converted once from any sparse format),
    with its ``missing`` entries as a canonical CSR array of ones (uint8), or None."""

    is_sparse = True

    def __init__(self, table: Any, missing: sp.csr_array | None = None) -> None:
        super().__init__(table if isinstance(table, sp.csr_array) else sp.csr_array(table))
        self.missing = missing

    @property
    def has_missing(self) -> bool:
        return self.missing is not None

    @property
    def n_missing(self) -> int:
        return 0 if self.missing is None else int(self.missing.nnz)

    def missing_indicator(self, dtype: Any = np.float64) -> sp.csr_array:
        if self.missing is None:
            return sp.csr_array(self.shape, dtype=dtype)
        return sp.csr_array(self.missing, dtype=dtype)

    def missing_row_counts(self) -> np.ndarray:
        if self.missing is None:
            return np.zeros(self.n_rows, dtype=np.int64)
        return np.diff(self.missing.indptr).astype(np.int64)

    def missing_col_counts(self) -> np.ndarray:
        if self.missing is None:
            return np.zeros(self.n_cols, dtype=np.int64)
        return np.bincount(self.missing.indices, minlength=self.n_cols).astype(np.int64)

    def with_nan(self) -> sp.csr_array:
        values = sp.csr_array(self.table, dtype=np.float64)
        if self.missing is None or self.missing.nnz == 0:
            return values
        nan = sp.csr_array(
            (np.full(self.missing.nnz, np.nan), self.missing.indices, self.missing.indptr),
            shape=self.shape)
        # disjoint supports: every missing entry becomes an explicit NaN
        out = sp.csr_array(values + nan)
        out.sort_indices()
        return out

    def with_table(self, table: Any) -> SparseTableData:
        """Another table of the same shape with this one's missing entries."""
        return SparseTableData(table, self.missing)

    def with_missing_csr(self, missing: sp.csr_array | None) -> SparseTableData:
        """This table with the missing entries ``missing`` (a CSR array of ones), its stored
        values there removed."""
        if missing is None:
            return SparseTableData(self.table)
        missing = _canonical_ones(missing)
        table = self.table
        if missing.nnz and table.nnz:
            table = sp.csr_array(table - table.multiply(missing.astype(bool)))
            table.eliminate_zeros()
        return SparseTableData(table, missing)

    @property
    def n_stored(self) -> int:
        return int(self.table.nnz)

    def stored_values(self) -> np.ndarray:
        return self.table.data

    def observed_values(self, *, implicit_zero: bool = False) -> np.ndarray:
        n, d = self.shape
        if implicit_zero and n * d - self.table.nnz - self.n_missing > 0:
            return np.concatenate([self.table.data, [0]])
        return self.table.data

    def group_sums(self, left: sp.csr_array, right: sp.csr_array) -> np.ndarray:
        """Only the non-zeros become float64."""
        out = left @ (sp.csr_array(self.table, dtype=np.float64) @ right.T)
        return out.toarray() if hasattr(out, "toarray") else np.asarray(out)

    def densify(self) -> np.ndarray:
        return self.table.toarray()

    def to_csr(self, dtype: Any = None) -> sp.csr_array:
        return self.table if dtype is None else sp.csr_array(self.table, dtype=dtype)

    def as_float(self) -> SparseTableData:
        return SparseTableData(sp.csr_array(self.table, dtype=np.float64), self.missing)

    def transposed(self) -> SparseTableData:
        missing = None if self.missing is None else _canonical_ones(sp.csr_array(self.missing.T))
        return SparseTableData(sp.csr_array(self.table.T), missing)

    def row_squared_norms(self) -> np.ndarray:
        return np.asarray(self.table.multiply(self.table).sum(axis=1), dtype=np.float64).ravel()

    def dense_row(self, index: int) -> np.ndarray:
        return self.table[[index]].toarray()[0]

    def storage_text(self) -> str:
        n, d = self.shape
        share = self.table.nnz / (n * d)
        if self.table.nnz >= 0.01 * n * d:
            return f"sparse ({share:.2%} non-zero)"
        return f"sparse ({share:.2g} non-zero)"


def _canonical_ones(matrix: Any) -> sp.csr_array:
    """A CSR array of ones (uint8) with the support of ``matrix``'s non-zeros, canonical."""
    matrix = sp.csr_array(matrix)
    matrix.sum_duplicates()
    matrix.eliminate_zeros()
    ones = sp.csr_array(
        (np.ones(matrix.nnz, dtype=np.uint8), matrix.indices.copy(), matrix.indptr.copy()),
        shape=matrix.shape)
    ones.has_canonical_format = True
    return ones


def _union(a: sp.csr_array | None, b: sp.csr_array) -> sp.csr_array:
    return b if a is None else sp.csr_array(a.astype(bool) + b.astype(bool))


def _from_masked(X: np.ma.MaskedArray) -> DenseTableData:
    """A masked array's data with 0 under its mask, and its mask as missing entries."""
    mask = np.ma.getmaskarray(X)
    data = np.ma.getdata(X)
    if not mask.any():
        return DenseTableData(np.asarray(data), np.ones(data.shape, dtype=bool))
    return DenseTableData(np.where(mask, np.zeros((), dtype=data.dtype), data), ~mask)


def _dense_from_nan(array: np.ndarray) -> DenseTableData:
    """A float array with NaN at its missing entries: 0 there and the mask (None without NaN)."""
    missing = np.isnan(array)
    if not missing.any():
        return DenseTableData(array)
    return DenseTableData(np.where(missing, 0.0, array), ~missing)


def _sparse_from_nan(table: sp.csr_array) -> SparseTableData:
    """A sparse table whose explicit NaN values are its missing entries (None without NaN)."""
    if table.dtype.kind != "f" or not np.isnan(table.data).any():
        return SparseTableData(table)
    table = table.copy()
    table.sum_duplicates()
    nan = np.isnan(table.data)
    missing = sp.csr_array((nan.astype(np.uint8), table.indices.copy(), table.indptr.copy()),
                           shape=table.shape)
    table.data[nan] = 0.0
    table.eliminate_zeros()
    return SparseTableData(table, _canonical_ones(missing))
