"""The archive of a release (lbm_bench.release.archive, build --archive)."""

import tarfile
import time

from lbm_bench.release import write_archive


def test_archive_is_deterministic(built, tmp_path):
    first = write_archive(built).read_bytes()
    time.sleep(1.1)
    assert write_archive(built).read_bytes() == first


def test_archive_holds_the_release(built):
    target = write_archive(built)
    assert target == built.with_name("tiny.tar.gz")
    with tarfile.open(target) as tar:
        members = tar.getmembers()
    files = sorted(
        p.relative_to(built).as_posix() for p in built.rglob("*") if p.is_file() and not p.name.startswith(".")
    )
    assert [m.name for m in members] == [f"tiny/{f}" for f in files]
    assert all(m.mtime == 0 and m.mode == 0o644 for m in members)
