"""lbm_bench.storage.compare: two table files item by item, the same table up to rounding or
another table (issue 35: what ``verify --against`` says when a rebuild's bytes differ)."""

import shutil

import h5py
import numpy as np
import pytest

from lbm_bench.storage.compare import ROUNDING, compare_table_files

SAMPLE = "tests/data/table_v1_3_missing_sparse.h5"  # sparse counts with effects and a missing set


@pytest.fixture
def pair(tmp_path):
    a, b = tmp_path / "a.h5", tmp_path / "b.h5"
    shutil.copyfile(SAMPLE, a)
    shutil.copyfile(SAMPLE, b)
    return a, b


def test_identical_files(pair):
    comparison = compare_table_files(*pair)
    assert comparison.same_up_to_rounding and comparison.rounded == () and comparison.largest == 0.0


def test_floats_an_ulp_apart_are_the_same_table_up_to_rounding(pair):
    """What a CPU whose C library rounds differently gives: the scale and the parameters
    computed from it a few ulp apart, every integer value the same."""
    with h5py.File(pair[1], "r+") as f:
        f.attrs["scale"] = np.nextafter(f.attrs["scale"], np.inf)
        rates = f["params/rates"][()]
        f["params/rates"][...] = rates * (1 + 2 * np.finfo(float).eps)
    comparison = compare_table_files(*pair)
    assert comparison.same_up_to_rounding
    assert comparison.rounded == ("@scale", "params/rates") and 0 < comparison.largest < 1e-15
    assert comparison.describe().startswith("the same table up to rounding: ")
    assert "(@scale, params/rates; largest " in comparison.describe()


@pytest.mark.parametrize("change, named", [
    (lambda f: f["map/rows"].__setitem__(0, 1 - f["map/rows"][0]), "map/rows"),
    (lambda f: f["data/values"].__setitem__(0, f["data/values"][0] + 1), "data/values"),
    (lambda f: f.attrs.__setitem__("scale", f.attrs["scale"] * (1 + 10 * ROUNDING)), "@scale"),
    (lambda f: f.attrs.__setitem__("seed", f.attrs["seed"] + 1), "@seed"),
    (lambda f: f.attrs.__delitem__("risk_rhat"), "@risk_rhat"),
])
def test_another_table_names_what_differs(pair, change, named):
    with h5py.File(pair[1], "r+") as f:
        change(f)
    comparison = compare_table_files(*pair)
    assert not comparison.same_up_to_rounding and comparison.different == (named,)
    assert comparison.describe() == f"another table: {named} differ"
