"""Give the memory freed by one stage or task back to the operating system before the next.

Large tables make stages that allocate and free hundreds of megabytes in
arrays of a few megabytes each (noise, calibration tables, Gibbs sweeps).
glibc keeps such freed blocks in its heap, so the process's resident memory
(what ``/usr/bin/time`` reports as its peak, and what a memory limit counts)
grows with what earlier stages *used*, not with what is alive. Between the
stages of :func:`lbm_bench.generate_table`, :func:`release_free_memory` first
collects the unreachable reference cycles (Python's cycle collector runs by
object counts, not bytes: a cycle that holds a table's statistics can outlive
its stage by minutes), then asks glibc to return the free pages
(``malloc_trim(0)``). A worker lives on between tasks (the calibration's tables,
the MAP's starts, the chains, a release's tables), and what glibc keeps of one
task's temporaries would otherwise stay resident under the next one's (and loky,
taking a worker's peak kept after a large table for a leak, more than 300 MB above
its size after its first task, replaces the worker with a warning): the tasks of
:mod:`lbm_bench.tasks.pool` run with ``trim`` give the free pages back after each
task (no collection). It changes no result; the trim does nothing where glibc
is absent.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import sys

__all__ = ["release_free_memory"]

_LIBC = None


def _libc():
    global _LIBC
    if _LIBC is None:
        _LIBC = False
        if sys.platform.startswith("linux"):
            try:
                libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
                libc.malloc_trim.argtypes = [ctypes.c_size_t]
                libc.malloc_trim.restype = ctypes.c_int
                _LIBC = libc
            except (OSError, AttributeError):
                _LIBC = False
    return _LIBC


def release_free_memory(collect: bool = True) -> bool:
    """Free the unreachable cycles (with ``collect``), then return the heap's free pages
    to the system (glibc ``malloc_trim(0)``).

    A full ``gc.collect()`` costs about 40 ms in a process that has imported the
    package: worth it between the stages of a large table, not after every Gibbs
    run of a small one (it was a third of a release build's Gibbs seconds).

    Returns whether the trim could be called (False off glibc).
    """
    if collect:
        gc.collect()
    libc = _libc()
    if not libc:
        return False
    libc.malloc_trim(0)
    return True
