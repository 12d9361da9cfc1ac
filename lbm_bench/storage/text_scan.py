"""A text file looked at before it is read: its lines, its longest line, its size, its dialect.

:func:`scan_text` streams a text file (decompressed when its name ends with ``.gz``) in chunks
of bounded size and counts what reading it will hold: the lines (ended by ``\\n``, ``\\r\\n``
or a lone ``\\r``, as old spreadsheets write them), the longest line (the ``csv`` module
holds a whole line at a time), the decompressed size, and the first lines that are not
blank, kept up to :data:`SAMPLE_BYTES` (a line longer than that is never held whole here).
A ``check`` callback sees the counts after every chunk and may stop the scan (the memory
guard refuses a file as soon as its estimate passes the limit, before a compression bomb is
decompressed to the end). :func:`sniff_delimiter` chooses the delimiter of a delimited text
from those first lines. Every damaged stream (not gzip, truncated, corrupt) is a
:class:`TextScanError` in one line.
"""

from __future__ import annotations

import csv
import gzip
import io
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = [
    "DELIMITERS", "SAMPLE_BYTES", "TextScan", "TextScanError", "open_binary", "scan_text",
    "sniff_delimiter", "stream_errors", "stream_problem"
]

#: Bytes of the first non-blank lines kept by :func:`scan_text` (for the delimiter and header).
SAMPLE_BYTES = 1 << 16
#: Bytes read (decompressed) at a time.
_CHUNK = 1 << 20
#: The delimiters :func:`sniff_delimiter` chooses from, by preference between equals.
DELIMITERS = (",", "\t", ";", "|", " ")
#: Lines of the sample the delimiter must split into the same number of cells.
_SNIFF_LINES = 20
#: The errors of a damaged or truncated compressed stream.
stream_errors = (OSError, EOFError, zlib.error)


class TextScanError(ValueError):
    """A text file that cannot be read through (one line, without the file name)."""


@dataclass(frozen=True)
class TextScan:
    """What :func:`scan_text` counted.

    Attributes
    ----------
    lines : int
        Lines, blank ones included (a last line without its end counts).
    longest : int
        Bytes of the longest line, its end excluded.
    size : int
        Bytes of the (decompressed) text.
    sample : str
        The first lines that are not blank, up to :data:`SAMPLE_BYTES` (UTF-8, a byte-order
        mark dropped; a line cut at the limit is kept cut).
    complete : bool
        False for the counts so far that :func:`scan_text` gives its ``check`` (at least these).
    """

    lines: int
    longest: int
    size: int
    sample: str
    complete: bool = True

    @property
    def first_line(self) -> str:
        """The first non-blank line of the sample."""
        return self.sample.splitlines()[0] if self.sample else ""


def open_binary(path: Path) -> io.BufferedIOBase:
    """``path`` opened for reading bytes, decompressed when its name ends with ``.gz``."""
    return gzip.open(path, "rb") if path.name.lower().endswith(".gz") else open(path, "rb")


def scan_text(path: Path, check: Callable[[TextScan], None] | None = None) -> TextScan:
    """Count the lines, the longest line and the size of a text file, streamed (see the module
    docstring); ``check`` is called with the counts so far after every chunk (it may raise).

    Raises
    ------
    TextScanError
        A damaged compressed stream.

    Examples
    --------
    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "t.csv")
    >>> _ = open(path, "wb").write(b"a,b\\r1,2\\r\\n\\n33,4")
    >>> scan = scan_text(Path(path))
    >>> scan.lines, scan.longest, scan.first_line
    (4, 4, 'a,b')
    """
    lines = longest = size = 0
    run = 0  # bytes of the line under way
    sample = b""
    after_cr = False  # the previous chunk ended with a carriage return
    try:
        with open_binary(path) as handle:
            while chunk := handle.read(_CHUNK):
                size += len(chunk)
                codes = np.frombuffer(chunk, dtype=np.uint8)
                ends = np.flatnonzero((codes == 10) | (codes == 13))
                if ends.size:
                    # a "\n" right after a "\r" ends no line of its own
                    before = np.where(ends > 0, codes[np.maximum(ends - 1, 0)] == 13, after_cr)
                    pairs = (codes[ends] == 10) & before
                    lines += int(ends.size - np.count_nonzero(pairs))
                    gaps = np.diff(ends) - 1
                    longest = max(longest, run + int(ends[0]), int(gaps.max()) if gaps.size else 0)
                    run = codes.size - int(ends[-1]) - 1
                else:
                    run += codes.size
                    longest = max(longest, run)
                after_cr = bool(codes[-1] == 13)
                if len(sample) < SAMPLE_BYTES:
                    sample = (sample + chunk[: SAMPLE_BYTES - len(sample)]).lstrip(b" \t\r\n")
                if check is not None:
                    check(TextScan(lines + (run > 0), longest, size, _text(sample), False))
    except stream_errors as exc:
        raise TextScanError(stream_problem(exc)) from None
    if run:
        lines += 1
    longest = max(longest, run)
    return TextScan(lines, longest, size, _text(sample))


def _text(sample: bytes) -> str:
    return sample.decode("utf-8", errors="replace").lstrip("\ufeff").lstrip()


def stream_problem(exc: BaseException) -> str:
    """The words for a damaged stream's error (one of :data:`stream_errors`)."""
    if isinstance(exc, gzip.BadGzipFile):
        return f"not a gzip file ({exc})"
    if isinstance(exc, EOFError):
        return "a truncated gzip stream (it ends before its last block)"
    if isinstance(exc, zlib.error):
        return f"a corrupt gzip stream ({exc})"
    return f"unreadable ({type(exc).__name__}: {exc})"


def sniff_delimiter(sample: str) -> str:
    """The delimiter of a delimited text from its first lines: the one of :data:`DELIMITERS`
    (quotes respected) that splits the first lines into the most cells, the same number on each
    line (the first line may have one cell less: R's ``write.table``); else the most frequent
    on the first line; a comma when none occurs.

    Examples
    --------
    >>> sniff_delimiter("a;b;c\\n1,5;2;3\\n4;5,5;6\\n")
    ';'
    >>> sniff_delimiter('"x, y",1\\n"z",2\\n')
    ','
    """
    lines = [line for line in sample.splitlines() if line.strip()][:_SNIFF_LINES]
    if len(lines) > 1 and len(sample) >= SAMPLE_BYTES:
        lines = lines[:-1]  # the last one may be cut
    best, cells = None, 1
    for delimiter in DELIMITERS:
        try:
            widths = [len(row) for row in csv.reader(lines, delimiter=delimiter)]
        except csv.Error:
            continue
        body = widths[1:] or widths
        steady = len(set(body)) == 1 and widths[0] in (body[0], body[0] - 1)
        if steady and body[0] > cells:
            best, cells = delimiter, body[0]
    if best is not None:
        return best
    first = lines[0] if lines else ""
    counts = [first.count(d) for d in DELIMITERS]
    return DELIMITERS[int(np.argmax(counts))] if max(counts, default=0) else ","
