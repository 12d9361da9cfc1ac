"""lbm_bench._json: strict JSON of the package's values, NaN written null (what ``info --json`` and
``evaluate --json`` print; ``evaluate --json`` printed ``NaN``, which JSON parsers refuse: issue 48)."""

import json
from pathlib import Path

import numpy as np
import pytest

from lbm_bench._json import json_ready, strict_json


def _strict(text):
    def refuse(constant):
        raise ValueError(f"{constant} is not JSON")

    return json.loads(text, parse_constant=refuse)


def test_json_ready_values_are_strict_json():
    value = {"a": np.float64("nan"), "b": np.arange(3), "c": (np.int64(2), float("inf")),
             "d": Path("t.h5")}
    assert json.dumps(json_ready(value), allow_nan=False) == (
        '{"a": null, "b": [0, 1, 2], "c": [2, null], "d": "t.h5"}')


def test_strict_json_writes_null_and_refuses_what_json_cannot_hold():
    assert _strict(strict_json({"x": [float("-inf"), 1.5], "y": {"z": np.nan}})) == {"x": [None, 1.5],
                                                                                     "y": {"z": None}}
    with pytest.raises(TypeError):
        strict_json({"x": object()})
