"""A release archive extracted safely (:func:`extract_release`).

Every member is checked before anything is written: only regular files and folders, all
under one top-level folder, with relative names free of ``..`` (no absolute paths, links,
devices or FIFOs), and the listing must be the release's own: every file is ``SHA256SUMS``
or listed in it (or a table of ``manifest.json``), each table has the size the manifest
declares, and the files add up to at most ``max_size`` bytes (and fit on the disk). A
decompression bomb is refused from its listing. Each member is then written by a bounded
copy that stops as soon as it exceeds its declared size.
"""

from __future__ import annotations

import json
import shutil
import tarfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from lbm_bench.protocol.memory import format_bytes
from lbm_bench.release.download import BLOCK, FetchError, words

__all__ = ["extract_release"]


#: The release's index files, read from the archive to check its listing (at most this size).
_INDEX_FILES = ("SHA256SUMS", "manifest.json")


_MAX_INDEX_BYTES = 64 * 2**20


#: Most members an archive may have (a release has two files per table and a few more).
_MAX_MEMBERS = 100_000


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
        raise FetchError(f"{url}: not a release archive: no {' and no '.join(missing)} in its "
                         "release folder")
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
        raise FetchError(f"{url}: not a release archive: its SHA256SUMS or manifest.json is "
                         "malformed "
                         f"({words(exc)})") from None
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
            raise FetchError(f"{url}: not a release archive: expected one top-level folder, found "
                             "more")
        listing.top = parts[0]
        inside = "/".join(parts[1:])
        if member.isdir():
            listing.folders.append(inside)
            continue
        if inside in listing.files:
            raise FetchError(f"{url}: refused archive: {inside} appears twice")
        listing.total += member.size
        if listing.total > max_size:
            raise FetchError(f"{url}: refused archive: it unpacks to more than max_size "
                             f"({format_bytes(max_size)})")
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
            # one byte past: a lie shows
            while block := source.read(min(BLOCK, size - written + 1)):
                written += len(block)
                if written > size:
                    raise FetchError(f"{url}: refused archive: {name} holds more than the {size} "
                                     "bytes it declares")
                handle.write(block)
    except OSError as exc:
        if exc.errno is None:  # not the disk: a corrupt stream (gzip.BadGzipFile)
            raise
        raise FetchError(f"cannot extract {url}: {write_error(target, exc)}") from None
    if written != size:
        raise FetchError(f"{url}: refused archive: {name} holds {written} bytes, not the {size} it "
                         "declares")


def extract_release(archive: Path, into: Path, url: str, max_size: int) -> Path:
    """Check and extract ``archive`` into the empty folder ``into``; return the release folder."""
    try:
        # random access ("r:*"), not a stream ("r|*"): tarfile skips a member's data in a
        # stream by small reads, 70 s for 3 GB of zeros instead of about 8
        with tarfile.open(archive, "r:*") as tar:
            listing = _list_archive(tar, url, max_size)
            free = shutil.disk_usage(into).free
            if listing.total > free:
                raise FetchError(f"{url}: the release needs {format_bytes(listing.total)}, but "
                                 "only "
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
        raise FetchError(f"{url} is not a readable release archive ({words(exc)})") from None
    return top
