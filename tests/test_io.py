"""HDF5 table files (lbm_bench.io) and the claims of docs/format.md.

Tables are built without the calibration code: a seeded random design, a
table drawn from its model, the MAP and Gibbs labels, and hand-made
calibration and rejection records (:func:`make_table`).

The committed sample ``tests/data/table_v1.h5`` is written by
:func:`make_sample`; regenerate it (only when the format version changes) with
``python -m tests.test_io`` from the repository root.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

import h5py
import numpy as np
import pytest

import lbm_bench.io as lio
from lbm_bench import (
    GibbsSamples,
    LatentBlockModel,
    ModelDesign,
    gibbs_labels,
    map_labels,
    random_design,
)
from lbm_bench.inference.engine import smallest_uint
from lbm_bench.io import (
    FORMAT_NAME,
    FORMAT_VERSION,
    FormatError,
    check_file,
    load_table,
    read_info,
    save_table,
)
from lbm_bench.protocol.table import CalibrationResult, RejectionRecord, Table

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "format.md"
SAMPLE = Path(__file__).with_name("data") / "table_v1.h5"

#: (kind, with Poisson effects) of every family, by test id.
FAMILIES = {
    "gaussian": ("gaussian", False),
    "poisson": ("poisson", False),
    "poisson-effects": ("poisson", True),
    "bernoulli": ("bernoulli", False),
}


# ---------------------------------------------------------------------------
# Building tables and the sample file
# ---------------------------------------------------------------------------
def make_table(
    kind: str,
    *,
    effects: bool = False,
    n_rows: int = 12,
    n_cols: int = 10,
    n_samples: int = 50,
    scale: float = 0.8,
    seed: int = 2,
    balance: float | None = None,
) -> Table:
    """A small seeded table with plausible hand-made calibration and rejection records."""
    design = random_design(kind, 2, 2, effects=(n_rows, n_cols) if effects else None, rng=seed)
    model = design.model(scale)
    X, z, w = model.sample(n_rows, n_cols, rng=seed + 1)
    mapped = map_labels(model, X, rng=seed + 2)
    samples = gibbs_labels(model, X, n_samples=n_samples, n_chains=2, burn_in=20, rng=seed + 3)
    risk = samples.risk(mapped.rows, mapped.cols)
    history = np.array([[0.5, 0.31, 0.06, 10], [1.0, 0.04, 0.02, 10], [scale, 0.11, 0.04, 20]])
    calibration = CalibrationResult(
        scale=scale,
        bracket=(0.5, 1.0),
        n_steps=3,
        mean_error=0.11,
        error_std=0.04,
        target_risk=0.1,
        tolerance=0.02,
        n_tables=20,
        history=history,
    )
    rejection = RejectionRecord(
        attempts=3,
        screened_out=2,
        acceptance_rate=1 / 3,
        tolerance=0.05,
        candidate_risks=np.array([0.31, 0.02, risk.risk]),
        balance=balance,
    )
    options = {"kind": kind, "gibbs": {"n_samples": n_samples, "n_chains": 2}, "effects": effects}
    return Table(
        data=X,
        model=model,
        design=design,
        scale=scale,
        truth_rows=z,
        truth_cols=w,
        map_rows=mapped.rows,
        map_cols=mapped.cols,
        gibbs=samples,
        risk=risk,
        target_risk=0.1,
        seed=seed,
        calibration=calibration,
        rejection=rejection,
        options=options,
    )


def make_sample(path: Path = SAMPLE) -> Path:
    """Write the committed sample: Poisson with effects, 12x10, 2x2 clusters, 50 sets."""
    path.parent.mkdir(parents=True, exist_ok=True)
    return save_table(make_table("poisson", effects=True, balance=0.25), path)


def wide_table() -> Table:
    """A hand-built Gaussian table with 257 row clusters (uint16 labels), 3 chains, one empty."""
    g, n_rows, n_cols = 257, 300, 4
    rng = np.random.default_rng(5)
    props = np.full(g, 1.0 / g)
    pattern = rng.standard_normal((g, 1))
    design = ModelDesign("gaussian", props, np.array([1.0]), pattern, np.ones((g, 1)))
    model = design.model(2.0)
    z = np.arange(n_rows) % g
    w = np.zeros(n_cols, dtype=np.int64)
    X = model.table_from_noise(rng.standard_normal((n_rows, n_cols)), z, w)
    sets = np.stack([np.roll(z, k) for k in range(5)]).astype(np.uint16)
    gibbs = GibbsSamples(sets, np.zeros((5, n_cols), np.uint8), np.array([3, 0, 2]), 0, 1)
    risk = gibbs.risk(z, w)
    calibration = CalibrationResult(2.0, (1.0, 3.0), 1, 0.2, 0.1, 0.2, 0.01, 5, np.array([[2.0, 0.2, 0.1, 5]]))
    rejection = RejectionRecord(1, 0, 1.0, 0.1, np.array([risk.risk]), None)
    return Table(X, model, design, 2.0, z, w, z, w, gibbs, risk, 0.2, 2**62, calibration, rejection, {})


@pytest.fixture(scope="module")
def tables() -> dict[str, Table]:
    return {name: make_table(kind, effects=effects) for name, (kind, effects) in FAMILIES.items()}


@pytest.fixture(scope="module")
def files(tables: dict[str, Table], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("tables")
    return {name: save_table(table, folder / f"{name}.h5") for name, table in tables.items()}


def copy_of(path: Path, tmp_path: Path, name: str = "copy.h5") -> Path:
    target = tmp_path / name
    shutil.copyfile(path, target)
    return target


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# ---------------------------------------------------------------------------
# Comparing tables field by field
# ---------------------------------------------------------------------------
def assert_same(a: Any, b: Any, where: str = "table") -> None:
    """Exact equality of every field (arrays: dtype, shape, values; NaN equal to NaN)."""
    if dataclasses.is_dataclass(a):
        assert type(a) is type(b), where
        for field in dataclasses.fields(a):
            if field.compare:  # Table.timings and CalibrationResult.design are not compared
                assert_same(getattr(a, field.name), getattr(b, field.name), f"{where}.{field.name}")
    elif isinstance(a, LatentBlockModel):
        assert type(a) is type(b), where
        assert_same(a.row_proportions, b.row_proportions, f"{where}.row_proportions")
        assert_same(a.col_proportions, b.col_proportions, f"{where}.col_proportions")
        assert_same(a.block_parameters(), b.block_parameters(), f"{where}.block_parameters")
    elif isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray), where
        assert (a.dtype, a.shape) == (b.dtype, b.shape), where
        assert np.array_equal(a, b, equal_nan=a.dtype.kind == "f"), where
    elif isinstance(a, dict):
        assert isinstance(b, dict) and a.keys() == b.keys(), where
        for key in a:
            assert_same(a[key], b[key], f"{where}[{key!r}]")
    elif isinstance(a, (tuple, list)):
        assert type(a) is type(b) and len(a) == len(b), where
        for k, (x, y) in enumerate(zip(a, b)):
            assert_same(x, y, f"{where}[{k}]")
    elif isinstance(a, float) and math.isnan(a):
        assert isinstance(b, float) and math.isnan(b), where
    else:
        assert a == b, f"{where}: {a!r} != {b!r}"
        assert isinstance(b, type(a)) or isinstance(a, type(b)), where


@pytest.mark.parametrize("name", FAMILIES)
def test_round_trip_every_field(name: str, tables: dict[str, Table], files: dict[str, Path]) -> None:
    loaded = load_table(files[name])
    assert_same(tables[name], loaded)
    assert loaded.data.dtype == lio._DATA_DTYPES[loaded.kind]
    assert loaded.truth_rows.dtype == loaded.map_cols.dtype == np.int64
    assert loaded.gibbs.rows.dtype == np.uint8
    assert (loaded.design.row_effects is not None) == (name == "poisson-effects")
    assert loaded.calibration.design is loaded.design and loaded.timings == {}


def test_round_trip_balance_nan_rhat_wide_labels_and_huge_seed(tmp_path: Path) -> None:
    table = wide_table()
    assert math.isnan(table.risk.rhat)
    path = save_table(table, tmp_path / "wide.h5")
    assert_same(table, load_table(path))
    with h5py.File(path, "r") as f:
        assert f["truth/rows"].dtype == f["gibbs/rows"].dtype == np.uint16
        assert f["truth/cols"].dtype == f["gibbs/cols"].dtype == np.uint8
        assert math.isnan(f["rejection"].attrs["balance"])
        assert f["gibbs"].attrs["chain_lengths"].tolist() == [3, 0, 2]
    balanced = make_table("bernoulli", balance=0.5)
    assert load_table(save_table(balanced, tmp_path / "b.h5")).rejection.balance == 0.5


def test_options_are_sorted_json_numpy_values_become_plain(tmp_path: Path) -> None:
    table = dataclasses.replace(
        make_table("gaussian"),
        options={"z": np.int64(3), "a": np.arange(2), "t": (1.5, None), "m": {"y": 1, "b": "x"}},
    )
    path = save_table(table, tmp_path / "o.h5")
    with h5py.File(path, "r") as f:
        text = f.attrs["options_json"].decode("utf-8")
    assert text == json.dumps({"a": [0, 1], "m": {"b": "x", "y": 1}, "t": [1.5, None], "z": 3})
    assert load_table(path).options == {"a": [0, 1], "m": {"b": "x", "y": 1}, "t": [1.5, None], "z": 3}


# ---------------------------------------------------------------------------
# The documented layout
# ---------------------------------------------------------------------------
def _cells(line: str) -> list[str]:
    return [cell.strip().replace("\\|", "|") for cell in re.split(r"(?<!\\)\|", line)[1:-1]]


def documented_items() -> dict[str, tuple[str, str, str, str]]:
    """Item -> (type, dtype, shape, present) from the tables of docs/format.md."""
    items = {}
    for line in DOC.read_text().splitlines():
        if re.match(r"^\| `[^`]+` \| (attribute|dataset|group) \|", line):
            name, type_, dtype, shape, present = _cells(line)[:5]
            assert name.strip("`") not in items, name
            items[name.strip("`")] = (type_, dtype, shape, present)
    return items


def documented_data_dtypes() -> dict[str, np.dtype]:
    dtypes = {}
    for line in DOC.read_text().splitlines():
        match = re.match(r"^\| `(gaussian|poisson|bernoulli)` \| (\w+) \|", line)
        if match:
            dtypes[match.group(1)] = np.dtype(match.group(2))
    return dtypes


def file_items(path: Path) -> dict[str, tuple[str, Any, Any]]:
    """Every group, dataset and attribute of a file as (type, dtype, shape), by documented name."""
    items: dict[str, tuple[str, Any, Any]] = {}
    with h5py.File(path, "r") as f:

        def add_attrs(prefix: str, obj: Any) -> None:
            for key in obj.attrs:
                aid = obj.attrs.get_id(key)
                items[f"{prefix}@{key}"] = ("attribute", aid.dtype, aid.shape)

        def visit(name: str, obj: Any) -> None:
            if isinstance(obj, h5py.Group):
                items[name] = ("group", None, None)
                add_attrs(name, obj)
            else:
                items[name] = ("dataset", obj.dtype, obj.shape)

        add_attrs("", f)
        f.visititems(visit)
    return items


def _expected_shape(text: str, sizes: dict[str, int]) -> tuple[int, ...]:
    if text == "scalar":
        return ()
    tokens = [t.strip() for t in text.strip("()").split(",") if t.strip()]
    return tuple(int(t) if t.isdigit() else sizes[t] for t in tokens)


def _expected_dtype(text: str, table: Table) -> Any:
    g, m = table.model.block_shape
    return {
        "int64": np.dtype(np.int64),
        "float64": np.dtype(np.float64),
        "uint[g]": smallest_uint(g),
        "uint[m]": smallest_uint(m),
        "by kind": documented_data_dtypes()[table.kind],
    }[text]


def _present(condition: str, table: Table) -> bool:
    if condition == "always":
        return True
    if condition == "effects":
        return getattr(table.model, "row_effects", None) is not None
    return condition == table.kind


def test_doc_tables_parse() -> None:
    items = documented_items()
    assert len(items) == 67 and items["gibbs/rows"] == ("dataset", "uint[g]", "(n_samples, n_rows)", "always")
    assert documented_data_dtypes() == {k: lio._DATA_DTYPES[k] for k in ("gaussian", "poisson", "bernoulli")}
    documented_blocks = {
        name.split("/")[1] for name, (_, _, _, present) in items.items()
        if name.count("/") == 1 and name.startswith("params/") and present in lio._BLOCK_PARAMETERS
    }  # fmt: skip
    assert documented_blocks == {p for names in lio._BLOCK_PARAMETERS.values() for p in names}


@pytest.mark.parametrize("name", FAMILIES)
def test_file_has_exactly_the_documented_layout(
    name: str, tables: dict[str, Table], files: dict[str, Path]
) -> None:
    table = tables[name]
    sizes = {
        "n_rows": table.shape[0],
        "n_cols": table.shape[1],
        "g": table.n_row_clusters,
        "m": table.n_col_clusters,
        "n_samples": table.gibbs.n_samples,
        "n_chains": table.gibbs.n_chains,
        "n_steps": table.calibration.n_steps,
        "attempts": table.rejection.attempts,
    }
    expected = {k: v for k, v in documented_items().items() if _present(v[3], table)}
    actual = file_items(files[name])
    with h5py.File(files[name], "r") as f:
        strings = {f"@{key}": value.decode() for key, value in f.attrs.items() if isinstance(value, bytes)}
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
        else:
            assert actual_dtype == _expected_dtype(dtype, table), item


@pytest.mark.parametrize("name", FAMILIES)
def test_attribute_values(name: str, tables: dict[str, Table], files: dict[str, Path]) -> None:
    table = tables[name]
    with h5py.File(files[name], "r") as f:
        root = {key: v.decode() if isinstance(v, bytes) else v for key, v in f.attrs.items()}
        assert root["format"] == FORMAT_NAME == "lbm-bench-table"
        assert root["format_version"] == FORMAT_VERSION == "1.0"
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


# ---------------------------------------------------------------------------
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
                cap = 256 if key.startswith("gibbs") else None
                assert ds.chunks == lio._chunk_shape(ds.shape, ds.dtype.itemsize, cap), key
                assert (ds.compression, ds.compression_opts, ds.shuffle) == ("gzip", 4, True), key
            else:
                assert ds.chunks is None and ds.compression is None and not ds.shuffle, key


@pytest.mark.parametrize(
    ("shape", "itemsize", "cap", "expected"),
    [
        ((50, 12), 1, 256, (50, 12)),
        ((2000, 10_000), 1, 256, (104, 10_000)),
        ((5000, 100), 1, 256, (256, 100)),
        ((10_000, 10_000), 8, None, (13, 10_000)),
        ((7, 300_000), 8, None, (1, 131_072)),
        ((3, 2_000_000), 1, 256, (1, 1_048_576)),
    ],
)
def test_chunk_shape_formula(shape, itemsize, cap, expected) -> None:
    chunk = lio._chunk_shape(shape, itemsize, cap)
    cols = min(shape[1], max(1, 2**20 // itemsize))
    rows = min(shape[0], max(1, 2**20 // (cols * itemsize)), cap or shape[0])
    assert chunk == expected == (rows, cols)
    assert chunk[0] * chunk[1] * itemsize <= 2**20


def test_container_version_zero_superblock_no_user_block(files: dict[str, Path]) -> None:
    for path in files.values():
        head = path.read_bytes()[:9]
        assert head[:8] == b"\x89HDF\r\n\x1a\n"  # signature at byte 0: no user block
        assert head[8] == 0  # superblock version 0 (readable by HDF5 1.8)
        with h5py.File(path, "r") as f:
            assert f.userblock_size == 0
            objects = [f] + [f[key] for key in _all_names(f)]
            assert {h5py.h5o.get_info(obj.id).hdr.version for obj in objects} == {1}


def test_groups_are_symbol_table_groups(files: dict[str, Path]) -> None:
    # Object-header message types: 0x11 symbol table (HDF5 1.8 "old-style" group),
    # 0x02 link info and 0x06 link (groups of the newer format).
    for path in files.values():
        with h5py.File(path, "r") as f:
            groups = [f] + [f[key] for key in _all_names(f) if isinstance(f[key], h5py.Group)]
            for group in groups:
                present = h5py.h5o.get_info(group.id).hdr.mesg.present
                assert (present >> 0x11 & 1, present >> 0x02 & 1, present >> 0x06 & 1) == (1, 0, 0)


def _all_names(f: h5py.File) -> list[str]:
    names: list[str] = []
    f.visit(names.append)
    return names


def test_no_timestamps(files: dict[str, Path]) -> None:
    for path in files.values():
        with h5py.File(path, "r") as f:
            for obj in [f] + [f[key] for key in _all_names(f)]:
                info = h5py.h5o.get_info(obj.id)
                assert (info.atime, info.mtime, info.ctime, info.btime) == (0, 0, 0, 0), obj.name


_WRITE_IN_SUBPROCESS = (
    "import sys; from pathlib import Path; from tests.test_io import FAMILIES, make_table;"
    "from lbm_bench.io import save_table\n"
    "for name, (kind, effects) in FAMILIES.items():\n"
    "    save_table(make_table(kind, effects=effects), Path(sys.argv[1]) / f'{name}.h5')"
)


def test_byte_identical_rewrite_later_and_in_another_process(
    tables: dict[str, Table], files: dict[str, Path], tmp_path: Path
) -> None:
    time.sleep(1.1)  # timestamps, if any, would now differ by at least a second
    (tmp_path / "same").mkdir()
    (tmp_path / "reloaded").mkdir()
    (tmp_path / "other").mkdir()
    for name, table in tables.items():
        assert sha256(save_table(table, tmp_path / "same" / f"{name}.h5")) == sha256(files[name]), name
        reloaded = save_table(load_table(files[name]), tmp_path / "reloaded" / f"{name}.h5")
        assert sha256(reloaded) == sha256(files[name]), name
    args = [sys.executable, "-c", _WRITE_IN_SUBPROCESS, str(tmp_path / "other")]
    subprocess.run(args, cwd=ROOT, check=True, capture_output=True, timeout=60)
    for name in tables:
        assert sha256(tmp_path / "other" / f"{name}.h5") == sha256(files[name]), name


def test_bytes_do_not_depend_on_when_datasets_are_closed(
    tables: dict[str, Table], files: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """HDF5 gives a chunk its file space when the chunk is flushed. If that waited for
    the dataset to be closed, the layout would depend on when Python's garbage
    collector drops the dataset objects (it did: 1 release build in ~25 laid two Gibbs
    datasets out in the other order). Keeping every dataset open until the file
    closes must not change a byte."""
    import h5py

    kept = []
    create = h5py.Group.create_dataset

    def create_and_keep(self, *args, **kwargs):
        kept.append(create(self, *args, **kwargs))
        return kept[-1]

    monkeypatch.setattr(h5py.Group, "create_dataset", create_and_keep)
    for name, table in tables.items():
        path = save_table(table, tmp_path / f"{name}.h5")
        assert sha256(path) == sha256(files[name]), name
    assert kept


# ---------------------------------------------------------------------------
# Atomic writes
# ---------------------------------------------------------------------------
def _fail_on_call(monkeypatch: pytest.MonkeyPatch, name: str, exc: type[BaseException], at: int) -> None:
    real = getattr(lio, name)
    calls = []

    def failing(*args: Any, **kwargs: Any) -> Any:
        calls.append(args)
        if len(calls) == at:
            raise exc("interrupted for the test")
        return real(*args, **kwargs)

    monkeypatch.setattr(lio, name, failing)


@pytest.mark.parametrize(
    ("target", "exc", "at"),
    [
        ("_write_dataset", KeyboardInterrupt, 3),
        ("_write_dataset", OSError, 1),
        ("_fsync", KeyboardInterrupt, 1),  # after a complete write, before the rename
    ],
)
def test_interrupted_write_leaves_no_file(tables, tmp_path, monkeypatch, target, exc, at) -> None:
    _fail_on_call(monkeypatch, target, exc, at)
    with pytest.raises(exc):
        save_table(tables["gaussian"], tmp_path / "table.h5")
    assert list(tmp_path.iterdir()) == []


def test_interrupted_overwrite_keeps_the_old_file(tables, tmp_path, monkeypatch) -> None:
    path = save_table(tables["bernoulli"], tmp_path / "table.h5")
    before = sha256(path)
    _fail_on_call(monkeypatch, "_write_dataset", KeyboardInterrupt, 5)
    with pytest.raises(KeyboardInterrupt):
        save_table(tables["gaussian"], path)
    assert [p.name for p in tmp_path.iterdir()] == ["table.h5"]
    assert sha256(path) == before


def test_write_uses_a_temporary_file_fsynced_then_renamed(tables, tmp_path, monkeypatch) -> None:
    events: list[tuple[str, Path]] = []
    write, fsync, replace = lio._write_layout, lio._fsync, lio.os.replace

    def spy_write(layout: Any, path: Path) -> None:
        events.append(("write", path))
        write(layout, path)

    def spy_fsync(path: Path, **kwargs: Any) -> None:
        events.append(("fsync-dir" if kwargs.get("directory") else "fsync", path))
        fsync(path, **kwargs)

    def spy_replace(source: Path, target: Path) -> None:
        events.append(("replace", source))
        assert not Path(target).exists()
        replace(source, target)

    monkeypatch.setattr(lio, "_write_layout", spy_write)
    monkeypatch.setattr(lio, "_fsync", spy_fsync)
    monkeypatch.setattr(lio.os, "replace", spy_replace)
    assert save_table(tables["poisson"], str(tmp_path / "t.h5")) == tmp_path / "t.h5"
    temporary = tmp_path / f".t.h5.tmp-{os.getpid()}"
    assert events == [("write", temporary), ("fsync", temporary), ("replace", temporary), ("fsync-dir", tmp_path)]
    assert [p.name for p in tmp_path.iterdir()] == ["t.h5"]


def test_save_refuses_tables_that_would_not_load(tables, tmp_path) -> None:
    table = tables["gaussian"]
    bad = {
        "map_rows": dataclasses.replace(table, map_rows=np.full(12, 256)),  # would wrap to 0 in uint8
        "truth_cols": dataclasses.replace(table, truth_cols=np.zeros(9, dtype=np.int64)),
        "seed": dataclasses.replace(table, seed=2**64),
        "n_samples": dataclasses.replace(table, risk=dataclasses.replace(table.risk, n_samples=7)),
        "history": dataclasses.replace(
            table, calibration=dataclasses.replace(table.calibration, n_steps=4)
        ),
        "options": dataclasses.replace(table, options={"f": object()}),
        "scale": dataclasses.replace(table, scale=-1.0),
        "target_risk": dataclasses.replace(table, target_risk=None),
        "design": dataclasses.replace(table, design=tables["poisson"].design),
    }
    for field_name, candidate in bad.items():
        path = tmp_path / f"{field_name}.h5"
        with pytest.raises(ValueError, match=r"^cannot save table to .*" + re.escape(path.name)):
            save_table(candidate, path)
        assert list(tmp_path.iterdir()) == [], field_name
    with pytest.raises(FileNotFoundError):
        save_table(table, tmp_path / "missing-dir" / "t.h5")


# ---------------------------------------------------------------------------
# What readers must reject
# ---------------------------------------------------------------------------
def _set_attr(obj: str, name: str, value: Any) -> Callable[[Path], None]:
    def mutate(path: Path) -> None:
        with h5py.File(path, "r+") as f:
            f[obj].attrs[name] = value

    return mutate


def _del(item: str) -> Callable[[Path], None]:
    def mutate(path: Path) -> None:
        with h5py.File(path, "r+") as f:
            obj, _, attr = item.partition("@")
            if attr:
                del f[obj or "/"].attrs[attr]
            else:
                del f[obj]

    return mutate


def _replace(item: str, make: Callable[[np.ndarray], np.ndarray]) -> Callable[[Path], None]:
    def mutate(path: Path) -> None:
        with h5py.File(path, "r+") as f:
            values = make(f[item][()])
            del f[item]
            f.create_dataset(item, data=values)

    return mutate


def _set_first(item: str, value: Any) -> Callable[[Path], None]:
    def mutate(path: Path) -> None:
        with h5py.File(path, "r+") as f:
            ds = f[item]
            index = (0,) * ds.ndim
            ds[index] = value

    return mutate


def _overwrite_bytes(make: Callable[[bytes], bytes]) -> Callable[[Path], None]:
    def mutate(path: Path) -> None:
        path.write_bytes(make(path.read_bytes()))

    return mutate


REJECTIONS = {
    "not-hdf5": ("gaussian", _overwrite_bytes(lambda b: b"kind,risk\ngaussian,0.1\n"), "not a readable HDF5 file"),
    "empty": ("gaussian", _overwrite_bytes(lambda b: b""), "not a readable HDF5 file"),
    "truncated": ("gaussian", _overwrite_bytes(lambda b: b[: len(b) // 2]), "not a readable HDF5 file"),
    "no-format": ("gaussian", _del("@format"), "attribute @format is missing"),
    "other-format": ("gaussian", _set_attr("/", "format", "netcdf-table"), "not an lbm-bench-table file"),
    "format-not-string": ("gaussian", _set_attr("/", "format", 3), "must be a UTF-8 string"),
    "newer-major": ("gaussian", _set_attr("/", "format_version", "2.0"), "newer than this reader"),
    "older-major": ("gaussian", _set_attr("/", "format_version", "0.9"), "not supported"),
    "bad-version": ("gaussian", _set_attr("/", "format_version", "1"), "MAJOR.MINOR"),
    "bad-kind": ("gaussian", _set_attr("/", "kind", "normal"), "@kind must be one of"),
    "zero-rows": ("gaussian", _set_attr("/", "n_rows", 0), "@n_rows must be >= 1"),
    "missing-dataset": ("gaussian", _del("gibbs/cols"), "dataset gibbs/cols is missing"),
    "missing-group": ("gaussian", _del("calibration"), "group calibration is missing"),
    "missing-attribute": ("gaussian", _del("gibbs@thin"), "attribute gibbs@thin is missing"),
    "missing-risk": ("gaussian", _del("@risk_ess"), "attribute @risk_ess is missing"),
    "data-shape": ("gaussian", _replace("data", lambda x: x[:-1]), "dataset data has shape (11, 10)"),
    "n-cols": ("gaussian", _set_attr("/", "n_cols", 11), "has shape"),
    "truth-shape": ("gaussian", _replace("truth/rows", lambda x: x[:-1]), "dataset truth/rows has shape"),
    "label-range": ("gaussian", _set_first("map/rows", 2), "map/rows holds label 2, outside [0, 2)"),
    "gibbs-range": ("bernoulli", _set_first("gibbs/cols", 7), "gibbs/cols holds label 7"),
    "signed-labels": ("gaussian", _replace("truth/cols", lambda x: x.astype(np.int64)), "expected unsigned"),
    "chain-lengths": ("gaussian", _set_attr("gibbs", "chain_lengths", np.array([25, 24])), "sum(gibbs@chain_lengths)"),
    "n-chains": ("gaussian", _set_attr("gibbs", "n_chains", 3), "gibbs@n_chains is 3"),
    "gibbs-lengths-differ": ("poisson", _replace("gibbs/cols", lambda x: x[:-1]), "49 label sets"),
    "param-shape": ("gaussian", _replace("params/means", lambda x: x[:, :1]), "params/means has shape (2, 1)"),
    "param-dtype": ("bernoulli", _replace("params/probs", lambda x: (x > 0.5).astype(np.int64)), "expected float"),
    "param-value": ("poisson", _replace("params/rates", lambda x: -x), "params: rates must be > 0"),
    "proportions": ("gaussian", _replace("params/row_proportions", lambda x: 2 * x), "must sum to 1"),
    "effects-alone": ("poisson-effects", _del("params/col_effects"), "must come together"),
    "effects-length": ("poisson-effects", _replace("params/row_effects", lambda x: x[:-1]), "row_effects has shape"),
    "design-shape": ("gaussian", _replace("params/design/pattern", lambda x: x.T[:1]), "params/design/pattern"),
    "scale-mismatch": ("gaussian", _set_attr("params", "scale", 9.0), "params@scale"),
    "gaussian-dtype": ("gaussian", _replace("data", lambda x: x.astype(np.float32)), "expected float64"),
    "poisson-dtype": ("poisson", _replace("data", lambda x: x.astype(np.float64)), "expected int64"),
    "bernoulli-dtype": ("bernoulli", _replace("data", lambda x: x.astype(np.int64)), "expected uint8"),
    "gaussian-nan": ("gaussian", _set_first("data", np.nan), "non-finite"),
    "poisson-negative": ("poisson", _set_first("data", -1), "negative count"),
    "bernoulli-two": ("bernoulli", _set_first("data", 2), "other than 0/1"),
    "history-steps": ("gaussian", _set_attr("calibration", "n_steps", 4), "calibration/history has shape (3, 4)"),
    "bracket": ("gaussian", _set_attr("calibration", "bracket", np.array([1.0, 2.0, 3.0])), "2 values"),
    "candidates": ("gaussian", _set_attr("rejection", "attempts", 2), "rejection/candidate_risks has shape"),
    "options-json": ("gaussian", _set_attr("/", "options_json", "{not json"), "not valid JSON"),
    "options-list": ("gaussian", _set_attr("/", "options_json", "[1, 2]"), "JSON object"),
    "seed-type": ("gaussian", _set_attr("/", "seed", 1.5), "@seed must be an integer"),
}


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


def test_every_documented_item_is_required(files: dict[str, Path], tmp_path: Path) -> None:
    checked = set()
    for name in ("gaussian", "poisson-effects", "bernoulli"):
        for item in file_items(files[name]):
            path = copy_of(files[name], tmp_path)
            _del(item)(path)
            with pytest.raises(FormatError, match="is missing|must come together"):
                load_table(path)
            checked.add(item)
    assert checked == set(documented_items())


def test_readers_do_not_depend_on_chunking(files, tables, tmp_path) -> None:
    path = copy_of(files["gaussian"], tmp_path)
    for item in ("data", "gibbs/rows", "gibbs/cols"):
        _replace(item, lambda x: x)(path)  # contiguous, uncompressed
    with h5py.File(path, "r") as f:
        assert f["data"].chunks is None and f["gibbs/rows"].compression is None
    assert_same(tables["gaussian"], load_table(path))


def test_float32_parameters_are_read_as_float64(files, tables, tmp_path) -> None:
    path = copy_of(files["gaussian"], tmp_path)
    for item in ("params/means", "params/design/pattern", "calibration/history"):
        _replace(item, lambda x: x.astype(np.float32))(path)
    table = load_table(path)
    assert table.model.means.dtype == table.design.pattern.dtype == table.calibration.history.dtype
    assert table.calibration.history.dtype == np.float64
    np.testing.assert_allclose(table.model.means, tables["gaussian"].model.means, rtol=1e-6)


def test_check_file_lists_every_problem(files: dict[str, Path], tmp_path: Path) -> None:
    assert all(check_file(path) == [] for path in files.values())
    path = copy_of(files["gaussian"], tmp_path)
    for mutate in (_del("gibbs@thin"), _set_first("map/rows", 2), _replace("params/stds", lambda x: -x)):
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


def test_strings_are_fixed_length_without_global_heap(files: dict[str, Path]) -> None:
    for path in files.values():
        with h5py.File(path, "r") as f:
            for name in ("format", "kind", "options_json"):
                info = h5py.check_string_dtype(f.attrs.get_id(name).dtype)
                assert info.length == len(f.attrs[name]) and isinstance(f.attrs[name], bytes)
        assert b"GCOL" not in path.read_bytes()  # signature of a global heap collection


def test_options_longer_than_an_attribute_are_refused(tables, tmp_path) -> None:
    table = dataclasses.replace(tables["gaussian"], options={"x": "a" * 63_990})
    save_table(table, tmp_path / "ok.h5")
    assert load_table(tmp_path / "ok.h5").options == table.options
    with pytest.raises(ValueError, match="more than the 64000 an attribute holds"):
        save_table(dataclasses.replace(table, options={"x": "a" * 64_000}), tmp_path / "big.h5")
    assert [p.name for p in tmp_path.iterdir()] == ["ok.h5"]


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
    _set_attr("/", "risk", np.complex128(1 + 2j))(path)
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
# ---------------------------------------------------------------------------
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


#: Values of the committed sample (written by make_sample).
SAMPLE_RISK = 0.0815
SAMPLE_ROW_LOSS = 0.021666666666666664
SAMPLE_DATA_SUM = 221
SAMPLE_TRUTH_ROWS = [0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0]


if __name__ == "__main__":
    written = make_sample()
    sample = load_table(written)
    print(f"wrote {written} ({written.stat().st_size} bytes)")
    print(f"SAMPLE_RISK = {sample.risk.risk!r}")
    print(f"SAMPLE_ROW_LOSS = {sample.risk.row_loss!r}")
    print(f"SAMPLE_DATA_SUM = {int(sample.data.sum())}")
    print(f"SAMPLE_TRUTH_ROWS = {sample.truth_rows.tolist()}")
