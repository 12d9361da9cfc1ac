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

import lbm_bench._atomic as atomic
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
    assert loaded.data.dtype == fmt.data_dtype(loaded.model.family)
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


def _spy_on_the_write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, Path]]:
    events: list[tuple[str, Path]] = []
    write, fsync, replace, link = writer._write_image, writer._fsync, atomic.os.replace, atomic.os.link

    def spy_write(image: bytes, path: Path) -> None:
        events.append(("write", path))
        write(image, path)

    def spy_fsync(path: Path, **kwargs: Any) -> None:
        events.append(("fsync-dir" if kwargs.get("directory") else "fsync", path))
        fsync(path, **kwargs)

    def spy_replace(source: Path, target: Path) -> None:
        events.append(("replace", source))
        assert not Path(target).exists()
        replace(source, target)

    def spy_link(source: Path, target: Path) -> None:
        events.append(("link", source))
        link(source, target)

    monkeypatch.setattr(writer, "_write_image", spy_write)
    monkeypatch.setattr(writer, "_fsync", spy_fsync)
    monkeypatch.setattr(atomic.os, "replace", spy_replace)
    monkeypatch.setattr(atomic.os, "link", spy_link)
    return events


def test_write_uses_a_temporary_file_fsynced_then_renamed(tables, tmp_path, monkeypatch) -> None:
    events = _spy_on_the_write(tmp_path, monkeypatch)
    assert save_table(tables["poisson"], str(tmp_path / "t.h5")) == tmp_path / "t.h5"
    temporary = events[0][1]
    assert re.fullmatch(rf"\.t\.h5\.tmp-{os.getpid()}-[0-9a-f]{{8}}", temporary.name)
    assert events == [("write", temporary), ("fsync", temporary), ("replace", temporary), ("fsync-dir", tmp_path)]
    assert [p.name for p in tmp_path.iterdir()] == ["t.h5"]
    events.clear()
    assert save_table(tables["poisson"], tmp_path / "u.h5", overwrite=False) == tmp_path / "u.h5"
    temporary = events[0][1]
    assert events == [("write", temporary), ("fsync", temporary), ("link", temporary), ("fsync-dir", tmp_path)]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.h5", "u.h5"]
    assert sha256(tmp_path / "t.h5") == sha256(tmp_path / "u.h5")


# ---------------------------------------------------------------------------
# Never replace an existing file without overwrite, also under concurrency
# ---------------------------------------------------------------------------
def test_without_overwrite_an_existing_file_is_kept(tables, tmp_path) -> None:
    path = save_table(tables["bernoulli"], tmp_path / "t.h5")
    before = sha256(path)
    with pytest.raises(FileExistsError, match=r"cannot save table to .*t\.h5: the file exists"):
        save_table(tables["gaussian"], path, overwrite=False)
    assert [p.name for p in tmp_path.iterdir()] == ["t.h5"] and sha256(path) == before
    save_table(tables["gaussian"], path)  # the default replaces, as before
    assert sha256(path) != before


def test_concurrent_writers_without_overwrite_one_wins(tables, tmp_path, monkeypatch) -> None:
    """Four writers of the same new path, held at a barrier after their complete files are
    on disk and before they name them: each sees no file when it starts, exactly one
    gets the name, the others get FileExistsError, and the file is the winner's."""
    import threading

    names = ["gaussian", "poisson", "bernoulli", "poisson-effects"]
    (tmp_path / "alone").mkdir()
    expected = {name: sha256(save_table(tables[name], tmp_path / "alone" / f"{name}.h5")) for name in names}
    barrier = threading.Barrier(len(names))
    put_in_place = atomic.put_in_place

    def at_the_same_time(*args: Any, **kwargs: Any) -> None:
        barrier.wait(timeout=30)
        put_in_place(*args, **kwargs)

    monkeypatch.setattr(atomic, "put_in_place", at_the_same_time)
    (tmp_path / "race").mkdir()
    path = tmp_path / "race" / "same.h5"
    outcomes: dict[str, str] = {}

    def write(name: str) -> None:
        try:
            save_table(tables[name], path, overwrite=False)
            outcomes[name] = "written"
        except FileExistsError:
            outcomes[name] = "refused"

    threads = [threading.Thread(target=write, args=(name,)) for name in names]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    winners = [name for name, outcome in outcomes.items() if outcome == "written"]
    assert len(outcomes) == 4 and len(winners) == 1, outcomes
    assert sha256(path) == expected[winners[0]]
    assert [p.name for p in path.parent.iterdir()] == ["same.h5"]  # no temporary left


def test_without_hard_links_falls_back_to_check_and_rename(tables, tmp_path, monkeypatch) -> None:
    import errno

    def no_links(source: Path, target: Path) -> None:
        raise OSError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(atomic.os, "link", no_links)
    path = save_table(tables["gaussian"], tmp_path / "t.h5", overwrite=False)
    assert load_table(path).kind == "gaussian"
    with pytest.raises(FileExistsError):
        atomic.put_in_place(tmp_path / "t.h5", path, overwrite=False)
    assert [p.name for p in tmp_path.iterdir()] == ["t.h5"]


# ---------------------------------------------------------------------------
# A full disk or a file-size limit: one line that says it, no file left
# ---------------------------------------------------------------------------
_WRITE_UNDER_A_FILE_SIZE_LIMIT = (
    "import resource, signal, sys\n"
    "from lbm_bench.storage import load_table, save_table\n"
    "table = load_table(sys.argv[1])\n"
    "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # as Python does at start: the write fails with EFBIG\n"
    "resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[3]), resource.RLIM_INFINITY))\n"
    "try:\n"
    "    save_table(table, sys.argv[2])\n"
    "except OSError as exc:\n"
    "    print(exc.errno, exc, sep='|')\n"
)


@pytest.mark.skipif(sys.platform == "win32", reason="RLIMIT_FSIZE is POSIX")
@pytest.mark.parametrize("limit", [2_000, 20_000])
def test_a_file_size_limit_is_reported_in_words(files, tmp_path, limit) -> None:
    """Under ``ulimit -f`` HDF5 itself used to fail mid-file: two lines of its internals on
    stderr, then a crash at exit. The file is now written by Python: one error in words."""
    import errno

    source = files["gaussian-floor"]
    assert source.stat().st_size > limit
    target = tmp_path / "out" / "big.h5"
    target.parent.mkdir()
    args = [sys.executable, "-c", _WRITE_UNDER_A_FILE_SIZE_LIMIT, str(source), str(target), str(limit)]
    done = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stderr == "", done.stderr[-2000:]
    code, message = done.stdout.strip().split("|")
    assert int(code) == errno.EFBIG
    assert message == f"could not write {target}: file too large (over the file-size limit of this process, " \
                      "see ulimit -f)"
    assert list(target.parent.iterdir()) == []


@pytest.mark.parametrize(
    ("code", "words"),
    [("ENOSPC", "no space left on the device"), ("EDQUOT", "disk quota exceeded"),
     ("EACCES", "permission denied")],
)
def test_a_full_disk_is_reported_in_words_and_the_old_file_kept(tables, tmp_path, monkeypatch, code, words):
    import errno

    path = save_table(tables["bernoulli"], tmp_path / "t.h5")
    before = sha256(path)
    write = writer._write_image

    def full(image: bytes, target: Path) -> None:
        write(image[: len(image) // 2], target)  # half the file is on disk when the device fills
        raise OSError(getattr(errno, code), os.strerror(getattr(errno, code)))

    monkeypatch.setattr(writer, "_write_image", full)
    with pytest.raises(OSError) as info:
        save_table(tables["gaussian"], path)
    assert str(info.value) == f"could not write {path}: {words}" and info.value.errno == getattr(errno, code)
    assert [p.name for p in tmp_path.iterdir()] == ["t.h5"] and sha256(path) == before


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
