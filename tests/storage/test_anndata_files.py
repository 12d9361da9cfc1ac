"""AnnData files (lbm_bench.storage.anndata_files): X read with h5py after the on-disk
specification, checked against anndata itself.

The files are written by hand with h5py from the specification (dense X, csr_matrix and
csc_matrix groups, dataframes with an ``_index``). The real anndata package (a real client:
marker ``real_client``, so CI=true fails a skip) writes files for the reader (dense, CSR, CSC,
float32 0/1, integer counts, with ``.raw`` and layers) and reads the hand-written ones back,
so these are known to be valid AnnData files and the reader to read what anndata writes.
anndata runs in an environment of its own (:func:`anndata_python`): it holds pandas below 3,
under which mlcroissant reads the floats of a release's records back one ulp off
(tests/release/test_croissant.py), so it cannot share the test extra's; ``.ci/run`` makes
``.ci-anndata-venv`` for it.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import h5py
import numpy as np
import pytest
import scipy.sparse as sp

from lbm_bench.protocol.memory import MemoryLimitError
from lbm_bench.storage.user_data import UserTableError, read_user_table

REPO = Path(__file__).resolve().parents[2]
CLIENT = Path(__file__).resolve().with_name("anndata_client.py")
RNG = np.random.default_rng(8)
COUNTS = sp.random(25, 15, density=0.2, format="csr", random_state=5, dtype=np.float32,
                   data_rvs=lambda k: RNG.integers(1, 9, k).astype(np.float32))
ROWS = tuple(f"cell{i}" for i in range(25))
COLS = tuple(f"gene{j}" for j in range(15))


def _write_by_hand(path, X, rows=ROWS, cols=COLS, encoding="csr_matrix"):
    """An .h5ad file after the AnnData on-disk specification (0.8+), without anndata."""
    strings = h5py.string_dtype("utf-8")
    with h5py.File(path, "w") as file:
        file.attrs.update({"encoding-type": "anndata", "encoding-version": "0.1.0"})
        if sp.issparse(X):
            X = sp.csr_array(X) if encoding == "csr_matrix" else sp.csc_array(X)
            group = file.create_group("X")
            group.attrs.update({"encoding-type": encoding, "encoding-version": "0.1.0", "shape": X.shape})
            for name in ("data", "indices", "indptr"):
                group[name] = getattr(X, name)
        else:
            file["X"] = X
            file["X"].attrs.update({"encoding-type": "array", "encoding-version": "0.2.0"})
        for key, names in (("obs", rows), ("var", cols)):
            frame = file.create_group(key)
            frame.attrs.update({"encoding-type": "dataframe", "encoding-version": "0.2.0", "_index": "_index",
                                "column-order": np.array([], dtype=strings)})
            frame.create_dataset("_index", data=np.array(names, dtype=object), dtype=strings)
            frame["_index"].attrs.update({"encoding-type": "string-array", "encoding-version": "0.2.0"})


def anndata_python():
    """An interpreter with the anndata package: ``LBM_BENCH_ANNDATA_PYTHON``, else the repository's
    ``.ci-anndata-venv`` (what ``.ci/run`` makes), else this one if it has anndata; None otherwise."""
    import importlib.util
    import os
    import sys

    given = os.environ.get("LBM_BENCH_ANNDATA_PYTHON")
    if given:
        return given
    venv = REPO / ".ci-anndata-venv" / "bin" / "python"
    if venv.is_file():
        return str(venv)
    return sys.executable if importlib.util.find_spec("anndata") else None


def _client(*args):
    python = anndata_python()
    if python is None:
        pytest.skip("no interpreter with anndata (set LBM_BENCH_ANNDATA_PYTHON, or run .ci/run)")
    done = subprocess.run([python, str(CLIENT), *map(str, args)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]


def _written_by_anndata(tmp_path, X, layout, dtype="float32", rows=ROWS, cols=COLS, **extra):
    """An .h5ad file written by the real anndata (AnnData.write_h5ad)."""
    arrays = tmp_path / "arrays.npz"
    if sp.issparse(X):
        X = sp.csr_array(X)
        np.savez(arrays, data=X.data, indices=X.indices, indptr=X.indptr, shape=np.array(X.shape))
    else:
        np.savez(arrays, dense=X)
    path = tmp_path / "cells.h5ad"
    spec = {"arrays": str(arrays), "path": str(path), "layout": layout, "dtype": dtype, "rows": list(rows),
            "cols": list(cols), **extra}
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    _client("write", tmp_path / "spec.json")
    return path


def _read_by_anndata(tmp_path, path):
    _client("read", path, tmp_path / "theirs.npz")
    with np.load(tmp_path / "theirs.npz") as theirs:
        return theirs["X"], tuple(theirs["rows"]), tuple(theirs["cols"])


@pytest.mark.real_client
@pytest.mark.parametrize("layout", ["csr", "csc", "dense"])
def test_files_written_by_anndata(tmp_path, layout):
    path = _written_by_anndata(tmp_path, COUNTS, layout)
    table = read_user_table(path)
    assert table.format == "h5ad" and table.name == "cells" and table.source_dtype == "float32"
    assert table.row_names == ROWS and table.col_names == COLS
    assert table.is_sparse == (layout != "dense")
    values = table.data.table.toarray() if table.is_sparse else table.data.table
    np.testing.assert_array_equal(values, COUNTS.toarray())


@pytest.mark.real_client
def test_nan_of_a_dense_x_is_missing(tmp_path):
    X = COUNTS.toarray()
    X[3, 4] = np.nan
    table = read_user_table(_written_by_anndata(tmp_path, X, "dense"))
    assert table.n_missing == 1 and not table.data.observed[3, 4]


@pytest.mark.real_client
@pytest.mark.parametrize("dtype, kind", [("float32", "bernoulli"), ("int64", "poisson"), ("int32", "poisson")])
def test_binaries_and_counts_with_raw_and_layers(tmp_path, dtype, kind):
    """Issue 47: anndata's float32 0/1 read as binary, integer counts as counts; .raw (other values) and layers
    beside X do not change what is read (X)."""
    from lbm_bench.algorithms.inputs import infer_family

    X = COUNTS.copy()
    if kind == "bernoulli":
        X.data[:] = 1
    path = _written_by_anndata(tmp_path, X, "csr", dtype=dtype, raw=True, layers=True)
    table = read_user_table(path)
    assert table.source_dtype == dtype and table.row_names == ROWS and table.is_sparse
    np.testing.assert_array_equal(table.data.table.toarray(), X.toarray())
    assert infer_family(table.data).kind == kind
    theirs, rows, _ = _read_by_anndata(tmp_path, path)
    np.testing.assert_array_equal(theirs, X.toarray())
    assert rows == ROWS


@pytest.mark.parametrize("encoding", ["csr_matrix", "csc_matrix", "array"])
def test_files_written_by_hand_after_the_spec(tmp_path, encoding):
    X = COUNTS.toarray() if encoding == "array" else COUNTS
    path = tmp_path / "hand.h5ad"
    _write_by_hand(path, X, encoding=encoding)
    ours = read_user_table(path)
    assert ours.row_names == ROWS and ours.col_names == COLS and ours.is_sparse == (encoding != "array")
    got = ours.data.table.toarray() if ours.is_sparse else ours.data.table
    np.testing.assert_array_equal(got, COUNTS.toarray())


@pytest.mark.real_client
@pytest.mark.parametrize("encoding", ["csr_matrix", "csc_matrix", "array"])
def test_hand_written_files_are_anndata_files(tmp_path, encoding):
    path = tmp_path / "hand.h5ad"
    _write_by_hand(path, COUNTS.toarray() if encoding == "array" else COUNTS, encoding=encoding)
    X, rows, cols = _read_by_anndata(tmp_path, path)
    assert rows == ROWS and cols == COLS
    np.testing.assert_array_equal(X, COUNTS.toarray())


def test_files_of_anndata_before_0_8(tmp_path):
    """Sparse X named by h5sparse_format and h5sparse_shape; obs and var as compound datasets."""
    path = tmp_path / "old.h5ad"
    with h5py.File(path, "w") as file:
        group = file.create_group("X")
        group.attrs.update({"h5sparse_format": "csr", "h5sparse_shape": COUNTS.shape})
        for name in ("data", "indices", "indptr"):
            group[name] = getattr(COUNTS, name)
        for key, names in (("obs", ROWS), ("var", COLS)):
            file[key] = np.array([(n,) for n in names], dtype=[("index", "S10")])
    table = read_user_table(path)
    assert table.is_sparse and table.row_names == ROWS and table.col_names == COLS
    np.testing.assert_array_equal(table.data.table.toarray(), COUNTS.toarray())


def _damage(path, edit):
    _write_by_hand(path, COUNTS)
    with h5py.File(path, "r+") as file:
        edit(file)


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda f: f.__delitem__("X"), "an AnnData file without X"),
        (lambda f: f["X"].attrs.__setitem__("encoding-type", "coo_matrix"), "encoding 'coo_matrix'"),
        (lambda f: f["X"].__delitem__("indptr"), "lacks indptr"),
        (lambda f: f["X"].attrs.__setitem__("shape", [25]), "no shape of two sizes"),
        (lambda f: (f["X"].__delitem__("indices"), f["X"].create_dataset("indices", data=np.arange(3))),
         "data and indices of lengths"),
        (lambda f: f["X"]["indices"].__setitem__(0, 99), "is inconsistent"),
        (lambda f: (f["obs"].__delitem__("_index"), f["obs"].create_dataset("_index", data=np.array([b"a"]))),
         "obs has 1 names for the 25 rows of X"),
        (lambda f: (f.__delitem__("X"), f.create_dataset("X", data=np.array([b"a", b"b"]))),
         "X has shape (2,), not a 2-D table"),
    ],
)
def test_damaged_files_one_line_each(tmp_path, edit, message):
    path = tmp_path / "bad.h5ad"
    _damage(path, edit)
    with pytest.raises(UserTableError) as info:
        read_user_table(path)
    assert str(info.value).startswith(f"{path}: ") and message in str(info.value) and "\n" not in str(info.value)


def test_text_x_is_refused(tmp_path):
    path = tmp_path / "text.h5ad"
    _write_by_hand(path, np.zeros((25, 15)), encoding="array")
    with h5py.File(path, "r+") as file:
        del file["X"]
        file.create_dataset("X", data=np.array([["a"] * 15] * 25, dtype=object), dtype=h5py.string_dtype())
    with pytest.raises(UserTableError, match="X holds object values, not numbers"):
        read_user_table(path)


@pytest.mark.parametrize("encoding", ["csr_matrix", "array"])
def test_too_large_is_refused_before_reading(tmp_path, encoding):
    path = tmp_path / "big.h5ad"
    _write_by_hand(path, COUNTS.toarray() if encoding == "array" else COUNTS, encoding=encoding)
    with pytest.raises(MemoryLimitError, match="needs about"):
        read_user_table(path, max_memory="1M")


def test_an_h5_file_holding_anndata_is_read_by_its_content(tmp_path):
    _write_by_hand(tmp_path / "cells.h5", COUNTS)
    table = read_user_table(tmp_path / "cells.h5")
    assert table.row_names == ROWS and table.is_sparse
