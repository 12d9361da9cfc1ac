"""Two table files compared item by item: the same table up to rounding, or another table.

A release rebuilt with the same versions has the same bytes on every x86-64 CPU with
AVX2 and FMA (docs/releases.md, "The same bytes on another CPU"). Where that does not
hold (a CPU without FMA, whose C library rounds a few results of ``exp`` or ``log``
differently), ``lbm-bench verify NEW --against OLD`` says of each table file whose
bytes differ which it is: **the same table up to rounding** (every integer value
identical: the counts or codes, the labels, the label sets, the masks, the seeds; every
float within :data:`ROUNDING`, relative) or **another table** (naming what differs).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["ROUNDING", "TableFileComparison", "compare_table_files"]

#: Largest relative difference of two floats that still counts as rounding: the last
#: bits of a calibrated scale, and of the block parameters and Gaussian entries computed
#: from it, differ by a few ulp (1e-16) where the C library rounds differently.
ROUNDING = 1e-12


@dataclass(frozen=True)
class TableFileComparison:
    """What differs between two table files.

    Attributes
    ----------
    rounded : tuple of str
        Float items (``path`` of a dataset, ``path@name`` of an attribute) that differ
        by at most :data:`ROUNDING`, relative.
    different : tuple of str
        Items that differ more, or in dtype or shape, or that only one file has.
    largest : float
        Largest relative difference of the ``rounded`` items (0.0 without any).
    """

    rounded: tuple[str, ...]
    different: tuple[str, ...]
    largest: float

    @property
    def same_up_to_rounding(self) -> bool:
        """Every item equal, or a float within :data:`ROUNDING`."""
        return not self.different

    def describe(self) -> str:
        """One phrase: "the same table up to rounding (...)" or "another table: ... differ"."""
        if self.different:
            return f"another table: {_listed(self.different)} differ"
        if not self.rounded:
            return "the same content (the files differ only in their layout)"
        return ("the same table up to rounding: every integer value identical (data, labels, "
                "label sets), "
                f"floats within {ROUNDING:g} relative ({_listed(self.rounded)}; largest "
                f"{self.largest:.1e})")


def _listed(names: tuple[str, ...], most: int = 5) -> str:
    shown = ", ".join(names[:most])
    return shown + (f" and {len(names) - most} more" if len(names) > most else "")


def _items(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Every dataset (by path) and attribute (``path@name``, ``@name`` at the root) of a file."""
    import h5py

    items: dict[str, Any] = {}
    with h5py.File(path, "r") as f:

        def add(name: str, node: Any) -> None:
            prefix = "" if name == "/" else name
            for key, value in node.attrs.items():
                items[f"{prefix}@{key}"] = value
            if isinstance(node, h5py.Dataset):
                items[name] = node[()]

        add("/", f)
        f.visititems(add)
    return items


def _relative_difference(a: np.ndarray, b: np.ndarray) -> float | None:
    """Largest relative difference of two float arrays of one shape (NaN where both are NaN
    counts as equal); None when they differ in their NaN or infinities."""
    same = (a == b) | (np.isnan(a) & np.isnan(b))
    if same.all():
        return 0.0
    a, b = a[~same], b[~same]
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        return None
    return float(np.max(np.abs(a - b) / np.maximum(np.abs(a), np.abs(b))))


def compare_table_files(a: str | os.PathLike[str],
                        b: str | os.PathLike[str]) -> TableFileComparison:
    """Compare two table files item by item (every dataset and attribute).

    Parameters
    ----------
    a, b : path-like
        Table files (format ``lbm-bench-table``, docs/format.md).

    Returns
    -------
    TableFileComparison
    """
    items_a, items_b = _items(a), _items(b)
    rounded, different, largest = [], [], 0.0
    for name in sorted(set(items_a) | set(items_b)):
        if name not in items_a or name not in items_b:
            different.append(name)
            continue
        x, y = np.asarray(items_a[name]), np.asarray(items_b[name])
        if x.dtype != y.dtype or x.shape != y.shape:
            different.append(name)
        elif x.dtype.kind == "f":
            difference = _relative_difference(x, y)
            if difference is None or difference > ROUNDING:
                different.append(name)
            elif difference > 0.0:
                rounded.append(name)
                largest = max(largest, difference)
        elif not np.array_equal(x, y):
            different.append(name)
    return TableFileComparison(tuple(rounded), tuple(different), largest)
