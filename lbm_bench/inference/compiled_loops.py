"""The loops of the compiled sparse kernel, and numba, imported only when they run.

The functions below are plain Python written for numba's ``nopython`` mode (arrays and
numbers only, no Python objects in the loops): :func:`compiled_loops` compiles them
with ``numba.njit`` on first use in a process (one compilation per process and
argument types, kept by numba's on-disk cache for the next process: a loky or Dask
worker compiles nothing when the cache holds the loops). The package imports and runs
without numba; this module imports it only in :func:`compiled_loops` and
:func:`numba_status`.

Every loop sums integers: the block sums of binary entries and counts (exact in
int32 or int64, whose bound the caller checks) and the moves of an index update
(integer values added to and subtracted from float64 sums, exact below 2**53), so
they give the scipy kernel's values bit for bit in any order. The one float sum,
:func:`add_row_gains`, adds in the order of ``np.bincount`` over a row's entries, as
the scipy kernel does.

The compiled functions are cached where numba's cache is configured
(``NUMBA_CACHE_DIR``), else beside this module when its folder is writable, else in a
writable user folder (:func:`cache_folder`).
"""

from __future__ import annotations

import functools
import os
import tempfile
from types import SimpleNamespace
from typing import Any

import numpy as np

__all__ = ["add_row_gains", "cache_folder", "class_sums", "compiled_loops", "fill_onehot",
           "logsumexp_parts", "logsumexp_total", "move_entries", "move_entries_by_pair",
           "numba_status"]


def fill_onehot(labels: np.ndarray, n_classes: int, onehot: np.ndarray) -> None:
    """``onehot[j, c * n_classes + labels[c, j]] = 1``, every other indicator 0: each
    position's row of indicators, chain after chain (numpy's ``labels.T[:, :, None] ==
    classes`` reads the labels across their rows, a tenth of the product's time on a long
    side).

    Parameters
    ----------
    labels : ndarray of shape (C, n), integers in ``0 .. n_classes - 1``
    n_classes : int
    onehot : ndarray of shape (n, C * n_classes), uint8
    """
    chains, n = labels.shape
    onehot[:] = 0
    for c in range(chains):
        offset = c * n_classes
        for j in range(n):
            onehot[j, offset + labels[c, j]] = 1


def class_sums(indptr: np.ndarray, indices: np.ndarray, data: np.ndarray, binary: bool,
               onehot: np.ndarray, acc: np.ndarray, out: np.ndarray) -> None:
    """Block sums of one CSR table: ``out[k, r] = sum_e data[e] onehot[indices[e], k]`` over
    the stored entries ``e`` of row ``r``.

    Parameters
    ----------
    indptr, indices : ndarray
        The CSR structure, ``n_rows + 1`` and ``nnz`` integers.
    data : ndarray of shape (nnz,)
        Its values, non-negative integers (of an integer or float dtype); not read when
        ``binary``.
    binary : bool
        Every value is 1.
    onehot : ndarray of shape (n_cols, K), uint8
        Each column's indicators (``K = C o``: every chain's class of the column).
    acc : ndarray of shape (K,), int32 or int64
        A row's accumulator: its dtype must hold every row's sums.
    out : ndarray of shape (K, n_rows), float64
    """
    n_rows = indptr.size - 1
    width = onehot.shape[1]
    for r in range(n_rows):
        for k in range(width):
            acc[k] = 0
        start, stop = indptr[r], indptr[r + 1]
        paired = start + (stop - start) // 2 * 2
        # two entries per pass: one addition into the accumulator (kept in memory: it is
        # an array) for two rows of indicators, half the chain of loads and stores
        if binary:
            for e in range(start, paired, 2):
                first, second = onehot[indices[e]], onehot[indices[e + 1]]
                for k in range(width):
                    acc[k] += np.int64(first[k]) + np.int64(second[k])
        else:
            for e in range(start, paired, 2):
                first, second = onehot[indices[e]], onehot[indices[e + 1]]
                a, b = np.int64(data[e]), np.int64(data[e + 1])
                for k in range(width):
                    acc[k] += a * first[k] + b * second[k]
        if paired < stop:  # the odd entry
            row = onehot[indices[paired]]
            value = np.int64(1) if binary else np.int64(data[paired])
            for k in range(width):
                acc[k] += value * row[k]
        for k in range(width):
            out[k, r] = acc[k]


def move_entries(indptr: np.ndarray, indices: np.ndarray, data: np.ndarray, binary: bool,
                 positions: np.ndarray, old_rows: np.ndarray, new_rows: np.ndarray,
                 sums: np.ndarray) -> None:
    """An index update: the stored entries of row ``positions[t]`` of a CSR table moved from
    row ``old_rows[t]`` of ``sums`` to row ``new_rows[t]``, for every ``t``.

    Parameters
    ----------
    indptr, indices, data, binary
        As :func:`class_sums` (the other-major table: a row per position of the other side).
    positions, old_rows, new_rows : ndarray of shape (T,), int64
    sums : ndarray of shape (rows, width), float64
        The block sums, a row per (chain, class); integer values, so the moves are exact.
    """
    for t in range(positions.size):
        row, old, new = positions[t], old_rows[t], new_rows[t]
        if binary:
            for e in range(indptr[row], indptr[row + 1]):
                column = indices[e]
                sums[new, column] += 1.0
                sums[old, column] -= 1.0
        else:
            for e in range(indptr[row], indptr[row + 1]):
                column = indices[e]
                sums[new, column] += data[e]
                sums[old, column] -= data[e]


def move_entries_by_pair(indptr: np.ndarray, indices: np.ndarray, data: np.ndarray,
                         binary: bool, positions: np.ndarray, pairs: np.ndarray,
                         new_rows: np.ndarray, old_rows: np.ndarray, delta: np.ndarray,
                         sums: np.ndarray) -> None:
    """:func:`move_entries` in two stages: the stored entries of the positions summed by move
    into ``delta`` (one integer addition per entry), then each move's sums added to its new
    row of ``sums`` and subtracted from its old one.

    Parameters
    ----------
    indptr, indices, data, binary, positions, sums
        As :func:`move_entries`.
    pairs : ndarray of shape (T,), int64
        The move of each position, in ``0 .. U - 1``.
    new_rows, old_rows : ndarray of shape (U,), int64
        The rows of ``sums`` each move adds to and subtracts from.
    delta : ndarray of shape (U, width), int32 or int64
        Work space, wide enough for every move's sums.
    """
    delta[:] = 0
    for t in range(positions.size):
        row, target = positions[t], delta[pairs[t]]
        if binary:
            for e in range(indptr[row], indptr[row + 1]):
                target[indices[e]] += 1
        else:
            for e in range(indptr[row], indptr[row + 1]):
                target[indices[e]] += np.int64(data[e])
    width = sums.shape[1]
    for u in range(new_rows.size):
        added, removed, moves = sums[new_rows[u]], sums[old_rows[u]], delta[u]
        for k in range(width):
            if moves[k] != 0:
                added[k] += moves[k]
                removed[k] -= moves[k]


def add_row_gains(indptr: np.ndarray, data: np.ndarray, index_of: np.ndarray, lowest: int,
                  gains: np.ndarray, acc: np.ndarray, scores: np.ndarray) -> None:
    """``scores[r, k] += sum of gains[index_of[data[e] - lowest], k]`` over the stored entries
    ``e`` of row ``r``: each row's sum from 0 in its entries' order, then added to its score,
    the floating-point operations of ``np.bincount``.

    Parameters
    ----------
    indptr : ndarray
        The CSR's row pointers.
    data : ndarray of shape (nnz,)
        Its values, integers.
    index_of : ndarray of shape (V,), int64
        The row of ``gains`` of each value ``lowest .. lowest + V - 1``.
    lowest : int
    gains : ndarray of shape (U, k), float64
    acc : ndarray of shape (k,), float64
        A row's accumulator.
    scores : ndarray of shape (n_rows, k), float64
    """
    n_rows = indptr.size - 1
    width = gains.shape[1]
    for r in range(n_rows):
        for k in range(width):
            acc[k] = 0.0
        for e in range(indptr[r], indptr[r + 1]):
            u = index_of[np.int64(data[e]) - lowest]
            for k in range(width):
                acc[k] += gains[u, k]
        for k in range(width):
            scores[r, k] += acc[k]


def logsumexp_parts(x: np.ndarray, last: bool, terms: np.ndarray, top: np.ndarray,
                    count: np.ndarray) -> None:
    """The first pass of ``logsumexp`` over axis 2 (``last``) or 1 of ``x`` (e, g, m), as
    scipy computes it: the maximum ``top``, the count of the terms equal to it, and the terms
    ``x - top``, ``-inf`` at the maxima (``exp`` of them is left to numpy: its bits)."""
    n, g, m = x.shape
    for e in range(n):
        if last:
            for k in range(g):
                best = x[e, k, 0]
                for l in range(1, m):
                    if x[e, k, l] > best:
                        best = x[e, k, l]
                hits = 0.0
                for l in range(m):
                    if x[e, k, l] == best:
                        terms[e, k, l] = -np.inf
                        hits += 1.0
                    else:
                        terms[e, k, l] = x[e, k, l] - best
                top[e, k], count[e, k] = best, hits
        else:
            for l in range(m):
                best = x[e, 0, l]
                for k in range(1, g):
                    if x[e, k, l] > best:
                        best = x[e, k, l]
                hits = 0.0
                for k in range(g):
                    if x[e, k, l] == best:
                        terms[e, k, l] = -np.inf
                        hits += 1.0
                    else:
                        terms[e, k, l] = x[e, k, l] - best
                top[e, l], count[e, l] = best, hits


def logsumexp_total(terms: np.ndarray, count: np.ndarray, last: bool, total: np.ndarray) -> None:
    """The second pass: the exponentiated terms summed left to right over axis 2 (``last``) or
    1 (as ``np.sum`` adds fewer than 8 terms), divided by the count of maxima unless 0."""
    n, g, m = terms.shape
    for e in range(n):
        if last:
            for k in range(g):
                value = terms[e, k, 0]
                for l in range(1, m):
                    value += terms[e, k, l]
                total[e, k] = value / count[e, k] if value != 0 else value
        else:
            for l in range(m):
                value = terms[e, 0, l]
                for k in range(1, g):
                    value += terms[e, k, l]
                total[e, l] = value / count[e, l] if value != 0 else value


#: The loops :func:`compiled_loops` compiles.
_LOOPS = (fill_onehot, class_sums, move_entries, move_entries_by_pair, add_row_gains,
          logsumexp_parts, logsumexp_total)


def cache_folder() -> str | None:
    """Where numba keeps the compiled loops: None when numba's own choice will do (its
    ``NUMBA_CACHE_DIR``, or the ``__pycache__`` beside this module when that folder is
    writable); else a writable folder of the user's (``$XDG_CACHE_HOME/lbm-bench/numba``,
    ``~/.cache/lbm-bench/numba``), or of the system's temporary folder."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return None
    here = os.path.dirname(os.path.abspath(__file__))
    beside = os.path.join(here, "__pycache__")
    if os.access(beside if os.path.isdir(beside) else here, os.W_OK):
        return None
    home = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    uid = getattr(os, "getuid", lambda: "user")()
    for folder in (os.path.join(home, "lbm-bench", "numba"),
                   os.path.join(tempfile.gettempdir(), f"lbm-bench-numba-{uid}")):
        try:
            os.makedirs(folder, exist_ok=True)
        except OSError:
            continue
        if os.access(folder, os.W_OK):
            return folder
    return None


@functools.cache
def numba_status() -> tuple[str | None, str]:
    """``(version, reason)``: numba's version when it imports in this process (reason empty),
    else ``(None, why not)``. Imported once per process."""
    try:
        import numba
    except Exception as exc:  # ImportError, or numba refusing this numpy
        return None, f"{type(exc).__name__}: {exc}".strip()
    return str(numba.__version__), ""


@functools.cache
def compiled_loops() -> SimpleNamespace:
    """The loops of this module compiled by numba (``nopython``, releasing the GIL, cached on
    disk), once per process; each compiles on its first call with given argument types.

    Raises
    ------
    ImportError
        When numba does not import (:func:`numba_status`).
    """
    version, reason = numba_status()
    if version is None:
        raise ImportError(f"the compiled kernel needs numba: {reason}")
    import numba

    folder = cache_folder()
    if folder is not None:  # the package's folder is read-only and no cache is configured
        numba.config.CACHE_DIR = folder
    compiled: dict[str, Any] = {}
    for loop in _LOOPS:
        try:
            compiled[loop.__name__] = numba.njit(cache=True, nogil=True)(loop)
        except RuntimeError:  # no writable cache folder at all: compile in every process
            compiled[loop.__name__] = numba.njit(nogil=True)(loop)
    return SimpleNamespace(**compiled)
