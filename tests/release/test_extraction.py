"""A release archive extracted safely (lbm_bench.release.extraction): an unsafe or foreign
member refused before anything is written, each member copied within its declared size (the
whole fetch, over HTTP, is tested in test_fetch.py)."""

import gzip
import io
import tarfile

import pytest

from lbm_bench.release.download import FetchError
from lbm_bench.release.extraction import _copy_bounded, extract_release


def _archive(path, entries):
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for info, data in entries:
            info.size = len(data or b"")
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    path.write_bytes(gzip.compress(buffer.getvalue(), mtime=0))
    return path


def test_a_link_or_a_foreign_file_is_refused_before_anything_is_written(tmp_path):
    link = tarfile.TarInfo("rel/link")
    link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
    into = tmp_path / "into"
    into.mkdir()
    with pytest.raises(FetchError, match="u: refused archive: 'rel/link' is a link"):
        extract_release(_archive(tmp_path / "a.tar.gz", [(link, None)]), into, "u", 10**6)
    sums = b"0" * 64 + b"  manifest.json\n"
    entries = [(tarfile.TarInfo("rel/SHA256SUMS"), sums), (tarfile.TarInfo("rel/manifest.json"), b"{\"tables\": []}"),
               (tarfile.TarInfo("rel/extra.bin"), b"x")]
    with pytest.raises(FetchError, match="extra.bin is not a file of the release"):
        extract_release(_archive(tmp_path / "b.tar.gz", entries), into, "u", 10**6)
    assert list(into.iterdir()) == []
    (tmp_path / "c.tar.gz").write_bytes(b"not gzip")
    with pytest.raises(FetchError, match="not a readable release archive"):
        extract_release(tmp_path / "c.tar.gz", into, "u", 10**6)


def test_the_copy_stops_as_soon_as_a_member_exceeds_its_declared_size(tmp_path):
    target = tmp_path / "t.bin"
    with pytest.raises(FetchError, match="holds more than the 1000 bytes it declares"):
        _copy_bounded(io.BytesIO(bytes(5_000_000)), target, 1000, "t.bin", "u")
    assert target.stat().st_size <= 1000
    with pytest.raises(FetchError, match="holds 10 bytes, not the 1000 it declares"):
        _copy_bounded(io.BytesIO(bytes(10)), tmp_path / "u.bin", 1000, "u.bin", "u")
