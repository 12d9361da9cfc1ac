"""Sparse tables in files (format 1.1): layout, round trip, byte stability, reader checks, tools."""

from __future__ import annotations

import dataclasses
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import h5py
import numpy as np
import pytest
import scipy.sparse as sp

import lbm_bench.storage.format as fmt
from lbm_bench.storage import FormatError, check_file, chunking, load_table, read_info, save_table
from tests.storage.tables import (
    DOC,
    SAMPLE,
    SPARSE_FAMILIES,
    SPARSE_SAMPLE,
    assert_same,
    copy_of,
    delete_item,
    replace_dataset,
    set_attr,
    sha256,
)

#: Values of the committed sparse sample (written by make_sparse_sample).
SPARSE_SAMPLE_NNZ = 49
SPARSE_SAMPLE_INDPTR = [0, 6, 14, 22, 22, 23, 24, 31, 32, 34, 39, 48, 49]
SPARSE_SAMPLE_RISK = 0.04066666666666666


@pytest.mark.parametrize("name", SPARSE_FAMILIES)
def test_round_trip_gives_a_csr_array(name: str, sparse_tables, sparse_files) -> None:
    table, path = sparse_tables[name], sparse_files[name]
    loaded = load_table(path)
    assert isinstance(loaded.data, sp.csr_array) and loaded.data.has_canonical_format
    assert loaded.data.dtype == fmt.data_dtype(table.model.family)
    assert_same(table, loaded)
    np.testing.assert_array_equal(loaded.data.toarray(), table.data.toarray())
    assert check_file(path) == []


@pytest.mark.parametrize("name", SPARSE_FAMILIES)
def test_layout_version_and_compression(name: str, sparse_tables, sparse_files) -> None:
    table = sparse_tables[name]
    with h5py.File(sparse_files[name], "r") as f:
        assert f.attrs["format_version"] == b"1.1"
        group = f["data"]
        assert isinstance(group, h5py.Group) and sorted(group) == ["indices", "indptr", "values"]
        assert group.attrs["encoding"] == b"csr" and group.attrs["shape"].tolist() == list(table.shape)
        assert group.attrs["shape"].dtype == np.int64
        assert group["indptr"].shape == (table.shape[0] + 1,) and group["indptr"].dtype == np.int32
        assert group["indices"].dtype == np.int32 and group["indices"].shape == (table.data.nnz,)
        assert group["values"].dtype == fmt.data_dtype(table.model.family)
        for key in ("indptr", "indices", "values"):
            ds = group[key]
            assert ds.chunks == chunking.chunk_shape(ds.shape, ds.dtype.itemsize, f"data/{key}"), key
            assert (ds.compression, ds.compression_opts, ds.shuffle) == ("gzip", 4, True), key
            info = h5py.h5o.get_info(ds.id)
            assert (info.atime, info.mtime, info.ctime, info.btime) == (0, 0, 0, 0)


def test_label_sets_of_a_real_sparse_run_are_compressed(sparse_tables, tmp_path: Path) -> None:
    """Issue 16: 2,000 x (n_rows + n_cols) labels must not dominate a sparse file. On a
    3000x1000 Bernoulli table at 1% (risk of the MAP labels about 0.15: many labels move), the
    2,000 sets of an 8-chain Gibbs run are chunked along the sets, deflated, and take at most
    a quarter of their raw bytes (measured: 8.0 MB raw, 1.12 MB stored)."""
    from lbm_bench.inference.classifier import map_labels
    from lbm_bench.inference.gibbs import gibbs_labels
    from lbm_bench.models.design import random_design
    from lbm_bench.protocol.separation import first_guess

    design = random_design("bernoulli", 3, 3, density=0.01, rng=0)
    scale, _ = first_guess(design, 3000, 1000, 0.1)
    model = design.model(scale)
    X, z, w = model.sample(3000, 1000, rng=1)
    mapped = map_labels(model, X, rng=2)
    samples = gibbs_labels(model, X, n_samples=2000, init=[(z, w), (mapped.rows, mapped.cols)], rng=3)
    risk = samples.risk(mapped.rows, mapped.cols)
    assert 0.05 < risk.risk < 0.3
    table = dataclasses.replace(sparse_tables["bernoulli-sparse"], data=X, model=model, design=design, scale=scale,
                                truth_rows=z, truth_cols=w, map_rows=mapped.rows, map_cols=mapped.cols,
                                gibbs=samples, risk=risk)
    path = save_table(table, tmp_path / "big.h5")
    raw = stored = 0
    with h5py.File(path, "r") as f:
        for key in ("gibbs/rows", "gibbs/cols"):
            ds = f[key]
            assert ds.shape[0] == 2000 and ds.dtype == np.uint8
            assert ds.chunks == chunking.chunk_shape(ds.shape, 1, key) and ds.chunks[0] == 1024, key
            assert (ds.compression, ds.shuffle) == ("gzip", True), key
            raw, stored = raw + ds.nbytes, stored + ds.id.get_storage_size()
    assert raw == 2000 * 4000 and stored <= raw / 4
    loaded = load_table(path)
    assert np.array_equal(loaded.gibbs.rows, samples.rows) and np.array_equal(loaded.gibbs.cols, samples.cols)


def test_dense_and_sparse_store_the_same_table(sparse_tables, tmp_path: Path) -> None:
    """Only ``data`` and the version differ between the two storages of one table."""
    table = sparse_tables["poisson-effects-sparse"]
    dense = dataclasses.replace(table, data=table.data.toarray())
    loaded = load_table(save_table(dense, tmp_path / "dense.h5"))
    assert isinstance(loaded.data, np.ndarray) and read_info(tmp_path / "dense.h5")["format_version"] == "1.0"
    assert_same(dataclasses.replace(table, data=None), dataclasses.replace(loaded, data=None))


def test_any_sparse_input_gives_the_same_bytes(sparse_tables, tmp_path: Path) -> None:
    """CSR, CSC, COO with shuffled entries and explicit zeros, sparse matrices: one file."""
    table = sparse_tables["bernoulli-sparse"]
    reference = sha256(save_table(table, tmp_path / "reference.h5"))
    coo = sp.coo_array(table.data)
    order = np.random.default_rng(0).permutation(coo.nnz)
    messy = sp.coo_array(
        (np.append(coo.data[order], 0), (np.append(coo.row[order], 0), np.append(coo.col[order], 0))),
        shape=coo.shape,
    )
    for k, data in enumerate([sp.csc_array(table.data), messy, sp.csr_matrix(table.data)]):
        path = save_table(dataclasses.replace(table, data=data), tmp_path / f"other-{k}.h5")
        assert sha256(path) == reference, type(data)


def test_byte_identical_rewrite_in_another_process(sparse_tables, sparse_files, tmp_path: Path) -> None:
    code = (
        "import sys; from pathlib import Path; from tests.storage.tables import SPARSE_FAMILIES, make_table;"
        "from lbm_bench.storage import save_table\n"
        "for name, (kind, effects) in SPARSE_FAMILIES.items():\n"
        "    save_table(make_table(kind, effects=effects, sparse=True), Path(sys.argv[1]) / f'{name}.h5')\n"
    )
    subprocess.run([sys.executable, "-c", code, str(tmp_path)], check=True, cwd=DOC.parents[1])
    for name, path in sparse_files.items():
        assert sha256(tmp_path / f"{name}.h5") == sha256(path), name


def test_interrupted_sparse_write_leaves_no_file(sparse_tables, tmp_path: Path, monkeypatch) -> None:
    import lbm_bench.storage.writer as writer

    original = writer._write_dataset

    def failing(file: Any, path: str, array: np.ndarray) -> None:
        if path == "data/values":
            raise KeyboardInterrupt
        original(file, path, array)

    monkeypatch.setattr(writer, "_write_dataset", failing)
    with pytest.raises(KeyboardInterrupt):
        save_table(sparse_tables["bernoulli-sparse"], tmp_path / "t.h5")
    assert list(tmp_path.iterdir()) == []


def _set_dataset(item: str, make) -> Any:
    def mutate(path: Path) -> None:
        with h5py.File(path, "r+") as f:
            values = make(f[item][()])
            del f[item]
            f.create_dataset(item, data=values)

    return mutate


def _swap_first_two(values: np.ndarray) -> np.ndarray:
    values = values.copy()
    values[[0, 1]] = values[[1, 0]]
    return values


#: Mutations of a sparse Bernoulli file and the message each must give.
SPARSE_REJECTIONS = {
    "encoding": (set_attr("data", "encoding", "coo"), "data@encoding must be 'csr'"),
    "shape": (set_attr("data", "shape", np.array([12, 11])), "data@shape (12, 11) differs"),
    "shape-type": (set_attr("data", "shape", 1.5), "data@shape must be a 1-D integer array"),
    "version-1.0": (set_attr("/", "format_version", "1.0"), "needs format version 1.1 or later, not 1.0"),
    "indptr-length": (_set_dataset("data/indptr", lambda v: v[:-1]), "data/indptr has shape (12,)"),
    "indptr-end": (_set_dataset("data/indptr", lambda v: np.append(v[:-1], v[-1] - 1)), "from 0 to nnz"),
    "indptr-start": (_set_dataset("data/indptr", lambda v: np.append(1, v[1:])), "from 0 to nnz"),
    "indptr-order": (_set_dataset("data/indptr", lambda v: np.concatenate([v[:1], v[2:3], v[1:2], v[3:]])),
                     "non-decreasing"),
    "indptr-float": (_set_dataset("data/indptr", lambda v: v.astype(np.float64)), "data/indptr has dtype float64"),
    "indices-range": (_set_dataset("data/indices", lambda v: np.append(10, v[1:])), "outside [0, 10)"),
    "indices-negative": (_set_dataset("data/indices", lambda v: np.append(-1, v[1:])), "outside [0, 10)"),
    "indices-order": (_set_dataset("data/indices", _swap_first_two), "strictly increasing within each row"),
    "indices-length": (_set_dataset("data/indices", lambda v: v[:-1]), "hold"),
    "values-zero": (_set_dataset("data/values", lambda v: np.append(np.uint8(0), v[1:])), "holds a zero"),
    "values-two": (_set_dataset("data/values", lambda v: np.append(np.uint8(2), v[1:])), "other than 0/1"),
    "values-dtype": (_set_dataset("data/values", lambda v: v.astype(np.int64)), "data/values has dtype int64"),
    "no-indices": (delete_item("data/indices"), "dataset data/indices is missing"),
    "no-encoding": (delete_item("data@encoding"), "attribute data@encoding is missing"),
}


@pytest.mark.parametrize("case", SPARSE_REJECTIONS)
def test_readers_reject_inconsistent_sparse_data(case: str, sparse_files, tmp_path: Path) -> None:
    mutate, message = SPARSE_REJECTIONS[case]
    path = copy_of(sparse_files["bernoulli-sparse"], tmp_path)
    with h5py.File(path, "r") as f:
        assert f["data/indptr"][1] >= 2  # the first row holds two entries or more (indices-order)
    mutate(path)
    with pytest.raises(FormatError) as info:
        load_table(path)
    text = str(info.value)
    assert text.startswith(f"{path}: ") and "\n" not in text
    assert message in text, text
    assert any(message in p for p in check_file(path))


def test_save_refuses_sparse_tables_that_would_not_load(sparse_tables, tmp_path: Path) -> None:
    table = sparse_tables["bernoulli-sparse"]
    twos = table.data.copy()
    twos.data[:] = 2
    with pytest.raises(ValueError, match="other than 0/1"):
        save_table(dataclasses.replace(table, data=twos), tmp_path / "t.h5")
    halves = sp.csr_array(table.data.astype(np.float64) * 0.5)
    with pytest.raises(ValueError, match="not exactly representable as uint8"):
        save_table(dataclasses.replace(table, data=halves), tmp_path / "t.h5")
    with pytest.raises(ValueError, match="truth_cols must have length 11"):
        save_table(dataclasses.replace(table, data=sp.csr_array((12, 11), dtype=np.uint8)), tmp_path / "t.h5")
    assert list(tmp_path.iterdir()) == []


def test_readers_do_not_depend_on_chunking_nor_index_types(sparse_tables, sparse_files, tmp_path) -> None:
    path = copy_of(sparse_files["poisson-effects-sparse"], tmp_path)
    replace_dataset("data/indptr", lambda x: x.astype(np.uint64))(path)  # contiguous, other integer types
    replace_dataset("data/indices", lambda x: x.astype(np.int64))(path)
    replace_dataset("data/values", lambda x: x)(path)
    assert_same(sparse_tables["poisson-effects-sparse"], load_table(path))


def test_empty_sparse_table(sparse_tables, tmp_path: Path) -> None:
    table = sparse_tables["bernoulli-sparse"]
    empty = dataclasses.replace(table, data=sp.csr_array(table.shape, dtype=np.uint8))
    loaded = load_table(save_table(empty, tmp_path / "empty.h5"))
    assert loaded.data.nnz == 0 and loaded.data.shape == table.shape
    with h5py.File(tmp_path / "empty.h5", "r") as f:
        assert f["data/values"].shape == (0,) and f["data/values"].chunks is None
        assert f["data/indptr"].chunks == (13,)


def test_read_info_of_a_sparse_file(sparse_tables, sparse_files) -> None:
    info = read_info(sparse_files["bernoulli-sparse"])
    table = sparse_tables["bernoulli-sparse"]
    assert (info["shape"], info["sparse"], info["nnz"]) == (table.shape, True, table.data.nnz)
    assert info["format_version"] == "1.1" and info["groups"]["data"]["encoding"] == "csr"
    assert read_info(SAMPLE)["sparse"] is False


def test_doc_h5py_snippet_reads_sparse_files(sparse_files) -> None:
    snippet = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)[0]
    for path in sparse_files.values():
        namespace: dict[str, Any] = {"path": str(path)}
        exec(compile(snippet, str(DOC), "exec"), namespace)
        assert isinstance(namespace["X"], sp.csr_array)
        np.testing.assert_array_equal(namespace["X"].toarray(), load_table(path).data.toarray())


def _r_with_hdf5r() -> bool:
    if shutil.which("Rscript") is None:
        return False
    probe = subprocess.run(["Rscript", "-e", "library(hdf5r); library(Matrix)"], capture_output=True, check=False)
    return probe.returncode == 0


@pytest.mark.real_client
@pytest.mark.skipif(not _r_with_hdf5r(), reason="Rscript with the hdf5r and Matrix packages not installed")
def test_doc_r_snippet_reads_dense_and_sparse_files(sparse_files, files, tmp_path: Path) -> None:
    snippet = re.findall(r"```r\n(.*?)```", DOC.read_text(), flags=re.S)
    assert len(snippet) == 1
    script = tmp_path / "read.R"
    script.write_text('path <- commandArgs(trailingOnly = TRUE)[1]\n' + snippet[0]
                      + 'cat(class(X)[1], dim(X), sum(X), "\\n")\n'
                      + 'g <- H5File$new(path, mode = "r"); cat("transposed", dim(g[["gibbs/rows"]][, ]), "\\n")\n')
    for path in [sparse_files["bernoulli-sparse"], files["gaussian"], SAMPLE, SPARSE_SAMPLE]:
        result = subprocess.run(["Rscript", str(script), str(path)], capture_output=True, text=True, check=False)
        assert result.returncode == 0, result.stderr
        table = load_table(path)
        kind, *dims, total = result.stdout.splitlines()[0].split()
        assert kind == ("dgRMatrix" if sp.issparse(table.data) else "matrix")
        assert [int(d) for d in dims] == list(table.shape)
        assert float(total) == pytest.approx(float(table.data.sum()))
        # hdf5r shows the (n_samples, n_rows) dataset as n_rows x n_samples, as the doc says
        assert result.stdout.splitlines()[1].split()[1:] == [str(table.shape[0]), str(table.gibbs.n_samples)]


@pytest.mark.real_client
@pytest.mark.skipif(shutil.which("h5dump") is None, reason="h5dump (hdf5-tools) not installed")
def test_h5dump_shows_the_sparse_group() -> None:
    path = str(SPARSE_SAMPLE)
    header = subprocess.run(["h5dump", "-H", "-g", "data", path], capture_output=True, text=True, check=True).stdout
    assert 'GROUP "data"' in header and 'ATTRIBUTE "encoding"' in header and 'ATTRIBUTE "shape"' in header
    assert re.search(r'DATASET "indptr" \{\s*DATATYPE\s+H5T_STD_I32LE\s*DATASPACE\s+SIMPLE \{ \( 13 \)', header)
    assert re.search(r'DATASET "indices" \{\s*DATATYPE\s+H5T_STD_I32LE\s*DATASPACE\s+SIMPLE \{ \( 49 \)', header)
    assert re.search(r'ATTRIBUTE "shape" \{\s*DATATYPE\s+H5T_STD_I64LE\s*DATASPACE\s+SIMPLE \{ \( 2 \)', header)
    assert "STRSIZE 3;" in header and "H5T_CSET_UTF8" in header
    values = subprocess.run(["h5dump", "-d", "data/indptr", path], capture_output=True, text=True, check=True).stdout
    assert "(0): " + ", ".join(map(str, SPARSE_SAMPLE_INDPTR)) in " ".join(values.split())
    dense = subprocess.run(["h5dump", "-H", "-d", "data", str(SAMPLE)], capture_output=True, text=True,
                           check=True).stdout
    assert "( 12, 10 )" in dense  # C order, as in h5py


def test_committed_sparse_sample_still_loads() -> None:
    assert SPARSE_SAMPLE.stat().st_size < 50_000
    assert check_file(SPARSE_SAMPLE) == []
    table = load_table(SPARSE_SAMPLE)
    assert isinstance(table.data, sp.csr_array) and table.data.dtype == np.uint8
    assert (table.kind, table.shape, table.model.block_shape, table.seed) == ("bernoulli", (12, 10), (2, 2), 4)
    assert table.data.nnz == SPARSE_SAMPLE_NNZ and table.data.indptr.tolist() == SPARSE_SAMPLE_INDPTR
    assert table.risk.risk == pytest.approx(SPARSE_SAMPLE_RISK, abs=1e-12)
    assert read_info(SPARSE_SAMPLE)["format_version"] == "1.1"
    again = table.gibbs.risk(table.map_rows, table.map_cols)
    assert again.risk == pytest.approx(table.risk.risk, abs=1e-12)


def test_info_and_evaluate_on_a_sparse_file(capsys, tmp_path: Path) -> None:
    from lbm_bench.cli import main

    assert main(["info", str(SPARSE_SAMPLE)]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first == "bernoulli table 12x10, 2x2 clusters, seed 4, sparse: 49 non-zero entries (density 0.4083)"
    assert main(["info", "--json", str(SPARSE_SAMPLE)]) == 0
    assert '"nnz": 49' in capsys.readouterr().out
    table = load_table(SPARSE_SAMPLE)
    np.savetxt(tmp_path / "rows.txt", table.map_rows, fmt="%d")
    np.savetxt(tmp_path / "cols.txt", table.map_cols, fmt="%d")
    assert main(["evaluate", str(SPARSE_SAMPLE), "--rows", str(tmp_path / "rows.txt"),
                 "--cols", str(tmp_path / "cols.txt"), "--json"]) == 0
    assert '"excess_risk": 0.0' in capsys.readouterr().out
