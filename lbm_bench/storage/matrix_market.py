"""Matrix Market files (``.mtx``, ``.mtx.gz``): the header read streamed, the entries read by
SciPy without the comments, integers checked as numbers.

:func:`mtx_header` reads the banner and the size line of a file (decompressed when its name
ends with ``.gz``), skipping the comment lines between them without holding them: a comment
of a gigabyte costs no memory (SciPy's reader would gather the comments into one string),
and the sizes are checked as the integers they must be (below 2^63) before anything is
allocated. :func:`read_mtx` then hands SciPy a stream that starts at the size line, under a
banner whose ``integer`` field reads as ``real``: its values come back as float64 and are
checked as whole numbers that float64 holds exactly (SciPy's own integer reading truncates
``1.5`` to ``1`` and refuses ``1e23`` with an ``OverflowError``). Every refusal is a
:class:`MatrixMarketError` in one line, without the file name.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from scipy import io as spio

from lbm_bench.storage.text_scan import open_binary, stream_errors, stream_problem

__all__ = ["LARGEST_INTEGER", "MatrixMarketError", "MtxHeader", "mtx_header", "read_mtx"]

#: Integers above this are not held exactly by float64 (2^53): an integer file's values must be
#: below it.
LARGEST_INTEGER = 2**53
#: Bytes of the banner or the size line held at most, and of comment lines skipped at most.
_LINE_CAP = 1 << 12
_COMMENTS_CAP = 1 << 28
_CHUNK = 1 << 16
_FIELDS = ("real", "integer", "pattern", "complex", "double")
_SYMMETRIES = ("general", "symmetric", "skew-symmetric", "hermitian")


class MatrixMarketError(ValueError):
    """A Matrix Market file that cannot be read (one line, without the file name)."""


@dataclass(frozen=True)
class MtxHeader:
    """A Matrix Market file's banner and sizes.

    Attributes
    ----------
    layout : str
        ``"coordinate"`` or ``"array"``.
    field : str
        ``"real"``, ``"integer"``, ``"pattern"`` or ``"complex"``.
    symmetry : str
    shape : (int, int)
    entries : int
        The entries the size line announces (``rows * cols`` for an array).
    comments : int
        Bytes of the comment lines skipped.
    offset : int
        Where the size line starts in the (decompressed) stream.
    """

    layout: str
    field: str
    symmetry: str
    shape: tuple[int, int]
    entries: int
    comments: int
    offset: int


def _line(handle: Any, cap: int | None) -> tuple[bytes, int]:
    """The next line (its end dropped) and its length; beyond ``cap`` bytes the line is not kept
    (its length still counted)."""
    kept, size = bytearray(), 0
    while True:
        part = handle.readline(_CHUNK)
        if not part:
            return bytes(kept), size
        size += len(part)
        if cap is None or len(kept) < cap:
            kept += part[: (cap - len(kept)) if cap is not None else None]
        if part.endswith(b"\n"):
            return bytes(kept).rstrip(b"\r\n"), size


def mtx_header(path: Path) -> MtxHeader:
    """The banner and the sizes of a Matrix Market file, its comments skipped streamed.

    Raises
    ------
    MatrixMarketError
        No banner, an unknown field, symmetry or layout, a size line that is not two or three
        integers below 2^63, comment lines past 256 MiB, a damaged gzip stream.
    """
    try:
        with open_binary(path) as handle:
            banner, offset = _line(handle, _LINE_CAP)
            words = banner.decode("latin-1").lower().split()
            if len(words) != 5 or words[0] != "%%matrixmarket" or words[1] != "matrix":
                raise MatrixMarketError("not a Matrix Market file (its first line is not "
                                        "'%%MatrixMarket matrix <layout> <field> <symmetry>')")
            _, _, layout, field, symmetry = words
            if layout not in ("coordinate", "array") or field not in _FIELDS or (
                    symmetry not in _SYMMETRIES):
                raise MatrixMarketError(f"a Matrix Market banner of unknown words: "
                                        f"{banner.decode('latin-1')[:80]!r}")
            comments = 0
            while True:
                start = offset
                line, size = _line(handle, _LINE_CAP)
                offset += size
                if not size:
                    raise MatrixMarketError("a Matrix Market file without its size line")
                if line.startswith(b"%") or not line.strip():
                    comments += size
                    if comments > _COMMENTS_CAP:
                        raise MatrixMarketError(f"its comment lines run past {_COMMENTS_CAP >> 20} "
                                                "MiB before the size line")
                    continue
                break
    except stream_errors as exc:
        raise MatrixMarketError(stream_problem(exc)) from None
    sizes = _sizes(line, 3 if layout == "coordinate" else 2)
    entries = sizes[2] if layout == "coordinate" else sizes[0] * sizes[1]
    return MtxHeader(layout, "real" if field == "double" else field, symmetry,
                     (sizes[0], sizes[1]), entries, comments, start)


def _sizes(line: bytes, count: int) -> list[int]:
    text = line.decode("latin-1").strip()
    try:
        sizes = [int(word) for word in text.split()]
    except ValueError:
        sizes = []
    if len(sizes) != count or min(sizes) < 0:
        what = "rows, columns and entries" if count == 3 else "rows and columns"
        raise MatrixMarketError(f"its size line {text[:80]!r} is not the {what} as "
                                f"{count} non-negative integers")
    if max(sizes) >= 2**63:
        raise MatrixMarketError(f"its size line declares {max(sizes)}, beyond 2^63")
    return sizes


class _FromSizeLine(io.RawIOBase):
    """The file's stream from its size line on, under a banner whose field reads as ``real``."""

    def __init__(self, handle: Any, header: MtxHeader) -> None:
        self.handle = handle
        field = "real" if header.field == "integer" else header.field
        self.prefix = (f"%%MatrixMarket matrix {header.layout} {field} "
                       f"{header.symmetry}\n").encode()
        self.skip = header.offset

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while self.skip:
            part = self.handle.read(min(self.skip, 1 << 20))
            self.skip = self.skip - len(part) if part else 0
        if self.prefix:
            n = min(len(buffer), len(self.prefix))
            buffer[:n], self.prefix = self.prefix[:n], self.prefix[n:]
            return n
        data = self.handle.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


def read_mtx(path: Path, header: MtxHeader) -> Any:
    """The entries of a Matrix Market file whose header is ``header``: a COO array (a dense
    array for the ``array`` layout), an ``integer`` file's values as int64 once checked whole
    and below :data:`LARGEST_INTEGER`.

    Raises
    ------
    MatrixMarketError
        Entries that do not parse, fall outside the size, or (integer files) are not whole
        numbers below 2^53.
    """
    try:
        with open_binary(path) as handle:
            table = spio.mmread(io.BufferedReader(_FromSizeLine(handle, header), 1 << 20))
    except stream_errors as exc:
        raise MatrixMarketError(stream_problem(exc)) from None
    except (ValueError, IndexError, OverflowError) as exc:
        text = " ".join(str(exc).split())
        raise MatrixMarketError(f"damaged Matrix Market file ({text})") from None
    if header.field != "integer":
        return table
    values = np.asarray(table if isinstance(table, np.ndarray) else table.data)
    whole = np.isfinite(values) & (values == np.round(values)) & (np.abs(values) < LARGEST_INTEGER)
    if not whole.all():
        bad = values[~whole][0].item()
        raise MatrixMarketError(f"an integer Matrix Market file holding {bad!r}, not an integer "
                                f"below 2^53")
    return table.astype(np.int64)
