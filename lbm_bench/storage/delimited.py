"""Delimited text tables (CSV, TSV): numbers, a header row and a first column of names.

What spreadsheets, R (``write.csv``, ``write.table``) and pandas (``DataFrame.to_csv``)
write: one line per row, cells separated by a delimiter (quoted as the ``csv`` module
reads them), UTF-8 (a byte-order mark is skipped), gzip-compressed when the name ends
with ``.gz``. :func:`read_delimited` returns the numbers as float64 with NaN at the
missing cells, and the names it found:

header row
    The first line is a header when one of its cells after the first is text (neither a
    number nor a missing marker), or when it has one cell fewer than the lines below it
    (R's ``write.table`` convention); ``header=True`` or ``False`` says so instead (a
    header of numbers, such as years, is only read as one when told).
first column of names
    The first column holds the rows' names when the header's first cell is empty
    (pandas' and R's ``write.csv`` convention), when the header is one cell short, or
    when none of the column's cells is a number; ``row_names=True`` or ``False`` says so
    instead. A first column of numbers with a text cell is data, and the text an error.
missing cells
    Empty cells and the markers of :data:`MISSING_CELLS` (any case): NaN in the result.
    Blank lines are skipped; a last column empty on every line, header included (every
    line ending with the delimiter), is dropped.

Every refusal is one line naming the line and the column: a ragged line, a text cell.
"""

from __future__ import annotations

import csv
import gzip
import io
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = [
    "MISSING_CELLS", "DelimitedTable", "DelimitedTextError", "count_lines", "open_text",
    "read_delimited"
]

#: Cells read as missing entries, compared stripped and lower-cased: empty (pandas), NA (R),
#: NaN, N/A, #N/A (spreadsheets), NULL.
MISSING_CELLS = frozenset({"", "na", "nan", "n/a", "#n/a", "null"})
#: Bytes read at a time when counting lines.
_CHUNK = 1 << 20


class DelimitedTextError(ValueError):
    """A delimited text file that is not a table of numbers (one-line message, without the file
    name)."""


@dataclass(frozen=True)
class DelimitedTable:
    """The numbers of a delimited text table and its names.

    Attributes
    ----------
    values : ndarray of shape (n_rows, n_cols) of float64
        NaN at the missing cells.
    row_names, col_names : tuple of str or None
        From the first column and the header row, when the file has them.
    """

    values: np.ndarray
    row_names: tuple[str, ...] | None
    col_names: tuple[str, ...] | None


def open_text(path: Path) -> io.TextIOBase:
    """``path`` opened as UTF-8 text for the ``csv`` module (decompressed when it ends with
    ``.gz``)."""
    if path.suffix == ".gz":
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8-sig", newline="")
    return open(path, encoding="utf-8-sig", newline="")


def count_lines(path: Path) -> tuple[int, str]:
    """The number of lines of a text file (decompressed when it ends with ``.gz``) and its
    first non-blank line (for the estimate of a table's size before reading it)."""
    opener = gzip.open if path.suffix == ".gz" else open
    lines, first, tail = 0, b"", b""
    with opener(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            lines += chunk.count(b"\n")
            if not first.strip():
                first = (first + chunk).lstrip(b"\r\n")
                first = first.split(b"\n", 1)[0] if b"\n" in first else first
            tail = chunk[-1:]
    if tail and tail != b"\n":
        lines += 1
    return lines, first.decode("utf-8", errors="replace").lstrip("\ufeff")


def _number(text: str) -> float | None:
    """The cell's number (NaN for a missing marker), or None for text."""
    stripped = text.strip()
    if stripped.lower() in MISSING_CELLS:
        return np.nan
    try:
        return float(stripped)
    except ValueError:
        return None


def _is_text(cell: str) -> bool:
    return _number(cell) is None


def _rows(handle: io.TextIOBase, delimiter: str) -> Iterator[tuple[int, list[str]]]:
    """``(line number, cells)`` of the lines that are not blank (empty, or spaces only)."""
    reader = csv.reader(handle, delimiter=delimiter, strict=True)
    try:
        for cells in reader:
            # a line of delimiters is a row of missing cells
            if len(cells) > 1 or (cells and cells[0].strip()):
                yield reader.line_num, cells
    except csv.Error as exc:
        raise DelimitedTextError(f"line {reader.line_num}: not delimited text ({exc})") from None
    except UnicodeDecodeError as exc:
        raise DelimitedTextError(f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None


class _RowConverter:
    """Rows converted as they are read: the first column kept apart (names or numbers,
    decided at the end), the other cells as float64 (text refused at once)."""

    def __init__(self, capacity: int, header: list[str] | None, row_names: bool | None) -> None:
        self.header, self.row_names = header, row_names
        self.capacity, self.n = max(capacity, 1), 0
        self.values: np.ndarray | None = None
        self.first: list[str] = []
        self.first_text: tuple[int, str] | None = None  # the first non-number of the first column
        self.width: int | None = None

    def add(self, line: int, cells: list[str]) -> None:
        if self.width is None:
            self.width = len(cells)
            if self.header is not None and self.row_names is not False and len(
                    self.header) == self.width - 1:
                # R: the names column has no header cell
                self.header, self.row_names = ["", *self.header], True
            elif self.header is not None and len(self.header) != self.width:
                raise DelimitedTextError(f"line {line}: {self.width} cells, the header has "
                                         f"{len(self.header)}")
            self.values = np.empty((self.capacity, self.width - 1))
        elif len(cells) != self.width:
            raise DelimitedTextError(f"line {line}: {len(cells)} cells, expected {self.width} "
                                     "(ragged rows)")
        if self.n == self.capacity:
            self.capacity *= 2
            self.values = np.resize(self.values, (self.capacity, self.width - 1))
        self.first.append(cells[0])
        if self.first_text is None and _is_text(cells[0]):
            self.first_text = (line, cells[0])
        self.values[self.n] = self._numbers(line, cells)
        self.n += 1

    def _numbers(self, line: int, cells: list[str]) -> np.ndarray:
        rest = cells[1:]
        try:
            return np.array(rest, dtype=np.float64)
        except ValueError:
            pass
        out = np.empty(len(rest))
        for j, cell in enumerate(rest):
            value = _number(cell)
            if value is None:
                raise DelimitedTextError(f"line {line}, column {j + 2}{self._column_name(j + 1)}: "
                                         f"{cell.strip()[:40]!r} is not a number")
            out[j] = value
        return out

    def _column_name(self, index: int) -> str:
        if self.header is None or not self.header[index].strip():
            return ""
        return f" ({self.header[index].strip()[:40]!r})"

    def table(self) -> DelimitedTable:
        values = self.values[: self.n]
        names = self.row_names
        if names is None:
            header_blank = self.header is not None and not self.header[0].strip()
            names = header_blank or all(_is_text(cell) for cell in self.first)
        if names:
            row_names = tuple(cell.strip() for cell in self.first)
            col_names = None if self.header is None else tuple(cell.strip()
                                                               for cell in self.header[1:])
        else:
            if self.first_text is not None:
                line, cell = self.first_text
                raise DelimitedTextError(f"line {line}, column 1{self._column_name(0)}: "
                                         f"{cell.strip()[:40]!r} is not a number (a first column "
                                         "of names must hold no numbers, or have an "
                                         "empty header cell)")
            first = np.array([_number(cell) for cell in self.first], dtype=np.float64)
            values = np.concatenate([first[:, None], values], axis=1)
            row_names = None
            col_names = None if self.header is None else tuple(cell.strip() for cell in self.header)
        if values.shape[1] > 1 and np.all(np.isnan(values[:, -1])) and (col_names is None or
                                                                        not col_names[-1]):
            values = values[:, :-1]  # every line ended with the delimiter
            col_names = None if col_names is None else col_names[:-1]
        return DelimitedTable(np.ascontiguousarray(values), row_names, col_names)


def read_delimited(
    path: Path,
    delimiter: str,
    *,
    header: bool | None = None,
    row_names: bool | None = None,
    capacity: int = 1024,
) -> DelimitedTable:
    """Read a delimited text table of numbers (see the module docstring).

    Parameters
    ----------
    path : Path
    delimiter : str
        One character (``","``, ``";"``, ``"\\t"``).
    header, row_names : bool, optional
        Whether the first line is a header and the first column names; detected when None.
    capacity : int, default=1024
        Rows expected (the array grows past it): the file's line count avoids any copy.

    Raises
    ------
    DelimitedTextError
        Not UTF-8, a ragged line, a text cell, or a file without any data line.
    """
    with open_text(path) as handle:
        rows = _rows(handle, delimiter)
        first = next(rows, None)
        if first is None:
            raise DelimitedTextError("has no data (empty, or only blank lines)")
        line, cells = first
        is_header = header if header is not None else (any(_is_text(c) for c in cells[1:]))
        parser = _RowConverter(capacity, cells if is_header else None, row_names)
        if not is_header:
            parser.add(line, cells)
        for line, cells in rows:
            parser.add(line, cells)
    if parser.n == 0:
        raise DelimitedTextError("has a header line but no data lines")
    return parser.table()
