"""A co-clustering's labels read from a file: one integer per line (text or one-column CSV,
an optional header naming them, :func:`numpy.savetxt`'s integral floats accepted) or a
``.npy`` vector (:func:`read_labels`: what ``lbm-bench evaluate --rows/--cols`` and ``show
--labels`` read). Every refusal names the file's line.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np

__all__ = ["read_labels"]


#: First-line words that look like a mistyped digit (letter O for zero, l or I for one):
#: refused as a header, so a typo on line 1 is an error, not a skipped label.
_DIGIT_LOOKALIKES = frozenset("OolI")


def read_labels(
    path: str | os.PathLike[str], *, name: str = "labels", return_header: bool = False
) -> np.ndarray | tuple[np.ndarray, str | None]:
    r"""Read one integer label per line (text, or one-column CSV) or a ``.npy`` vector.

    Text files hold one label per line; blank lines are ignored. A value may be
    written as an integer (``2``) or as an integral float (``2.0``,
    ``2.000000000000000000e+00``: :func:`numpy.savetxt`'s default format); any other
    value (``2.5``, ``1O``, two comma-separated fields) is an error naming its line
    (1-based, counting every line of the file). The first non-blank line may be a
    header: a name that starts with a letter, made of letters, digits, ``_``, ``.``,
    ``-`` or spaces, optionally quoted (``label``, ``"cluster"``, ``V1``), neither a
    float word (``nan``, ``inf``) nor a single ``O``, ``o``, ``l`` or ``I`` (which look
    like a mistyped digit). Nothing is
    unpickled (``.npy`` files are read with ``allow_pickle=False``).

    Parameters
    ----------
    path : path
        The file (``.npy``, or text).
    name : str, default="labels"
        What the file holds, for error messages (e.g. ``"--rows"``).
    return_header : bool, default=False
        Also return the header line that was skipped (None when there was none).

    Returns
    -------
    labels : ndarray of shape (n,), int64
    header : str or None
        Only with ``return_header=True``.

    Raises
    ------
    ValueError
        When the file is missing, empty, or holds something other than integers.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "rows.txt").write_text("label\n2\n0.0\n1.000000000000000000e+00\n")
    >>> read_labels(folder / "rows.txt", return_header=True)
    (array([2, 0, 1]), 'label')
    >>> _ = (folder / "typo.txt").write_text("1O\n2\n")
    >>> read_labels(folder / "typo.txt")
    Traceback (most recent call last):
    ...
    ValueError: labels file ...typo.txt: line 1 is not an integer label: '1O'
    """
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"{name} file {path} does not exist")
    if path.suffix == ".npy":
        labels, header = _read_npy_labels(path, name), None
    else:
        labels, header = _read_text_labels(path, name)
    return (labels, header) if return_header else labels


def _read_npy_labels(path: Path, name: str) -> np.ndarray:
    try:
        values = np.load(path, allow_pickle=False)
    # numpy's reader of a damaged file raises what its parsers raise (SyntaxError, EOFError)
    except Exception as exc:
        text = " ".join(str(exc).split()) or type(exc).__name__
        raise ValueError(f"{name} file {path} is not a readable .npy array: {text[:200]}") from None
    values = np.asarray(values)
    if values.ndim != 1:
        raise ValueError(f"{name} file {path} must hold a 1-D vector, got shape {values.shape}")
    if values.dtype.kind == "f" and np.all(values == np.round(values)):
        values = values.astype(np.int64)
    if values.dtype.kind not in "iu":
        raise ValueError(f"{name} file {path} must hold integers, got dtype {values.dtype}")
    return values.astype(np.int64)


def _read_text_labels(path: Path, name: str) -> tuple[np.ndarray, str | None]:
    """The labels of a text file and its header (None when none), with 1-based line numbers in
    errors."""
    numbered = [(i + 1, line.strip()) for i, line in
                enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines())]
    numbered = [(number, line) for number, line in numbered if line]
    header = None
    if numbered and _is_header(numbered[0][1]):
        header = numbered[0][1].strip('"').strip("'").strip()
        numbered = numbered[1:]
    if not numbered:
        raise ValueError(f"{name} file {path} holds no labels")
    values = []
    for number, line in numbered:
        if "," in line:
            raise ValueError(
                f"{name} file {path}: line {number} has {line.count(',') + 1} comma-separated "
                f"fields ({line!r}); a labels file holds one label per line"
            )
        value = _integer_value(line.strip('"').strip("'").strip())
        if value is None:
            raise ValueError(f"{name} file {path}: line {number} is not an integer label: {line!r}")
        if not -(2**63) <= value < 2**63:
            raise ValueError(f"{name} file {path}: line {number} holds a label beyond 64-bit "
                             f"integers: {line[:40]!r}")
        values.append(value)
    return np.array(values, dtype=np.int64), header


def _is_header(line: str) -> bool:
    """A column name (see :func:`read_labels`), not a number nor a mistyped one."""

    word = line.strip('"').strip("'").strip()
    try:
        float(word)  # "nan", "inf": a value, not a name
        return False
    except ValueError:
        pass
    return bool(re.fullmatch(r"[A-Za-z][A-Za-z0-9_. -]*", word)) and word not in _DIGIT_LOOKALIKES


def _integer_value(text: str) -> int | None:
    """The integer a label text denotes: ``"2"``, ``"2.0"`` or ``"2.000e+00"``; None otherwise."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        value = float(text)
    except ValueError:
        return None
    if not np.isfinite(value) or value != round(value) or abs(value) >= 2**53:
        return None
    return int(value)
