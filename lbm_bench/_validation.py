"""Input validation at the public boundary: one helper per kind of input.

Every helper raises :class:`ValueError` or :class:`TypeError` with a message
that names the argument and the value or shape it saw, so that the command line
can show it as a one-line error.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = [
    "check_block_array",
    "check_choice",
    "check_count",
    "check_integer_array",
    "check_label_sets",
    "check_labels",
    "check_mask",
    "check_positive_float",
    "check_probability",
    "check_proportions",
    "check_unmasked",
    "check_vector",
    "describe_percent",
    "describe_value",
    "one_line",
]

def _plain(value: Any) -> Any:
    """``value`` with numpy scalars as Python numbers (also inside a list or tuple)."""
    if isinstance(value, np.generic):
        return value.item()
    if type(value) in (list, tuple):
        return type(value)(_plain(item) for item in value)
    return value


def describe_value(value: Any) -> str:
    """How a message shows a value it refuses: plain numbers (``-1.0``, never
    ``np.float64(-1.0)``), strings quoted, arrays by shape and dtype, long values cut."""
    if isinstance(value, np.ndarray):
        return f"an array of shape {value.shape} and dtype {value.dtype}"
    text = repr(_plain(value))
    return text if len(text) <= 60 else text[:57] + "..."


def describe_percent(fraction: float, decimals: int = 1) -> str:
    """A fraction as a percentage with ``decimals`` decimals, or more when a fraction strictly
    between 0 and 1 would round to 0% or 100% (99.96% of the entries missing is not all of them).

    >>> describe_percent(0.3), describe_percent(0.9996), describe_percent(0.99, 0)
    ('30.0%', '99.96%', '99%')
    >>> describe_percent(1.0)
    '100.0%'
    """
    text = f"{fraction:.{decimals}%}"
    while 0 < fraction < 1 and decimals < 8 and float(text[:-1]) in (0.0, 100.0):
        decimals += 1
        text = f"{fraction:.{decimals}%}"
    return text


def one_line(value: Any) -> str:
    r"""The message of an exception (or any value) on one line: its words joined by single
    spaces; the type's name when it has none (``KeyError()``).

    >>> one_line(ValueError("two\n  lines")), one_line(KeyError())
    ('two lines', 'KeyError')
    """
    return " ".join(str(value).split()) or type(value).__name__


def check_count(name: str, value: Any, *, minimum: int = 1) -> int:
    """Return ``value`` as a Python int, checking it is an integer >= ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {describe_value(value)}")
    value = int(value)
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return value


def _check_real(name: str, value: Any, accept: Callable[[float], bool], requirement: str) -> float:
    """Return ``value`` as a float, checking it is a real number that ``accept`` accepts.

    ``requirement`` ends the error message ``"{name} must {requirement}, got ..."``.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {describe_value(value)}")
    value = float(value)
    if not accept(value):
        raise ValueError(f"{name} must {requirement}, got {describe_value(value)}")
    return value


def check_positive_float(name: str, value: Any, *, allow_zero: bool = False) -> float:
    """Return ``value`` as a finite float > 0 (or >= 0 with ``allow_zero``)."""
    if allow_zero:
        return _check_real(name, value, lambda v: bool(np.isfinite(v)) and v >= 0, "be finite and "
                                                                                   ">= 0")
    return _check_real(name, value, lambda v: bool(np.isfinite(v)) and v > 0, "be finite and > 0")


def check_probability(name: str, value: Any, *, open_interval: bool = True,
                      allow_zero: bool = False) -> float:
    """Return ``value`` as a float in (0, 1) (or [0, 1] when not ``open_interval``, or
    [0, 1) with ``allow_zero``: a rate, such as the fraction of missing entries)."""
    if allow_zero:
        return _check_real(name, value, lambda v: 0 <= v < 1, "lie in [0, 1)")
    if open_interval:
        return _check_real(name, value, lambda v: 0 < v < 1, "lie in (0, 1)")
    return _check_real(name, value, lambda v: 0 <= v <= 1, "lie in [0, 1]")


def check_vector(name: str, values: Any, *, length: int | None = None) -> np.ndarray:
    """Return a 1-D finite float64 array, optionally of a given length."""
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(
            f"{name} must be a 1-D array of numbers, got {describe_value(values)}") from exc
    if array.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {array.shape}")
    if array.size == 0:
        raise ValueError(f"{name} must not be empty")
    if length is not None and array.shape[0] != length:
        raise ValueError(f"{name} must have length {length}, got shape {array.shape}")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} must be finite, got non-finite values")
    return array


def check_proportions(name: str, values: Any, *, atol: float = 1e-8) -> np.ndarray:
    """Return cluster proportions: a 1-D positive vector summing to one."""
    array = check_vector(name, values)
    if np.any(array <= 0):
        raise ValueError(f"{name} must be positive, got min {describe_value(array.min())}")
    total = float(array.sum())
    if abs(total - 1.0) > atol:
        raise ValueError(f"{name} must sum to 1, got sum {describe_value(total)}")
    return array / total


def check_block_array(
    name: str,
    values: Any,
    shape: tuple[int, int],
    *,
    lower: float | None = None,
    upper: float | None = None,
) -> np.ndarray:
    """Return a finite float64 (g, m) array of block parameters within (lower, upper)."""
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(
            f"{name} must be an array of numbers, got {describe_value(values)}") from exc
    if array.shape != shape:
        raise ValueError(f"{name} must have shape {shape}, got shape {array.shape}")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} must be finite")
    if lower is not None and np.any(array <= lower):
        raise ValueError(f"{name} must be > {describe_value(lower)}, got min "
                         f"{describe_value(array.min())}")
    if upper is not None and np.any(array >= upper):
        raise ValueError(f"{name} must be < {describe_value(upper)}, got max "
                         f"{describe_value(array.max())}")
    return array


def check_unmasked(name: str, values: Any) -> Any:
    """``values``, or a masked array's data when none of it is masked; a masked array with
    masked entries is refused (ValueError naming ``name`` and how many): ``np.asarray`` would
    drop the mask and read whatever the masked entries hold, as if they were values."""
    if not np.ma.isMaskedArray(values):
        return values
    masked = int(np.ma.count_masked(values))
    if masked:
        raise ValueError(f"{name} is a masked array with {masked} masked entr"
                         f"{'y' if masked == 1 else 'ies'}: give a value for every item")
    return np.ma.getdata(values)


def _as_integer_array(name: str, values: Any, *, what: str) -> np.ndarray:
    """Return ``values`` as an integer array of any shape, accepting integral floats.

    Integer and boolean arrays keep their dtype; integral floats become int64.
    ``what`` names the expected content in the error message; a masked array with masked
    entries is refused (:func:`check_unmasked`).
    """
    values = check_unmasked(name, values)
    try:
        array = np.asarray(values)
    except (TypeError, ValueError) as exc:  # ragged nested sequences
        raise TypeError(
            f"{name} must be an array of integers, got {describe_value(values)}") from exc
    kind = array.dtype.kind
    if kind in "iub":
        return array
    if kind == "f" and np.all(np.isfinite(array)) and np.all(array == np.round(array)):
        return array.astype(np.int64)
    raise TypeError(f"{name} must hold {what}, got dtype {array.dtype} with shape {array.shape}")


def check_integer_array(name: str, values: Any) -> np.ndarray:
    """Return an int64 array of any shape (counts, lengths), accepting integral floats."""
    return _as_integer_array(name, values, what="integers").astype(np.int64, copy=False)


def _check_label_values(
    name: str, array: np.ndarray, *, nonnegative: bool, n_clusters: int | None
) -> None:
    if array.size == 0:
        raise ValueError(f"{name} must not be empty, got shape {array.shape}")
    if nonnegative and array.min() < 0:
        raise ValueError(f"{name} must be non-negative, got min {int(array.min())}")
    if n_clusters is not None and array.max() >= n_clusters:
        raise ValueError(f"{name} must lie in [0, {n_clusters}), got max {int(array.max())}")


def check_labels(
    name: str,
    labels: Any,
    *,
    length: int | None = None,
    n_clusters: int | None = None,
    nonnegative: bool = True,
) -> np.ndarray:
    """Return a 1-D vector of integer labels as int64.

    Parameters
    ----------
    name : str
        Argument name used in error messages.
    labels : array-like of shape (n,)
        The labels; integral floats and booleans are accepted.
    length : int, optional
        Required length.
    n_clusters : int, optional
        When given, labels must lie in ``[0, n_clusters)``.
    nonnegative : bool, default=True
        Refuse negative labels (comparison metrics accept any integers).
    """
    array = _as_integer_array(name, labels, what="integer labels")
    if array.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {array.shape}")
    if length is not None and array.shape[0] != length:
        raise ValueError(f"{name} must have length {length}, got shape {array.shape}")
    array = array.astype(np.int64, copy=False)
    _check_label_values(name, array, nonnegative=nonnegative, n_clusters=n_clusters)
    return array


def check_label_sets(
    name: str,
    labels: Any,
    *,
    length: int | None = None,
    n_clusters: int | None = None,
    nonnegative: bool = True,
) -> np.ndarray:
    """Return a stack of label sets of shape (n_sets, n); a 1-D input becomes one set.

    Integer input keeps its dtype (label sets are stored in the smallest
    unsigned type); integral floats become int64. Parameters as in
    :func:`check_labels`, with ``length`` the number of labels of each set.
    """
    array = _as_integer_array(name, labels, what="integer labels")
    if array.ndim == 1:
        array = array[None, :]
    if array.ndim != 2:
        raise ValueError(f"{name} must be 1-D or 2-D (n_sets, n), got shape {array.shape}")
    if length is not None and array.shape[1] != length:
        raise ValueError(f"{name} must have {length} columns, got shape {array.shape}")
    _check_label_values(name, array, nonnegative=nonnegative, n_clusters=n_clusters)
    return array


def check_mask(name: str, values: Any, shape: tuple[int, int]) -> np.ndarray:
    """Return a boolean mask of ``shape`` from booleans or 0/1 numbers (an observed mask:
    True where an entry is observed).

    Examples
    --------
    >>> check_mask("observed", [[1, 0], [1, 1]], (2, 2)).tolist()
    [[True, False], [True, True]]
    """
    try:
        array = np.asarray(values)
    except (TypeError, ValueError) as exc:
        raise TypeError(
            f"{name} must be an array of booleans or 0/1, got {describe_value(values)}") from exc
    if array.shape != tuple(shape):
        raise ValueError(f"{name} must have shape {tuple(shape)}, got shape {array.shape}")
    if array.dtype.kind == "b":
        return array
    if array.dtype.kind not in "iuf":
        raise TypeError(f"{name} must hold booleans or 0/1, got dtype {array.dtype}")
    if array.size and not np.all((array == 0) | (array == 1)):
        raise ValueError(f"{name} must hold only 0 and 1 (1: observed), got other values")
    return array.astype(bool)


def check_choice(name: str, value: Any, choices: Any) -> Any:
    """Return ``value`` when it is one of ``choices``, else ValueError listing them.

    Examples
    --------
    >>> check_choice("method", "cem", ("cem", "vem"))
    'cem'
    >>> check_choice("method", "em", ("cem", "vem"))
    Traceback (most recent call last):
    ...
    ValueError: method must be one of 'cem', 'vem', got 'em'
    """
    choices = tuple(choices)
    try:
        known = value in choices
    except (TypeError, ValueError):  # an unhashable value, or an array
        known = False
    if not known:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}, got "
                         f"{describe_value(value)}")
    return value
