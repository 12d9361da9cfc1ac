"""Atomic file writes (lbm_bench._atomic): a fresh temporary name beside the destination, the final name
given in one step (never over an existing file unless asked, also on file systems without hard links),
and write errors in words."""

import errno
import os
import re
from pathlib import Path

import pytest

from lbm_bench import _atomic
from lbm_bench._atomic import put_in_place, temporary_path, write_error


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
