"""Atomic file writes (lbm_bench._atomic): the package's one writer of files."""

from __future__ import annotations

import ast
import errno
import re
from pathlib import Path

import pytest

from lbm_bench._atomic import (
    TEMPORARY_GLOB,
    atomic_path,
    atomic_write_bytes,
    atomic_write_text,
    temporary_path,
    write_error,
)

PACKAGE = Path(__file__).resolve().parents[1] / "lbm_bench"


def test_a_complete_write_gets_the_name_and_leaves_nothing_else(tmp_path):
    target = tmp_path / "a.txt"
    with atomic_path(target) as temporary:
        assert temporary.parent == tmp_path and temporary.name.startswith(".a.txt.tmp-")
        temporary.write_text("first")
        assert not target.exists()  # nothing under the final name until the file is complete
    atomic_write_text(target, "second\n")
    atomic_write_bytes(tmp_path / "b.bin", b"\r\n\x00")
    assert target.read_text() == "second\n" and (tmp_path / "b.bin").read_bytes() == b"\r\n\x00"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt", "b.bin"]


def test_a_failed_or_interrupted_write_leaves_the_old_file_and_no_temporary(tmp_path):
    target = tmp_path / "a.txt"
    target.write_text("old")
    for error in (OSError(errno.ENOSPC, "No space left on device"), KeyboardInterrupt()):
        with pytest.raises(type(error)), atomic_path(target) as temporary:
            temporary.write_text("half")
            raise error
    assert target.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["a.txt"]


def test_without_overwrite_an_existing_file_is_kept(tmp_path):
    target = tmp_path / "a.txt"
    target.write_text("theirs")
    with pytest.raises(FileExistsError), atomic_path(target, overwrite=False) as temporary:
        temporary.write_text("ours")
    assert target.read_text() == "theirs" and [p.name for p in tmp_path.iterdir()] == ["a.txt"]


def test_temporary_names_are_unique_and_found_by_the_glob(tmp_path):
    names = {temporary_path(tmp_path / "a.h5") for _ in range(100)}
    assert len(names) == 100
    assert all(re.fullmatch(r"\.a\.h5\.tmp-\d+-[0-9a-f]{8}", n.name) for n in names)
    for name in list(names)[:3]:
        name.write_text("")
    assert sorted(tmp_path.glob(TEMPORARY_GLOB)) == sorted(list(names)[:3])


def test_write_errors_are_one_line_in_words(tmp_path):
    error = write_error(tmp_path / "big.h5", OSError(errno.ENOSPC, "No space left on device", "/x/.big.h5.tmp-1-ab"))
    assert str(error) == f"could not write {tmp_path / 'big.h5'}: no space left on the device"
    assert error.errno == errno.ENOSPC


#: Renames outside _atomic.py, with their reason: a fetched release's folder moved into the cache
#: in one step (a directory, not a file written).
RENAMES_ALLOWED = {"release/fetch.py": 1}


def test_files_are_named_by_the_one_atomic_writer():
    """No module but _atomic.py gives a file its name (os.replace, os.rename, os.link, Path.rename
    or Path.replace) or makes up a temporary name: every writer of the package goes through it."""
    found: dict[str, int] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        module = path.relative_to(PACKAGE).as_posix()
        if module == "_atomic.py":
            continue
        source = path.read_text(encoding="utf-8")
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and (
                node.func.attr in ("replace", "rename", "link")
                and not (node.args and isinstance(node.args[0], ast.Constant))  # str.replace("a", "b")
                and len(node.args) <= 2 and not node.keywords  # not dataclasses.replace(obj, **changes)
                and (isinstance(node.func.value, ast.Name) and node.func.value.id == "os" or len(node.args) == 1)
            ):
                found[module] = found.get(module, 0) + 1
            if isinstance(node, ast.JoinedStr) and any(
                isinstance(part, ast.Constant) and ".tmp" in part.value for part in node.values
            ):
                found[module + " (a temporary name)"] = found.get(module + " (a temporary name)", 0) + 1
    assert found == RENAMES_ALLOWED
