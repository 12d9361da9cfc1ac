"""The guarded download of a release archive (lbm_bench.release.download): streamed with its
SHA-256, stopped at max_size, every failure one FetchError line (slow servers are tested
against a trickling server in test_fetch.py)."""

import hashlib

import pytest

from lbm_bench.release.download import FetchError, download, words


def test_a_file_is_streamed_with_its_digest_and_stopped_at_max_size(tmp_path):
    source = tmp_path / "archive.tar.gz"
    source.write_bytes(bytes(range(256)) * 40)
    target = tmp_path / "copy"
    digest, size = download(source.as_uri(), target, timeout=5, min_rate=0, max_size=10**6, progress=False)
    assert (digest, size) == (hashlib.sha256(source.read_bytes()).hexdigest(), 10240)
    assert target.read_bytes() == source.read_bytes()
    with pytest.raises(FetchError, match=r"larger than max_size \(1000 B\)"):
        download(source.as_uri(), tmp_path / "big", timeout=5, min_rate=0, max_size=1000, progress=False)
    with pytest.raises(FetchError, match="cannot download") as info:
        download((tmp_path / "absent").as_uri(), tmp_path / "x", timeout=5, min_rate=0, max_size=1000,
                 progress=False)
    assert "\n" not in str(info.value)


def test_words_put_an_operating_systems_error_in_words():
    assert words(FileNotFoundError(2, "No such file or directory", "a/b")) == "a/b: no such file or directory"
    assert words("two\n lines") == "two lines"
