"""Where the checks of :mod:`lbm_bench.storage.validate` read items from.

Two sources with one interface (``attrs(path)``, ``dataset(path)``): an open
HDF5 file (:class:`FileSource`, for reading) and the in-memory
:class:`Layout` of a table about to be written (:class:`MemorySource`, so that
the writer refuses, before touching the disk, a table the reader would refuse).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import h5py
import numpy as np

__all__ = ["FormatError", "Layout", "FileSource", "MemorySource", "SafeAttributes"]


class FormatError(ValueError):
    """A file is not a valid lbm-bench table file (message: ``"<path>: <problem>"``).

    Examples
    --------
    >>> from lbm_bench import load_table
    >>> try:
    ...     load_table("README.md")
    ... except FormatError as exc:   # a ValueError
    ...     print(str(exc)[:40])
    README.md: not a readable HDF5 file (Una
    """


@dataclass
class Layout:
    """Every item of a file: attributes by object path ("" is the root), datasets by path."""

    attrs: dict[str, dict[str, Any]] = field(default_factory=dict)
    datasets: dict[str, np.ndarray] = field(default_factory=dict)


class FileSource:
    """Items of an open HDF5 file (datasets are read only when asked)."""

    def __init__(self, file: h5py.File) -> None:
        self.file = file

    def _get(self, path: str) -> Any:
        """The object at ``path`` ("" is the root group), None when there is none."""
        try:
            return self.file[path or "/"]
        except KeyError:
            # h5py also raises KeyError for a damaged object: tell it from a missing one.
            if path and not self._exists(path):
                return None
            raise

    def _exists(self, path: str) -> bool:
        try:
            return path in self.file
        except Exception:  # a damaged link on the way: treat as present and unreadable
            return True

    def attrs(self, path: str) -> Mapping[str, Any] | None:
        obj = self._get(path)
        return SafeAttributes(obj.attrs) if isinstance(obj, h5py.Group) else None

    def dataset(self, path: str) -> Any:
        obj = self._get(path)
        return obj if isinstance(obj, h5py.Dataset) else None


class SafeAttributes(Mapping[str, Any]):
    """Attributes of an HDF5 object, reading only numbers and strings.

    h5py can crash the interpreter on some other attribute types found in
    damaged files (a string whose type was corrupted into a variable-length
    sequence): such values raise TypeError instead of being read.
    """

    def __init__(self, attrs: h5py.AttributeManager) -> None:
        self.attrs = attrs

    def __getitem__(self, name: str) -> Any:
        dtype = self.attrs.get_id(name).dtype
        if dtype.kind in "biuf" or h5py.check_string_dtype(dtype) is not None:
            return self.attrs[name]
        raise TypeError(f"attribute {name} has an unsupported type ({dtype})")

    def __iter__(self) -> Iterator[str]:
        return iter(list(self.attrs))

    def __len__(self) -> int:
        return len(self.attrs)


class MemorySource:
    """Items of a layout about to be written (validated before touching the disk)."""

    def __init__(self, layout: Layout) -> None:
        self.layout = layout

    def attrs(self, path: str) -> Mapping[str, Any] | None:
        return self.layout.attrs.get(path)

    def dataset(self, path: str) -> Any:
        return self.layout.datasets.get(path)
