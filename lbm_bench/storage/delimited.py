"""Delimited text tables (CSV, TSV): numbers, a header row and a first column of names.

What spreadsheets, R (``write.csv``, ``write.table``) and pandas (``DataFrame.to_csv``, with
or without its index) write: one line per row (ended by ``\\n``, ``\\r\\n`` or ``\\r``),
cells separated by a delimiter and quoted as the standard library's ``csv`` module reads
them (a separator or a quote inside a quoted name), UTF-8 (a byte-order mark is skipped),
gzip-compressed when the name ends with ``.gz``. :func:`read_delimited` returns the numbers
as float64 with NaN at the missing cells, the names it found, and a note for each thing it
had to assume. The rules (``header`` and ``row_names`` ``"yes"`` or ``"no"`` override them):

header row (``header="auto"``)
    The first line is a header when one of its cells after the first is text (neither a
    number nor a missing marker); when it has one cell fewer than the lines below (R's
    ``write.table``); when its first cell is empty and the first cell of every line below is
    text (pandas' ``to_csv`` and R's ``write.csv`` above an index of names). A first line of
    numbers only (years, column numbers, gene ids) is a header when its numbers are whole
    and either step evenly up (``1960,1961,...``: at least :data:`HEADER_NUMBERS` of them,
    and no line below does so) or stand outside the values below them in nine columns of ten
    (at least :data:`HEADER_NUMBERS` distinct numbers above at least 8 lines): both
    decisions are noted, as is a first line read as data above a column of names.
first column of names (``row_names="auto"``)
    The first column holds the rows' names when the header has one cell fewer than the lines
    (R), when the header's first cell is empty (pandas, ``write.csv``), or when one of its
    cells is text (a column mixing names and numbers is noted).
numbers
    As Python's ``float`` reads them; with a delimiter other than a comma, a decimal comma is
    read as a point (``1,5``: spreadsheets of locales that write one).
missing cells
    Empty cells and the markers of :data:`MISSING_CELLS` (any case): NaN in the result.
    Blank lines are skipped; a last column empty on every line, header included (every line
    ending with the delimiter), is dropped.

Every refusal is one line naming the line and the column: a ragged line, a text cell.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from lbm_bench.storage.text_scan import open_binary, stream_errors, stream_problem

__all__ = [
    "HEADER_NUMBERS", "MISSING_CELLS", "DelimitedTable", "DelimitedTextError", "open_text",
    "read_delimited", "tristate"
]

#: Cells read as missing entries, compared stripped and lower-cased: empty (pandas, Excel), NA
#: (R), NaN, N/A, #N/A (spreadsheets), NULL, None.
MISSING_CELLS = frozenset({"", "na", "nan", "-nan", "n/a", "#n/a", "null", "none"})
#: The fewest numbers of a first line read as a header of numbers.
HEADER_NUMBERS = 4
#: Lines below a first line of numbers for it to stand out from them, and the share of the
#: columns where it must.
_OUTLIER_LINES, _OUTLIER_SHARE = 8, 0.9
#: Characters of a cell or a line quoted in a message.
_QUOTE = 40


class DelimitedTextError(ValueError):
    """A delimited text file that is not a table of numbers (one-line message, without the file
    name)."""


@dataclass(frozen=True)
class DelimitedTable:
    """The numbers of a delimited text table, its names, and what the reading assumed.

    Attributes
    ----------
    values : ndarray of shape (n_rows, n_cols) of float64
        NaN at the missing cells.
    row_names, col_names : tuple of str or None
        From the first column and the header row, when the file has them.
    notes : tuple of str
        What the rules could not tell for sure and assumed, one sentence each.
    """

    values: np.ndarray
    row_names: tuple[str, ...] | None
    col_names: tuple[str, ...] | None
    notes: tuple[str, ...] = ()


def tristate(name: str, value: Any) -> bool | None:
    """``"yes"``/True, ``"no"``/False, ``"auto"``/None as True, False or None (else a
    ValueError naming ``name``)."""
    choices = {"yes": True, "no": False, "auto": None, True: True, False: False, None: None}
    try:
        return choices[value.lower() if isinstance(value, str) else value]
    except (KeyError, TypeError):
        raise ValueError(f"{name} must be 'auto', 'yes' or 'no', got {value!r}") from None


def open_text(path: Path) -> io.TextIOBase:
    """``path`` opened as UTF-8 text for the ``csv`` module (decompressed when it ends with
    ``.gz``; every line end kept for the ``csv`` module to split on)."""
    return io.TextIOWrapper(open_binary(path), encoding="utf-8-sig", newline="")


def _number(text: str, decimal_comma: bool) -> float | None:
    """The cell's number (NaN for a missing marker), or None for text."""
    stripped = text.strip()
    if stripped.lower() in MISSING_CELLS:
        return np.nan
    try:
        return float(stripped)
    except ValueError:
        pass
    if decimal_comma and stripped.count(",") == 1 and "." not in stripped:
        try:
            return float(stripped.replace(",", "."))
        except ValueError:
            return None
    return None


def _is_text(cell: str, decimal_comma: bool = True) -> bool:
    return _number(cell, decimal_comma) is None


def _quoted(text: str) -> str:
    text = text.strip()
    return repr(text if len(text) <= _QUOTE else text[:_QUOTE] + "...")


class _Raw:
    """The lines of a text handle, the first two that are not blank kept as written (quotes
    and all)."""

    def __init__(self, handle: io.TextIOBase) -> None:
        self.handle, self.kept = handle, []

    def __iter__(self) -> Iterator[str]:
        for line in self.handle:
            if len(self.kept) < 2 and line.strip():
                self.kept.append(line)
            yield line


def _quoted_numbers(raw: str, delimiter: str) -> list[bool]:
    """Per cell of a line as written: a number in quotes (R quotes every name it writes, years
    too; pandas quotes no number)."""
    cells = next(csv.reader([raw], delimiter=delimiter, quoting=csv.QUOTE_NONE), [])
    return [len(c.strip()) > 1 and c.strip()[0] == c.strip()[-1] == '"'
            and _number(c.strip()[1:-1], False) is not None for c in cells]


def _rows(handle: Any, delimiter: str) -> Iterator[tuple[int, list[str]]]:
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
    except stream_errors as exc:
        raise DelimitedTextError(stream_problem(exc)) from None


class _Lines:
    """The lines below the first, converted as they are read: the first column kept apart as
    text (names or numbers, decided at the end), the other cells as float64 (text refused at
    once, the column named from the first line)."""

    def __init__(self, capacity: int, width: int, first: list[str], decimal_comma: bool) -> None:
        self.width, self.first_line, self.decimal_comma = width, first, decimal_comma
        self.capacity, self.n = max(capacity, 1), 0
        self.values = np.empty((self.capacity, width - 1))
        self.first: list[str] = []
        self.line_numbers: list[int] = []

    def add(self, line: int, cells: list[str]) -> None:
        if len(cells) != self.width:
            raise DelimitedTextError(f"line {line}: {len(cells)} cells, expected {self.width} "
                                     "(ragged rows)")
        if self.n == self.capacity:
            self.capacity *= 2
            self.values = np.resize(self.values, (self.capacity, self.width - 1))
        self.first.append(cells[0])
        self.line_numbers.append(line)
        self.values[self.n] = self.numbers(line, cells[1:], 1)
        self.n += 1

    def numbers(self, line: int, cells: list[str], offset: int) -> np.ndarray:
        try:
            return np.array(cells, dtype=np.float64)
        except ValueError:
            pass
        out = np.empty(len(cells))
        for j, cell in enumerate(cells):
            value = _number(cell, self.decimal_comma)
            if value is None:
                raise DelimitedTextError(f"line {line}, column {j + offset + 1}"
                                         f"{self.column_name(j + offset)}: {_quoted(cell)} is not "
                                         "a number")
            out[j] = value
        return out

    def column_name(self, index: int) -> str:
        shift = self.width - len(self.first_line)  # 1 when the first line is one cell short
        if index - shift < 0 or not self.first_line[index - shift].strip():
            return ""
        if not _is_text(self.first_line[index - shift], self.decimal_comma):
            return ""
        return f" ({_quoted(self.first_line[index - shift])})"


def read_delimited(
    path: Path,
    delimiter: str,
    *,
    header: bool | str | None = None,
    row_names: bool | str | None = None,
    capacity: int = 1024,
) -> DelimitedTable:
    """Read a delimited text table of numbers (see the module docstring).

    Parameters
    ----------
    path : Path
    delimiter : str
        One character (``","``, ``";"``, ``"\\t"``).
    header, row_names : {"auto", "yes", "no"} or bool, optional
        Whether the first line is a header and the first column names; detected when None or
        ``"auto"``.
    capacity : int, default=1024
        Rows expected (the array grows past it): the file's line count avoids any copy.

    Raises
    ------
    DelimitedTextError
        Not UTF-8, a damaged gzip stream, a ragged line, a text cell, or no data line.
    """
    header, row_names = tristate("header", header), tristate("row_names", row_names)
    decimal_comma = delimiter != ","
    with open_text(path) as handle:
        raw = _Raw(handle)
        rows = _rows(raw, delimiter)
        first = next(rows, None)
        if first is None:
            raise DelimitedTextError("has no data (empty, or only blank lines)")
        first_number, first_cells = first
        second = next(rows, None)
        short = (second is not None and len(first_cells) == len(second[1]) - 1
                 and header is not False and row_names is not False)
        width = len(first_cells) + short
        if width < 2:
            row_names = False  # one column: numbers
        lines = _Lines(capacity, width, first_cells, decimal_comma)
        for line, cells in ([second] if second is not None else []):
            lines.add(line, cells)
        for line, cells in rows:
            lines.add(line, cells)
    quoted = [_quoted_numbers(line, delimiter) for line in raw.kept]
    decision = _Decision(lines, first_number, first_cells, short, header, row_names, width)
    decision.quoted = any(quoted[0][1:]) and not (len(quoted) > 1 and any(quoted[1][1:]))
    decision.delimiter = delimiter
    return decision.table()


class _Decision:
    """The header and the names column decided from the whole table (the module's rules)."""

    def __init__(self, lines: _Lines, number: int, first: list[str], short: bool,
                 header: bool | None, row_names: bool | None, width: int) -> None:
        self.lines, self.number, self.first, self.short = lines, number, first, short
        self.header, self.row_names, self.width = header, row_names, width
        self.notes: list[str] = []
        self.quoted, self.delimiter = False, ","  # numbers in quotes on the first line alone
        comma = lines.decimal_comma
        self.text_below = [_is_text(cell, comma) for cell in lines.first]
        self.corner = first[0].strip() if first else ""

    def table(self) -> DelimitedTable:
        lines = self.lines
        is_header = self._is_header()
        if is_header and lines.n == 0:
            raise DelimitedTextError("has a header line but no data lines")
        first_column = list(lines.first)
        values = lines.values[: lines.n]
        numbers = [self.number] * (not is_header) + lines.line_numbers
        if not is_header:
            if len(self.first) != self.width:
                raise DelimitedTextError(f"line {self.number}: {len(self.first)} cells, the lines "
                                         f"below have {self.width}")
            row = lines.numbers(self.number, self.first[1:], 1)
            values = np.concatenate([row[None, :], values])
            first_column = [self.first[0], *first_column]
        names = self._names_column(first_column, is_header, numbers)
        head = [cell.strip() for cell in self.first] if is_header else None
        if names:
            row_names = tuple(cell.strip() for cell in first_column)
            col_names = None if head is None else tuple(head[1 - self.short:])
        else:
            column = np.empty(len(first_column))
            for i, cell in enumerate(first_column):
                value = _number(cell, lines.decimal_comma)
                if value is None:
                    raise DelimitedTextError(f"line {numbers[i]}, column 1: {_quoted(cell)} is not "
                                             "a number")
                column[i] = value
            values = np.concatenate([column[:, None], values], axis=1)
            row_names, col_names = None, None if head is None else tuple(head)
        if (values.shape[1] > 1 and np.all(np.isnan(values[:, -1]))
                and (col_names is None or not col_names[-1])):
            values = values[:, :-1]  # every line ended with the delimiter
            col_names = None if col_names is None else col_names[:-1]
        return DelimitedTable(np.ascontiguousarray(values), row_names, col_names,
                              tuple(self.notes))

    def _is_header(self) -> bool:
        if self.header is not None:
            return self.header
        comma = self.lines.decimal_comma
        if self.short or self.quoted or any(_is_text(cell, comma) for cell in self.first[1:]):
            return True
        names_below = bool(self.text_below) and all(self.text_below)
        if self.row_names is not False and not self.corner and names_below:
            return True  # pandas' to_csv, R's write.csv: an empty cell above the names
        named = (names_below or _is_text(self.first[0], comma)) and self.row_names is not False
        cells = self.first[1:] if named or not self.corner else self.first
        if any(_is_text(cell, comma) for cell in cells):
            return True  # a text cell above a column of numbers
        numbers = np.array([_number(cell, comma) for cell in cells], dtype=np.float64)
        below = self.lines.values[: self.lines.n]
        if len(cells) == len(self.first):
            column = np.array([np.nan if _is_text(c, comma) else _number(c, comma)
                               for c in self.lines.first], dtype=np.float64)
            below = np.concatenate([column[:, None], below], axis=1)
        line = self.delimiter.join(self.first)
        if _steps_evenly(numbers[None, :]).all() and not _steps_evenly(below).any():
            self.notes.append(f"first line {_quoted(line)} read as a header of numbers (they step "
                              "evenly up, as years or column numbers do); header='no' reads it as "
                              "data")
            return True
        if _stands_out(numbers, below):
            self.notes.append(f"first line {_quoted(line)} read as a header of numbers (they "
                              "stand outside the values below them); header='no' reads it as data")
            return True
        if names_below and self.row_names is not False:
            self.notes.append(f"first line {_quoted(line)} read as data (a named row of numbers); "
                              "header='yes' reads it as the columns' names")
        return False

    def _names_column(self, column: list[str], is_header: bool, numbers_of: list[int]) -> bool:
        if self.row_names is not None:
            return self.row_names
        if self.short or (is_header and not self.corner):
            return True
        comma = self.lines.decimal_comma
        text = [_is_text(cell, comma) for cell in column]
        if not any(text):
            return False
        numbers = [i for i, (t, cell) in enumerate(zip(text, column, strict=True))
                   if not t and cell.strip().lower() not in MISSING_CELLS]
        if len(numbers) > sum(text):  # mostly numbers: data, and its text an error
            i = text.index(True)
            raise DelimitedTextError(f"line {numbers_of[i]}, column 1: {_quoted(column[i])} is not "
                                     "a number (a first column mostly of numbers is data; "
                                     "row_names='yes' reads it as the rows' names)")
        if numbers:
            self.notes.append(f"the first column mixes names and {len(numbers)} number"
                              f"{'s' * (len(numbers) != 1)}: read as the rows' names; "
                              "row_names='no' reads it as data")
        return True


def _steps_evenly(rows: np.ndarray) -> np.ndarray:
    """Per row (of at least :data:`HEADER_NUMBERS` numbers): whole numbers stepping up by one
    positive step."""
    if rows.shape[1] < HEADER_NUMBERS or rows.shape[0] == 0:
        return np.zeros(rows.shape[0], dtype=bool)
    steps = np.diff(rows, axis=1)
    whole = np.all(rows == np.round(rows), axis=1)
    return whole & np.all(steps == steps[:, :1], axis=1) & (steps[:, 0] > 0)


def _stands_out(numbers: np.ndarray, below: np.ndarray) -> bool:
    """Whether a first line of distinct whole numbers lies outside the range of the values below
    it in nine columns of ten (at least 8 lines below)."""
    observed = ~np.isnan(numbers)
    if (observed.sum() < HEADER_NUMBERS or below.shape[0] < _OUTLIER_LINES
            or np.any(numbers[observed] != np.round(numbers[observed]))
            or np.unique(numbers[observed]).size != observed.sum()):
        return False
    low, high = np.fmin.reduce(below, axis=0), np.fmax.reduce(below, axis=0)  # NaN: unseen
    outside = observed & ((numbers < low) | (numbers > high))
    return bool(outside.sum() >= _OUTLIER_SHARE * observed.sum())
