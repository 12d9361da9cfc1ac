"""The memory this process may still take: the smallest of three limits.

The memory guard (:mod:`lbm_bench.protocol.memory`) refuses a request whose estimated peak
exceeds the memory available. On a machine of its own, that is what the system can give
without swapping (``MemAvailable`` of ``/proc/meminfo``); in a container or a batch job, a
control group may allow far less (the kernel then kills the process, or an allocation fails
with a ``MemoryError`` traceback), and a process may have an address-space limit of its own
(``ulimit -v``). So the limit is the smallest of:

- ``MemAvailable`` (:func:`meminfo_available`; the available physical pages elsewhere);
- the control group's limit less what the group uses, its reclaimable page cache counted as
  free, at each level of the hierarchy up to the mount point (:func:`cgroup_available`:
  cgroup v2 ``memory.max``, ``memory.current``; v1 ``memory.limit_in_bytes``,
  ``memory.usage_in_bytes``);
- ``RLIMIT_AS`` less the address space this process has mapped
  (:func:`address_space_available`).

:func:`memory_limit` says which one binds, so that a refusal names it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "MemoryLimit", "address_space_available", "cgroup_available", "meminfo_available",
    "memory_limit"
]

#: A control group limit at or above this is no limit (cgroup v1 writes "unlimited" as the
#: largest multiple of the page size below 2**63).
_NO_LIMIT = 2**62
#: The files of each control group version: the limit, the usage, and the page cache that the
#: kernel reclaims before it fails an allocation (a key of ``memory.stat``).
_CGROUP_FILES = {
    "cgroup2": ("memory.max", "memory.current", "inactive_file", "the cgroup's memory.max"),
    "cgroup": ("memory.limit_in_bytes", "memory.usage_in_bytes", "total_inactive_file",
               "the cgroup's memory.limit_in_bytes"),
}


@dataclass(frozen=True)
class MemoryLimit:
    """Bytes this process may still take, and what sets them.

    Attributes
    ----------
    bytes : int
    source : str
        ``"MemAvailable"``, ``"the cgroup's memory.max"`` (or v1's
        ``memory.limit_in_bytes``), or ``"ulimit -v"``.
    """

    bytes: int
    source: str


def meminfo_available(meminfo: str | os.PathLike[str] = "/proc/meminfo") -> int | None:
    """``MemAvailable`` in bytes; the available physical pages (``os.sysconf``) where there is no
    ``/proc/meminfo``; None when neither is known."""
    try:
        with open(meminfo, encoding="ascii") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, ValueError, OSError):
        return None


def _read_number(path: Path) -> int | None:
    """The integer a control group file holds; None for ``max``, a missing or unreadable file."""
    try:
        text = path.read_text(encoding="ascii").strip()
        return None if text == "max" else int(text)
    except (OSError, ValueError, UnicodeDecodeError):
        return None


def _reclaimable(stat: Path, key: str) -> int:
    try:
        for line in stat.read_text(encoding="ascii").splitlines():
            name, _, value = line.partition(" ")
            if name == key:
                return int(value)
    except (OSError, ValueError, UnicodeDecodeError):
        pass
    return 0


def _mounts(mountinfo: str | os.PathLike[str]) -> list[tuple[str, Path, Path]]:
    """``(version, root, mount point)`` of the memory controller's mounts: ``cgroup2`` mounts,
    and the ``cgroup`` (v1) mounts with the memory controller."""
    mounts = []
    try:
        lines = Path(mountinfo).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []
    for line in lines:
        fields, _, tail = line.partition(" - ")
        before, after = fields.split(), tail.split()
        if len(before) < 5 or len(after) < 3:
            continue
        kind, options = after[0], after[2].split(",")
        if kind == "cgroup2" or (kind == "cgroup" and "memory" in options):
            mounts.append((kind, Path(before[3]), Path(before[4])))
    return mounts


def _groups(cgroups: str | os.PathLike[str]) -> dict[str, Path]:
    """This process's group by version: ``{"cgroup2": path, "cgroup": path}`` (v1: the memory
    controller's)."""
    found = {}
    try:
        lines = Path(cgroups).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return {}
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        if parts[0] == "0" and parts[1] == "":
            found["cgroup2"] = Path(parts[2])
        elif "memory" in parts[1].split(","):
            found["cgroup"] = Path(parts[2])
    return found


def _group_folder(group: Path, root: Path, mount: Path) -> Path:
    """The folder of ``group`` under a mount of the hierarchy's ``root`` at ``mount`` (the mount
    point itself when the group is outside the mounted part, as in a container's namespace)."""
    try:
        folder = mount / group.relative_to(root)
    except ValueError:
        return mount
    return folder if folder.is_dir() else mount


def cgroup_available(cgroups: str | os.PathLike[str] = "/proc/self/cgroup",
                     mountinfo: str | os.PathLike[str] = "/proc/self/mountinfo"
                     ) -> MemoryLimit | None:
    """What this process's control group still allows: at each level from its group up to the
    mount point, the limit less the usage, the reclaimable page cache counted as free; the
    smallest over the levels and the versions (cgroup v2, v1). None without a limit.

    Parameters
    ----------
    cgroups, mountinfo : path
        This process's groups and mounts (``/proc/self/...``; other files in tests).
    """
    groups = _groups(cgroups)
    best: MemoryLimit | None = None
    for kind, root, mount in _mounts(mountinfo):
        if kind not in groups:
            continue
        limit_file, usage_file, cache_key, source = _CGROUP_FILES[kind]
        folder = _group_folder(groups[kind], root, mount)
        while True:
            limit = _read_number(folder / limit_file)
            if limit is not None and limit < _NO_LIMIT:
                usage = _read_number(folder / usage_file) or 0
                free = limit - usage + _reclaimable(folder / "memory.stat", cache_key)
                free = max(0, min(limit, free))
                if best is None or free < best.bytes:
                    best = MemoryLimit(free, source)
            if folder == mount or folder.parent == folder:
                break
            folder = folder.parent
    return best


def address_space_available(status: str | os.PathLike[str] = "/proc/self/status") -> int | None:
    """``RLIMIT_AS`` (``ulimit -v``) less the address space this process has mapped (``VmSize``
    of ``status``), in bytes; None without a limit."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not on POSIX
        return None
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY or soft < 0:
        return None
    mapped = 0
    try:
        for line in Path(status).read_text(encoding="ascii").splitlines():
            if line.startswith("VmSize:"):
                mapped = int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError, UnicodeDecodeError):
        pass
    return max(0, soft - mapped)


def memory_limit() -> MemoryLimit | None:
    """The smallest of ``MemAvailable``, the control group's limit and ``RLIMIT_AS`` (the module
    docstring); None when none is known (then the guard checks nothing).

    Examples
    --------
    >>> limit = memory_limit()
    >>> limit is None or limit.bytes >= 0
    True
    """
    candidates = []
    available = meminfo_available()
    if available is not None:
        candidates.append(MemoryLimit(available, "MemAvailable"))
    group = cgroup_available()
    if group is not None:
        candidates.append(group)
    address_space = address_space_available()
    if address_space is not None:
        candidates.append(MemoryLimit(address_space, "ulimit -v"))
    return min(candidates, key=lambda limit: limit.bytes, default=None)
