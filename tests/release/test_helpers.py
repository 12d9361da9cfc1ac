"""The release tests' own diagnostics: when two rebuilt files differ, the comparison names the
datasets and attributes that differ (it must not crash on the first difference)."""

import h5py
import numpy as np
import pytest

from tests.release.helpers import equal, h5_differences, same_bytes


def _write(path, values, attribute, *, extra=False):
    with h5py.File(path, "w") as f:
        f.create_dataset("data", data=np.asarray(values))
        f.create_dataset("labels", data=np.array([0, 1, 1], dtype=np.uint8))
        f.attrs["risk"] = attribute
        if extra:
            f.create_dataset("only_here", data=np.zeros(2))


def test_equal_compares_values_with_nan_equal_to_nan():
    assert equal([1.0, np.nan], [1.0, np.nan])
    assert not equal([1.0, np.nan], [1.0, 2.0])
    assert not equal([1.0, 2.0], [1.0, 2.0, 3.0])
    assert equal(np.array([1, 2], dtype=np.int64), [1, 2])
    assert not equal(b"gaussian", b"poisson")


def test_h5_differences_name_the_datasets_and_attributes_that_differ(tmp_path):
    _write(tmp_path / "a.h5", [1.0, 2.0, np.nan], 0.1)
    _write(tmp_path / "b.h5", [1.0, 2.5, np.nan], 0.2, extra=True)
    with h5py.File(tmp_path / "a.h5", "r") as fa, h5py.File(tmp_path / "b.h5", "r") as fb:
        differences = h5_differences(fa, fb)
    assert "data values" in differences
    assert "only_here (only in b)" in differences
    assert any(d == "/@risk values 0.1 vs 0.2" for d in differences)
    assert not any(d.startswith("labels") for d in differences)


def test_same_bytes_names_the_differing_dataset(tmp_path):
    for name, value in (("a", 2.0), ("b", 3.0)):
        (tmp_path / name / "tables").mkdir(parents=True)
        _write(tmp_path / name / "tables" / "t.h5", [1.0, value], 0.1)
        (tmp_path / name / "README.md").write_text("same\n")
    with pytest.raises(AssertionError, match=r"tables/t\.h5:data values"):
        same_bytes(tmp_path / "a", tmp_path / "b")
    same_bytes(tmp_path / "a", tmp_path / "a")
