"""lbm_bench.storage.writer: round trips, byte stability, atomic writes, refusals."""

from __future__ import annotations

import dataclasses
import json
import math
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import h5py
import numpy as np
import pytest

import lbm_bench.storage.format as fmt
import lbm_bench.storage.writer as writer
from lbm_bench.protocol.table import Table
from lbm_bench.storage import (
    load_table,
    save_table,
)
from tests.storage.tables import (
    FAMILIES,
    ROOT,
    assert_same,
    make_table,
    sha256,
    wide_table,
)


@pytest.mark.parametrize("name", FAMILIES)
def test_round_trip_every_field(name: str, tables: dict[str, Table], files: dict[str, Path]) -> None:
    loaded = load_table(files[name])
    assert_same(tables[name], loaded)
    assert loaded.data.dtype == fmt.data_dtype(loaded.kind)
    assert loaded.truth_rows.dtype == loaded.map_cols.dtype == np.int64
    assert loaded.gibbs.rows.dtype == np.uint8
    assert (loaded.design.row_effects is not None) == name.startswith("poisson-effects")
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




_WRITE_IN_SUBPROCESS = (
    "import sys; from pathlib import Path; from tests.storage.tables import FAMILIES, make_table;"
    "from lbm_bench.storage import save_table\n"
    "for name, (kind, effects, floor) in FAMILIES.items():\n"
    "    save_table(make_table(kind, effects=effects, floor=floor), Path(sys.argv[1]) / f'{name}.h5')"
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
    real = getattr(writer, name)
    calls = []

    def failing(*args: Any, **kwargs: Any) -> Any:
        calls.append(args)
        if len(calls) == at:
            raise exc("interrupted for the test")
        return real(*args, **kwargs)

    monkeypatch.setattr(writer, name, failing)


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
    write, fsync, replace = writer._write_layout, writer._fsync, writer.os.replace

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

    monkeypatch.setattr(writer, "_write_layout", spy_write)
    monkeypatch.setattr(writer, "_fsync", spy_fsync)
    monkeypatch.setattr(writer.os, "replace", spy_replace)
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



def test_options_longer_than_an_attribute_are_refused(tables, tmp_path) -> None:
    table = dataclasses.replace(tables["gaussian"], options={"x": "a" * 63_990})
    save_table(table, tmp_path / "ok.h5")
    assert load_table(tmp_path / "ok.h5").options == table.options
    with pytest.raises(ValueError, match="more than the 64000 an attribute holds"):
        save_table(dataclasses.replace(table, options={"x": "a" * 64_000}), tmp_path / "big.h5")
    assert [p.name for p in tmp_path.iterdir()] == ["ok.h5"]
