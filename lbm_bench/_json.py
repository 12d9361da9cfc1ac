"""Strict JSON (RFC 8259) of the package's values: what ``lbm-bench info --json`` and
``evaluate --json`` print.

Python's ``json.dumps`` writes a NaN as ``NaN`` and an infinity as ``Infinity``, which no JSON
parser but Python's accepts (``jq``, JavaScript, R's ``jsonlite`` refuse the whole document);
a table without a floor has a NaN ``@bayes_risk``, a complete table a NaN balance. So a value
that is not a number is ``null``, numpy's values are Python's and paths are strings
(:func:`json_ready`), and :func:`strict_json` refuses anything else that JSON cannot hold.
"""

from __future__ import annotations

import json
import math
from pathlib import PurePath
from typing import Any

import numpy as np

__all__ = ["json_ready", "strict_json"]


def json_ready(value: Any) -> Any:
    """``value`` as strict JSON can hold it: numpy values as Python ones, paths as strings,
    and NaN and infinities as None, in dicts, lists and tuples at any depth.

    Examples
    --------
    >>> json_ready({"risk": float("nan"), "shape": np.array([3, 2])})
    {'risk': None, 'shape': [3, 2]}
    """
    if isinstance(value, dict):
        return {key: json_ready(item) for key, item in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        items = value.tolist() if isinstance(value, np.ndarray) else value
        return [json_ready(item) for item in items]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, PurePath):
        return str(value)
    return value


def strict_json(value: Any) -> str:
    """``value`` (:func:`json_ready`) as indented JSON with sorted keys, NaN written ``null``.

    Examples
    --------
    >>> print(strict_json({"b": float("inf"), "a": 1}))
    {
      "a": 1,
      "b": null
    }
    """
    return json.dumps(json_ready(value), indent=2, sort_keys=True, allow_nan=False)
