"""The checks of a table's items (lbm_bench.storage.validate): the items of a file, held in memory,
build the same Table as the file; each bad item is one line naming it, all of them are reported, and
a source that is not a table of a supported version is fatal at once."""

from pathlib import Path

import numpy as np
import pytest

from lbm_bench.storage import load_table
from lbm_bench.storage.item_reader import summary
from lbm_bench.storage.sources import MemorySource
from lbm_bench.storage.validate import read_table
from tests.storage.tables import assert_same, layout_of

DATA = Path(__file__).resolve().parents[1] / "data"
SAMPLES = ["table_v1.h5", "table_v1_1.h5", "table_v1_1_sparse.h5", "table_v1_2_categorical.h5",
           "table_v1_3_missing_sparse.h5"]


@pytest.mark.parametrize("sample", SAMPLES)
def test_the_items_in_memory_build_the_files_table(sample):
    problems = []
    table = read_table(MemorySource(layout_of(DATA / sample)), problems)
    assert problems == []
    assert_same(table, load_table(DATA / sample))


def test_every_bad_item_is_one_line_naming_it():
    layout = layout_of(DATA / "table_v1_1.h5")
    layout.datasets["map/rows"] = layout.datasets["map/rows"][:-1]  # a label short
    layout.datasets["gibbs/cols"] = layout.datasets["gibbs/cols"].astype(np.float64)
    del layout.attrs["calibration"]["n_steps"]
    problems = []
    assert read_table(MemorySource(layout), problems) is None
    assert any(p.startswith("dataset map/rows has shape (11,), expected (12,)") for p in problems), problems
    assert any(p.startswith("dataset gibbs/cols has dtype float64, expected") for p in problems), problems
    assert "attribute calibration@n_steps is missing" in problems
    assert all("\n" not in p for p in problems)
    assert summary(problems).startswith(problems[0]) and f"(and {len(problems) - 1} more problems)" in summary(problems)
    assert summary(problems[:1]) == problems[0]
