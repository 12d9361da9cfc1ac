"""lbm_bench.storage.reader: what readers must reject or accept, check_file, read_info, the sample."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import h5py
import numpy as np
import pytest
import scipy.sparse as sp

from lbm_bench.storage import (
    FormatError,
    check_file,
    load_table,
    read_info,
    save_table,
)
from tests.storage.tables import (
    CATEGORICAL_SAMPLE,
    MISSING_SAMPLE,
    REJECTIONS,
    SAMPLE,
    SAMPLE_1_1,
    assert_same,
    copy_of,
    delete_item,
    documented_items,
    file_items,
    replace_dataset,
    set_attr,
    set_first,
)


@pytest.mark.parametrize("case", REJECTIONS)
def test_readers_reject(case: str, files: dict[str, Path], tmp_path: Path) -> None:
    family, mutate, message = REJECTIONS[case]
    path = copy_of(files[family], tmp_path)
    mutate(path)
    with pytest.raises(FormatError) as info:
        load_table(path)
    text = str(info.value)
    assert isinstance(info.value, ValueError)
    assert text.startswith(f"{path}: ") and "\n" not in text
    assert message in text
    problems = check_file(path)
    assert problems and any(message in p for p in problems)
    assert all("\n" not in p for p in problems)


def test_every_documented_item_is_required(files, sparse_files, missing_files, tmp_path: Path) -> None:
    checked = set()
    sources = [files[name] for name in ("gaussian", "poisson-effects", "bernoulli", "gaussian-floor", "categorical")]
    sources += [missing_files[name] for name in ("bernoulli-missing-block", "poisson-effects-sparse-missing-block")]
    for source in sources + [sparse_files["bernoulli-sparse"]]:
        for item in file_items(source):
            path = copy_of(source, tmp_path)
            delete_item(item)(path)
            with pytest.raises(FormatError, match="is missing|must come together"):
                load_table(path)
            checked.add(item)
    # calibration@method is in files calibrated otherwise than by the 1.0 dichotomy
    # (tests/protocol/test_calibration.py::test_calibration_record_round_trip); a sparse
    # design's density may be absent (files of 1.1 to 1.3: the design then reads as dense),
    # test_a_sparse_design_reads_back_with_its_density checks it; a fitted design's path (1.5)
    # and its design file's digest are in tables generated from a fitted design, whose
    # removal tests/storage/test_design_path.py makes
    optional = {"calibration@method", "params/design@density", "params/design@digest",
                "params/design/path_natural", "params/design/path_centre", "params/design/path_knee"}
    assert checked == {name.split("|")[0] for name in documented_items()} - optional


def test_readers_do_not_depend_on_chunking(files, tables, tmp_path) -> None:
    path = copy_of(files["gaussian"], tmp_path)
    for item in ("data", "gibbs/rows", "gibbs/cols"):
        replace_dataset(item, lambda x: x)(path)  # contiguous, uncompressed
    with h5py.File(path, "r") as f:
        assert f["data"].chunks is None and f["gibbs/rows"].compression is None
    assert_same(tables["gaussian"], load_table(path))


def test_float32_parameters_are_read_as_float64(files, tables, tmp_path) -> None:
    path = copy_of(files["gaussian"], tmp_path)
    for item in ("params/means", "params/design/pattern", "calibration/history"):
        replace_dataset(item, lambda x: x.astype(np.float32))(path)
    table = load_table(path)
    assert table.model.means.dtype == table.design.pattern.dtype == table.calibration.history.dtype
    assert table.calibration.history.dtype == np.float64
    np.testing.assert_allclose(table.model.means, tables["gaussian"].model.means, rtol=1e-6)


def test_check_file_lists_every_problem(files: dict[str, Path], tmp_path: Path) -> None:
    assert all(check_file(path) == [] for path in files.values())
    path = copy_of(files["gaussian"], tmp_path)
    for mutate in (delete_item("gibbs@thin"), set_first("map/rows", 2), replace_dataset("params/stds", lambda x: -x)):
        mutate(path)
    problems = check_file(path)
    assert len(problems) == 3
    with pytest.raises(FormatError, match=r"\(and 2 more problems\)$"):
        load_table(path)


def test_missing_file_is_file_not_found(tmp_path: Path) -> None:
    for function in (load_table, check_file, read_info):
        with pytest.raises(FileNotFoundError):
            function(tmp_path / "absent.h5")


def test_newer_minor_version_and_unknown_items_are_accepted(files, tables, tmp_path) -> None:
    path = copy_of(files["poisson-effects"], tmp_path)
    with h5py.File(path, "r+") as f:
        f.attrs["format_version"] = "1.7"
        f.attrs["new_root_attribute"] = 3
        f["gibbs"].attrs["new_gibbs_attribute"] = "x"
        f.create_dataset("extra/thing", data=np.arange(4))
        f.create_dataset("gibbs/weights", data=np.ones(50))
    assert check_file(path) == []
    assert_same(tables["poisson-effects"], load_table(path))
    assert read_info(path)["format_version"] == "1.7"


def test_variable_length_and_ascii_strings_are_accepted(files, tables, tmp_path) -> None:
    path = copy_of(files["bernoulli"], tmp_path)
    with h5py.File(path, "r+") as f:
        for name in ("format", "format_version", "options_json", "lbm_bench_version"):
            f.attrs[name] = f.attrs[name].decode("utf-8")  # h5py's default: variable-length UTF-8
        assert h5py.check_string_dtype(f.attrs.get_id("format").dtype).length is None
        f.attrs.create("kind", np.bytes_(b"bernoulli"), dtype=h5py.string_dtype("ascii", 9))
    assert_same(tables["bernoulli"], load_table(path))



def test_damaged_chunk_is_a_format_error(files: dict[str, Path], tmp_path: Path) -> None:
    path = copy_of(files["gaussian"], tmp_path)
    with h5py.File(path, "r") as f:
        offset = f["data"].id.get_chunk_info(0).byte_offset
    raw = bytearray(path.read_bytes())
    raw[offset : offset + 64] = b"\xff" * 64
    path.write_bytes(bytes(raw))
    with pytest.raises(FormatError, match="dataset data is unreadable"):
        load_table(path)


def test_attributes_of_other_types_are_not_read(files: dict[str, Path], tmp_path: Path) -> None:
    # h5py can crash on some attribute types of damaged files: only numbers and
    # strings are read, anything else is reported as unreadable.
    path = copy_of(files["gaussian"], tmp_path)
    set_attr("/", "risk", np.complex128(1 + 2j))(path)
    assert check_file(path) == ["attribute @risk is unreadable (attribute risk has an unsupported type (complex128))"]
    with pytest.raises(FormatError, match="unsupported type"):
        read_info(path)


# ---------------------------------------------------------------------------
# read_info
# ---------------------------------------------------------------------------
def test_read_info_does_not_read_datasets(files, tables, monkeypatch) -> None:
    def refuse(*args: Any) -> None:
        raise AssertionError("read_info read a dataset")

    monkeypatch.setattr(h5py.Dataset, "__getitem__", refuse)
    monkeypatch.setattr(h5py.Dataset, "read_direct", refuse)
    path = files["poisson-effects"]
    info = read_info(path)
    table = tables["poisson-effects"]
    assert info["path"] == str(path)
    with h5py.File(path, "r") as f:
        root = {key: value for key, value in f.attrs.items()}
    for key, value in root.items():  # every root attribute, as plain Python
        value = value.decode() if isinstance(value, bytes) else value
        assert info[key] == value and type(info[key]) in (str, int, float), key
    assert info["kind"] == "poisson" and info["n_rows"] == 12 and info["risk"] == table.risk.risk
    shortcuts = {
        "shape": (12, 10), "n_samples": 50, "n_chains": 2, "chain_lengths": [25, 25], "burn_in": 20,
        "thin": 1, "n_steps": 3, "n_tables": 20, "bracket": [0.5, 1.0], "attempts": 3,
        "screened_out": 2, "acceptance_rate": 1 / 3,
    }  # fmt: skip
    assert {key: info[key] for key in shortcuts} == shortcuts and math.isnan(info["balance"])
    assert info["datasets"]["data"] == {"shape": (12, 10), "dtype": "int64"}
    assert info["datasets"]["gibbs/rows"] == {"shape": (50, 12), "dtype": "uint8"}
    assert info["groups"]["gibbs"]["chain_lengths"] == [25, 25]
    items = file_items(path)
    assert set(info["datasets"]) == {k for k, v in items.items() if v[0] == "dataset"}
    assert set(info["groups"]) == {k for k, v in items.items() if v[0] == "group"}
    json.dumps(info)  # plain values only


@pytest.mark.parametrize("case", ["not-hdf5", "truncated", "other-format", "newer-major"])
def test_read_info_rejects(case: str, files: dict[str, Path], tmp_path: Path) -> None:
    family, mutate, message = REJECTIONS[case]
    path = copy_of(files[family], tmp_path)
    mutate(path)
    with pytest.raises(FormatError, match=re.escape(message)):
        read_info(path)


# ---------------------------------------------------------------------------
# h5dump and the committed sample


def test_committed_sample_still_loads() -> None:
    assert SAMPLE.stat().st_size < 50_000
    assert check_file(SAMPLE) == []
    table = load_table(SAMPLE)
    assert (table.kind, table.shape, table.model.block_shape, table.seed) == ("poisson", (12, 10), (2, 2), 2)
    assert table.model.row_effects is not None and table.design.col_effects is not None
    assert (table.gibbs.n_samples, table.gibbs.chain_lengths.tolist(), table.gibbs.burn_in) == (50, [25, 25], 20)
    assert table.risk.risk == pytest.approx(SAMPLE_RISK, abs=1e-12)
    assert table.risk.row_loss == pytest.approx(SAMPLE_ROW_LOSS, abs=1e-12)
    assert int(table.data.sum()) == SAMPLE_DATA_SUM and table.data.dtype == np.int64
    assert table.truth_rows.tolist() == SAMPLE_TRUTH_ROWS
    assert table.rejection.balance == 0.25 and table.scale == 0.8
    assert table.options == {"effects": True, "gibbs": {"n_chains": 2, "n_samples": 50}, "kind": "poisson"}
    # The stored certificate agrees with the stored Gibbs sets and MAP labels.
    again = table.gibbs.risk(table.map_rows, table.map_cols)
    assert again.risk == pytest.approx(table.risk.risk, abs=1e-12)


def test_committed_1_1_sample_loads_with_its_floor() -> None:
    """Version 1.1: the same table as the 1.0 sample, with its floor."""
    assert SAMPLE_1_1.stat().st_size < 50_000
    assert check_file(SAMPLE_1_1) == []
    assert read_info(SAMPLE_1_1)["format_version"] == "1.1"
    table, old = load_table(SAMPLE_1_1), load_table(SAMPLE)
    assert (old.criterion, old.bayes_risk, old.bayes_rows) == ("map", None, None)
    assert table.criterion == "bayes" and table.certified_risk is table.bayes_risk
    assert table.bayes_risk.risk == pytest.approx(SAMPLE_BAYES_RISK, abs=1e-12)
    assert table.bayes_rows.tolist() == SAMPLE_BAYES_ROWS
    assert table.risk == old.risk and np.array_equal(table.gibbs.rows, old.gibbs.rows)
    # The stored floor is what floor_certificate gives on the stored sets.
    from lbm_bench import floor_certificate

    again = floor_certificate(table.gibbs, starts=[(table.map_rows, table.map_cols)], n_row_clusters=2,
                              n_col_clusters=2)
    assert again.risk == table.bayes_risk and again.rows.tolist() == table.bayes_rows.tolist()


def test_committed_1_2_categorical_sample_loads() -> None:
    """Version 1.2: a categorical table, its codes, K = 4 categories, (g, m, K) parameters."""
    assert CATEGORICAL_SAMPLE.stat().st_size < 50_000
    assert check_file(CATEGORICAL_SAMPLE) == []
    info = read_info(CATEGORICAL_SAMPLE)
    assert (info["format_version"], info["kind"], info["categories"]) == ("1.2", "categorical", 4)
    table = load_table(CATEGORICAL_SAMPLE)
    assert (table.shape, table.model.block_shape, table.model.categories) == ((12, 10), (2, 2), 4)
    assert table.data.dtype == np.uint8 and int(table.data.sum()) == CATEGORICAL_SAMPLE_DATA_SUM
    assert table.model.probs[0, 0].tolist() == CATEGORICAL_SAMPLE_PROBS_00
    assert table.design.pattern.shape == (2, 2, 4)
    assert table.risk.risk == pytest.approx(CATEGORICAL_SAMPLE_RISK, abs=1e-12)
    assert table.bayes_risk.risk == pytest.approx(CATEGORICAL_SAMPLE_BAYES_RISK, abs=1e-12)
    again = table.gibbs.risk(table.map_rows, table.map_cols)
    assert again.risk == pytest.approx(table.risk.risk, abs=1e-12)


def test_committed_1_3_missing_sample_loads() -> None:
    """Version 1.3: a sparse Poisson table with effects and entries missing by block (its missing
    set as explicit NaN of ``data``, the block mechanism's parameters); read by a 1.4 reader."""
    assert MISSING_SAMPLE.stat().st_size < 50_000
    assert check_file(MISSING_SAMPLE) == []
    info = read_info(MISSING_SAMPLE)
    assert (info["format_version"], info["kind"], info["missing_mechanism"]) == ("1.3", "poisson", "block")
    table = load_table(MISSING_SAMPLE)
    assert sp.issparse(table.data) and table.shape == (12, 10) and table.model.row_effects is not None
    assert (table.missing_mechanism, table.missing_rate) == ("block", 0.1)
    assert int(np.isnan(table.data.data).sum()) == MISSING_SAMPLE_MISSING == info["n_missing"]
    assert int(np.nansum(table.data.data)) == MISSING_SAMPLE_DATA_SUM
    assert table.risk.risk == pytest.approx(MISSING_SAMPLE_RISK, abs=1e-12)
    again = table.gibbs.risk(table.map_rows, table.map_cols)
    assert again.risk == pytest.approx(table.risk.risk, abs=1e-12)


#: Values of the committed 1.3 sample with missing entries (written by make_missing_sample).
MISSING_SAMPLE_MISSING = 10
MISSING_SAMPLE_DATA_SUM = 252
MISSING_SAMPLE_RISK = 0.13933333333333334

#: Values of the committed 1.2 categorical sample (written by make_categorical_sample).
CATEGORICAL_SAMPLE_DATA_SUM = 185
CATEGORICAL_SAMPLE_PROBS_00 = [0.1059991428411109, 0.6820025714766671, 0.1059991428411109, 0.1059991428411109]
CATEGORICAL_SAMPLE_RISK = 0.04516666666666667
CATEGORICAL_SAMPLE_BAYES_RISK = 0.04516666666666668

#: Values of the committed 1.1 sample (written by make_sample(floor=True)).
SAMPLE_BAYES_RISK = 0.08149999999999999
SAMPLE_BAYES_ROWS = [0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0]

#: Values of the committed sample (written by make_sample).
SAMPLE_RISK = 0.0815
SAMPLE_ROW_LOSS = 0.021666666666666664
SAMPLE_DATA_SUM = 221
SAMPLE_TRUTH_ROWS = [0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0]


def test_a_sparse_design_reads_back_with_its_density(tmp_path) -> None:
    """Format 1.4: a loaded sparse table's design gives back its model (before 1.4 the design
    read back as a dense one, whose model's probabilities differed from the table's)."""
    import lbm_bench

    for kind, options in (("bernoulli", {}), ("poisson", {"effects": True})):
        table = lbm_bench.generate_table(kind, 120, 80, 2, 2, 0.1, density=0.1, n_samples=200, tolerance=0.05,
                                         rng=3, **options)
        path = save_table(table, tmp_path / f"{kind}.h5")
        loaded = load_table(path)
        assert loaded.design.density == table.design.density == 0.1 and loaded.model.sparse
        again = loaded.design.model(loaded.scale)
        for key, value in loaded.model.block_parameters().items():
            np.testing.assert_allclose(again.block_parameters()[key], value, rtol=1e-12)
        assert read_info(path)["format_version"] == "1.4"


# -- memory: sized from what the file declares, before reading (issue 48, item 1) ---------------


def test_a_file_declaring_more_label_sets_than_memory_holds_is_refused_before_reading(files, tmp_path):
    """A file of tens of KB may declare billions of compressed label sets: load_table (show, verify,
    the benchmark) read them whole, gigabytes, or died in a MemoryError traceback."""
    from tests.storage.tables import declare_label_sets

    source = files[sorted(files)[0]]
    path = declare_label_sets(source, tmp_path / "huge.h5", 40_000_000_000)
    assert path.stat().st_size < 2**20
    refused = (r"huge.h5: reading it needs about [0-9.]+ TiB \(label sets [0-9.]+ TiB, baseline .*\), more than "
               r"the .* available \((MemAvailable|the cgroup|ulimit)")
    with pytest.raises(FormatError, match=refused):
        load_table(path)
    (problem,) = check_file(path)
    assert problem.startswith("reading it needs about")
    table = load_table(path, label_sets=False)  # left in the file: read band by band, not whole
    assert table.gibbs.rows.shape[0] == 40_000_000_000
    assert load_table(source).gibbs.rows.shape[0] < 10_000  # an honest file loads as ever
