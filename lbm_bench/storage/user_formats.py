"""The file formats of :func:`~lbm_bench.storage.user_data.read_user_table`: one reader each.

Each reader looks at the file's header first (a ``.npy`` header, the arrays of a ``.npz``
archive, a Matrix Market banner and size line, an HDF5 file's datasets, a text file's line
count), asks the caller's :class:`ReadGuard` whether reading it fits in memory, then reads
it: a dense array (NaN missing) or a CSR array (explicit NaN missing), never densifying a
sparse file. Every refusal is a :class:`UserTableError` whose one line starts with the
file name. The text formats are parsed by :mod:`lbm_bench.storage.delimited`, AnnData
files by :mod:`lbm_bench.storage.anndata_files`.
"""

from __future__ import annotations

import csv
import functools
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import h5py
import numpy as np
from scipy import sparse as sp

from lbm_bench._validation import one_line
from lbm_bench.models.family import Family
from lbm_bench.models.registry import FAMILIES
from lbm_bench.protocol.memory import (
    BASELINE_BYTES,
    MemoryEstimate,
    MemoryLimitError,
    available_memory,
    parse_memory_size,
)
from lbm_bench.storage.anndata_files import AnnDataError, is_anndata, read_anndata_x
from lbm_bench.storage.delimited import DelimitedTextError, read_delimited
from lbm_bench.storage.format import FORMAT_NAME
from lbm_bench.storage.matrix_market import MatrixMarketError, mtx_header, read_mtx
from lbm_bench.storage.reader import FormatError, load_table
from lbm_bench.storage.text_scan import TextScan, TextScanError, scan_text, sniff_delimiter

__all__ = [
    "PATTERN", "USER_FORMATS", "FormatRead", "ReadGuard", "ReadLimitError", "ReadNote",
    "UserTableError",
    "file_stem", "format_of", "pattern_kinds", "read_format", "reads_patterns"
]

#: The formats :func:`read_user_table` reads and the file name endings that select them
#: (``.h5`` and ``.hdf5`` files are told apart by their content: an lbm-bench table file or
#: an AnnData file).
USER_FORMATS: dict[str, tuple[str, ...]] = {
    "npy": (".npy",),
    "npz": (".npz",),
    "mtx": (".mtx", ".mtx.gz", ".mm"),
    "csv": (".csv", ".csv.gz"),
    "tsv": (".tsv", ".tsv.gz", ".tab"),
    "h5ad": (".h5ad",),
    "table": (".h5", ".hdf5"),
}
#: :attr:`UserTable.source_dtype` of a Matrix Market pattern file (positions, no values).
PATTERN = "pattern"
#: Bytes per entry of reading a dense table: the array, NaN mask and the copy with 0 there.
_DENSE_FACTOR = 3
#: Bytes per cell of a text table: the float64 array, the mask, the int64 or filled copy, checks.
_TEXT_BYTES = 32
#: Bytes per byte of the longest line of a text table: the line as bytes and text, and its cells
#: as Python strings (the ``csv`` module holds a whole line at a time).
_LINE_BYTES = 32
#: Bytes per stored entry of a Matrix Market file: coordinates and values, then the CSR copy.
_MTX_BYTES = 64
#: Bytes per row and per column of a sparse table: its index pointer, sums and labels.
_SIDE_BYTES = 32
#: Bytes per name held (a short Python string in a tuple).
_NAME_BYTES = 64


class UserTableError(ValueError):
    """A file that is not a table :func:`read_user_table` can read (message: ``"<file>:
    <problem>"``, a ValueError); docs/guide/your-data.md lists what is refused."""


class ReadNote(UserWarning):
    """What :func:`read_user_table` assumed where its rules could not tell (message: ``"<file>:
    <what was assumed>; <the argument that says otherwise>"``)."""


# -- the memory guard
# ---------------------------------------------------------------------------------
class ReadLimitError(MemoryLimitError):
    """A read whose estimated peak memory exceeds the limit: a :class:`MemoryLimitError` (so
    a ``ValueError``, one line) whose message starts with the file and says what to change.

    Attributes
    ----------
    where : str
        The file, as the message names it.
    advice : str
        What to change (read a sparse file, use a machine with more memory).
    """

    def __init__(self, where: str, advice: str, estimate: MemoryEstimate, limit: int,
                 given: bool) -> None:
        self.where, self.advice = where, advice
        super().__init__(estimate, limit, given)

    def _message(self) -> str:
        return (f"{self.where}: reading the {self.estimate.what} needs about {self._over()}; "
                f"{self.advice}")

    def __reduce__(self) -> tuple:
        return (ReadLimitError, (self.where, self.advice, self.estimate, self.limit, self.given))


class ReadGuard:
    """Refuses a read whose estimated peak exceeds the memory available or ``max_memory``
    (:class:`ReadLimitError`); ``peak`` is the largest estimate it accepted (bytes)."""

    def __init__(self, where: str, max_memory: int | str | None) -> None:
        self.where = where
        self.given = max_memory is not None
        self.limit = parse_memory_size(max_memory) if self.given else available_memory()
        self.peak = 0

    def __call__(self, what: str, advice: str, **parts: int) -> None:
        estimate = MemoryEstimate(what=what, parts={**parts, "baseline": BASELINE_BYTES})
        self.peak = max(self.peak, estimate.total)
        if self.limit is None or estimate.total <= self.limit:
            return
        raise ReadLimitError(self.where, advice, estimate, self.limit, self.given)


def _dense_advice(fmt: str) -> str:
    return ("a table that is mostly zeros reads in far less memory from a sparse file (.npz, .mtx)"
            if fmt != "mtx" else "read it on a machine with more memory")


def _check_dense(guard: ReadGuard, fmt: str, shape: tuple[int, ...], itemsize: int, *,
                 names: int = 0) -> None:
    entries = int(np.prod(shape, dtype=object))
    guard(f"dense {'x'.join(map(str, shape))} table", _dense_advice(fmt),
          table=entries * itemsize, reading=entries * ((_DENSE_FACTOR - 1) * itemsize + 1),
          **({"names": names} if names else {}))


def _check_sparse(guard: ReadGuard, shape: tuple[int, ...], nnz: int, bytes_per_entry: int, *,
                  names: int = 0) -> None:
    """A sparse table's entries, and its rows' and columns' indexes and sums (what the readers
    and the fit hold per row and per column: a shape declaring 1e14 columns is refused here)."""
    guard(f"sparse {'x'.join(map(str, shape))} table with {nnz} stored entries",
          "read it on a machine with more memory", table=nnz * bytes_per_entry,
          index=(int(shape[0]) + int(shape[1]) + 2) * _SIDE_BYTES,
          **({"names": names} if names else {}))


# -- the formats
# ----------------------------------------------------------------------------------------
@dataclass
class FormatRead:
    """What a format's reader found: the table (an array or sparse array, NaN missing) and the
    rest."""

    table: Any
    source_dtype: str
    row_names: tuple[str, ...] | None = None
    col_names: tuple[str, ...] | None = None
    family: Family | None = None
    notes: tuple[str, ...] = ()


def _numeric_dtype(where: str, dtype: np.dtype) -> None:
    if dtype.kind not in "biuf":
        what = {
            "U": "text", "S": "bytes", "O": "Python objects", "c": "complex numbers",
            "V": "records", "M": "dates", "m": "time spans"
        }.get(dtype.kind, f"dtype {dtype}")
        raise UserTableError(f"{where}: holds {what} (dtype {dtype}), not numbers")


def _two_dimensional(where: str, shape: tuple[int, ...]) -> None:
    if len(shape) != 2:
        raise UserTableError(f"{where}: holds an array of shape {tuple(shape)}, not a 2-D table")


def _read_npy(path: Path, where: str, guard: ReadGuard, options: dict) -> FormatRead:
    try:
        with open(path, "rb") as handle:
            shape, dtype = _npy_header(handle)
            offset = handle.tell()
    except (ValueError, OSError, EOFError) as exc:
        raise UserTableError(f"{where}: not a readable .npy file ({one_line(exc)})") from None
    _numeric_dtype(where, dtype)  # before anything is loaded: an object array is never unpickled
    _two_dimensional(where, shape)
    _check_dense(guard, "npy", shape, dtype.itemsize)
    expected = offset + int(np.prod(shape)) * dtype.itemsize
    if path.stat().st_size < expected:
        raise UserTableError(f"{where}: truncated .npy file ({path.stat().st_size} bytes, its "
                             "header announces "
                             f"{expected})")
    try:
        return FormatRead(np.load(path, allow_pickle=False), _dtype_name(dtype))
    except (ValueError, OSError) as exc:
        raise UserTableError(f"{where}: damaged .npy file ({one_line(exc)})") from None


def _npy_header(handle: Any) -> tuple[tuple[int, ...], np.dtype]:
    version = np.lib.format.read_magic(handle)
    read = np.lib.format.read_array_header_1_0 if version == (
        1, 0) else np.lib.format.read_array_header_2_0
    shape, _, dtype = read(handle)
    return shape, dtype


def _read_npz(path: Path, where: str, guard: ReadGuard, options: dict) -> FormatRead:
    try:
        with zipfile.ZipFile(path) as archive:
            members = {name.removesuffix(".npy"): name for name in archive.namelist()}
            headers = {}
            for key, name in members.items():
                with archive.open(name) as handle:
                    headers[key] = _npy_header(handle)
    except (zipfile.BadZipFile, ValueError, OSError, EOFError) as exc:
        raise UserTableError(f"{where}: not a readable .npz file ({one_line(exc)})") from None
    if "format" in headers:  # scipy.sparse.save_npz
        return _read_sparse_npz(path, where, guard, headers)
    if len(headers) != 1:
        raise UserTableError(f"{where}: holds {len(headers)} arrays "
                             f"({', '.join(sorted(headers)[:5])}): save one "
                             "table (np.save, or scipy.sparse.save_npz)")
    (key, (shape, dtype)), = headers.items()
    _numeric_dtype(where, dtype)
    _two_dimensional(where, shape)
    _check_dense(guard, "npz", shape, dtype.itemsize)
    try:
        with np.load(path, allow_pickle=False) as archive:
            return FormatRead(archive[key], _dtype_name(dtype))
    except (ValueError, OSError, zipfile.BadZipFile) as exc:
        raise UserTableError(f"{where}: not a readable .npz file ({one_line(exc)})") from None


#: The layouts ``scipy.sparse.save_npz`` names in its ``format`` entry.
_SPARSE_NPZ = ("csr", "csc", "coo", "bsr", "dia")
_NPZ_ERRORS = (ValueError, KeyError, TypeError, AttributeError, OSError, EOFError,
               zipfile.BadZipFile)


def _read_sparse_npz(path: Path, where: str, guard: ReadGuard, headers: dict) -> FormatRead:
    """A ``scipy.sparse.save_npz`` file: its ``format`` and ``shape`` entries checked, the memory
    of its entries and of both sides guarded, then read as CSR."""
    data_shape, data_dtype = headers.get("data", ((0,), np.dtype(np.float64)))
    _numeric_dtype(where, data_dtype)
    index_size = max(
        (headers[k][1].itemsize for k in ("indices", "row", "col") if k in headers), default=8)
    try:
        with np.load(path, allow_pickle=False) as archive:
            layout, shape = archive["format"], archive["shape"]
    except _NPZ_ERRORS as exc:
        raise UserTableError(
            f"{where}: not a readable scipy.sparse .npz file ({one_line(exc)})") from None
    name = layout.item() if layout.ndim == 0 else None
    name = name.decode("ascii", "replace") if isinstance(name, bytes) else name
    if name not in _SPARSE_NPZ:
        raise UserTableError(f"{where}: its 'format' entry is {layout.tolist()!r}, not a "
                             f"scipy.sparse layout ({', '.join(_SPARSE_NPZ)})")
    if shape.shape != (2,) or shape.dtype.kind not in "iu" or shape.min() < 0:
        raise UserTableError(f"{where}: its 'shape' entry is {shape.tolist()!r}, not two "
                             "non-negative integers")
    shape = (int(shape[0]), int(shape[1]))
    _check_sparse(guard, shape, int(np.prod(data_shape)), 3 * (data_dtype.itemsize + index_size))
    try:
        table = sp.csr_array(sp.load_npz(path))
        table.check_format(full_check=True)
    except _NPZ_ERRORS as exc:
        raise UserTableError(
            f"{where}: not a readable scipy.sparse .npz file ({one_line(exc)})") from None
    table.eliminate_zeros()
    return FormatRead(table, _dtype_name(data_dtype))


def _read_mtx(path: Path, where: str, guard: ReadGuard, options: dict) -> FormatRead:
    try:
        header = mtx_header(path)
    except MatrixMarketError as exc:
        raise UserTableError(f"{where}: {exc}") from None
    field = header.field
    if field == "complex":
        raise UserTableError(f"{where}: holds complex numbers (a Matrix Market {field} file), not "
                             "real values")
    if field == PATTERN and not _pattern_allowed(options.get("family")):
        readers = " or ".join(f"kind={k!r}" for k in pattern_kinds())
        raise UserTableError(f"{where}: a Matrix Market pattern file (the positions of its "
                             "entries, no values): "
                             f"refused unless read as a 0/1 table, with {readers}")
    if header.layout == "array":
        _check_dense(guard, "mtx", header.shape, 8)
    else:
        entries = header.entries * (2 if header.symmetry != "general" else 1)
        _check_sparse(guard, header.shape, entries, _MTX_BYTES)
    try:
        table = read_mtx(path, header)
    except MatrixMarketError as exc:
        raise UserTableError(f"{where}: {exc}") from None
    if header.layout == "array":
        return FormatRead(np.asarray(table), _dtype_name(np.asarray(table).dtype))
    table = sp.csr_array(table)
    table.eliminate_zeros()
    if field == PATTERN:
        return FormatRead(
            sp.csr_array((np.ones(table.nnz, dtype=np.uint8), table.indices, table.indptr),
                         shape=table.shape), PATTERN)
    return FormatRead(table, _dtype_name(table.dtype))


def _read_text(path: Path, where: str, guard: ReadGuard, options: dict, *,
               tab: bool = False) -> FormatRead:
    """A delimited text table: its delimiter given, a tab (``tab``: TSV), or sniffed."""
    forced = options.get("delimiter") or ("\t" if tab else None)
    shape: dict[str, int] = {}

    def check(scan: TextScan) -> None:  # after every chunk: a bomb is refused on the way
        if "fields" not in shape and scan.sample:
            first = scan.first_line
            found = forced or sniff_delimiter(scan.sample)
            shape["fields"] = max(len(next(csv.reader([first], delimiter=found), [])), 1)
        fields = shape.get("fields", 1)
        least = "" if scan.complete else "at least "
        guard(f"text table of {least}{scan.lines} lines of {fields} cells", _dense_advice("csv"),
              table=scan.lines * fields * _TEXT_BYTES, names=scan.lines * _NAME_BYTES,
              line=scan.longest * _LINE_BYTES)

    try:
        scan = scan_text(path, check)
    except TextScanError as exc:
        raise UserTableError(f"{where}: {exc}") from None
    check(scan)
    delimiter = forced or sniff_delimiter(scan.sample)
    try:
        read = read_delimited(path, delimiter, header=options.get("header"),
                              row_names=options.get("row_names"), capacity=scan.lines)
    except DelimitedTextError as exc:
        raise UserTableError(f"{where}: {exc}") from None
    return FormatRead(_whole_numbers(read.values), "text", read.row_names, read.col_names,
                      notes=read.notes)


def _whole_numbers(values: np.ndarray) -> np.ndarray:
    """A text table's values as int64 when every observed one is a whole number (|x| < 2**53)."""
    observed = values[~np.isnan(values)]
    if observed.size and np.all(np.isfinite(observed)) and np.all(
            observed == np.round(observed)) and (np.abs(observed).max() < 2.0**53):
        if observed.size == values.size:
            return values.astype(np.int64)
        return np.ma.MaskedArray(
            np.where(np.isnan(values), 0, values).astype(np.int64), mask=np.isnan(values))
    return values


def _read_hdf5(path: Path, where: str, guard: ReadGuard, options: dict) -> FormatRead:
    try:
        with h5py.File(path, "r") as file:
            ours = _text(file.attrs.get("format")) == FORMAT_NAME
            if not ours and is_anndata(file):
                x = read_anndata_x(file, guard=lambda *args: _guard_anndata(guard, *args))
                return FormatRead(x.table, _dtype_name(x.dtype), x.row_names, x.col_names)
            size = _datasets_bytes(file) if ours else 0
    except AnnDataError as exc:
        raise UserTableError(f"{where}: {exc}") from None
    except OSError as exc:
        raise UserTableError(f"{where}: not a readable HDF5 file ({one_line(exc)})") from None
    if not ours:
        raise UserTableError(f"{where}: an HDF5 file that is neither an {FORMAT_NAME} file nor an "
                             "AnnData file")
    guard(f"{FORMAT_NAME} file", "read it on a machine with more memory", table=2 * size)
    try:
        table = load_table(path)
    except FormatError as exc:
        raise UserTableError(str(exc)) from None
    return FormatRead(table.data, _dtype_name(np.dtype(table.data.dtype)),
                      family=table.model.family)


def _text(value: Any) -> str | None:
    return value.decode("utf-8", "replace") if isinstance(
        value, bytes) else None if value is None else str(value)


def _guard_anndata(guard: ReadGuard, shape: tuple[int, int], nnz: int | None, itemsize: int,
                   index_size: int) -> None:
    names = (shape[0] + shape[1]) * _NAME_BYTES  # the obs and var indexes
    if nnz is None:
        _check_dense(guard, "h5ad", shape, itemsize, names=names)
    else:
        _check_sparse(guard, shape, nnz, 3 * (itemsize + index_size), names=names)


def _datasets_bytes(file: h5py.File) -> int:
    sizes: list[int] = []
    file.visititems(lambda _, item: sizes.append(item.size * item.dtype.itemsize)
                    if isinstance(item, h5py.Dataset) else None)
    return int(sum(sizes))


_READERS: dict[str, Callable[[Path, str, ReadGuard, dict], FormatRead]] = {
    "npy": _read_npy, "npz": _read_npz, "mtx": _read_mtx, "csv": _read_text,
    "tsv": functools.partial(_read_text, tab=True),
    "h5ad": _read_hdf5, "table": _read_hdf5,
}


def format_of(path: Path, where: str) -> str:
    """The key of :data:`USER_FORMATS` whose endings end the file's name (any case)."""
    name = path.name.lower()
    for fmt, endings in USER_FORMATS.items():
        if name.endswith(endings):
            return fmt
    known = ", ".join(ending for endings in USER_FORMATS.values() for ending in endings)
    suffix = "".join(path.suffixes[-2:]) or "no extension"
    raise UserTableError(f"{where}: unknown kind of file ({suffix}); a table is read from {known}")


def file_stem(path: Path) -> str:
    """The file's name without the ending that selects its format (``counts`` of
    ``counts.csv.gz``)."""
    name = path.name
    for endings in USER_FORMATS.values():
        for ending in sorted(endings, key=len, reverse=True):
            if name.lower().endswith(ending):
                return name[: -len(ending)] or name
    return path.stem


def reads_patterns(family: Family) -> bool:
    """Whether a family's tables are 0/1: it describes a 0/1 table and not one holding a 2."""
    return bool(family.estimation.describes("b", 0,
                                            1)) and not family.estimation.describes("u", 0, 2)


def pattern_kinds() -> list[str]:
    """The registered families that read a Matrix Market pattern file (as 0/1 tables)."""
    return [family.kind for family in FAMILIES if reads_patterns(family)]


def _pattern_allowed(family: Family | None) -> bool:
    return family is not None and reads_patterns(family)


def read_format(path: Path, fmt: str, guard: ReadGuard, options: dict[str, Any]) -> FormatRead:
    """Read ``path`` as format ``fmt`` (a key of :data:`USER_FORMATS`), its reading checked by
    ``guard``; ``options``: ``family`` (a Family or None), ``header``, ``row_names``,
    ``delimiter``."""
    return _READERS[fmt](path, str(path), guard, options)


def _dtype_name(dtype: np.dtype) -> str:
    return np.dtype(dtype).name
