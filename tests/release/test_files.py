"""The release package's file helpers (lbm_bench.release._files): SHA-256 of a file read in blocks, and
text and bytes written under a temporary name, never half a file under the final one."""

import hashlib

import pytest

from lbm_bench.release import _files


def test_sha256_of_a_file_larger_than_a_block(tmp_path):
    data = bytes(range(256)) * 5000  # 1.28 MB: two blocks of 1 MiB
    path = tmp_path / "blob"
    path.write_bytes(data)
    assert _files.sha256_file(path) == hashlib.sha256(data).hexdigest()
    (tmp_path / "empty").write_bytes(b"")
    assert _files.sha256_file(tmp_path / "empty") == hashlib.sha256(b"").hexdigest()


def test_atomic_writes_keep_bytes_and_leave_no_temporary(tmp_path):
    _files.atomic_write_text(tmp_path / "card.md", "é\nline\n")
    assert (tmp_path / "card.md").read_bytes() == "é\nline\n".encode()
    _files.atomic_write_bytes(tmp_path / "raw", b"a\r\nb")  # no newline translation
    assert (tmp_path / "raw").read_bytes() == b"a\r\nb"
    _files.atomic_write_text(tmp_path / "card.md", "replaced")
    assert (tmp_path / "card.md").read_text() == "replaced"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["card.md", "raw"]


def test_a_failed_write_leaves_the_old_file(tmp_path, monkeypatch):
    path = tmp_path / "manifest.json"
    path.write_text("old")

    def fail(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(_files.os, "replace", fail)
    with pytest.raises(OSError, match="disk full"):
        _files.atomic_write_text(path, "new")
    assert path.read_text() == "old" and sorted(p.name for p in tmp_path.iterdir()) == ["manifest.json"]
