"""lbm_bench.storage.label_sets: the Gibbs label sets left in their file (``load_table(...,
label_sets=False)``), read a band of items at a time."""

import shutil
from pathlib import Path

import h5py
import numpy as np
import pytest

from lbm_bench import load_table
from lbm_bench.storage import FormatError
from lbm_bench.storage.label_sets import StoredLabelSets

DATA = Path(__file__).resolve().parents[1] / "data"


@pytest.fixture()
def path(tmp_path):
    copy = tmp_path / "table.h5"
    shutil.copy(DATA / "table_v1_1.h5", copy)
    return copy


def test_label_sets_left_in_the_file(path):
    lazy, full = load_table(path, label_sets=False), load_table(path)
    assert isinstance(lazy.gibbs.rows, StoredLabelSets) and isinstance(lazy.gibbs.cols, StoredLabelSets)
    assert lazy.gibbs.rows.shape == full.gibbs.rows.shape and lazy.gibbs.n_samples == full.gibbs.n_samples
    np.testing.assert_array_equal(lazy.gibbs.rows.read(2, 9), full.gibbs.rows[:, 2:9])
    assert lazy.summary() == full.summary()
    with pytest.raises(TypeError, match="label_sets"):
        load_table(path, label_sets="no")


def test_a_label_beyond_the_clusters_is_refused_when_read(path):
    with h5py.File(path, "r+") as f:
        f["gibbs/cols"][3, 1] = 200
        n_classes = int(f.attrs["n_col_clusters"])
    stored = load_table(path, label_sets=False).gibbs.cols
    assert stored.n_classes == n_classes and stored.chunk_items >= 1
    assert stored.read(2, 3).shape == (stored.shape[0], 1)  # a band without the bad item reads
    with pytest.raises(FormatError, match=rf"dataset gibbs/cols holds label 200, outside \[0, {n_classes}\)"):
        stored.read(0, 5)
