"""Fetch a published release by URL: :func:`fetch_release` (``lbm-bench fetch``).

Like scikit-learn's ``fetch_*`` functions and clustbench's loaders: the archive
written by ``lbm-bench build --archive`` is downloaded once (standard library
``urllib``: ``https://``, ``http://`` and ``file://`` URLs, or a local path),
its SHA-256 checked when given, extracted safely, verified with
:func:`lbm_bench.verify_release`, and kept in a cache folder; later calls with the
same URL (or the same SHA-256) return the cached folder without the network.

Safety and atomicity
--------------------
The archive is checked before anything is written and extracted with bounded copies
(:mod:`lbm_bench.release.extraction`: only regular files and folders under one release
folder, the listing the release's own, each table of its declared size, at most
``max_size`` bytes in all, a decompression bomb refused from its listing), into a
temporary folder of the cache, and the folder is renamed into place only once the
release verifies, so an interrupted or refused fetch leaves nothing half-extracted
under a final name.

Slow servers
------------
``timeout`` bounds every wait for the server, and the download must keep a minimum
rate: a server that sends less than ``min_rate`` bytes per second over any ``timeout``
seconds (for instance one byte every two seconds) is given up, headers included. The
download itself stops at ``max_size`` bytes (:mod:`lbm_bench.release.download`).

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
import json
import os
import shutil
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path, PurePosixPath

from lbm_bench.protocol.memory import parse_memory_size
from lbm_bench.release.download import FetchError, download, words
from lbm_bench.release.extraction import extract_release

__all__ = ["DEFAULT_MAX_SIZE", "DEFAULT_MIN_RATE", "default_cache_dir", "fetch_release"]

#: Environment variable that overrides the default cache folder.
CACHE_ENV = "LBM_BENCH_CACHE"
#: Largest release :func:`fetch_release` unpacks by default (and largest download):
#: 16 GiB, many times this repository's releases; ``max_size`` / ``--max-size`` raise it.
DEFAULT_MAX_SIZE = 16 * 2**30
#: Slowest download :func:`fetch_release` waits for by default, in bytes per second
#: over any ``timeout`` seconds (1 KiB/s); ``min_rate=0`` / ``--min-rate 0`` turns it off.
DEFAULT_MIN_RATE = 1024.0
_RECORD = "fetch.json"


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
        raise TypeError("sha256 must be a string of 64 hexadecimal digits, got "
                        f"{type(sha256).__name__}")
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
    """Validated ``(timeout, min_rate, max_size)``; ``max_size`` may be ``"16G"``,
    ``"500MiB"``..."""
    from lbm_bench._validation import check_positive_float, describe_value

    timeout = check_positive_float("timeout", timeout)
    min_rate = check_positive_float("min_rate", min_rate, allow_zero=True)
    if isinstance(max_size, bool) or not isinstance(max_size, (int, str)):
        raise TypeError("max_size must be a number of bytes or a size like '16G', got "
                        f"{describe_value(max_size)}")
    try:
        size = parse_memory_size(max_size)
    except ValueError:
        raise ValueError(f"max_size must be a size like 16G, 500MiB or 2000000 (bytes), "
                         f"got {describe_value(max_size)}") from None
    return timeout, min_rate, size


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
    ``fetch_release("https://.../mini-0.1.tar.gz", sha256=...)`` downloads a published
    archive; a local one is copied, and the rest is the same:

    >>> import os, tempfile
    >>> from lbm_bench.release import build_release, parse_spec
    >>> grid = dict(kinds=["bernoulli"], shapes=["30x20"], clusters=["2x2"], risks=[0.1])
    >>> spec = parse_spec({"release": {"name": "tiny", "version": "0.1", "seed": 1},
    ...                    "defaults": {"tolerance": 0.03, "n_samples": 200, "screen_samples": 0,
    ...                                 "n_calibration_tables": 10}, "grid": [grid]})
    >>> tiny = os.path.join(tempfile.mkdtemp(), "tiny")
    >>> build_release(spec, tiny).ok
    True
    >>> from lbm_bench.release import write_archive, verify_release
    >>> archive = write_archive(tiny)   # what build_release(..., archive=True) writes
    >>> cache = os.path.join(tiny, "..", "cache")
    >>> fetched = fetch_release(archive, cache_dir=cache)
    >>> fetched.name, verify_release(fetched)
    ('tiny', [])
    >>> fetch_release(archive, cache_dir=cache) == fetched   # a second call: from the cache
    True
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
        raise FetchError(f"cannot create the cache folder {cache}: {words(exc)}") from None
    work = Path(tempfile.mkdtemp(prefix=".fetch-", dir=cache))
    try:
        archive = work / "archive"
        got, size = download(url, archive, timeout=timeout, min_rate=min_rate, max_size=max_size,
                              progress=progress)
        if digest is not None and got != digest:
            raise FetchError(f"SHA-256 of {url} is {got}, expected {digest}: refused (tampered or "
                             "wrong file)")
        staging = work / "release"
        staging.mkdir()
        folder = extract_release(archive, staging, url, max_size)
        archive.unlink()
        try:
            problems = verify_release(folder)
        except (ValueError, OSError) as exc:
            raise FetchError(f"{url} is not a release archive: {words(exc)}") from None
        if problems:
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            raise FetchError(f"{url}: the release does not verify: {problems[0]}{more}")
        record = {"url": url, "sha256": got, "size": size, "folder": folder.name}
        (staging / _RECORD).write_text(
            json.dumps(record, indent=2, sort_keys=True) + "\n", encoding="utf-8")
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
