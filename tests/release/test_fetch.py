"""Fetching a published release (lbm_bench.release.fetch, ``lbm-bench fetch``) from a local
HTTP server on 127.0.0.1: round trip, cache without the network, LBM_BENCH_CACHE, and one-line
refusals of a wrong checksum, an unreachable URL, corrupt, unsafe, non-release and tampered
archives, with nothing left half-extracted in the cache."""

from __future__ import annotations

import functools
import gzip
import hashlib
import http.server
import io
import shutil
import socket
import tarfile
import threading
from pathlib import Path

import pytest

from lbm_bench import fetch_release, verify_release
from lbm_bench.cli import main
from lbm_bench.release.archive import write_archive
from lbm_bench.release.download import FetchError


class _Quiet(http.server.SimpleHTTPRequestHandler):
    requests: list[str] = []

    def log_message(self, *args):
        pass

    def do_GET(self):
        _Quiet.requests.append(self.path)
        super().do_GET()


@pytest.fixture()
def served(tmp_path):
    """A folder served over HTTP on 127.0.0.1; yields (folder, base URL)."""
    folder = tmp_path / "www"
    folder.mkdir()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(folder)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    _Quiet.requests = []
    try:
        yield folder, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.fixture(scope="module")
def archive(built, tmp_path_factory):
    """The tiny release's archive (``build --archive``) and its SHA-256."""
    copy = tmp_path_factory.mktemp("archive") / built.name
    shutil.copytree(built, copy)
    path = write_archive(copy)
    return path, hashlib.sha256(path.read_bytes()).hexdigest()


def _publish(served, data: bytes, name: str = "tiny.tar.gz") -> str:
    folder, base = served
    (folder / name).write_bytes(data)
    return f"{base}/{name}"


def _leftovers(cache: Path) -> list[str]:
    return sorted(p.name for p in cache.iterdir()) if cache.exists() else []


def test_round_trip_over_http_and_cache_without_network(archive, built, served, tmp_path):
    path, digest = archive
    url = _publish(served, path.read_bytes())
    cache = tmp_path / "cache"
    folder = fetch_release(url, sha256=digest, cache_dir=cache)
    assert folder.name == "tiny" and folder.parent.parent == cache
    assert verify_release(folder) == []
    assert (folder / "SHA256SUMS").read_bytes() == (built / "SHA256SUMS").read_bytes()
    for line in (built / "SHA256SUMS").read_text().splitlines():
        name = line.split("  ")[1]
        assert (folder / name).read_bytes() == (built / name).read_bytes(), name
    assert _Quiet.requests == ["/tiny.tar.gz"]
    (served[0] / "tiny.tar.gz").unlink()  # the network copy is gone: the cache answers
    assert fetch_release(url, sha256=digest, cache_dir=cache) == folder
    assert _Quiet.requests == ["/tiny.tar.gz"]
    # the cache is keyed by the checksum when given, by the URL otherwise: this one is not cached
    with pytest.raises(FetchError, match="HTTP 404"):
        fetch_release(url, cache_dir=cache)


def test_second_call_without_checksum_uses_the_cache(archive, served, tmp_path):
    path, _ = archive
    url = _publish(served, path.read_bytes())
    cache = tmp_path / "cache"
    first = fetch_release(url, cache_dir=cache)
    (served[0] / "tiny.tar.gz").unlink()
    assert fetch_release(url, cache_dir=cache) == first
    assert _Quiet.requests == ["/tiny.tar.gz"]


def test_cache_folder_from_the_environment(archive, served, tmp_path, monkeypatch):
    path, digest = archive
    url = _publish(served, path.read_bytes())
    monkeypatch.setenv("LBM_BENCH_CACHE", str(tmp_path / "env-cache"))
    folder = fetch_release(url, sha256=digest)
    assert folder.is_relative_to(tmp_path / "env-cache")


def test_a_local_path_or_file_url_works(archive, tmp_path):
    path, digest = archive
    assert verify_release(fetch_release(path, sha256=digest, cache_dir=tmp_path / "a")) == []
    assert verify_release(fetch_release(path.as_uri(), cache_dir=tmp_path / "b")) == []


def test_wrong_checksum_is_refused_and_nothing_is_left(archive, served, tmp_path):
    path, digest = archive
    url = _publish(served, path.read_bytes())
    cache = tmp_path / "cache"
    wrong = ("0" if digest[0] != "0" else "1") + digest[1:]
    with pytest.raises(FetchError, match="SHA-256 .* expected") as info:
        fetch_release(url, sha256=wrong, cache_dir=cache)
    assert "\n" not in str(info.value)
    assert _leftovers(cache) == []
    with pytest.raises(ValueError, match="64 hexadecimal"):
        fetch_release(url, sha256="abc", cache_dir=cache)


def test_unreachable_url(tmp_path):
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(FetchError, match="cannot download") as info:
        fetch_release(f"http://127.0.0.1:{port}/tiny.tar.gz", cache_dir=tmp_path / "cache", timeout=5)
    assert "\n" not in str(info.value)
    assert _leftovers(tmp_path / "cache") == []


def test_missing_file_on_the_server(served, tmp_path):
    with pytest.raises(FetchError, match="HTTP 404"):
        fetch_release(f"{served[1]}/nothing.tar.gz", cache_dir=tmp_path / "cache")


def test_corrupt_archive(archive, served, tmp_path):
    path, _ = archive
    data = path.read_bytes()
    url = _publish(served, data[: len(data) // 2])
    with pytest.raises(FetchError, match="not a readable release archive"):
        fetch_release(url, cache_dir=tmp_path / "cache")
    assert _leftovers(tmp_path / "cache") == []
    url = _publish(served, b"not an archive at all", "junk.tar.gz")
    with pytest.raises(FetchError, match="not a readable release archive"):
        fetch_release(url, cache_dir=tmp_path / "cache")


def _tar(entries) -> bytes:
    """A .tar.gz from (TarInfo, bytes or None) pairs."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for info, data in entries:
            if data is not None:
                info.size = len(data)
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return gzip.compress(buffer.getvalue(), mtime=0)


def _file(name: str, data: bytes = b"x") -> tuple[tarfile.TarInfo, bytes]:
    return tarfile.TarInfo(name), data


def _special(name: str, kind: bytes, **attrs) -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo(name)
    info.type = kind
    for key, value in attrs.items():
        setattr(info, key, value)
    return info, None


UNSAFE = {
    "absolute": ([_file("/tmp/lbm-bench-evil.txt")], "absolute path"),
    "dotdot": ([_file("tiny/manifest.json"), _file("tiny/../../evil.txt")], "leaves the release folder"),
    "symlink": ([_special("tiny/link", tarfile.SYMTYPE, linkname="/etc/passwd")], "is a link"),
    "hardlink": ([_file("tiny/a"), _special("tiny/b", tarfile.LNKTYPE, linkname="tiny/a")], "is a link"),
    "device": ([_special("tiny/dev", tarfile.CHRTYPE, devmajor=1, devminor=3)], "not a regular file"),
    "fifo": ([_special("tiny/pipe", tarfile.FIFOTYPE)], "not a regular file"),
    "two folders": ([_file("a/x"), _file("b/y")], "one top-level folder"),
}


@pytest.mark.parametrize("case", sorted(UNSAFE))
def test_unsafe_archives_are_refused_before_extraction(case, served, tmp_path):
    entries, message = UNSAFE[case]
    url = _publish(served, _tar(entries), "evil.tar.gz")
    cache = tmp_path / "cache"
    with pytest.raises(FetchError, match=message) as info:
        fetch_release(url, cache_dir=cache)
    assert "\n" not in str(info.value)
    assert _leftovers(cache) == []
    assert not (tmp_path / "evil.txt").exists() and not Path("/tmp/lbm-bench-evil.txt").exists()


def test_an_archive_that_is_not_a_release(served, tmp_path):
    url = _publish(served, _tar([_file("notes/readme.txt", b"hello")]), "notes.tar.gz")
    with pytest.raises(FetchError, match="not a release archive.*manifest.json"):
        fetch_release(url, cache_dir=tmp_path / "cache")
    assert _leftovers(tmp_path / "cache") == []


def test_a_tampered_release_does_not_verify(archive, served, tmp_path):
    path, _ = archive
    entries = []
    with tarfile.open(path) as tar:
        for member in tar.getmembers():
            data = tar.extractfile(member).read()
            if member.name.endswith(".h5") and not entries_tampered(entries):
                data = data[:-1] + bytes([data[-1] ^ 1])
                member.pax_headers = {**member.pax_headers, "tampered": "1"}
            entries.append((member, data))
    url = _publish(served, _tar(entries), "tiny.tar.gz")
    cache = tmp_path / "cache"
    with pytest.raises(FetchError, match="does not verify: .*SHA-256"):
        fetch_release(url, cache_dir=cache)
    assert _leftovers(cache) == []


def entries_tampered(entries) -> bool:
    return any("tampered" in info.pax_headers for info, _ in entries)


def test_cli_fetch(archive, served, tmp_path, capsys):
    path, digest = archive
    url = _publish(served, path.read_bytes())
    cache = tmp_path / "cache"
    assert main(["fetch", url, "--sha256", digest, "--cache", str(cache), "-q"]) == 0
    out = capsys.readouterr().out.strip()
    assert Path(out).is_dir() and verify_release(Path(out)) == []
    assert main(["fetch", url, "--sha256", "0" * 64, "--cache", str(tmp_path / "other")]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("lbm-bench fetch: error:") and "\n" not in err


# ---------------------------------------------------------------------------
# Decompression bombs: the listing is checked against the release's own
# SHA256SUMS and manifest.json, and against max_size, before anything is written
# ---------------------------------------------------------------------------
def _release_entries(path: Path) -> list[tuple[tarfile.TarInfo, bytes]]:
    """The (TarInfo, bytes) of every member of a release archive, in order."""
    with tarfile.open(path) as tar:
        return [(member, tar.extractfile(member).read()) for member in tar.getmembers()]


@pytest.fixture()
def no_writes(monkeypatch):
    """The members that the fetch starts writing to disk (none, for a refused listing)."""
    import lbm_bench.release.extraction as extraction

    written: list[Path] = []
    copy = extraction._copy_bounded

    def spy(source, target, size, name, url):
        written.append(target)
        copy(source, target, size, name, url)

    monkeypatch.setattr(extraction, "_copy_bounded", spy)
    return written


def _with_table_padded(entries, extra: int):
    """The first table grown by ``extra`` zero bytes (its manifest still gives the old size)."""
    out, done = [], False
    for info, data in entries:
        if info.name.endswith(".h5") and not done:
            info, data, done = tarfile.TarInfo(info.name), data + bytes(extra), True
        out.append((info, data))
    return out


def test_a_table_of_another_size_than_the_manifest_s_is_refused_before_writing(archive, served, tmp_path,
                                                                                 no_writes):
    path, _ = archive
    url = _publish(served, _tar(_with_table_padded(_release_entries(path), 100_000)), "tiny.tar.gz")
    with pytest.raises(FetchError, match=r"tables/\S+\.h5 is \d+ bytes in the archive, but the manifest "
                                         r"declares \d+") as info:
        fetch_release(url, cache_dir=tmp_path / "cache")
    assert "\n" not in str(info.value)
    assert no_writes == [] and _leftovers(tmp_path / "cache") == []


def test_a_file_the_release_does_not_declare_is_refused_before_writing(archive, served, tmp_path, no_writes):
    path, _ = archive
    entries = _release_entries(path) + [(tarfile.TarInfo("tiny/zeros.bin"), bytes(200_000))]
    url = _publish(served, _tar(entries), "tiny.tar.gz")
    with pytest.raises(FetchError, match=r"zeros\.bin is not a file of the release \(not in its SHA256SUMS"):
        fetch_release(url, cache_dir=tmp_path / "cache")
    assert no_writes == [] and _leftovers(tmp_path / "cache") == []


def test_a_bomb_without_the_release_files_is_refused_before_writing(served, tmp_path, no_writes):
    """The issue's bomb, scaled down: a folder holding one big file of zeros (30 MB in a
    30 kB archive) used to be extracted in full before "SHA256SUMS is missing"."""
    entries = [(tarfile.TarInfo("evil/zeros.bin"), bytes(30_000_000))]
    data = _tar(entries)
    assert len(data) < 100_000
    url = _publish(served, data, "evil.tar.gz")
    with pytest.raises(FetchError, match="not a release archive: no SHA256SUMS and no manifest.json"):
        fetch_release(url, cache_dir=tmp_path / "cache")
    assert no_writes == [] and _leftovers(tmp_path / "cache") == []


def test_a_member_declaring_more_than_max_size_is_refused_from_its_header(served, tmp_path, no_writes):
    """A header that declares 20 GiB (more than the default max_size, 16 GiB) is refused
    as soon as it is read, without reading (decompressing) what it claims to hold."""
    info = tarfile.TarInfo("evil/huge.bin")
    info.size = 20 * 2**30
    header = info.tobuf(tarfile.PAX_FORMAT, "utf-8", "surrogateescape")
    url = _publish(served, gzip.compress(header + bytes(4096), mtime=0), "evil.tar.gz")
    with pytest.raises(FetchError, match=r"unpacks to more than max_size \(16 GiB\)"):
        fetch_release(url, cache_dir=tmp_path / "cache")
    assert no_writes == [] and _leftovers(tmp_path / "cache") == []


def test_a_release_over_max_size_is_refused(archive, served, tmp_path, no_writes):
    path, digest = archive
    url = _publish(served, path.read_bytes())
    unpacked = sum(info.size for info, _ in _release_entries(path))
    with pytest.raises(FetchError, match=r"unpacks to more than max_size \(97.7 KiB\)"):
        fetch_release(url, cache_dir=tmp_path / "cache", max_size=100_000)
    assert unpacked > 100_000 and no_writes == [] and _leftovers(tmp_path / "cache") == []
    with pytest.raises(FetchError, match=r"the archive is larger than max_size \(1000 B"):
        fetch_release(url, cache_dir=tmp_path / "cache", max_size=1000)  # the download stops too
    assert _leftovers(tmp_path / "cache") == []
    folder = fetch_release(url, sha256=digest, cache_dir=tmp_path / "cache", max_size=f"{unpacked}")
    assert verify_release(folder) == []  # exactly max_size is accepted
    with pytest.raises(ValueError, match="max_size must be a size like 16G"):
        fetch_release(url, cache_dir=tmp_path / "other", max_size="lots")


def test_cli_fetch_max_size(archive, served, tmp_path, capsys):
    path, _ = archive
    url = _publish(served, path.read_bytes())
    assert main(["fetch", url, "--cache", str(tmp_path / "cache"), "--max-size", "50K"]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("lbm-bench fetch: error:") and "--max-size (50 KiB)" in err
    assert main(["fetch", url, "--cache", str(tmp_path / "cache"), "--max-size", "big"]) == 2


# ---------------------------------------------------------------------------
# A server that trickles: the download keeps a minimum rate
# ---------------------------------------------------------------------------
@pytest.fixture()
def trickling_server():
    """A server on 127.0.0.1 that answers every request one byte every 0.2 s, for at most
    10 s (status line and headers too when ``trickle_headers``); yields a function of
    ``trickle_headers`` that returns its URL."""
    stop = threading.Event()
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)
    threads = []

    def serve(connection: socket.socket, trickle_headers: bool) -> None:
        with connection:
            connection.recv(65536)  # the request
            head = b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\nContent-Type: application/gzip\r\n\r\n"
            try:
                if not trickle_headers:
                    connection.sendall(head)
                    head = b""
                for k in range(len(head) + 1000):
                    if stop.wait(0.2) or k >= 50:
                        return
                    connection.sendall(head[k:k + 1] if k < len(head) else b"\0")
            except OSError:  # the client gave up
                return

    def accept(trickle_headers: bool) -> None:
        while not stop.is_set():
            try:
                connection, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            serve(connection, trickle_headers)

    def start(trickle_headers: bool) -> str:
        thread = threading.Thread(target=accept, args=(trickle_headers,), daemon=True)
        thread.start()
        threads.append(thread)
        return f"http://127.0.0.1:{listener.getsockname()[1]}/tiny.tar.gz"

    try:
        yield start
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=5)
        listener.close()


@pytest.mark.parametrize("trickle_headers", [False, True], ids=["body", "headers"])
def test_a_trickling_server_is_given_up(trickling_server, tmp_path, trickle_headers):
    """One byte every 0.2 s never waits 1 s for a read, so the per-read timeout alone
    waited for all of it; the minimum rate (1 KiB/s by default, over any ``timeout``
    seconds) gives up after about ``timeout``."""
    import time

    url = trickling_server(trickle_headers)
    start = time.monotonic()
    with pytest.raises(FetchError, match=r"cannot download .*: the server sent \d+ bytes in [\d.]+ s, slower "
                                         r"than the minimum of 1024 bytes/s") as info:
        fetch_release(url, cache_dir=tmp_path / "cache", timeout=1)
    assert time.monotonic() - start < 4
    assert "\n" not in str(info.value) and _leftovers(tmp_path / "cache") == []


def test_the_minimum_rate_is_checked(tmp_path):
    with pytest.raises(ValueError, match="min_rate must be finite and >= 0"):
        fetch_release("http://127.0.0.1:9/x.tar.gz", cache_dir=tmp_path, min_rate=-1)
    with pytest.raises(ValueError, match="timeout must be finite and > 0"):
        fetch_release("http://127.0.0.1:9/x.tar.gz", cache_dir=tmp_path, timeout=0)
