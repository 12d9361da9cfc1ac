"""Atomic file writes (lbm_bench._atomic), the package's one writer of files: a fresh temporary name
beside the destination, the final name given in one step (never over an existing file unless asked,
also on file systems without hard links), the temporary removed in every case, and write errors in
words; no other module names a file."""

import ast
import errno
import os
import re
from pathlib import Path

import pytest

from lbm_bench import _atomic
from lbm_bench._atomic import (
    TEMPORARY_GLOB,
    atomic_path,
    atomic_write_bytes,
    atomic_write_text,
    put_in_place,
    temporary_path,
    write_error,
)

PACKAGE = Path(__file__).resolve().parents[1] / "lbm_bench"


def test_temporary_names_are_hidden_beside_the_file_and_never_shared(tmp_path):
    path = tmp_path / "table.h5"
    names = {temporary_path(path) for _ in range(50)}
    assert len(names) == 50
    for name in names:
        assert name.parent == tmp_path and re.fullmatch(rf"\.table\.h5\.tmp-{os.getpid()}-[0-9a-f]{{8}}", name.name)


def _written(tmp_path, text):
    temporary = temporary_path(tmp_path / "out.txt")
    temporary.write_text(text)
    return temporary


def test_put_in_place_replaces_only_when_asked(tmp_path):
    path = tmp_path / "out.txt"
    first = _written(tmp_path, "one")
    put_in_place(first, path, overwrite=False)
    assert path.read_text() == "one" and not first.exists()
    second = _written(tmp_path, "two")
    with pytest.raises(FileExistsError) as caught:
        put_in_place(second, path, overwrite=False)
    assert caught.value.filename == str(path) and path.read_text() == "one" and second.exists()
    put_in_place(second, path, overwrite=True)
    assert path.read_text() == "two" and not second.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt"]


@pytest.mark.parametrize("code", [errno.EPERM, errno.EXDEV])
def test_without_hard_links_the_check_and_rename_stand_in(tmp_path, monkeypatch, code):
    def no_links(source, target):
        raise OSError(code, "hard links not supported")

    monkeypatch.setattr(_atomic.os, "link", no_links)
    path = tmp_path / "out.txt"
    put_in_place(_written(tmp_path, "one"), path, overwrite=False)
    assert path.read_text() == "one"
    with pytest.raises(FileExistsError):
        put_in_place(_written(tmp_path, "two"), path, overwrite=False)
    assert path.read_text() == "one"


def test_other_link_errors_are_raised(tmp_path, monkeypatch):
    def denied(source, target):
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(_atomic.os, "link", denied)
    with pytest.raises(PermissionError):
        put_in_place(_written(tmp_path, "one"), tmp_path / "out.txt", overwrite=False)


@pytest.mark.parametrize("code, reason", [
    (errno.ENOSPC, "no space left on the device"),
    (errno.EFBIG, "file too large (over the file-size limit of this process, see ulimit -f)"),
    (errno.EDQUOT, "disk quota exceeded"),
])
def test_write_errors_in_words(code, reason):
    error = write_error(Path("big.h5"), OSError(code, os.strerror(code), ".big.h5.tmp-1-abcd"))
    assert str(error) == f"could not write big.h5: {reason}" and error.errno == code


def test_other_errors_keep_their_class_and_say_why():
    error = write_error(Path("out/t.h5"), PermissionError(errno.EACCES, "Permission denied", "out/.t.h5.tmp"))
    assert isinstance(error, PermissionError) and str(error) == "could not write out/t.h5: permission denied"
    assert ".tmp" not in str(error)


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


def test_the_glob_finds_the_temporary_names(tmp_path):
    names = [temporary_path(tmp_path / "a.h5") for _ in range(3)]
    for name in names:
        name.write_text("")
    (tmp_path / "a.h5").write_text("")
    assert sorted(tmp_path.glob(TEMPORARY_GLOB)) == sorted(names)

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
