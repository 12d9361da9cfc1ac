"""A user's own table, read from a file: :func:`read_user_table` and :class:`UserTable`.

The tables that researchers co-cluster come as NumPy arrays (``.npy``), SciPy sparse
arrays (``.npz``), Matrix Market files (``.mtx``, the usual format of document-term and
single-cell count matrices), delimited text with names (``.csv``, ``.tsv``: see
:mod:`lbm_bench.storage.delimited`), AnnData files (``.h5ad``: its ``X``, dense or
CSR/CSC, read with h5py after the AnnData on-disk specification, and the ``obs`` and
``var`` indexes as names), or this package's own table files (``.h5``).
:func:`read_user_table` reads any of them into one :class:`UserTable`: the table as
:class:`~lbm_bench.models.data.TableData` (dense, or CSR: a sparse file stays sparse,
never densified), its missing entries (NaN or empty cells; explicit NaN values of a
sparse file), the row and column names found, the file's SHA-256, its format and name.

What is checked, each refusal one line that starts with the file name:

- the file: a known extension, not empty, not damaged (a truncated ``.npy``, a ``.npz``
  that is not a zip of arrays, a Matrix Market file whose entries fall outside its size,
  an ``.h5ad`` without ``X`` or whose sparse ``X`` is inconsistent), a 2-D table of
  numbers (no Python objects: nothing is ever unpickled), every line of a text file
  as long as the others and every cell a number or a missing marker;
- its size, before reading: the peak memory of reading it (estimated from the file's
  header, or its line count) against the memory available (``MemAvailable``) or
  ``max_memory``, refused up front with the estimate, as the generation's memory guard
  does (:mod:`lbm_bench.protocol.memory`);
- its content: at least 2 rows and 2 columns, an observed entry, no infinite value, and
  not every observed entry the same value (a table of zeros holds nothing to co-cluster);
- with ``kind``: the values that family's blocks can hold (:func:`check_user_values`,
  which asks the family's own ``check_table``: non-negative integers for counts, 0/1 for
  binary tables...), the first offending entry located by row and column.

**Matrix Market pattern files** (positions without values) are refused unless ``kind``
names a family of 0/1 tables (one that describes 0/1 tables and not a table holding a 2),
which reads them as binary (1 at the listed positions, 0 elsewhere): a pattern says where
entries are, not what they are worth, so reading its implied ones as counts or real
values would fit a model to values nobody measured. Text files have no dtype: their
values decide (all whole numbers: int64, else float64); binary formats keep theirs.
"""


from __future__ import annotations

import hashlib
import os
import warnings
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from lbm_bench._validation import check_choice, one_line
from lbm_bench.models.data import DenseTableData, TableData
from lbm_bench.models.family import Family
from lbm_bench.models.registry import as_family
from lbm_bench.storage.delimited import tristate
from lbm_bench.storage.matrix_market import LARGEST_INTEGER
from lbm_bench.storage.user_formats import (
    PATTERN,
    USER_FORMATS,
    ReadGuard,
    ReadNote,
    UserTableError,
    file_stem,
    format_of,
    pattern_kinds,
    read_format,
    reads_patterns,
)

__all__ = [
    "LARGEST_MAGNITUDE", "PATTERN", "USER_FORMATS", "ReadNote", "UserTable", "UserTableError",
    "check_user_values", "read_user_table", "user_table"
]


@dataclass(frozen=True)
class UserTable:
    """A user's table and where it came from.

    Attributes
    ----------
    data : TableData
        The table, dense or CSR, with its missing entries (0 in the table, the mask
        aside): what :func:`~lbm_bench.algorithms.select_lbm`, ``fit_lbm`` and
        ``infer_kind`` take as it is.
    name : str
        The file name without its extensions (``"counts"`` for ``counts.csv.gz``).
    format : str
        A key of :data:`USER_FORMATS`, or ``"array"`` (:func:`user_table`).
    sha256 : str or None
        SHA-256 of the file's bytes (None for an array).
    row_names, col_names : tuple of str or None
        The rows' and columns' names: a text file's first column and header, an AnnData
        file's ``obs`` and ``var`` indexes; None when the source has none.
    source_dtype : str
        The stored dtype (``"float32"``, ``"int64"``...), ``"text"`` for a text file,
        :data:`PATTERN` for a Matrix Market pattern file.
    family : Family or None
        The family the file declares (an lbm-bench table file's ``@kind``), else None;
        ``kind`` is its name.
    path : str or None
        The file as given.
    read_memory : int or None
        The memory reading the file was estimated to take (bytes; the guard's estimate).
    notes : tuple of str
        What the reading assumed where its rules could not tell (a text file's first line read
        as a header of numbers, or as data above a column of names...), one sentence each
        starting with the file; each was also issued as a :class:`ReadNote` warning.

    Examples
    --------
    >>> mine = user_table([[0, 1, np.nan], [1, 1, 0]], name="votes", col_names=["a", "b", "c"])
    >>> mine.shape, mine.col_names, mine.n_missing
    ((2, 3), ('a', 'b', 'c'), 1)
    """

    data: TableData
    name: str
    format: str
    sha256: str | None = None
    row_names: tuple[str, ...] | None = None
    col_names: tuple[str, ...] | None = None
    source_dtype: str = ""
    family: Family | None = None
    path: str | None = None
    read_memory: int | None = None
    notes: tuple[str, ...] = ()

    @property
    def kind(self) -> str | None:
        """The name of the family the file declares, or None."""
        return None if self.family is None else self.family.kind

    @property
    def shape(self) -> tuple[int, int]:
        """``(n_rows, n_cols)``."""
        return self.data.shape

    @property
    def is_sparse(self) -> bool:
        """Whether the table is held as a CSR array."""
        return self.data.is_sparse

    @property
    def n_missing(self) -> int:
        """Missing entries."""
        return self.data.n_missing

    def describe(self) -> str:
        """One line: ``"counts.csv: 200x100 table of int64 (from text), dense, 12 missing entries
        (0.06%),
        row and column names"``."""
        n, d = self.shape
        dtype = np.dtype(self.data.table.dtype).name
        source = "" if self.source_dtype in ("", dtype) else f" (from {self.source_dtype})"
        parts = [f"{n}x{d} table of {dtype}{source}", self.data.storage_text() or "dense"]
        if self.n_missing:
            entries = "entry" if self.n_missing == 1 else "entries"
            parts.append(f"{self.n_missing} missing {entries} ({self.data.missing_fraction:.2%})")
        names = [
            side for side, found in (("row", self.row_names), ("column", self.col_names))
            if found is not None
        ]
        if names:
            parts.append(" and ".join(names) + " names")
        return f"{self.path or self.name}: " + ", ".join(parts)

    def cell(self, row: int, col: int) -> str:
        """``"row 3 ('g3'), column 5 ('s4')"``: an entry named as a person reads it (1-based)."""
        row_name, col_name = _quoted(self.row_names, row), _quoted(self.col_names, col)
        return f"row {row + 1}{row_name}, column {col + 1}{col_name}"


def _quoted(names: tuple[str, ...] | None, index: int) -> str:
    return "" if names is None or not names[index] else f" ({names[index][:40]!r})"


# -- reading
# --------------------------------------------------------------------------------------------
def read_user_table(
    path: str | os.PathLike[str],
    *,
    kind: Family | str | None = None,
    format: str | None = None,
    header: bool | str | None = None,
    row_names: bool | str | None = None,
    delimiter: str | None = None,
    max_memory: int | str | None = None,
) -> UserTable:
    """Read a user's table from a file (see the module docstring for the formats and checks).

    Parameters
    ----------
    path : str or os.PathLike
        A ``.npy``, ``.npz``, ``.mtx`` (``.mtx.gz``), ``.csv`` / ``.tsv`` (``.gz``), ``.h5ad``
        or lbm-bench table (``.h5``) file.
    kind : str or Family, optional
        A family (or its name): its value checks are made too (:func:`check_user_values`) and the
        table is returned in that family's dtype and storage; it also lets a family of 0/1
        tables read a Matrix Market pattern file.
    format : str, optional
        A key of :data:`USER_FORMATS`, instead of the one the file name says.
    header, row_names : {"auto", "yes", "no"} or bool, optional
        Text files: whether the first line is a header and the first column names (detected
        when None or ``"auto"``, by the rules of :mod:`lbm_bench.storage.delimited`; what they
        assumed is noted).
    delimiter : str, optional
        Text files: the delimiter (default: tab for ``.tsv``; for ``.csv`` the one of ``,``,
        tab, ``;`` and ``|`` that splits the first lines into the most cells, the same number
        on each).
    max_memory : int or str, optional
        Bytes (or ``"8G"``) the reading may take; default: the memory available.

    Returns
    -------
    UserTable

    Raises
    ------
    FileNotFoundError
        When ``path`` does not exist.
    UserTableError
        When the file is not a table it can read, or its values do not suit ``kind``.
    ReadLimitError
        (a :class:`~lbm_bench.protocol.memory.MemoryLimitError`) When reading it would need more
        memory than available (the estimate in the message).

    Warns
    -----
    ReadNote
        For each thing the reading assumed (also in :attr:`UserTable.notes`).

    Examples
    --------
    >>> import numpy as np, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "counts.csv")
    >>> _ = open(path, "w").write(",s1,s2,s3\\ng1,0,3,1\\ng2,2,,0\\n")
    >>> table = read_user_table(path)
    >>> table.shape, table.row_names, table.col_names, table.n_missing
    ((2, 3), ('g1', 'g2'), ('s1', 's2', 's3'), 1)
    >>> table.data.table.dtype
    dtype('int64')
    """
    path = Path(path)
    where = str(path)
    family = None if kind is None else as_family(kind)
    if not path.exists():
        raise FileNotFoundError(2, "No such file or directory", where)
    if path.is_dir():
        raise UserTableError(f"{where}: is a folder, not a file")
    fmt = format_of(path, where) if format is None else check_choice("format", format,
                                                                     tuple(USER_FORMATS))
    if path.stat().st_size == 0:
        raise UserTableError(f"{where}: is empty")
    if delimiter is not None and (not isinstance(delimiter, str) or len(delimiter) != 1
                                  or delimiter in "\r\n\"" or delimiter.isalnum()):
        raise ValueError(f"delimiter must be one character (not a letter, digit, quote or line "
                         f"end), got {delimiter!r}")
    header, row_names = tristate("header", header), tristate("row_names", row_names)
    guard = ReadGuard(where, max_memory)
    options = {"family": family, "header": header, "row_names": row_names, "delimiter": delimiter}
    read = read_format(path, fmt, guard, options)
    data = TableData.incomplete(read.table)
    notes = tuple(f"{where}: {note}" for note in read.notes)
    out = UserTable(data=data, name=file_stem(path), format=fmt, sha256=_sha256(path),
                    row_names=read.row_names, col_names=read.col_names,
                    source_dtype=read.source_dtype, family=read.family, path=where, notes=notes,
                    read_memory=guard.peak or None)
    for note in notes:
        warnings.warn(note, ReadNote, stacklevel=2)
    _check_content(out)
    if family is None:
        return out
    return replace(out, data=check_user_values(out, family, max_memory=max_memory))


def user_table(
    X: Any,
    *,
    name: str = "X",
    row_names: Any = None,
    col_names: Any = None,
) -> UserTable:
    """A table given in memory as a :class:`UserTable`, with the content checks of
    :func:`read_user_table` (at least 2x2, an observed entry, no infinite value, not constant).

    Parameters
    ----------
    X : array-like, masked array or scipy.sparse matrix of shape (n_rows, n_cols)
        NaN (or masked) entries are missing.
    name : str, default="X"
    row_names, col_names : sequence of str, optional

    Examples
    --------
    >>> user_table([[0, 1], [2, 5]], row_names=["a", "b"]).describe()
    'X: 2x2 table of int64, dense, row names'
    """
    if isinstance(X, (str, os.PathLike)):  # a file's name is not a table (issue 47)
        raise TypeError(f"{name} must be a table (an array or a UserTable), got the path "
                        f"{str(X)!r}; read the file first: read_user_table({str(X)!r})")
    data = TableData.incomplete(X, name=name)
    if data.table.ndim != 2:
        raise ValueError(f"{name} must be a 2-D table, got shape {data.table.shape}")
    if np.dtype(data.table.dtype).kind not in "biuf":
        raise TypeError(f"{name} must hold numbers, got dtype {data.table.dtype}")
    names = [
        None if values is None else tuple(str(v) for v in values)
        for values in (row_names, col_names)
    ]
    for side, found, size in (("row_names", names[0], data.shape[0]), ("col_names", names[1],
                                                                       data.shape[1])):
        if found is not None and len(found) != size:
            raise ValueError(f"{side} must have {size} names, got {len(found)}")
    out = UserTable(data=data, name=name, format="array", row_names=names[0], col_names=names[1],
                    source_dtype=np.dtype(data.table.dtype).name)
    _check_content(out)
    return out


def _check_content(table: UserTable) -> None:
    """At least 2x2, an observed entry, only finite values, and two different observed values."""
    where = table.path or table.name
    data, (n, d) = table.data, table.shape
    if n < 2 or d < 2:
        raise UserTableError(f"{where}: has {n} row{'s' * (n != 1)} and {d} "
                             f"column{'s' * (d != 1)}: "
                             "a table to co-cluster needs at least 2 of each")
    if data.n_missing == n * d:
        raise UserTableError(f"{where}: every entry is missing")
    values = data.observed_values()
    if values.dtype.kind == "f" and not np.all(np.isfinite(values)):
        row, col = _first_entry(data, ~np.isfinite(data.stored_values()))
        raise UserTableError(f"{where}: holds an infinite value at {table.cell(row, col)}")
    implicit_zeros = data.is_sparse and data.n_stored + data.n_missing < n * d
    low = high = 0
    if values.size:
        low, high = values.min(), values.max()
    exact = LARGEST_MAGNITUDE if values.dtype.kind == "f" else LARGEST_INTEGER
    if max(abs(float(low)), abs(float(high))) > exact or (
            values.dtype.kind in "iu" and max(-int(low), int(high)) >= LARGEST_INTEGER):
        stored = data.stored_values()
        big = np.abs(stored.astype(np.float64)) >= exact if stored.dtype.kind == "f" else (
            (stored > LARGEST_INTEGER - 1) | (stored < -(LARGEST_INTEGER - 1)))
        row, col = _first_entry(data, big)
        value = stored[np.flatnonzero(big)[0]].item()
        bound, why = ((f"{exact:.0e}", "its squares and sums overflow float64")
                      if values.dtype.kind == "f" else
                      ("2^53", "the float64 computations would not hold it exactly"))
        raise UserTableError(f"{where}: holds {value!r} at {table.cell(row, col)}: values must lie "
                             f"within {bound} in magnitude ({why}); rescale the table")
    if implicit_zeros:
        low, high = min(low, 0), max(high, 0)
    if low == high:
        what = "0" if low == 0 else f"{float(low):g}"
        raise UserTableError(f"{where}: every observed entry is {what}: nothing to co-cluster")


def _first_entry(data: TableData, flags: np.ndarray) -> tuple[int, int]:
    """(row, column) of the first stored value flagged (flags over
    :meth:`TableData.stored_values`)."""
    k = int(np.flatnonzero(flags)[0])
    if data.is_sparse:
        table = data.table
        return int(np.searchsorted(table.indptr, k, side="right") - 1), int(table.indices[k])
    return divmod(k, data.n_cols)


# -- the family's checks
# --------------------------------------------------------------------------------
#: The largest magnitude of a real value read: beyond it, sums of squares overflow float64
#: (integers stop below ``LARGEST_INTEGER``, 2^53, which float64 holds exactly).
LARGEST_MAGNITUDE = 1e100
#: Stored values checked at a time when locating the first one a family refuses.
_CHUNK = 1 << 20


def check_user_values(
    table: UserTable,
    kind: Family | str,
    *,
    max_memory: int | str | None = None,
) -> TableData:
    """The table in the dtype and storage of family ``kind``, or a one-line refusal that
    names the first entry its blocks cannot hold.

    The family's own ``check_table`` decides (no family is named here): negative values
    for counts, non-integers or values other than 0/1 for binary tables, codes out of
    range... A sparse table given to a family whose tables are dense is densified when
    it fits in memory (refused up front with the estimate otherwise).

    Parameters
    ----------
    table : UserTable
    kind : Family or str
        A family, or its name.
    max_memory
        As :func:`read_user_table`.

    Returns
    -------
    TableData
        With the family's dtype (and 0 at the missing entries, its mask kept).

    Raises
    ------
    UserTableError
    MemoryLimitError

    Examples
    --------
    >>> check_user_values(user_table([[0, 1], [1, 1]]), "bernoulli").table.dtype
    dtype('uint8')
    >>> try:
    ...     check_user_values(user_table([[0, 1], [-1, 2]], name="votes"), "poisson")
    ... except ValueError as exc:
    ...     print(exc)
    votes: not a table of poisson blocks: its values must be non-negative, got min -1; the first
    refused entry is row 2, column 1: -1
    """
    family = as_family(kind)
    where = table.path or table.name
    if table.source_dtype == PATTERN and not reads_patterns(family):
        raise UserTableError(f"{where}: a Matrix Market pattern file (positions, no values) cannot "
                             f"hold {family.kind} blocks; it reads as a 0/1 table with kind "
                             + " or ".join(repr(k) for k in pattern_kinds()))
    data = table.data
    if data.is_sparse and not family.model.can_be_sparse:
        # values first, then the dense copy
        _checked(family, table, data.stored_values().reshape(1, -1), where)
        data = _densified(table, family, max_memory)
    checked = _checked(family, table, data.table, where)
    if not data.is_sparse:  # the family's own dtype (its check has bounded the values)
        checked = np.asarray(checked).astype(family.model.table_dtype, copy=False)
    return data.with_table(checked)


def _checked(family: Family, table: UserTable, values: Any, where: str) -> Any:
    try:
        return family.estimation.placeholder(values).check_table(values, "its values")
    except (TypeError, ValueError) as exc:
        problem = one_line(exc)
    located = _first_refused(family, table)
    raise UserTableError(
        f"{where}: not a table of {family.kind} blocks: {problem}{located}") from None


def _first_refused(family: Family, table: UserTable) -> str:
    """``; the first refused entry is row i, column j: value``: the first stored value the family
    refuses on its own, found chunk by chunk and then by bisection; empty when none is refused
    alone."""
    values = table.data.stored_values()

    def refused(part: np.ndarray) -> bool:
        try:
            family.estimation.placeholder(part.reshape(1, -1)).check_table(part.reshape(1, -1), "X")
        except (TypeError, ValueError):
            return True
        return False

    for start in range(0, values.size, _CHUNK):
        if refused(values[start : start + _CHUNK]):
            # values[start:high] refused, [start:low] not
            low, high = start, min(start + _CHUNK, values.size)
            while high - low > 1:
                middle = (low + high) // 2
                low, high = (low, middle) if refused(values[start:middle]) else (middle, high)
            flags = np.zeros(values.size, dtype=bool)
            flags[low] = True
            row, col = _first_entry(table.data, flags)
            return f"; the first refused entry is {table.cell(row, col)}: {values[low].item()!r}"
    return ""


def _densified(table: UserTable, family: Family, max_memory: int | str | None) -> DenseTableData:
    where = table.path or table.name
    n, d = table.shape
    guard = ReadGuard(where, max_memory)
    guard(f"sparse table as the dense {n}x{d} table {family.kind} blocks need",
          "co-cluster it with a family whose tables can be sparse (kind='bernoulli' for 0/1 "
          "values, kind='poisson' for counts)",
          table=n * d * (family.model.table_dtype.itemsize + 9))
    data = table.data
    observed = None if not data.has_missing else data.missing_indicator(np.uint8).toarray() == 0
    return DenseTableData(data.densify(), observed)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()
