"""Reading a table's items one at a time (lbm_bench.storage.item_reader): each against its spec,
a bad one recorded as one line naming it, a source that is not a table of a supported version
fatal at once."""

from pathlib import Path

import numpy as np
import pytest

from lbm_bench.models.registry import get_family
from lbm_bench.storage.item_reader import Fatal, Reader, any_none, read_version
from lbm_bench.storage.sources import MemorySource
from lbm_bench.storage.validate import read_table
from tests.storage.tables import layout_of

DATA = Path(__file__).resolve().parents[1] / "data"


def test_labels_outside_the_clusters_are_refused():
    layout = layout_of(DATA / "table_v1_1.h5")
    layout.datasets["truth/rows"] = layout.datasets["truth/rows"].copy()
    layout.datasets["truth/rows"][0] = 7
    problems = []
    assert read_table(MemorySource(layout), problems) is None
    assert "dataset truth/rows holds label 7, outside [0, 2)" in problems


@pytest.mark.parametrize("change, message", [
    ({"format": "hdf5-thing"}, "not an lbm-bench-table file (@format is 'hdf5-thing')"),
    ({"format_version": "one"}, "@format_version must look like MAJOR.MINOR, got 'one'"),
    ({"format_version": "2.0"}, "format version 2.0 is newer than this reader (supports 1.x); upgrade lbm-bench"),
    ({"format_version": "0.9"}, "format version 0.9 is not supported (this reader reads 1.x)"),
])
def test_a_source_that_is_not_a_table_is_fatal(change, message):
    layout = layout_of(DATA / "table_v1_1.h5")
    layout.attrs[""].update(change)
    with pytest.raises(Fatal, match=message.replace("(", r"\(").replace(")", r"\)").replace(".", r"\.")):
        read_table(MemorySource(layout), [])


def test_versions_and_messages():
    assert read_version(MemorySource(layout_of(DATA / "table_v1.h5"))) == (1, 0)
    assert read_version(MemorySource(layout_of(DATA / "table_v1_3_missing_sparse.h5"))) == (1, 3)


def test_a_reader_records_each_bad_item_once_and_reads_the_good_ones():
    layout = layout_of(DATA / "table_v1_1.h5")
    layout.attrs[""]["n_rows"] = "many"
    reader = Reader(MemorySource(layout), [], family=get_family("poisson"))
    assert reader.attr("", "n_rows", "int") is None and reader.attr("", "n_rows", "int") is None
    assert reader.problems == ["attribute @n_rows must be an integer, got 'many'"]
    assert reader.attr("", "n_cols", "int") == layout.attrs[""]["n_cols"]
    assert reader.sizes["@n_cols"] == layout.attrs[""]["n_cols"]
    assert reader.array("truth/rows", (3,), "u") is None and "expected (3,)" in reader.problems[-1]
    with pytest.raises(Fatal, match="attribute @nothing is missing"):
        reader.attr("", "nothing", "str", fatal=True)
    assert any_none(1, np.zeros(2), None) and not any_none(1, np.zeros(2))
