"""Atomic file writes: write under a temporary name beside the destination, then give the
complete file its final name in one step, so that an interrupted or failed write leaves
nothing (partial or not) under the final name. The package's one writer of files: every
file it writes (tables, release files, pictures, benchmark results) goes through here.

:func:`atomic_path` is the whole write: a temporary name to write under, the final name
given on success, the temporary name removed in every case; :func:`atomic_write_text`
and :func:`atomic_write_bytes` write a string or bytes with it. Its pieces:
:func:`temporary_path` names the temporary file (unique per call: pid and random bits),
:func:`put_in_place` names the complete file (replacing an existing one only when asked,
also against concurrent writers) and :func:`write_error` turns the operating system's
error into one line that says what happened ("could not write big.h5: no space left on
the device").
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path

__all__ = [
    "TEMPORARY_GLOB", "atomic_path", "atomic_write_bytes", "atomic_write_text",
    "check_writable_file", "check_writable_folder", "describe_os_error", "put_in_place",
    "temporary_path", "write_error"
]

#: What the temporary names of :func:`temporary_path` look like, as a glob: the leftovers of
#: a killed run (``lbm-bench build`` removes them from a release folder before it builds).
TEMPORARY_GLOB = ".*.tmp-*"

#: errno values of ``os.link`` on a file system without hard links (FAT, some network and
#: FUSE file systems): :func:`put_in_place` then checks and renames instead.
_NO_HARD_LINKS = {
    errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.ENOSYS, errno.EMLINK, errno.EXDEV
}

#: What a failed write means, in words, for the errors a user can act on.
_REASONS = {
    errno.EFBIG: "file too large (over the file-size limit of this process, see ulimit -f)",
    errno.ENOSPC: "no space left on the device",
    errno.EDQUOT: "disk quota exceeded",
}


def temporary_path(path: Path) -> Path:
    """A fresh hidden name beside ``path``: ``.<name>.tmp-<pid>-<random>``.

    Unique per call, so two threads or processes writing the same ``path`` never
    share a temporary file; ``.*.tmp*`` finds the leftovers of a killed run.
    """
    return path.with_name(f".{path.name}.tmp-{os.getpid()}-{secrets.token_hex(4)}")


@contextlib.contextmanager
def atomic_path(path: Path, *, overwrite: bool = True) -> Iterator[Path]:
    """A temporary name beside ``path`` to write the file under; on a clean exit the
    complete file gets the name ``path`` (:func:`put_in_place`), and in every case,
    errors and interrupts included, the temporary name is gone afterwards.

    Raises
    ------
    FileExistsError
        Without ``overwrite``, when ``path`` exists (nothing is left behind).

    Examples
    --------
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> with atomic_path(folder / "a.txt") as temporary:
    ...     _ = temporary.write_text("complete")
    >>> sorted(p.name for p in folder.iterdir()), (folder / "a.txt").read_text()
    (['a.txt'], 'complete')
    """
    temporary = temporary_path(path)
    try:
        yield temporary
        put_in_place(temporary, path, overwrite=overwrite)
    finally:
        with contextlib.suppress(OSError):  # never hide the error that brought us here
            temporary.unlink(missing_ok=True)


def atomic_write_text(path: Path, text: str) -> None:
    """Write UTF-8 ``text`` to ``path`` atomically (:func:`atomic_path`), replacing a file there."""
    with atomic_path(path) as temporary:
        temporary.write_text(text, encoding="utf-8")


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` as it is (no newline translation) to ``path`` atomically, replacing a file
    there."""
    with atomic_path(path) as temporary:
        temporary.write_bytes(data)


def put_in_place(temporary: Path, path: Path, *, overwrite: bool) -> None:
    """Give the complete file ``temporary`` the name ``path``.

    With ``overwrite``, ``os.replace``: an existing file is replaced atomically
    (a reader sees the old file or the new one). Without, the file is hard-linked
    to ``path``, which fails when ``path`` exists, also when another writer created
    it a moment before (the check and the naming are one system call); the
    temporary name is then removed. On a file system without hard links it falls
    back to a check and a rename, which a concurrent writer can still race.

    Raises
    ------
    FileExistsError
        Without ``overwrite``, when ``path`` exists; ``temporary`` is left for the
        caller to remove.
    ValueError
        With ``overwrite``, when ``path`` is there but is not a regular file (a device, a pipe,
        a socket, a folder, a link to one of them or to nothing): it is never replaced.
    """
    if overwrite:
        destination_problem = _not_regular(Path(path))
        if destination_problem:  # never replace a device, a pipe or a folder with a file
            raise ValueError(f"{path} {destination_problem}; not replaced")
        os.replace(temporary, path)
        return
    try:
        os.link(temporary, path)
    except FileExistsError:
        raise FileExistsError(errno.EEXIST, "File exists", str(path)) from None
    except OSError as exc:
        if exc.errno not in _NO_HARD_LINKS:
            raise
        if os.path.lexists(path):
            raise FileExistsError(errno.EEXIST, "File exists", str(path)) from None
        os.replace(temporary, path)
        return
    temporary.unlink()


def describe_os_error(exc: OSError) -> str:
    """An operating system's error in words, with the file it names: ``afile/x: not a directory``
    (never ``[Errno 20] Not a directory: 'afile/x'``)."""
    # a message of its own (write_error's "could not write ..."), not the system's
    if not exc.strerror:
        return str(exc)
    reason = _REASONS.get(exc.errno) or exc.strerror
    reason = reason[:1].lower() + reason[1:]
    return f"{exc.filename}: {reason}" if exc.filename is not None else reason


def _probe(folder: Path, path: Path, what: str) -> None:
    """Create and remove a temporary file in ``folder``: ValueError naming ``path`` when the file
    system refuses (read-only, permissions, a full disk), before any work is done."""
    probe = folder / f".{path.name or 'lbm-bench'}.probe-{os.getpid()}-{secrets.token_hex(4)}"
    try:
        descriptor = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as exc:
        raise ValueError(f"{what} {path} cannot be written: "
                         f"{describe_os_error(exc).split(': ')[-1]}") from None
    os.close(descriptor)
    probe.unlink(missing_ok=True)


def _existing_ancestor(path: Path) -> Path:
    for ancestor in path.parents:
        if ancestor.exists():
            return ancestor
    return Path(".")  # pragma: no cover - the root exists


#: What a file that is not a regular one is, by ``stat`` test.
_FILE_TYPES = (
    (stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISSOCK, "a socket"),
)


def _not_regular(path: Path) -> str:
    """What makes ``path`` something no output may replace (``"is a character device"``), or
    ``""``: nothing there, or a regular file (or a link to one)."""
    try:
        link = path.lstat()
    except FileNotFoundError:
        return ""
    except OSError:  # not a folder on the way, permissions: the write will say it
        return ""
    try:
        target = path.stat()
    except FileNotFoundError:
        return f"is a symbolic link to {os.readlink(path)}, which does not exist"
    except OSError as exc:
        return f"cannot be followed ({describe_os_error(exc).rpartition(': ')[2]})"
    if stat.S_ISREG(target.st_mode):
        return ""
    kind = next((name for test, name in _FILE_TYPES if test(target.st_mode)), "not a file")
    via = f"a symbolic link to {os.readlink(path)}, " if stat.S_ISLNK(link.st_mode) else ""
    return f"is {via}{kind}, not a regular file"


def _same_file(path: Path, other: Path) -> bool:
    try:
        return os.path.samefile(path, other)
    except (OSError, ValueError):
        return False


def check_writable_file(path: Path, *, overwrite: bool, what: str = "output",
                        inputs: tuple[Path, ...] = ()) -> None:
    """Refuse, before the work, a file output that could not be written at the end, or must not
    be (ValueError, one line): anything there but a regular file (a directory, a device, a
    pipe, a socket, a link to one of them or to nothing), whatever ``overwrite``; one of the
    ``inputs`` (the same file, by device and inode: a link or another name of it included),
    whatever ``overwrite``; an existing file without ``overwrite``; a parent folder that is
    missing or a file, or a folder where no file can be created (read-only file system,
    permissions)."""
    path = Path(path)
    problem = _not_regular(path)
    if problem:
        raise ValueError(f"{what} {path} {problem}: it is never replaced")
    for source in inputs:
        if source is not None and _same_file(path, Path(source)):
            same = "" if str(source) == str(path) else f" ({source})"
            raise ValueError(f"{what} {path} is the input{same}: it is never replaced; write "
                             "elsewhere")
    if path.exists() and not overwrite:
        raise ValueError(f"{what} {path} exists (use overwrite=True to overwrite)")
    parent = path.parent
    if not parent.exists():
        ancestor = _existing_ancestor(path)
        if not ancestor.is_dir():
            raise ValueError(f"{what} {path}: {ancestor} is a file, not a folder")
        raise ValueError(f"{what} directory {parent} does not exist")
    if not parent.is_dir():
        raise ValueError(f"{what} {path}: {parent} is a file, not a folder")
    _probe(parent, path, what)


def check_writable_folder(path: Path, *, what: str = "output folder") -> None:
    """Refuse, before the work, a folder output that could not be written (ValueError, one
    line): a file in its place or in place of a parent, or a folder (its own, or the nearest
    existing parent it would be created in) where no file can be created."""
    path = Path(path)
    if path.exists():
        if not path.is_dir():
            raise ValueError(f"{what} {path} is a file, not a folder")
        _probe(path, path, what)
        return
    ancestor = _existing_ancestor(path)
    if not ancestor.is_dir():
        raise ValueError(f"{what} {path}: {ancestor} is a file, not a folder")
    _probe(ancestor, path, what)


def write_error(path: Path, exc: OSError) -> OSError:
    """A one-line error for a failed write of ``path``: ``could not write <path>: <reason>``.

    The reason is in words (``file too large``, ``no space left on the device``,
    ``permission denied``...), never the temporary file's name or a library's
    internals; the error keeps the class (``PermissionError``...) and ``errno``
    of ``exc``.
    """
    reason = _REASONS.get(exc.errno)
    if reason is None:
        text = exc.strerror or str(exc)
        reason = text[:1].lower() + text[1:]
    error = type(exc)(f"could not write {path}: {reason}")
    error.errno = exc.errno  # no strerror: str(error) stays the message above
    return error
