"""lbm_bench/user_info.py: a user's table in words (issue 47, items 2 and 3): the family its values
suggest whatever the dtype, its storage and why, and the dictionary and lines of ``lbm-bench info``."""

import numpy as np
import pytest
import scipy.sparse as sp

from lbm_bench import get_family
from lbm_bench.storage.user_data import user_table
from lbm_bench.user_info import family_reason, info_text, kind_and_storage, storage_reason, table_info


@pytest.mark.parametrize(
    "values, dtype, kind, words",
    [([[0, 1], [1, 0]], np.float32, "bernoulli", "binaries, 0 to 1, whole numbers"),
     ([[0, 3], [2, 7]], np.float64, "poisson", "counts, 0 to 7, whole numbers"),
     ([[0, 3], [2, 7]], np.int32, "poisson", "counts, 0 to 7, whole numbers"),
     ([[0.5, -3], [2, 7]], np.float64, "gaussian", "reals, -3 to 7")],
)
def test_the_values_decide_the_family_whatever_the_dtype(values, dtype, kind, words):
    family, why = family_reason(user_table(np.array(values, dtype=dtype)))
    assert family.kind == kind and why == f"inferred from the values: {words}"
    assert family_reason(user_table(np.array(values)), get_family("gaussian")) == (get_family("gaussian"), "given")


def test_storage_and_why():
    dense = user_table(np.array([[0.0, 1.5], [2.0, 0.0]]))
    sparse = user_table(sp.csr_array(np.array([[0.0, 1.5], [2.0, 0.0]])))
    assert storage_reason(dense) == "dense (the array file stores a dense table)"
    assert storage_reason(sparse) == "sparse (the array file stores a sparse table)"
    assert storage_reason(sparse, get_family("gaussian")) == (
        "dense (gaussian blocks need a dense table: the file's sparse one densified)")
    assert kind_and_storage(sparse) == ("X: 2x2 table, gaussian blocks (inferred from the values: reals, 0 to 2); "
                                        "dense (gaussian blocks need a dense table: the file's sparse one densified); "
                                        "50.00% non-zero")


def test_table_info_and_its_lines():
    table = user_table(np.array([[0.0, np.nan, 2.0], [1.0, 4.0, 0.0]]), row_names=["a", "b"])
    info = table_info(table)
    assert info["shape"] == [2, 3] and info["kind"] == "poisson" and info["n_missing"] == 1
    assert info["min"] == 0.0 and info["max"] == 4.0 and info["row_names"] == ["a", "b"] and info["col_names"] is None
    assert info["density"] == 0.6 and info["read_memory"] is None
    text = info_text(info)
    assert text.splitlines()[0] == "X: 2x3 table of float64 (array file)"
    assert "missing entries: 1 (16.67%)" in text and "row names: 2 ('a', 'b')" in text and "memory" not in text
