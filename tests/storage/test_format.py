"""lbm_bench.storage.format and the claims of docs/format.md: layout, container, versions.

The tables of items of docs/format.md are parsed here and compared with files
written by ``save_table``.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import h5py
import numpy as np
import pytest
import scipy.sparse as sp

import lbm_bench.storage.format as fmt
from lbm_bench._dtypes import smallest_uint
from lbm_bench.models import family_names, get_family
from lbm_bench.protocol.table import Table
from lbm_bench.storage import (
    FORMAT_NAME,
    FORMAT_VERSION,
    check_file,
    chunking,
    load_table,
    read_info,
    save_table,
)
from tests.storage.tables import (
    DOC,
    FAMILIES,
    all_names,
    documented_data_dtypes,
    documented_items,
    file_items,
    sha256,
)


def _expected_shape(text: str, sizes: dict[str, int]) -> tuple[int, ...]:
    if text == "scalar":
        return ()
    tokens = [t.strip() for t in text.strip("()").split(",") if t.strip()]
    return tuple(int(t) if t.isdigit() else sizes[t] for t in tokens)


def _expected_dtype(text: str, table: Table) -> Any:
    g, m = table.model.block_shape
    return {
        "int64": np.dtype(np.int64),
        "uint8": np.dtype(np.uint8),
        "float64": np.dtype(np.float64),
        "float32": np.dtype(np.float32),
        "uint[g]": smallest_uint(g),
        "uint[m]": smallest_uint(m),
        "by kind": documented_data_dtypes()[table.kind],
    }[text]


def _calibration_1_1(table: Table) -> bool:
    """Whether the calibration needs the 1.1 layout (a method other than the 1.0 dichotomy
    on a fixed number of tables): ``calibration@method`` and a 4-column history."""
    cal = table.calibration
    return cal.method != "bisection" or bool(np.any(cal.history[:, 3] != cal.n_tables))


def _present(condition: str, table: Table) -> bool:
    if ", " in condition:  # a list of kinds
        return any(_present(c, table) for c in condition.split(", "))
    if condition == "always":
        return True
    if condition in ("dense", "sparse"):
        return (condition == "sparse") == sp.issparse(table.data)
    if condition == "effects":
        return getattr(table.model, "row_effects", None) is not None
    if condition == "1.1":
        return table.bayes_risk is not None
    if condition == "1.1 calibration":
        return _calibration_1_1(table)
    if condition == "1.1 floor calibration":
        return table.calibration.gap_history is not None
    if condition == "1.4 sparse design":
        return table.design.density is not None
    if condition == "1.5 fitted design":
        return table.design.path is not None
    if condition == "1.6 fitted design with a knee":
        return table.design.path is not None and table.design.path.knee is not None
    if condition == "1.5 design file":
        return table.design.digest is not None
    if condition.startswith("missing"):
        if table.missing_mechanism is None:
            return False
        detail = condition.removeprefix("missing").strip()
        if detail in ("dense", "sparse"):
            return (detail == "sparse") == sp.issparse(table.data)
        return detail == "" or (detail == "block" and table.missing_mechanism == "block")
    return condition == table.kind



def test_doc_tables_parse() -> None:
    items = documented_items()
    assert len(items) == 109 and items["gibbs/rows"] == ("dataset", "uint[g]", "(n_samples, n_rows)", "always")
    assert documented_data_dtypes() == {k: fmt.data_dtype(get_family(k)) for k in family_names()}
    for kind in family_names():
        documented_blocks = {
            name.split("|")[0].split("/")[1] for name, (_, _, _, present) in items.items()
            if name.count("/") == 1 and name.startswith("params/") and kind in present.split(", ")
        }  # fmt: skip
        assert documented_blocks == set(fmt.block_parameters(get_family(kind))), kind
        for name in fmt.block_parameters(get_family(kind)):  # the documented shape is the format's
            shape = next(v[2] for k, v in items.items() if k.split("|")[0] == f"params/{name}" and kind in v[3])
            named = {"@categories": "K"}  # the notation of docs/format.md for the header sizes
            extents = ("g", "m") + tuple(named[e] for e in get_family(kind).storage.block_extents)
            assert shape == "(" + ", ".join(extents) + ")", (kind, name)
    header = {
        name[1:] for name, (_, _, _, present) in items.items() if name.startswith("@") and present in family_names()
    }
    assert header == {name for kind in family_names() for name in fmt.header_attributes(get_family(kind))}


@pytest.mark.parametrize("name", FAMILIES)
def test_file_has_exactly_the_documented_layout(
    name: str, tables: dict[str, Table], files: dict[str, Path]
) -> None:
    check_documented_layout(tables[name], files[name])


def check_documented_layout(table: Table, path: Path) -> None:
    """The file of ``table`` has exactly the documented items for it, of the documented types,
    dtypes and shapes (the CSR index datasets: any integer type)."""
    sizes = {
        "n_rows": table.shape[0],
        "n_cols": table.shape[1],
        "g": table.n_row_clusters,
        "m": table.n_col_clusters,
        "n_samples": table.gibbs.n_samples,
        "n_chains": table.gibbs.n_chains,
        "n_steps": table.calibration.n_steps,
        "n_gap_steps": 0 if table.calibration.gap_history is None else len(table.calibration.gap_history),
        "h": 4 if _calibration_1_1(table) else 3,
        "attempts": table.rejection.attempts,
        "n_missing": table.table_data().n_missing,
        "n_rows + 1": table.shape[0] + 1,
        "nnz": table.table_data().n_stored if sp.issparse(table.data) else 0,
        "K": getattr(table.model, "categories", 0),
    }
    expected = {k.split("|")[0]: v for k, v in documented_items().items() if _present(v[3], table)}
    actual = file_items(path)
    with h5py.File(path, "r") as f:
        strings = {}
        for group in ("", "data", "missing"):
            if group == "" or isinstance(f.get(group), h5py.Group):
                strings.update({f"{group}@{key}": value.decode() for key, value in f[group or "/"].attrs.items()
                                if isinstance(value, bytes)})
    assert set(actual) == set(expected)
    for item, (type_, dtype, shape, _) in expected.items():
        actual_type, actual_dtype, actual_shape = actual[item]
        assert actual_type == type_, item
        if type_ == "group":
            continue
        assert actual_shape == _expected_shape(shape, sizes), item
        if dtype == "string":
            info = h5py.check_string_dtype(actual_dtype)
            assert info is not None and info.encoding == "utf-8", item
            assert info.length == len(strings[item].encode("utf-8")), item
        elif dtype == "int32 or int64":
            assert actual_dtype in (np.dtype(np.int32), np.dtype(np.int64)), item
        elif dtype == "by kind" and sp.issparse(table.data):
            continue  # data/values: the sparse tests check it
        else:
            assert actual_dtype == _expected_dtype(dtype, table), item


@pytest.mark.parametrize("name", FAMILIES)
def test_attribute_values(name: str, tables: dict[str, Table], files: dict[str, Path]) -> None:
    table = tables[name]
    with h5py.File(files[name], "r") as f:
        root = {key: v.decode() if isinstance(v, bytes) else v for key, v in f.attrs.items()}
        assert root["format"] == FORMAT_NAME == "lbm-bench-table"
        assert FORMAT_VERSION == "1.6"
        expected = "1.2" if table.kind == "categorical" else "1.1" if table.bayes_risk is not None else "1.0"
        assert root["format_version"] == expected  # dense, complete, no floor: 1.0; categorical: 1.2
        assert root.get("categories") == getattr(table.model, "categories", None)
        assert root["lbm_bench_version"] == __import__("lbm_bench").__version__
        assert root["kind"] == table.kind
        assert (root["n_rows"], root["n_cols"]) == table.shape
        assert (root["n_row_clusters"], root["n_col_clusters"]) == (2, 2)
        assert root["seed"] == table.seed and root["scale"] == table.scale == f["params"].attrs["scale"]
        r = table.risk
        assert (root["risk"], root["risk_mcse"], root["risk_ess"]) == (r.risk, r.mcse, r.ess)
        assert (root["row_loss"], root["col_loss"], root["target_risk"]) == (r.row_loss, r.col_loss, 0.1)
        assert root["options_json"] == json.dumps(table.options, sort_keys=True)
        gibbs = f["gibbs"].attrs
        assert gibbs["chain_lengths"].tolist() == [25, 25] and gibbs["n_chains"] == 2
        assert (gibbs["burn_in"], gibbs["thin"]) == (20, 1)
        cal = f["calibration"].attrs
        assert cal["bracket"].tolist() == [0.5, 1.0] and cal["n_steps"] == 3 and cal["n_tables"] == 20
        assert np.isnan(f["rejection"].attrs["balance"]) and f["rejection"].attrs["attempts"] == 3
        if table.bayes_risk is None:
            assert "criterion" not in root and "bayes" not in f and "posterior" not in f
            return
        b = table.bayes_risk
        assert root["criterion"] == "bayes"
        assert (root["bayes_risk"], root["bayes_risk_mcse"], root["bayes_risk_ess"]) == (b.risk, b.mcse, b.ess)
        assert (root["bayes_row_loss"], root["bayes_col_loss"]) == (b.row_loss, b.col_loss)
        assert f["bayes/rows"][()].tolist() == table.bayes_rows.tolist()
        rows = f["posterior/rows"][()]
        assert rows.dtype == np.float32 and rows.shape == (table.shape[0], 2)
        np.testing.assert_allclose(rows[:, 1], (table.gibbs.rows == 1).mean(0), atol=1e-7)


def test_design_group_reconstructs_the_model(files: dict[str, Path]) -> None:
    for path in files.values():
        table = load_table(path)
        again = table.design.model(table.scale)
        for key, values in table.model.block_parameters().items():
            np.testing.assert_allclose(again.block_parameters()[key], values, rtol=1e-12)
        with h5py.File(path, "r") as f:
            design = f["params/design"]
            scale = f.attrs["scale"]
            if table.kind == "gaussian":
                np.testing.assert_allclose(f["params/means"][()], scale * design["pattern"][()])
                np.testing.assert_allclose(f["params/stds"][()], design["dispersion"][()] ** scale, rtol=1e-15)
            elif table.kind == "poisson":
                rates = design.attrs["base_rate"] * np.exp(scale * design["pattern"][()])
                np.testing.assert_allclose(f["params/rates"][()], rates)
            elif table.kind == "categorical":
                weights = np.exp(2 * scale * design["dispersion"][()][:, :, None] * design["pattern"][()])
                np.testing.assert_allclose(f["params/probs"][()], weights / weights.sum(axis=2, keepdims=True))
            else:
                probs = 0.5 + design["pattern"][()] * np.tanh(scale * design["dispersion"][()]) / 2
                np.testing.assert_allclose(f["params/probs"][()], probs)


def test_risk_semantics_and_chain_major_sets(tables: dict[str, Table], files: dict[str, Path]) -> None:
    for name, path in files.items():
        with h5py.File(path, "r") as f:
            z, w = f["map/rows"][()], f["map/cols"][()]
            Z, W = f["gibbs/rows"][()], f["gibbs/cols"][()]
            l_row = np.mean(Z != z, axis=1)
            l_col = np.mean(W != w, axis=1)
            # l_item: the fraction of entries (i, j) whose label pair differs.
            pairs_differ = (Z[:, :, None] != z[:, None]) | (W[:, None, :] != w[None, None, :])
            np.testing.assert_allclose(1 - (1 - l_row) * (1 - l_col), pairs_differ.mean(axis=(1, 2)))
            assert f.attrs["risk"] == pytest.approx(np.mean(1 - (1 - l_row) * (1 - l_col)), abs=1e-15)
            assert f.attrs["row_loss"] == pytest.approx(l_row.mean(), abs=1e-15)
            assert f.attrs["col_loss"] == pytest.approx(l_col.mean(), abs=1e-15)
            lengths = f["gibbs"].attrs["chain_lengths"]
        # Sets keep the sampler's chain-major order: chain c is rows [sum(L[:c]), sum(L[:c+1])).
        gibbs = tables[name].gibbs
        np.testing.assert_array_equal(Z, gibbs.rows)
        np.testing.assert_array_equal(lengths, gibbs.chain_lengths)
        assert lengths.sum() == Z.shape[0] == W.shape[0]
        assert Z.min() >= 0 and Z.max() < 2 and W.max() < 2


def test_doc_h5py_snippet_runs(files: dict[str, Path]) -> None:
    snippets = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)
    assert len(snippets) == 1
    for path in files.values():
        namespace: dict[str, Any] = {"path": str(path)}
        exec(compile(snippets[0], str(DOC), "exec"), namespace)
        assert namespace["X"].shape == namespace["Z"].shape[1:2] + namespace["W"].shape[1:2]




# Container: compression, chunks, library versions, timestamps, byte stability
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", FAMILIES)
def test_chunking_and_compression(name: str, files: dict[str, Path]) -> None:
    with h5py.File(files[name], "r") as f:
        datasets: list[str] = []
        f.visititems(lambda key, obj: datasets.append(key) if isinstance(obj, h5py.Dataset) else None)
        for key in datasets:
            ds = f[key]
            if key in ("data", "gibbs/rows", "gibbs/cols"):
                assert ds.chunks == chunking.chunk_shape(ds.shape, ds.dtype.itemsize, key), key
                assert (ds.compression, ds.compression_opts, ds.shuffle) == ("gzip", 4, True), key
            else:
                assert ds.chunks is None and ds.compression is None and not ds.shuffle, key


def test_container_version_zero_superblock_no_user_block(files: dict[str, Path]) -> None:
    for path in files.values():
        head = path.read_bytes()[:9]
        assert head[:8] == b"\x89HDF\r\n\x1a\n"  # signature at byte 0: no user block
        assert head[8] == 0  # superblock version 0 (readable by HDF5 1.8)
        with h5py.File(path, "r") as f:
            assert f.userblock_size == 0
            objects = [f] + [f[key] for key in all_names(f)]
            assert {h5py.h5o.get_info(obj.id).hdr.version for obj in objects} == {1}


def test_groups_are_symbol_table_groups(files: dict[str, Path]) -> None:
    # Object-header message types: 0x11 symbol table (HDF5 1.8 "old-style" group),
    # 0x02 link info and 0x06 link (groups of the newer format).
    for path in files.values():
        with h5py.File(path, "r") as f:
            groups = [f] + [f[key] for key in all_names(f) if isinstance(f[key], h5py.Group)]
            for group in groups:
                present = h5py.h5o.get_info(group.id).hdr.mesg.present
                assert (present >> 0x11 & 1, present >> 0x02 & 1, present >> 0x06 & 1) == (1, 0, 0)



def test_no_timestamps(files: dict[str, Path]) -> None:
    for path in files.values():
        with h5py.File(path, "r") as f:
            for obj in [f] + [f[key] for key in all_names(f)]:
                info = h5py.h5o.get_info(obj.id)
                assert (info.atime, info.mtime, info.ctime, info.btime) == (0, 0, 0, 0), obj.name



def test_strings_are_fixed_length_without_global_heap(files: dict[str, Path]) -> None:
    for path in files.values():
        with h5py.File(path, "r") as f:
            for name in ("format", "kind", "options_json"):
                info = h5py.check_string_dtype(f.attrs.get_id(name).dtype)
                assert info.length == len(f.attrs[name]) and isinstance(f.attrs[name], bytes)
        assert b"GCOL" not in path.read_bytes()  # signature of a global heap collection



@pytest.mark.real_client
@pytest.mark.skipif(shutil.which("h5dump") is None, reason="h5dump (hdf5-tools) not installed")
def test_h5dump_shows_the_layout(files: dict[str, Path]) -> None:
    path = str(files["gaussian"])
    header = subprocess.run(["h5dump", "-H", path], capture_output=True, text=True, check=True).stdout
    for group in ("truth", "map", "gibbs", "params", "design", "calibration", "rejection"):
        assert f'GROUP "{group}"' in header
    assert 'DATASET "data"' in header and "( 12, 10 )" in header
    assert 'ATTRIBUTE "format"' in header and "lbm-bench-table" not in header  # -H: no values
    values = subprocess.run(["h5dump", "-A", path], capture_output=True, text=True, check=True).stdout
    assert '"lbm-bench-table"' in values
    assert "(0,0):" not in values  # no dataset values
    props = subprocess.run(
        ["h5dump", "-p", "-H", "-d", "gibbs/rows", path], capture_output=True, text=True, check=True
    ).stdout
    assert "CHUNKED ( 50, 12 )" in props and "PREPROCESSING SHUFFLE" in props
    assert "COMPRESSION DEFLATE { LEVEL 4 }" in props


# ---------------------------------------------------------------------------
# The table of versions
# ---------------------------------------------------------------------------
def test_version_table() -> None:
    assert (fmt.MAJOR, fmt.FORMAT_VERSION, fmt.ACCEPTED_VERSIONS) == (1, "1.6", ("1.0", "1.1", "1.2", "1.3", "1.4",
                                                                                "1.5", "1.6"))
    items = documented_items()
    floor = {name for name, (_, _, _, present) in items.items() if present.startswith("1.1")}
    floor -= {"bayes", "posterior"}  # groups are implied by their datasets
    sparse = {name for name, (_, _, _, present) in items.items() if present == "sparse"} - {"data|sparse"}
    assert sparse == {"data@encoding", "data@shape", "data/indices", "data/indptr", "data/values"}
    missing = {name for name, (_, _, _, present) in items.items() if present.startswith("missing")} - {"missing"}
    assert set(fmt.MINOR_VERSIONS) == {0, 1, 2, 3, 4, 5, 6} and fmt.MINOR_VERSIONS[0] == ()
    assert set(fmt.MINOR_VERSIONS[1]) == floor | sparse  # 1.1: the floor and sparse data, as docs/format.md marks them
    categorical = {name for name, (_, _, _, present) in items.items() if present == "categorical" and "|" not in name}
    assert set(fmt.MINOR_VERSIONS[2]) == categorical == {"@categories"}  # 1.2: categorical tables
    assert set(fmt.MINOR_VERSIONS[3]) == missing  # 1.3: missing entries
    design = {name for name, (_, _, _, present) in items.items() if present == "1.4 sparse design"}
    assert set(fmt.MINOR_VERSIONS[4]) == design == {"params/design@density"}  # 1.4: a sparse design's density
    assert fmt.optional_items((1, 0)) == frozenset()
    assert fmt.optional_items((1, 1)) == floor | sparse
    assert fmt.optional_items((1, 2)) == floor | sparse | categorical
    assert fmt.optional_items((1, 3)) == floor | sparse | categorical | missing
    assert fmt.optional_items((1, 4)) == floor | sparse | categorical | missing | design
    fitted = {name for name, (_, _, _, present) in items.items() if present.startswith("1.5")}
    assert set(fmt.MINOR_VERSIONS[5]) == fitted  # 1.5: a fitted design's path, a design file's digest
    assert fmt.optional_items((1, 5)) == floor | sparse | categorical | missing | design | fitted
    knee = {name for name, (_, _, _, present) in items.items() if present.startswith("1.6")}
    assert set(fmt.MINOR_VERSIONS[6]) == knee == {"params/design/path_knee"}  # 1.6: the path's knee
    assert fmt.optional_items((1, 6)) == floor | sparse | categorical | missing | design | fitted | knee
    assert fmt.optional_items((1, 6)) == fmt.optional_items((1, 7))
    assert fmt.version_for(["data", "gibbs/rows", "@categories"]) == "1.2"
    assert fmt.added_in("observed") == "1.3" and fmt.added_in("data/values") == "1.1"
    assert fmt.added_in("@categories") == "1.2"
    assert fmt.version_for(["data", "gibbs/rows"]) == "1.0"
    assert fmt.version_for(["data/indptr", "data/indices", "data/values", "gibbs/rows"]) == "1.1"
    assert [fmt.parse_version(v) for v in ("1.0", "1.12", "10.3")] == [(1, 0), (1, 12), (10, 3)]
    for text in ("1", "1.0.0", "v1.0", "1.x", " 1.0", ""):
        assert fmt.parse_version(text) is None, text


def test_optional_items_accumulate_over_minors(monkeypatch: pytest.MonkeyPatch) -> None:
    later = {0: (), 1: ("bayes/rows", "bayes/cols"), 2: ("@density",)}
    monkeypatch.setattr(fmt, "MINOR_VERSIONS", later)
    assert fmt.optional_items((1, 0)) == frozenset()
    assert fmt.optional_items((1, 1)) == {"bayes/rows", "bayes/cols"}
    assert fmt.optional_items((1, 2)) == fmt.optional_items((1, 9)) == {"bayes/rows", "bayes/cols", "@density"}
    with pytest.raises(ValueError, match="major 1, got 2.0"):
        fmt.optional_items((2, 0))
    assert fmt.version_for(["data", "gibbs/rows", "@kind"]) == "1.0"
    assert fmt.version_for(["data", "bayes/cols"]) == "1.1"
    assert fmt.version_for(["@density", "bayes/rows"]) == "1.2"


def test_new_minor_keeps_the_bytes_of_tables_without_its_items(
    files: dict[str, Path], tables: dict[str, Table], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When a minor version adds items, a table without them is still written as 1.0, byte for
    byte, and files of the older minor are still read."""
    monkeypatch.setattr(fmt, "MINOR_VERSIONS", {0: (), 1: ("bayes/rows", "bayes/cols")})
    monkeypatch.setattr(fmt, "FORMAT_VERSION", "1.1")
    for name, table in tables.items():
        if table.bayes_risk is not None or table.header_values():
            continue  # tables with the floor are 1.1 files, categorical tables 1.2
        path = save_table(table, tmp_path / f"{name}.h5")
        assert sha256(path) == sha256(files[name]), name
        assert read_info(path)["format_version"] == "1.0"
        assert check_file(files[name]) == []


def test_doc_r_snippet_reads_a_categorical_table() -> None:
    """The R snippet of docs/format.md (hdf5r) on the committed 1.2 sample: K, probs (g, m, K)
    in the file's order, the first column as a factor of the K categories."""
    import shutil
    import subprocess

    from tests.storage.tables import CATEGORICAL_SAMPLE

    rscript = shutil.which("Rscript")
    if rscript is None or subprocess.run([rscript, "-e", "library(hdf5r)"], capture_output=True).returncode:
        pytest.skip("R with the hdf5r package is not installed")
    snippet = re.findall(r"```r\n(.*?)```", DOC.read_text(), flags=re.S)[0]
    code = f'path <- "{CATEGORICAL_SAMPLE}"\n' + snippet.replace(
        "f$close_all()", 'cat(K, dim(probs), sprintf("%.15g", probs[1, 2, ]), length(levels(answers)), dim(X), "\\n")')
    done = subprocess.run([rscript, "-e", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    table = load_table(CATEGORICAL_SAMPLE)
    expected = ["4", "2", "2", "4", *(f"{v:.15g}" for v in table.model.probs[0, 1]), "4", "12", "10"]
    assert done.stdout.split() == expected
