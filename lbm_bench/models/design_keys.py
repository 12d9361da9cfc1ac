"""The keys of a design file checked one by one, each refusal a line naming the key.

:mod:`lbm_bench.models.design_file` reads a design file's TOML into nested tables; the
helpers here take a value out of them with its check: its type (:func:`get_key`), an
array of finite numbers of a given shape whose numbers float64 holds (:func:`number_array`),
two positive integers (:func:`count_pair`), the keys a table may have for the file's version
(:func:`check_keys`). Their messages name the key as the file spells it (``design.blocks.rates``,
a top-level key quoted: ``'kind'``), never as a command-line flag would.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["KEYS", "check_keys", "count_pair", "effect_array", "finite_number", "fitted_classes",
           "get_key", "key_name", "number_array", "runners_up", "string_array"]

#: The keys of each table of a design file, and the version that added each one that is not
#: in 1.0.
KEYS: dict[str, dict[str, tuple[int, int]]] = {
    "": {"format": (1, 0), "kind": (1, 0), "created_by": (1, 0), "source": (1, 0),
         "selection": (1, 0), "design": (1, 0), "classes": (1, 2)},
    "source": {"name": (1, 0), "sha256": (1, 0), "shape": (1, 0), "row_names": (1, 2),
               "col_names": (1, 2)},
    "selection": {"criterion": (1, 0), "value": (1, 0), "counts": (1, 0), "max_clusters": (1, 0),
                  "runners_up": (1, 0)},
    "design": {"row_proportions": (1, 0), "col_proportions": (1, 0), "density": (1, 0),
               "path_knee": (1, 1), "blocks": (1, 0), "overall": (1, 0), "effects": (1, 0),
               "missing": (1, 0)},
    "design.effects": {"rows": (1, 0), "cols": (1, 0)},
    "design.missing": {"mechanism": (1, 0), "rate": (1, 0), "probs": (1, 0)},
    "classes": {"rows": (1, 2), "cols": (1, 2)},
}
#: Sizes (a source's shape, counts) must lie below this: float64 holds every integer below it.
_LARGEST_SIZE = 2**53
#: Effects must have mean one within this.
_MEAN_TOLERANCE = 1e-6


def key_name(table: str, key: str) -> str:
    """A key as a message names it: ``design.blocks.rates``, a top-level key quoted (``'kind'``:
    never the word alone, which the command line would read as its flag)."""
    return f"{table}.{key}" if table else repr(key)


def _kind_name(kind: Any) -> str:
    names = {
        str: "a string", int: "an integer", float: "a number", list: "an array", dict: "a table"
    }
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join(names.get(k, k.__name__) for k in kinds)


def get_key(table: dict, name: str, key: str, kind: type | tuple[type, ...]) -> Any:
    """``table[key]`` (of the table ``name``), which must be present and of type ``kind``."""
    if key not in table:
        raise KeyError(f"the key {key_name(name, key)} is missing")
    value = table[key]
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if not isinstance(value, kind) or (isinstance(value, bool) and bool not in kinds):
        raise TypeError(f"{key_name(name, key)} must be {_kind_name(kind)}, got {value!r:.80}")
    return value


def check_keys(table: dict, name: str, version: tuple[int, int]) -> None:
    """Refuse a key the table ``name`` does not have, or that a later version added."""
    known = KEYS[name]
    unknown = sorted(set(table) - set(known))
    if unknown:
        raise ValueError(f"unknown key {key_name(name, unknown[0])}")
    later = sorted(key for key in table if known[key] > version)
    if later:
        added = ".".join(map(str, known[later[0]]))
        raise ValueError(f"{key_name(name, later[0])} is a format {added} key; this file declares "
                         f"{'.'.join(map(str, version))}")


def finite_number(table: dict, name: str, key: str) -> float:
    """A number (integer or float) that float64 holds, finite."""
    value = get_key(table, name, key, (int, float))
    try:
        number = float(value)
    except OverflowError:
        number = math.inf
    if not math.isfinite(number):
        raise ValueError(f"{key_name(name, key)} must be a finite number, got {value!r:.40}")
    return number


def number_array(table: dict, name: str, key: str, shape: tuple[int, ...] | None) -> np.ndarray:
    """An array of finite numbers (float64) of ``shape`` (any shape when None)."""
    value = get_key(table, name, key, list)
    where = key_name(name, key)
    wanted = f"an array of numbers of shape {shape}" if shape is not None else "an array of numbers"
    try:
        array = np.array(value, dtype=np.float64)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"{where} must be {wanted} (not ragged, no text, each number within "
                         "float64)") from None
    if shape is not None and array.shape != shape:
        raise ValueError(f"{where} must have shape {shape}, got {array.shape}")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{where} must hold finite numbers")
    return array


def count_pair(table: dict, name: str, key: str) -> tuple[int, int]:
    """Two positive integers (below 2^53)."""
    value = get_key(table, name, key, list)
    if len(value) != 2 or not all(isinstance(v, int) and not isinstance(v, bool)
                                  and 1 <= v < _LARGEST_SIZE for v in value):
        raise ValueError(f"{key_name(name, key)} must be two positive integers, got "
                         f"{value!r:.80}")
    return int(value[0]), int(value[1])


def string_array(table: dict, name: str, key: str, size: int) -> tuple[str, ...]:
    """``size`` strings."""
    value = get_key(table, name, key, list)
    if len(value) != size or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{key_name(name, key)} must be {size} strings (one per "
                         f"{'row' if key.startswith('row') else 'column'}), got "
                         f"{len(value)} items")
    return tuple(value)


def effect_array(table: dict, key: str, size: int) -> np.ndarray:
    """Row or column effects: positive numbers of mean one (within 1e-6), one per row or column."""
    values = number_array(table, "design.effects", key, (size,))
    if values.min() <= 0 or abs(values.mean() - 1.0) > _MEAN_TOLERANCE:
        raise ValueError(f"design.effects.{key} must be positive with mean one, got min "
                         f"{values.min():g} and mean {values.mean():.6g}")
    return values


def runners_up(sel: dict) -> tuple[tuple[int, int, float], ...]:
    """``selection.runners_up``: cells of two positive integers and a finite number."""
    runners = get_key(sel, "selection", "runners_up", list) if "runners_up" in sel else []
    out = []
    for cell in runners:
        ok = (isinstance(cell, list) and len(cell) == 3
              and all(isinstance(c, int) and not isinstance(c, bool) and c >= 1
                      for c in cell[:2]) and isinstance(cell[2], (int, float))
              and not isinstance(cell[2], bool))
        value = float(cell[2]) if ok and abs(cell[2]) < 1e308 else math.inf
        if not ok or not math.isfinite(value):
            raise ValueError(f"selection.runners_up must hold [g, m, value] cells of two positive "
                             f"integers and a finite number, got {cell!r:.80}")
        out.append((int(cell[0]), int(cell[1]), value))
    return tuple(out)


def fitted_classes(source: dict, version: tuple[int, int], shape: tuple[int, int],
             counts: tuple[int, int]) -> tuple[np.ndarray | None, np.ndarray | None]:
    """The fitted classes (format 1.2): a class per row and column, within the counts."""
    if "classes" not in source:
        return None, None
    table = get_key(source, "", "classes", dict)
    check_keys(table, "classes", version)
    out = []
    for key, size, count in (("rows", shape[0], counts[0]), ("cols", shape[1], counts[1])):
        values = get_key(table, "classes", key, list)
        if len(values) != size or not all(isinstance(v, int) and not isinstance(v, bool)
                                          and 0 <= v < count for v in values):
            raise ValueError(f"classes.{key} must be {size} integers in 0..{count - 1} "
                             f"(selection.counts), got {len(values)} items")
        out.append(np.array(values, dtype=np.int64))
    return out[0], out[1]
