"""Fetch a published release by URL: :func:`fetch_release` (``lbm-bench fetch``).

Like scikit-learn's ``fetch_*`` functions and clustbench's loaders: the archive
written by ``lbm-bench build --archive`` is downloaded once (standard library
``urllib``: ``https://``, ``http://`` and ``file://`` URLs, or a local path),
its SHA-256 checked when given, extracted safely, verified with
:func:`lbm_bench.verify_release`, and kept in a cache folder; later calls with the
same URL (or the same SHA-256) return the cached folder without the network.

Safety and atomicity
--------------------
Every member of the archive is checked before anything is written: only regular
files and folders, all under one top-level folder, with relative names free of
``..`` (no absolute paths, links, devices or FIFOs), and the listing must be the
release's own: every file is ``SHA256SUMS`` or listed in it (or a table of
``manifest.json``), each table has the size the manifest declares, and the files
add up to at most ``max_size`` bytes (and fit on the disk). A decompression bomb
(a small ``.tar.gz`` of gigabytes of zeros) is refused from its listing, which
reading costs only decompression, never disk. Extraction then writes each member
with a bounded copy that stops as soon as it exceeds its declared size, into a
temporary folder of the cache, and the folder is renamed into place only once the
release verifies, so an interrupted or refused fetch leaves nothing half-extracted
under a final name.

Slow servers
------------
``timeout`` bounds every wait for the server, and the download must keep a
minimum rate: a server that sends less than ``min_rate`` bytes per second over
any ``timeout`` seconds (for instance one byte every two seconds) is given up,
headers included. The download itself stops at ``max_size`` bytes.

Cache
-----
``cache_dir``, else the ``LBM_BENCH_CACHE`` environment variable, else
``$XDG_CACHE_HOME/lbm-bench`` (``~/.cache/lbm-bench``). A release lives in
``<cache>/<archive name>-<key>/<release folder>``, the key being the first 16 hex
digits of the expected SHA-256 when given, else of the URL's SHA-256, next to a
``fetch.json`` record (URL, archive SHA-256 and size).
"""

from __future__ import annotations

import hashlib
import http.client
import io
import json
import os
import shutil
import tarfile
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
import zlib
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from lbm_bench._atomic import describe_os_error
from lbm_bench._validation import one_line
from lbm_bench.protocol.memory import format_bytes, parse_memory_size

__all__ = ["DEFAULT_MAX_SIZE", "DEFAULT_MIN_RATE", "FetchError", "default_cache_dir", "fetch_release"]

#: Environment variable that overrides the default cache folder.
CACHE_ENV = "LBM_BENCH_CACHE"
#: Largest release :func:`fetch_release` unpacks by default (and largest download):
#: 16 GiB, many times this repository's releases; ``max_size`` / ``--max-size`` raise it.
DEFAULT_MAX_SIZE = 16 * 2**30
#: Slowest download :func:`fetch_release` waits for by default, in bytes per second
#: over any ``timeout`` seconds (1 KiB/s); ``min_rate=0`` / ``--min-rate 0`` turns it off.
DEFAULT_MIN_RATE = 1024.0
_RECORD = "fetch.json"
_BLOCK = 1 << 20
#: The release's index files, read from the archive to check its listing (at most this size).
_INDEX_FILES = ("SHA256SUMS", "manifest.json")
_MAX_INDEX_BYTES = 64 * 2**20
#: Most members an archive may have (a release has two files per table and a few more).
_MAX_MEMBERS = 100_000


class FetchError(RuntimeError):
    """A release could not be fetched: unreachable URL, wrong checksum, an archive that
    is corrupt, unsafe or not a valid release. The message is one line."""


def default_cache_dir() -> Path:
    """The cache folder: ``$LBM_BENCH_CACHE``, else ``$XDG_CACHE_HOME/lbm-bench``,
    else ``~/.cache/lbm-bench``."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base).expanduser() / "lbm-bench"


def _check_sha256(sha256: str | None) -> str | None:
    if sha256 is None:
        return None
    if not isinstance(sha256, str):
        raise TypeError(f"sha256 must be a string of 64 hexadecimal digits, got {type(sha256).__name__}")
    digest = sha256.strip().lower()
    if len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
        raise ValueError(f"sha256 must be 64 hexadecimal digits, got {sha256!r}")
    return digest


def _as_url(url: str | os.PathLike[str]) -> str:
    if isinstance(url, os.PathLike):
        return Path(url).resolve().as_uri()
    if not isinstance(url, str) or not url:
        raise TypeError(f"url must be a non-empty string or a path, got {url!r}")
    scheme = urllib.parse.urlsplit(url).scheme.lower()
    if scheme in ("http", "https", "file"):
        return url
    if scheme and len(scheme) > 1:
        raise ValueError(f"url must be http://, https://, file:// or a local path, got {url!r}")
    return Path(url).resolve().as_uri()


def _archive_name(url: str) -> str:
    name = PurePosixPath(urllib.parse.unquote(urllib.parse.urlsplit(url).path)).name or "release"
    for suffix in (".tar.gz", ".tgz", ".tar"):
        if name.endswith(suffix):
            return name[: -len(suffix)] or "release"
    return name


def _check_limits(timeout, min_rate, max_size) -> tuple[float, float, int]:
    """Validated ``(timeout, min_rate, max_size)``; ``max_size`` may be ``"16G"``, ``"500MiB"``..."""
    from lbm_bench._validation import check_positive_float, describe_value

    timeout = check_positive_float("timeout", timeout)
    min_rate = check_positive_float("min_rate", min_rate, allow_zero=True)
    if isinstance(max_size, bool) or not isinstance(max_size, (int, str)):
        raise TypeError(f"max_size must be a number of bytes or a size like '16G', got {describe_value(max_size)}")
    try:
        size = parse_memory_size(max_size)
    except ValueError:
        raise ValueError(f"max_size must be a size like 16G, 500MiB or 2000000 (bytes), "
                         f"got {describe_value(max_size)}") from None
    return timeout, min_rate, size


class _RateGuard:
    """Counts the bytes the server sends and gives up when fewer than ``min_rate`` per
    second arrived over the last ``window`` seconds (the socket's own timeout catches a
    server that sends nothing at all)."""

    def __init__(self, window: float, min_rate: float) -> None:
        self.window, self.min_rate = window, min_rate
        self.start, self.count = time.monotonic(), 0

    def received(self, n: int) -> None:
        self.count += n
        elapsed = time.monotonic() - self.start
        if elapsed < self.window:
            return
        if self.count < self.min_rate * elapsed:
            raise TimeoutError(
                f"the server sent {self.count} bytes in {elapsed:.1f} s, slower than the minimum of "
                f"{self.min_rate:g} bytes/s (min_rate=)"
            )
        self.start, self.count = time.monotonic(), 0


class _GuardedRaw(io.RawIOBase):
    """A socket's raw reader that reports every read to a :class:`_RateGuard`."""

    def __init__(self, raw: io.RawIOBase, guard: _RateGuard) -> None:
        super().__init__()
        self._raw, self._guard = raw, guard

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int | None:
        n = self._raw.readinto(buffer)
        if n is not None:
            self._guard.received(n)
        return n

    def fileno(self) -> int:
        return self._raw.fileno()

    def close(self) -> None:
        self._raw.close()
        super().close()


def _guarded_connection(http_class, guard: _RateGuard):
    """``http_class`` (HTTP or HTTPS connection) whose responses read through ``guard``."""

    class GuardedResponse(http.client.HTTPResponse):
        def __init__(self, sock, *args, **kwargs) -> None:
            super().__init__(sock, *args, **kwargs)
            self.fp = io.BufferedReader(_GuardedRaw(self.fp.detach(), guard))

    def connect(host, **kwargs):
        connection = http_class(host, **kwargs)
        connection.response_class = GuardedResponse
        return connection

    return connect


class _Guarded:
    """A urllib handler whose connections' responses are read under ``guard`` (mixed in
    before the handler class, HTTP or HTTPS)."""

    def __init__(self, guard: _RateGuard) -> None:
        super().__init__()
        self.guard = guard

    def do_open(self, http_class, req, **kwargs):
        return super().do_open(_guarded_connection(http_class, self.guard), req, **kwargs)


class _GuardedHTTPHandler(_Guarded, urllib.request.HTTPHandler):
    pass


class _GuardedHTTPSHandler(_Guarded, urllib.request.HTTPSHandler):
    pass


def _download(url: str, target: Path, *, timeout: float, min_rate: float, max_size: int,
              progress: bool) -> tuple[str, int]:
    """Stream ``url`` into ``target``; return its SHA-256 and size."""
    from tqdm.auto import tqdm

    digest = hashlib.sha256()
    size = 0
    guard = _RateGuard(timeout, min_rate)
    opener = urllib.request.build_opener(_GuardedHTTPHandler(guard), _GuardedHTTPSHandler(guard))
    too_big = f"{url}: refused: the archive is larger than max_size ({format_bytes(max_size)})"
    try:
        with opener.open(url, timeout=timeout) as response:
            total = response.headers.get("Content-Length")
            total = int(total) if total and total.isdigit() else None
            if total is not None and total > max_size:
                raise FetchError(too_big)
            with open(target, "wb") as handle, tqdm(
                total=total, unit="B", unit_scale=True, desc="downloading", disable=not progress,
            ) as bar:
                for block in iter(lambda: response.read(_BLOCK), b""):
                    size += len(block)
                    if size > max_size:
                        raise FetchError(too_big)
                    handle.write(block)
                    digest.update(block)
                    bar.update(len(block))
    except urllib.error.HTTPError as exc:
        raise FetchError(f"cannot download {url}: HTTP {exc.code} {exc.reason}") from None
    except urllib.error.URLError as exc:
        raise FetchError(f"cannot download {url}: {_words(exc.reason)}") from None
    except (OSError, ValueError, http.client.HTTPException) as exc:  # timeouts, resets, file:// errors
        raise FetchError(f"cannot download {url}: {_words(exc)}") from None
    return digest.hexdigest(), size


def _words(value: Any) -> str:
    """A download's or an archive's error on one line, an operating system's error in words."""
    return one_line(describe_os_error(value) if isinstance(value, OSError) else value)


def _safe_member(member: tarfile.TarInfo, url: str) -> list[str]:
    """Check one member's name and type; return its path parts (``.`` and empty ones dropped)."""
    name = member.name
    path = PurePosixPath(name)
    if name.startswith(("/", "\\")) or path.is_absolute() or (len(name) > 1 and name[1] == ":"):
        raise FetchError(f"{url}: refused archive: absolute path {name!r}")
    if ".." in path.parts or "\\" in name:
        raise FetchError(f"{url}: refused archive: path {name!r} leaves the release folder")
    if member.issym() or member.islnk():
        raise FetchError(f"{url}: refused archive: {name!r} is a link")
    if not (member.isfile() or member.isdir()) or member.issparse():
        raise FetchError(f"{url}: refused archive: {name!r} is not a regular file or folder")
    parts = [p for p in path.parts if p not in ("", ".")]
    if len(parts) == 1 and member.isfile():
        raise FetchError(f"{url}: not a release archive: file {name!r} outside a release folder")
    return parts


@dataclass
class _Listing:
    """What the archive holds, read from its headers before anything is written."""

    top: str = ""
    files: dict[str, int] = field(default_factory=dict)  # path inside the release -> size
    folders: list[str] = field(default_factory=list)
    index: dict[str, bytes] = field(default_factory=dict)  # SHA256SUMS and manifest.json
    total: int = 0
    declared: dict[str, int | None] | None = None  # the release's files, with the manifest's sizes


def _declared_files(index: dict[str, bytes], url: str) -> dict[str, int | None]:
    """The files the release declares: ``SHA256SUMS``'s names and the manifest's tables
    (with their sizes; None where the manifest gives none)."""
    missing = [name for name in _INDEX_FILES if name not in index]
    if missing:
        raise FetchError(f"{url}: not a release archive: no {' and no '.join(missing)} in its release folder")
    try:
        lines = index["SHA256SUMS"].decode("utf-8").splitlines()
        manifest = json.loads(index["manifest.json"].decode("utf-8"))
        declared: dict[str, int | None] = {"SHA256SUMS": None}
        for line in lines:
            digest, separator, name = line.partition("  ")
            if not separator or not name:
                raise ValueError(f"SHA256SUMS line {line[:80]!r}")
            declared[name] = None
        for entry in manifest["tables"]:
            size = entry["size"]
            if isinstance(size, bool) or not isinstance(size, int) or size < 0:
                raise ValueError(f"size {size!r} of {entry['file']!r}")
            declared[str(entry["file"])] = size
    except (UnicodeDecodeError, ValueError, KeyError, TypeError) as exc:
        raise FetchError(f"{url}: not a release archive: its SHA256SUMS or manifest.json is malformed "
                         f"({_words(exc)})") from None
    return declared


def _check_declared(path: str, size: int, declared: dict[str, int | None], url: str) -> None:
    """A member of the archive against the release's own declaration of its files."""
    if path not in declared:
        raise FetchError(f"{url}: refused archive: {path} is not a file of the release "
                         "(not in its SHA256SUMS or manifest.json)")
    expected = declared[path]
    if expected is not None and size != expected:
        raise FetchError(f"{url}: refused archive: {path} is {size} bytes in the archive, "
                         f"but the manifest declares {expected}")


def _list_archive(tar: tarfile.TarFile, url: str, max_size: int) -> _Listing:
    """Read the archive's headers (and its index files), checking each member as it comes:
    safe names and types, one release folder, at most ``max_size`` bytes in all, and,
    once ``SHA256SUMS`` and ``manifest.json`` are read, the release's own listing. A
    member is refused from its header, before its data are read (or decompressed)."""
    listing = _Listing()
    for member in tar:
        parts = _safe_member(member, url)
        if not parts:
            continue
        if len(listing.files) + len(listing.folders) >= _MAX_MEMBERS:
            raise FetchError(f"{url}: refused archive: more than {_MAX_MEMBERS} members")
        if listing.top and parts[0] != listing.top:
            raise FetchError(f"{url}: not a release archive: expected one top-level folder, found more")
        listing.top = parts[0]
        inside = "/".join(parts[1:])
        if member.isdir():
            listing.folders.append(inside)
            continue
        if inside in listing.files:
            raise FetchError(f"{url}: refused archive: {inside} appears twice")
        listing.total += member.size
        if listing.total > max_size:
            raise FetchError(f"{url}: refused archive: it unpacks to more than max_size ({format_bytes(max_size)})")
        listing.files[inside] = member.size
        if inside in _INDEX_FILES:
            if member.size > _MAX_INDEX_BYTES:
                raise FetchError(f"{url}: not a release archive: {inside} of {member.size} bytes")
            listing.index[inside] = tar.extractfile(member).read()
            if len(listing.index) == len(_INDEX_FILES):
                listing.declared = _declared_files(listing.index, url)
                for path, size in listing.files.items():  # the members before the index
                    _check_declared(path, size, listing.declared, url)
        elif listing.declared is not None:
            _check_declared(inside, member.size, listing.declared, url)
    if not listing.top:
        raise FetchError(f"{url} is an empty archive, not a release")
    if listing.declared is None:
        listing.declared = _declared_files(listing.index, url)  # raises: one is missing
    return listing


def _copy_bounded(source, target: Path, size: int, name: str, url: str) -> None:
    """Copy ``source`` into the new file ``target``, refusing (and stopping the write at once)
    a member that holds more or fewer than the ``size`` bytes it declares."""
    from lbm_bench._atomic import write_error

    written = 0
    try:
        with open(target, "xb") as handle:
            while block := source.read(min(_BLOCK, size - written + 1)):  # one byte past: a lie shows
                written += len(block)
                if written > size:
                    raise FetchError(f"{url}: refused archive: {name} holds more than the {size} bytes it declares")
                handle.write(block)
    except OSError as exc:
        if exc.errno is None:  # not the disk: a corrupt stream (gzip.BadGzipFile)
            raise
        raise FetchError(f"cannot extract {url}: {write_error(target, exc)}") from None
    if written != size:
        raise FetchError(f"{url}: refused archive: {name} holds {written} bytes, not the {size} it declares")


def _extract(archive: Path, into: Path, url: str, max_size: int) -> Path:
    """Check and extract ``archive`` into the empty folder ``into``; return the release folder."""
    try:
        # random access ("r:*"), not a stream ("r|*"): tarfile skips a member's data in a
        # stream by small reads, 70 s for 3 GB of zeros instead of about 8
        with tarfile.open(archive, "r:*") as tar:
            listing = _list_archive(tar, url, max_size)
            free = shutil.disk_usage(into).free
            if listing.total > free:
                raise FetchError(f"{url}: the release needs {format_bytes(listing.total)}, but only "
                                 f"{format_bytes(free)} is free in {into.parent}")
            top = into / listing.top
            top.mkdir()
            for member in tar.getmembers():  # the members listed and checked above
                parts = _safe_member(member, url)
                inside = "/".join(parts[1:])
                if member.isdir() or not inside:
                    top.joinpath(*parts[1:]).mkdir(parents=True, exist_ok=True)
                    continue
                target = top.joinpath(*parts[1:])
                target.parent.mkdir(parents=True, exist_ok=True)
                _copy_bounded(tar.extractfile(member), target, listing.files[inside], inside, url)
    except FetchError:
        raise
    except (tarfile.TarError, EOFError, zlib.error, OSError) as exc:
        raise FetchError(f"{url} is not a readable release archive ({_words(exc)})") from None
    return top


def _cached(entry: Path, sha256: str | None) -> Path | None:
    record_path = entry / _RECORD
    if not record_path.is_file():
        return None
    try:
        record = json.loads(record_path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None
    if sha256 is not None and record.get("sha256") != sha256:
        return None
    folder = entry / str(record.get("folder", ""))
    if not record.get("folder") or not (folder / "manifest.json").is_file():
        return None
    return folder


def fetch_release(
    url: str | os.PathLike[str],
    *,
    sha256: str | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    timeout: float = 60.0,
    min_rate: float = DEFAULT_MIN_RATE,
    max_size: int | str = DEFAULT_MAX_SIZE,
    progress: bool = False,
) -> Path:
    """Download, check, extract and verify a release archive; return its folder.

    Parameters
    ----------
    url : str or path
        Where the archive written by ``lbm-bench build --archive`` is: an
        ``https://``, ``http://`` or ``file://`` URL, or a local path.
    sha256 : str, optional
        Expected SHA-256 of the archive (64 hexadecimal digits). When given, a
        different download is refused, and the cache is keyed by it.
    cache_dir : path, optional
        Cache folder (default: :func:`default_cache_dir`, ``$LBM_BENCH_CACHE``).
    timeout : float, default=60
        Seconds to wait for the server: a connection or a read that waits
        longer fails. It is also the window of ``min_rate``.
    min_rate : float, default=1024
        Slowest download accepted, in bytes per second: the download fails when
        the server sends less than ``min_rate * timeout`` bytes in any
        ``timeout`` seconds (a server that trickles one byte every two seconds
        never hits the per-read ``timeout``). 0 turns the check off.
    max_size : int or str, default=16 GiB (:data:`DEFAULT_MAX_SIZE`)
        Largest archive to download and largest release to unpack, in bytes
        or as a size (``"500M"``, ``"64G"``). The release's files, as the
        archive's headers declare them, must add up to at most this (and fit
        on the disk) before anything is written.
    progress : bool, default=False
        Show a download progress bar.

    Returns
    -------
    Path
        The release folder (it holds ``manifest.json``, ``SHA256SUMS``, ``tables/``...).

    Raises
    ------
    FetchError
        Unreachable URL, a server that stalls or trickles, SHA-256 mismatch, an
        archive that is corrupt, unsafe (absolute paths, ``..``, links, devices),
        larger than ``max_size``, not the release's own listing (a file that
        ``SHA256SUMS`` and ``manifest.json`` do not declare, a table of another
        size than the manifest's) or whose release does not verify. Nothing is
        left in the cache then.
    ValueError, TypeError
        For a malformed ``sha256``, ``url``, ``timeout``, ``min_rate`` or ``max_size``.

    Examples
    --------
    >>> folder = fetch_release("https://example.org/mini-0.1.tar.gz", sha256="...")  # doctest: +SKIP
    >>> lbm_bench.load_release_table(folder, "bernoulli-60x40-2x2-r0.1-01")  # doctest: +SKIP
    """
    from lbm_bench.release.verify import verify_release

    digest = _check_sha256(sha256)
    timeout, min_rate, max_size = _check_limits(timeout, min_rate, max_size)
    url = _as_url(url)
    cache = Path(cache_dir).expanduser() if cache_dir is not None else default_cache_dir()
    key = (digest or hashlib.sha256(url.encode()).hexdigest())[:16]
    entry = cache / f"{_archive_name(url)}-{key}"
    hit = _cached(entry, digest)
    if hit is not None:
        return hit
    try:
        cache.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise FetchError(f"cannot create the cache folder {cache}: {_words(exc)}") from None
    work = Path(tempfile.mkdtemp(prefix=".fetch-", dir=cache))
    try:
        archive = work / "archive"
        got, size = _download(url, archive, timeout=timeout, min_rate=min_rate, max_size=max_size,
                              progress=progress)
        if digest is not None and got != digest:
            raise FetchError(f"SHA-256 of {url} is {got}, expected {digest}: refused (tampered or wrong file)")
        staging = work / "release"
        staging.mkdir()
        folder = _extract(archive, staging, url, max_size)
        archive.unlink()
        try:
            problems = verify_release(folder)
        except (ValueError, OSError) as exc:
            raise FetchError(f"{url} is not a release archive: {_words(exc)}") from None
        if problems:
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            raise FetchError(f"{url}: the release does not verify: {problems[0]}{more}")
        record = {"url": url, "sha256": got, "size": size, "folder": folder.name}
        (staging / _RECORD).write_text(json.dumps(record, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        hit = _cached(entry, digest)
        if hit is not None:  # another process fetched it meanwhile: keep theirs
            return hit
        if entry.exists():  # a stale entry (no valid record): replace it
            shutil.rmtree(entry, ignore_errors=True)
        try:
            os.replace(staging, entry)
        except OSError:
            hit = _cached(entry, digest)  # another process won the race
            if hit is None:
                raise
            return hit
        return entry / folder.name
    finally:
        shutil.rmtree(work, ignore_errors=True)
