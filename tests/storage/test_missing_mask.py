"""Missing entries in files (lbm_bench.storage.missing_mask, format 1.3): what a table with missing entries
adds (missing_layout), its layout, round trips, the mask's size, and the reader's rejections."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import h5py
import numpy as np
import pytest
import scipy.sparse as sp

from lbm_bench.storage import FormatError, check_file, load_table, read_info, save_table
from tests.storage.tables import MISSING_FAMILIES, assert_same, copy_of, delete_item, set_attr, set_first
from tests.storage.test_format import check_documented_layout


@pytest.mark.parametrize("name", MISSING_FAMILIES)
def test_round_trip_and_documented_layout(name, missing_tables, missing_files) -> None:
    table, path = missing_tables[name], missing_files[name]
    assert check_file(path) == []
    loaded = load_table(path)
    assert_same(table, loaded)
    assert loaded.design.missing == table.design.missing and loaded.missing_mechanism == MISSING_FAMILIES[name][4]
    if loaded.missing_mechanism == "block":
        np.testing.assert_array_equal(loaded.model.missing_probs, table.model.missing_probs)
        np.testing.assert_array_equal(loaded.design.missing.pattern, table.design.missing.pattern)
    check_documented_layout(table, path)
    info = read_info(path)
    assert info["format_version"] == "1.3"
    assert info["missing_rate"] == MISSING_FAMILIES[name][3] and info["n_missing"] == table.table_data().n_missing
    data = loaded.table_data()
    assert data.n_missing == info["n_missing"] > 0
    if sp.issparse(loaded.data):
        assert np.isnan(loaded.data.data).sum() == data.n_missing
    else:
        assert np.isnan(loaded.data).sum() == data.n_missing and loaded.data.dtype == np.float64
        np.testing.assert_array_equal(loaded.observed, ~np.isnan(loaded.data))
        masked = loaded.masked_data()
        assert masked.dtype == loaded.model.table_dtype and np.all(masked.mask == np.isnan(loaded.data))
    # writing the loaded table again gives the same bytes
    again = save_table(loaded, path.with_name(f"again-{name}.h5"))
    assert again.read_bytes() == path.read_bytes()


def test_missing_entries_are_zero_in_data_and_the_mask_is_compressed(missing_files) -> None:
    path = missing_files["gaussian-missing"]
    with h5py.File(path, "r") as f:
        observed, data = f["observed"], f["data"][()]
        assert observed.dtype == np.uint8 and observed.compression == "gzip" and observed.shuffle
        assert observed.chunks == data.shape  # whole rows, at most 1 MiB
        mask = observed[()]
        assert set(np.unique(mask).tolist()) <= {0, 1}
        assert np.all(data[mask == 0] == 0) and not np.signbit(data[mask == 0]).any()
        assert observed.id.get_storage_size() <= mask.size  # at most one byte per entry on disk


def test_older_readers_see_a_complete_table_under_an_older_version(missing_files, tmp_path) -> None:
    """A file that says 1.1 but holds 1.3 items: the items are unknown to that version and ignored."""
    path = copy_of(missing_files["gaussian-missing"], tmp_path)
    set_attr("/", "format_version", "1.1")(path)
    table = load_table(path)
    assert table.missing_mechanism is None and not np.isnan(table.data).any()


def _overwrite(item, make):
    def mutate(path):
        with h5py.File(path, "r+") as f:
            values = make(f[item][()])
            f[item][...] = values
    return mutate


def _add_observed_to_sparse(path):
    with h5py.File(path, "r+") as f:
        f.create_dataset("observed", data=np.ones((12, 10), np.uint8))


def _indices_on_a_stored_entry(path):
    with h5py.File(path, "r+") as f:
        row_start, row_end = int(f["data/indptr"][0]), int(f["data/indptr"][1])
        m_start, m_end = int(f["missing/indptr"][0]), int(f["missing/indptr"][1])
        assert row_end > row_start and m_end > m_start
        indices = f["missing/indices"][()]
        indices[m_start] = f["data/indices"][row_start]
        indices[m_start:m_end] = np.sort(indices[m_start:m_end])
        f["missing/indices"][...] = indices


MISSING_REJECTIONS = {
    "observed-two": ("gaussian-missing", set_first("observed", 2), "observed must hold 0 and 1 only"),
    "n-missing": ("gaussian-missing", set_attr("/", "n_missing", 1), "but @n_missing is 1"),
    "data-under-mask": ("gaussian-missing",
                        _overwrite("data", lambda x: x + 1.0), "non-zero value at a missing entry"),
    "mechanism": ("gaussian-missing", set_attr("/", "missing_mechanism", "mnar"), "@missing_mechanism must be one of"),
    "rate": ("gaussian-missing", set_attr("/", "missing_rate", 1.0), "@missing_rate must lie in (0, 1)"),
    "no-mask": ("gaussian-missing", delete_item("observed"), "dataset observed is missing"),
    "no-attributes": ("gaussian-missing", delete_item("@missing_rate"), "attribute @missing_rate is missing"),
    "observed-dtype": ("gaussian-missing", lambda p: _retype(p, "observed", np.int64), "expected uint8"),
    "block-partial": ("bernoulli-missing-block", delete_item("params/design/missing_pattern"),
                      "params/design/missing_pattern is missing"),
    "block-for-random": ("gaussian-missing", lambda p: _copy_block(p), "belong to the block mechanism"),
    "probs-tampered": ("bernoulli-missing-block", _overwrite("params/missing_probs", lambda q: q[::-1].copy()),
                       "params/missing_probs differs from the design's at @scale"),
    "sparse-with-observed": ("bernoulli-sparse-missing", _add_observed_to_sparse,
                             "stores its missing entries as 'missing', but the file has 'observed'"),
    "sparse-encoding": ("bernoulli-sparse-missing", set_attr("missing", "encoding", "coo"), "missing@encoding"),
    "sparse-overlap": ("bernoulli-sparse-missing", _indices_on_a_stored_entry, "also a stored entry of data"),
}


def _retype(path, item, dtype):
    with h5py.File(path, "r+") as f:
        values = f[item][()].astype(dtype)
        del f[item]
        f.create_dataset(item, data=values)


def _copy_block(path):
    with h5py.File(path, "r+") as f:
        f.create_dataset("params/missing_probs", data=np.full((2, 2), 0.3))


@pytest.mark.parametrize("case", MISSING_REJECTIONS)
def test_readers_reject_inconsistent_missing_entries(case, missing_files, tmp_path) -> None:
    name, mutate, message = MISSING_REJECTIONS[case]
    path = copy_of(missing_files[name], tmp_path)
    mutate(path)
    with pytest.raises(FormatError) as info:
        load_table(path)
    assert message in str(info.value) and "\n" not in str(info.value)
    assert any(message in problem for problem in check_file(path))


def test_a_complete_table_with_nan_is_refused_in_one_line(files, tmp_path) -> None:
    path = copy_of(files["gaussian"], tmp_path)
    set_first("data", np.nan)(path)
    with pytest.raises(FormatError, match=r"non-finite values \(NaN: a table with missing entries stores 0 there"):
        load_table(path)


def test_writer_refuses_nan_without_a_mechanism(tables, tmp_path) -> None:
    table = tables["gaussian"]
    data = table.data.copy()
    data[0, 0] = np.nan
    with pytest.raises(ValueError, match="design records no mechanism"):
        save_table(dataclasses.replace(table, data=data), tmp_path / "t.h5")
    assert not any(Path(tmp_path).iterdir())


def test_doc_h5py_snippet_reads_the_mask(missing_files) -> None:
    """docs/format.md's h5py snippet gives NaN at the missing entries of a dense table, and the
    missing set of a sparse one."""
    import re
    from typing import Any

    from tests.storage.tables import DOC

    snippet = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)[0]
    for path in missing_files.values():
        namespace: dict[str, Any] = {"path": str(path)}
        exec(compile(snippet, str(DOC), "exec"), namespace)
        table = load_table(path)
        assert namespace["mechanism"] == table.missing_mechanism and namespace["rate"] == table.missing_rate
        if sp.issparse(table.data):
            assert namespace["missing"].nnz == table.table_data().n_missing
        else:
            np.testing.assert_array_equal(namespace["X"], table.data)  # NaN where missing


def _r_available() -> bool:
    import shutil
    import subprocess

    if shutil.which("Rscript") is None:
        return False
    probe = subprocess.run(["Rscript", "-e", "library(hdf5r); library(Matrix)"], capture_output=True, check=False)
    return probe.returncode == 0


@pytest.mark.skipif(not _r_available(), reason="Rscript with the hdf5r and Matrix packages not installed")
def test_r_snippets_read_missing_entries_as_na(missing_files, tmp_path) -> None:
    """docs/format.md's R snippet and the release card's turn a dense table's missing entries into NA."""
    import re
    import subprocess

    from lbm_bench.release.card import r_snippet
    from tests.storage.tables import DOC

    doc = re.findall(r"```r\n(.*?)```", DOC.read_text(), flags=re.S)[0]
    path = missing_files["gaussian-missing"]
    table = load_table(path)
    for code in ('path <- commandArgs(trailingOnly = TRUE)[1]\n' + doc, r_snippet(str(path), missing=True)):
        script = tmp_path / "read.R"
        script.write_text(code + '\ncat("NA", sum(is.na(X)), dim(X), sum(X, na.rm = TRUE), "\\n")\n')
        result = subprocess.run(["Rscript", str(script), str(path)], capture_output=True, text=True, check=False)
        assert result.returncode == 0, result.stderr
        line = next(ln for ln in result.stdout.splitlines() if ln.startswith("NA "))
        _, n_na, *dims, total = line.split()
        assert int(n_na) == int(np.isnan(table.data).sum()) and [int(d) for d in dims] == list(table.shape)
        assert float(total) == pytest.approx(float(np.nansum(table.data)))


def test_the_layout_a_table_with_missing_entries_adds(missing_tables) -> None:
    """Plain arrays and attributes, no HDF5: the mask of a dense table, the CSR positions of a sparse
    one's missing entries, the block mechanism's items; nothing for a complete table."""
    from lbm_bench.storage.missing_mask import BLOCK_ITEMS, missing_layout
    from tests.storage.tables import make_table

    dense = missing_tables["bernoulli-missing-block"]
    datasets, attrs = missing_layout(dense, dense.table_data())
    data = dense.table_data()
    assert np.array_equal(datasets["observed"], data.observed_mask().astype(np.uint8))
    assert attrs[""] == {"missing_rate": 0.3, "missing_mechanism": "block", "n_missing": data.n_missing}
    assert {"params/missing_probs", "params/design/missing_pattern"} <= set(datasets)
    assert attrs["params/design"] == {"missing_spread": dense.design.missing.spread}
    assert set(BLOCK_ITEMS) == {"params/missing_probs", "params/design/missing_pattern",
                                "params/design@missing_spread"}
    sparse = missing_tables["bernoulli-sparse-missing"]
    datasets, attrs = missing_layout(sparse, sparse.table_data())
    positions = sp.csr_array((np.ones(datasets["missing/indices"].size), datasets["missing/indices"],
                              datasets["missing/indptr"]), shape=sparse.shape)
    assert np.array_equal(positions.toarray() == 1, np.isnan(sparse.data.toarray()))
    assert "observed" not in datasets and "params/missing_probs" not in datasets  # the random mechanism
    assert attrs["missing"]["encoding"] == "csr" and attrs["missing"]["shape"].tolist() == list(sparse.shape)
    complete = make_table("gaussian")
    assert missing_layout(complete, complete.table_data()) == ({}, {})
