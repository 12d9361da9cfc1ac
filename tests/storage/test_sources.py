"""Where the checks read a table's items from (lbm_bench.storage.sources): an open HDF5 file and the
layout about to be written answer the same questions the same way, and attributes of a type the
reader does not read are refused, not read."""

from pathlib import Path

import h5py
import numpy as np
import pytest

from lbm_bench.storage.sources import FileSource, MemorySource, SafeAttributes
from tests.storage.tables import layout_of

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "table_v1_1.h5"


def test_a_file_and_its_layout_answer_alike():
    layout = layout_of(SAMPLE)
    with h5py.File(SAMPLE, "r") as f:
        for source in (FileSource(f), MemorySource(layout)):
            assert source.attrs("")["format"] in ("lbm-bench-table", b"lbm-bench-table")
            assert source.attrs("no/such/group") is None and source.dataset("no/such/dataset") is None
            data = source.dataset("data")
            assert np.array_equal(np.asarray(data[()]), layout.datasets["data"])
            assert source.attrs("data") is None  # a dataset has no group attributes here
        assert isinstance(FileSource(f).attrs(""), SafeAttributes)
        assert set(FileSource(f).attrs("")) == set(layout.attrs[""]) and len(FileSource(f).attrs("")) > 5


def test_attributes_of_other_types_are_refused(tmp_path):
    path = tmp_path / "odd.h5"
    with h5py.File(path, "w") as f:
        f.attrs["number"] = 3
        f.attrs["text"] = "ok"
        f.attrs.create("ragged", [np.array([1, 2]), np.array([3])], dtype=h5py.vlen_dtype(np.int64))
    with h5py.File(path, "r") as f:
        attrs = FileSource(f).attrs("")
        assert attrs["number"] == 3 and attrs["text"] == "ok"
        with pytest.raises(TypeError, match="attribute ragged has an unsupported type"):
            attrs["ragged"]
        assert sorted(attrs) == ["number", "ragged", "text"]  # listed, never read by listing
