"""The release package's file helper (lbm_bench.release._files): the SHA-256 of a file read in blocks.
Its files are written by lbm_bench._atomic (tests/test_atomic.py)."""

import hashlib

from lbm_bench.release import _files


def test_sha256_of_a_file_larger_than_a_block(tmp_path):
    data = bytes(range(256)) * 5000  # 1.28 MB: two blocks of 1 MiB
    path = tmp_path / "blob"
    path.write_bytes(data)
    assert _files.sha256_file(path) == hashlib.sha256(data).hexdigest()
    (tmp_path / "empty").write_bytes(b"")
    assert _files.sha256_file(tmp_path / "empty") == hashlib.sha256(b"").hexdigest()

