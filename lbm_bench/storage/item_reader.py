"""Reading the items of an ``lbm-bench-table`` file one at a time, against the format's specs.

A :class:`Reader` reads each attribute and dataset of a source (an open file, or the layout
the writer is about to write) against what :mod:`lbm_bench.storage.format` says it must be
(the attribute's kind; the dataset's shape from the header's sizes and the attributes read
before it, its dtype and label range) and records a one-line problem for each bad item, so
that one pass reports every problem of a file. A problem after which nothing else can be
checked (not a table, an unsupported version, no header) raises :class:`Fatal`. The checks
between items, and the Table they build, are :mod:`lbm_bench.storage.validate`'s.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from lbm_bench._validation import describe_value, one_line
from lbm_bench.models.family import Family
from lbm_bench.storage.format import (
    FORMAT_NAME,
    MAJOR,
    ROOT_ATTRIBUTES,
    dataset_spec,
    parse_version,
)
from lbm_bench.storage.label_sets import StoredLabelSets

__all__ = ["HDF5_ERRORS", "Fatal", "Reader", "any_none", "check_format", "read_version", "summary"]


class Fatal(Exception):
    """A problem after which the rest of the file cannot be checked."""


def summary(problems: list[str]) -> str:
    """The first problem, and how many more there are."""
    extra = len(problems) - 1
    return problems[0] + (f" (and {extra} more problem{'s' if extra > 1 else ''})" if extra else "")


def _as_int(value: Any) -> int | None:
    return int(value) if isinstance(value,
                                    (int,
                                     np.integer)) and not isinstance(value,
                                                                     (bool, np.bool_)) else None


def _as_float(value: Any) -> float | None:
    number = isinstance(
        value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))
    return float(value) if number else None


def _as_str(value: Any) -> str | None:
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            return None
    return value if isinstance(value, str) else None


def _as_vector(kinds: str, dtype: type) -> Callable[[Any], np.ndarray | None]:
    def convert(value: Any) -> np.ndarray | None:
        if isinstance(value, np.ndarray) and value.ndim == 1 and value.dtype.kind in kinds:
            return value.astype(dtype)
        return None

    return convert


#: Attribute converters by expected kind, with the description used in messages.
_CONVERTERS: dict[str, tuple[Callable[[Any], Any], str]] = {
    "int": (_as_int, "an integer"),
    "float": (_as_float, "a real number"),
    "str": (_as_str, "a UTF-8 string"),
    "ints": (_as_vector("iu", np.int64), "a 1-D integer array"),
    "floats": (_as_vector("iuf", np.float64), "a 1-D real array"),
}


#: Dataset dtype kinds by name, for messages.
_KIND_NAMES = {"u": "unsigned integer", "f": "float", "iu": "integer"}


#: What h5py raises on damaged or exotic content (a missing item is not an error: see _FileSource).
HDF5_ERRORS = (KeyError, OSError, RuntimeError, TypeError, ValueError)


def _shape_text(shape: tuple[int | None, ...]) -> str:
    """``(12, *)`` for an expected shape (None: any extent)."""
    inner = ", ".join("*" if e is None else str(e) for e in shape)
    return f"({inner},)" if len(shape) == 1 else f"({inner})"


def any_none(*values: Any) -> bool:
    """True when one of ``values`` is None (safe with arrays, unlike ``None in values``)."""
    return any(value is None for value in values)


# a value read from a file, as messages show it (``5.5``, never ``np.float64(5.5)``)
_short = describe_value


@dataclass
class Reader:
    """Reads items from a source, recording a one-line problem per bad item.

    ``sizes`` holds the extents datasets are checked against: the header's
    ``n_rows``, ``n_cols``, ``g``, ``m`` and the attributes read so far
    (``"calibration@n_steps"``, ``"@categories"``); ``family`` (from ``@kind``) and
    ``version`` come from the header, ``header`` holds the values of the family's header
    attributes.
    """

    source: Any
    problems: list[str]
    family: Family | None = None
    version: tuple[int, int] = (MAJOR, 0)
    sizes: dict[str, int | None] = field(default_factory=dict)
    header: dict[str, Any] = field(default_factory=dict)
    # datasets not read: StoredLabelSets, checked as they are read
    left_in_file: frozenset[str] = frozenset()

    def problem(self, message: str) -> None:
        if message not in self.problems:  # e.g. a missing group is reported once
            self.problems.append(message)

    def attr(self, path: str, name: str, kind: str, *, fatal: bool = False) -> Any:
        """Attribute ``name`` of group ``path`` converted by ``kind``; None on a problem."""
        convert, description = _CONVERTERS[kind]
        try:
            attrs = self.source.attrs(path)
            raw = None if attrs is None else attrs.get(name)
        except HDF5_ERRORS as exc:
            attrs, raw = {}, exc
        value = None if raw is None or isinstance(raw, Exception) else convert(raw)
        if isinstance(value, int):
            self.sizes[f"{path}@{name}"] = value
        if value is not None:
            return value
        where = f"{path}@{name}"
        if attrs is None:
            message = f"group {path} is missing"
        elif raw is None:
            message = f"attribute {where} is missing"
        elif isinstance(raw, Exception):
            message = f"attribute {where} is unreadable ({one_line(raw)})"
        else:
            message = f"attribute {where} must be {description}, got {_short(raw)}"
        if fatal:
            raise Fatal(message)
        self.problem(message)
        return None

    def attrs(self, path: str, kinds: Mapping[str, str]) -> dict[str, Any] | None:
        """Every attribute of ``kinds`` of group ``path`` (None when one is bad: a problem
        recorded)."""
        values = {name: self.attr(path, name, kind) for name, kind in kinds.items()}
        return None if any_none(*values.values()) else values

    def has_attr(self, path: str, name: str) -> bool:
        try:
            return name in (self.source.attrs(path) or {})
        except HDF5_ERRORS:
            return False

    def has_dataset(self, path: str) -> bool:
        try:
            return self.source.dataset(path) is not None
        except HDF5_ERRORS:
            return True  # present but damaged: array() reports it

    def dataset(self, path: str) -> np.ndarray | None:
        """Dataset ``path`` checked against its spec (shape, dtype, labels); None on a problem."""
        spec = dataset_spec(path, self.family)
        shape = tuple(self.sizes.get(e) if isinstance(e, str) else e for e in spec.shape)
        left = self.sizes[spec.labels] if path in self.left_in_file else 0
        values = self.array(path, shape, spec.kinds, dtype=spec.dtype, left=left)
        if values is not None and spec.labels is not None and not left and values.size:
            n_classes = self.sizes[spec.labels]
            if values.max() >= n_classes:
                self.problem(f"dataset {path} holds label {int(values.max())}, outside [0, "
                             f"{n_classes})")
                return None
        return values

    def array(self, path: str, shape: tuple[int | None, ...], kinds: str, *,
              dtype: np.dtype | None = None, left: int = 0) -> np.ndarray | None:
        """Dataset ``path`` if its shape (None: any extent) and dtype fit (``left``: labels in
        ``[0, left)``, left > 0, left in the file: a StoredLabelSets); None on a problem."""
        try:
            dataset = self.source.dataset(path)
            if dataset is None:
                self.problem(f"dataset {path} is missing")
                return None
            actual = tuple(dataset.shape)
            fits = len(actual) == len(shape) and all(e in (None, a)
                                                     for e, a in zip(shape, actual, strict=True))
            if not fits:
                self.problem(f"dataset {path} has shape {actual}, expected {_shape_text(shape)}")
                return None
            if (dtype is not None and dataset.dtype != dtype) or dataset.dtype.kind not in kinds:
                wanted = str(dtype) if dtype is not None else _KIND_NAMES[kinds]
                self.problem(f"dataset {path} has dtype {dataset.dtype}, expected {wanted}")
                return None
            if left:
                return StoredLabelSets.of_dataset(dataset, left)
            values = np.asarray(dataset[()])
        except HDF5_ERRORS as exc:
            self.problem(f"dataset {path} is unreadable ({one_line(exc)})")
            return None
        return values.astype(np.float64, copy=False) if kinds == "f" else values


def read_version(source: Any) -> tuple[int, int]:
    """``(major, minor)`` of a source whose root says ``lbm-bench-table`` of a supported major.

    Raises
    ------
    Fatal
        When the format name or version is missing, another or unsupported.
    """
    return check_format(Reader(source, []))


def check_format(reader: Reader) -> tuple[int, int]:
    """The file's version; Fatal unless the root says ``lbm-bench-table`` of major MAJOR."""
    name = reader.attr("", "format", ROOT_ATTRIBUTES["format"], fatal=True)
    if name != FORMAT_NAME:
        raise Fatal(f"not an {FORMAT_NAME} file (@format is {describe_value(name)})")
    text = reader.attr("", "format_version", ROOT_ATTRIBUTES["format_version"], fatal=True)
    version = parse_version(text)
    if version is None:
        raise Fatal(f"@format_version must look like MAJOR.MINOR, got {describe_value(text)}")
    if version[0] > MAJOR:
        raise Fatal(f"format version {text} is newer than this reader (supports {MAJOR}.x); "
                    "upgrade lbm-bench")
    if version[0] < MAJOR:
        raise Fatal(f"format version {text} is not supported (this reader reads {MAJOR}.x)")
    return version
