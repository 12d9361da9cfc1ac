"""A table's storage, decided once: a dense array or a sparse CSR array.

Tables reach the package as NumPy arrays or as ``scipy.sparse`` matrices
(Bernoulli and Poisson tables drawn with a ``density``, or a user's large sparse
table). :meth:`TableData.of` looks at the storage once, at the boundary, and
returns a :class:`DenseTableData` or a :class:`SparseTableData`; everything that
needs to know the storage (the inference engine's statistics, the families'
statistics and base measures, the baselines, the pictures, the writer) asks the
adapter instead of testing the table again. Both offer the same operations:

- what is held (:attr:`~TableData.shape`, :meth:`~TableData.stored_values`,
  :attr:`~TableData.n_stored`, :meth:`~TableData.storage_text`);
- sums (:meth:`~TableData.row_totals`, :meth:`~TableData.col_totals`, and
  :meth:`~TableData.group_sums` over groups of rows and columns: block sums, the
  block averages of pictures), a sparse table never densified;
- conversions (:meth:`~TableData.densify` for small tables, :meth:`~TableData.to_csr`).

The zeros of a sparse table are implicit: an operation that needs them says how
they count (sums: not at all; families: through their exposures and a base
measure that vanishes at zero).
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from scipy import sparse as sp

__all__ = ["DenseTableData", "SparseTableData", "TableData"]

#: Bytes of the float64 band of a dense table converted at once by :meth:`DenseTableData.group_sums`.
_BAND_BYTES = 4 * 2**20


class TableData:
    """A table with its storage (use :meth:`of`)."""

    #: Whether the table is held as a ``scipy.sparse`` CSR array.
    is_sparse: ClassVar[bool] = False

    def __init__(self, table: Any) -> None:
        self.table = table

    @staticmethod
    def of(X: Any) -> TableData:
        """The adapter of ``X``: sparse for a ``scipy.sparse`` matrix or array, dense otherwise.

        Examples
        --------
        >>> import scipy.sparse as sp
        >>> TableData.of([[0, 1], [1, 0]]).is_sparse, TableData.of(sp.eye(2)).is_sparse
        (False, True)
        """
        if isinstance(X, TableData):
            return X
        return SparseTableData(X) if sp.issparse(X) else DenseTableData(np.asarray(X))

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

    def to_csr(self, dtype: Any = None) -> sp.csr_array:  # pragma: no cover - defined by the storages
        """The table as a CSR array (optionally of ``dtype``)."""
        raise NotImplementedError

    def storage_text(self) -> str:
        """How the table is stored, for summaries: empty for a dense table."""
        return ""

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
    """A table held as a dense NumPy array."""

    is_sparse = False

    @property
    def n_stored(self) -> int:
        return int(self.table.size)

    def stored_values(self) -> np.ndarray:
        return self.table.ravel()

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
        return DenseTableData(np.asarray(self.table, dtype=np.float64))

    def transposed(self) -> DenseTableData:
        return DenseTableData(self.table.T)

    def row_squared_norms(self) -> np.ndarray:
        return np.einsum("nd,nd->n", self.table, self.table)

    def dense_row(self, index: int) -> np.ndarray:
        return self.table[index]


class SparseTableData(TableData):
    """A table held as a ``scipy.sparse`` CSR array (converted once from any sparse format)."""

    is_sparse = True

    def __init__(self, table: Any) -> None:
        super().__init__(table if isinstance(table, sp.csr_array) else sp.csr_array(table))

    @property
    def n_stored(self) -> int:
        return int(self.table.nnz)

    def stored_values(self) -> np.ndarray:
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
        return SparseTableData(sp.csr_array(self.table, dtype=np.float64))

    def transposed(self) -> SparseTableData:
        return SparseTableData(sp.csr_array(self.table.T))

    def row_squared_norms(self) -> np.ndarray:
        return np.asarray(self.table.multiply(self.table).sum(axis=1), dtype=np.float64).ravel()

    def dense_row(self, index: int) -> np.ndarray:
        return self.table[[index]].toarray()[0]

    def storage_text(self) -> str:
        n, d = self.shape
        return f"sparse ({self.table.nnz / (n * d):.2%} non-zero)" if self.table.nnz >= 0.01 * n * d else (
            f"sparse ({self.table.nnz / (n * d):.2g} non-zero)"
        )
