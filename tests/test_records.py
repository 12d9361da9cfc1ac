"""Checked frozen records (lbm_bench._records): each field carries its check, flag and help; a record
is checked on construction, built from a mapping, and serialised to a dict (the command line's options
made from the fields: tests/cli/test_common.py)."""

from __future__ import annotations

import dataclasses

import pytest

from lbm_bench import _records
from lbm_bench._records import Record, setting


@dataclasses.dataclass(frozen=True)
class Knobs(Record):
    n_items: int = setting(10, _records.count(1), "--n-items", "how many items")
    share: float = setting(0.5, _records.open_probability, "--share", "a share in (0, 1)")
    workers: int = setting(1, _records.count(1), "--workers", "processes (how, not what)", stored=False)
    loud: bool = setting(False, _records.flag, "--loud", "say more")
    size: int | str = setting("auto", lambda name, value: value if value == "auto" else _records.count(1)(name, value),
                              "--size", "an integer or auto", parse=_records.int_or_auto)

    def _check_together(self) -> None:
        if self.loud and self.n_items > 100:
            raise ValueError("loud with more than 100 items")


def test_fields_are_checked_and_normalised_on_construction():
    import numpy as np

    knobs = Knobs(n_items=np.int64(3), share=0.25)
    assert knobs.n_items == 3 and type(knobs.n_items) is int  # normalised to a Python int
    with pytest.raises(TypeError, match="n_items must be an integer, got 3.0"):
        Knobs(n_items=3.0)
    with pytest.raises(ValueError, match="n_items"):
        Knobs(n_items=0)
    with pytest.raises(ValueError, match="share"):
        Knobs(share=1.0)
    with pytest.raises(TypeError, match="loud must be true or false, got 1"):
        Knobs(loud=1)
    with pytest.raises(ValueError, match="loud with more than 100 items"):
        Knobs(loud=True, n_items=101)
    with pytest.raises(dataclasses.FrozenInstanceError):
        knobs.n_items = 4


def test_the_checks():
    assert _records.fraction("f", 0) == 0.0 and _records.fraction("f", 1) == 1.0
    assert _records.non_negative("x", 0) == 0.0 and _records.positive("x", 2) == 2.0
    with pytest.raises(ValueError):
        _records.positive("x", 0)
    assert _records.spread("s", 0.5) == 0.5
    with pytest.raises(ValueError, match="s must be < 1, got 1.0"):
        _records.spread("s", 1)
    assert _records.optional(_records.positive)("x", None) is None
    assert _records.choice("a", "b")("c", "b") == "b"
    with pytest.raises(ValueError, match="c must be one of"):
        _records.choice("a", "b")("c", "z")
    assert _records.int_or_auto("auto") == "auto" and _records.int_or_auto("7") == 7


def test_mappings_and_records():
    knobs = Knobs.from_mapping({"n_items": 4, "workers": 3})
    assert Knobs.names() == ("n_items", "share", "workers", "loud", "size")
    # sorted by name, and workers (how, not what) not stored
    assert knobs.to_record() == {"loud": False, "n_items": 4, "share": 0.5, "size": "auto"}
    assert knobs.changed() == {"n_items": 4}
    assert Knobs.from_record({**knobs.to_record(), "from_a_newer_version": 1}) == knobs.replace(workers=1)
    assert knobs.replace(share=0.1).share == 0.1 and knobs.share == 0.5
    with pytest.raises(ValueError, match="grid\\[2\\]: unknown setting\\(s\\) colour; allowed: loud, n_items"):
        Knobs.from_mapping({"colour": 1}, where="grid[2]")
    with pytest.raises(ValueError, match="grid\\[2\\]: n_items"):
        Knobs.from_mapping({"n_items": -1}, where="grid[2]")
