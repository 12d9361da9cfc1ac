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
``..`` (no absolute paths, links, devices or FIFOs). Extraction uses tarfile's
``"data"`` filter where Python has it, writes into a temporary folder of the cache,
and the folder is renamed into place only once the release verifies, so an
interrupted or refused fetch leaves nothing half-extracted under a final name.

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
import tarfile
import tempfile
import urllib.error
import urllib.parse
import urllib.request
import zlib
from pathlib import Path, PurePosixPath

__all__ = ["FetchError", "default_cache_dir", "fetch_release"]

#: Environment variable that overrides the default cache folder.
CACHE_ENV = "LBM_BENCH_CACHE"
_RECORD = "fetch.json"
_BLOCK = 1 << 20


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


def _download(url: str, target: Path, *, timeout: float, progress: bool) -> tuple[str, int]:
    """Stream ``url`` into ``target``; return its SHA-256 and size."""
    from tqdm.auto import tqdm

    digest = hashlib.sha256()
    size = 0
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            total = response.headers.get("Content-Length")
            with open(target, "wb") as handle, tqdm(
                total=int(total) if total and total.isdigit() else None, unit="B", unit_scale=True,
                desc="downloading", disable=not progress,
            ) as bar:
                for block in iter(lambda: response.read(_BLOCK), b""):
                    handle.write(block)
                    digest.update(block)
                    size += len(block)
                    bar.update(len(block))
    except urllib.error.HTTPError as exc:
        raise FetchError(f"cannot download {url}: HTTP {exc.code} {exc.reason}") from None
    except urllib.error.URLError as exc:
        raise FetchError(f"cannot download {url}: {_one_line(exc.reason)}") from None
    except (OSError, ValueError) as exc:  # timeouts, resets, file:// errors
        raise FetchError(f"cannot download {url}: {_one_line(exc)}") from None
    return digest.hexdigest(), size


def _one_line(value) -> str:
    return " ".join(str(value).split()) or type(value).__name__


def _safe_members(tar: tarfile.TarFile, url: str) -> tuple[str, list[tarfile.TarInfo]]:
    """Check every member before extraction; return the top-level folder and the members."""
    members = tar.getmembers()
    if not members:
        raise FetchError(f"{url} is an empty archive, not a release")
    tops = set()
    for member in members:
        name = member.name
        path = PurePosixPath(name)
        if name.startswith(("/", "\\")) or path.is_absolute() or (len(name) > 1 and name[1] == ":"):
            raise FetchError(f"{url}: refused archive: absolute path {name!r}")
        if ".." in path.parts or "\\" in name:
            raise FetchError(f"{url}: refused archive: path {name!r} leaves the release folder")
        if member.issym() or member.islnk():
            raise FetchError(f"{url}: refused archive: {name!r} is a link")
        if not (member.isfile() or member.isdir()):
            raise FetchError(f"{url}: refused archive: {name!r} is not a regular file or folder")
        parts = [p for p in path.parts if p not in ("", ".")]
        if not parts:
            continue
        tops.add(parts[0])
        if len(parts) == 1 and member.isfile():
            raise FetchError(f"{url}: not a release archive: file {name!r} outside a release folder")
    if len(tops) != 1:
        raise FetchError(f"{url}: not a release archive: expected one top-level folder, found {len(tops)}")
    return tops.pop(), members


def _extract(archive: Path, into: Path, url: str) -> Path:
    """Check and extract ``archive`` into the empty folder ``into``; return the release folder."""
    try:
        with tarfile.open(archive, "r:*") as tar:
            top, members = _safe_members(tar, url)
            if hasattr(tarfile, "data_filter"):
                tar.extractall(into, members=members, filter="data")
            else:  # pragma: no cover - Python without extraction filters
                _extract_by_hand(tar, members, into)
    except FetchError:
        raise
    except (tarfile.TarError, EOFError, zlib.error, OSError) as exc:
        raise FetchError(f"{url} is not a readable release archive ({_one_line(exc)})") from None
    return into / top


def _extract_by_hand(tar: tarfile.TarFile, members: list[tarfile.TarInfo], into: Path) -> None:
    for member in members:
        target = into.joinpath(*PurePosixPath(member.name).parts)
        if member.isdir():
            target.mkdir(parents=True, exist_ok=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        source = tar.extractfile(member)
        with source, open(target, "wb") as handle:
            shutil.copyfileobj(source, handle)


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
        Seconds to wait for the server.
    progress : bool, default=False
        Show a download progress bar.

    Returns
    -------
    Path
        The release folder (it holds ``manifest.json``, ``SHA256SUMS``, ``tables/``...).

    Raises
    ------
    FetchError
        Unreachable URL, SHA-256 mismatch, an archive that is corrupt, unsafe
        (absolute paths, ``..``, links, devices) or whose release does not verify.
        Nothing is left in the cache then.
    ValueError, TypeError
        For a malformed ``sha256`` or ``url``.

    Examples
    --------
    >>> folder = fetch_release("https://example.org/mini-0.1.tar.gz", sha256="...")  # doctest: +SKIP
    >>> lbm_bench.load_release_table(folder, "bernoulli-60x40-2x2-r0.1-01")  # doctest: +SKIP
    """
    from lbm_bench.release.verify import verify_release

    digest = _check_sha256(sha256)
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
        raise FetchError(f"cannot create the cache folder {cache}: {_one_line(exc)}") from None
    work = Path(tempfile.mkdtemp(prefix=".fetch-", dir=cache))
    try:
        archive = work / "archive"
        got, size = _download(url, archive, timeout=timeout, progress=progress)
        if digest is not None and got != digest:
            raise FetchError(f"SHA-256 of {url} is {got}, expected {digest}: refused (tampered or wrong file)")
        staging = work / "release"
        staging.mkdir()
        folder = _extract(archive, staging, url)
        archive.unlink()
        try:
            problems = verify_release(folder)
        except (ValueError, OSError) as exc:
            raise FetchError(f"{url} is not a release archive: {_one_line(exc)}") from None
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
