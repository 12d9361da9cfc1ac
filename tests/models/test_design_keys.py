"""lbm_bench/models/design_keys.py: a design file's keys checked one by one, each refusal a line
naming the key as the file spells it, a top-level key quoted (never a word the command line reads
as its flag), numbers float64 cannot hold refused (issue 48)."""

import numpy as np
import pytest

from lbm_bench.models.design_keys import (
    check_keys,
    count_pair,
    effect_array,
    finite_number,
    fitted_classes,
    get_key,
    key_name,
    number_array,
    runners_up,
    string_array,
)


def test_key_names():
    assert key_name("", "kind") == "'kind'" and key_name("design.blocks", "rates") == "design.blocks.rates"


@pytest.mark.parametrize(
    "call, message",
    [(lambda: get_key({}, "", "kind", str), "the key 'kind' is missing"),
     (lambda: get_key({"kind": 3}, "", "kind", str), "'kind' must be a string, got 3"),
     (lambda: get_key({"v": True}, "selection", "v", (int, float)), "selection.v must be an integer or a number"),
     (lambda: finite_number({"v": float("nan")}, "selection", "v"), "selection.v must be a finite number"),
     (lambda: finite_number({"v": 10**400}, "selection", "v"), "selection.v must be a finite number"),
     (lambda: number_array({"r": [[1, 2], [3]]}, "design.blocks", "r", None), "design.blocks.r must be an array"),
     (lambda: number_array({"r": [1, 10**400]}, "design.blocks", "r", None), "each number within float64"),
     (lambda: number_array({"r": [1, 2]}, "design.blocks", "r", (3,)), "must have shape (3,), got (2,)"),
     (lambda: count_pair({"c": [2, 0]}, "selection", "c"), "selection.c must be two positive integers"),
     (lambda: count_pair({"c": [2, 2**60]}, "selection", "c"), "selection.c must be two positive integers"),
     (lambda: string_array({"row_names": ["a", 1]}, "source", "row_names", 2), "source.row_names must be 2 strings"),
     (lambda: effect_array({"rows": [0.5, 2.0]}, "rows", 2), "positive with mean one"),
     (lambda: runners_up({"runners_up": [[1, 1, float("inf")]]}), "selection.runners_up must hold"),
     (lambda: fitted_classes({"classes": {"rows": [0, 2], "cols": [0]}}, (1, 2), (2, 1), (2, 1)),
      "classes.rows must be 2 integers in 0..1"),
     (lambda: check_keys({"classes": {}}, "", (1, 1)), "'classes' is a format 1.2 key; this file declares 1.1"),
     (lambda: check_keys({"colour": 1}, "source", (1, 2)), "unknown key source.colour")],
)
def test_each_refusal_names_its_key(call, message):
    with pytest.raises((KeyError, TypeError, ValueError)) as info:
        call()
    text = info.value.args[0]
    assert message in text and "--" not in text, text


def test_good_values_pass():
    assert count_pair({"c": [2, 3]}, "selection", "c") == (2, 3)
    np.testing.assert_array_equal(effect_array({"rows": [0.5, 1.5]}, "rows", 2), [0.5, 1.5])
    assert runners_up({"runners_up": [[2, 1, -3.5]]}) == ((2, 1, -3.5),)
    rows, cols = fitted_classes({"classes": {"rows": [0, 1], "cols": [0]}}, (1, 2), (2, 1), (2, 1))
    assert rows.tolist() == [0, 1] and cols.tolist() == [0]
    assert fitted_classes({}, (1, 1), (2, 1), (2, 1)) == (None, None)
