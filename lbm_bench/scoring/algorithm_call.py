"""How the benchmark calls an algorithm on a table: every failure is the run's, and a time limit.

Both tracks of ``lbm-bench benchmark`` fit an algorithm with :func:`fit_labels`. Whatever the
algorithm raises, ``SystemExit`` and ``KeyboardInterrupt`` included, is its failure:
:class:`RunFailed`, which the harness records in the run's ``error`` (a plugged-in algorithm
calling ``sys.exit(0)`` once made the whole benchmark exit 0 with nothing written). A Ctrl-C
or a SIGTERM sent to the benchmark is not the algorithm's: it stops the run
(:mod:`lbm_bench._interrupts` tells them apart).

With a time limit (``timeout``, ``lbm-bench benchmark --timeout SECONDS``), the algorithm runs in
a child process of its own (a fresh interpreter, ``python -m lbm_bench.scoring.fit_process``),
which loads the table, resolves the algorithm by its name and sends the labels back (as
``.npz`` bytes, never a pickle); a child still fitting after
``timeout`` seconds is stopped and the run fails as timed out. The limit counts the fit only,
not the loading of the table. The child also isolates the benchmark from an algorithm that
ends its process (``os._exit``, a crash): the run fails with the child's exit status. The
child leads a process group of its own, so that whatever the algorithm starts (a solver's
subprocess, a ``sleep``) is stopped with it when the run ends, however it ends; a child
whose parent is gone (the benchmark killed) stops by itself, with its group.
"""

from __future__ import annotations

import io
import os
import signal
import sys
import threading
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from lbm_bench._interrupts import watching
from lbm_bench.algorithms.catalog import CONTRACTS, GIVEN_COUNTS, Contract

__all__ = ["RunFailed", "algorithm_input", "failure_text", "family_keywords", "fit_labels"]

#: Seconds a stopped child has to end after SIGTERM before it is killed.
_STOP_GRACE = 2.0
#: Seconds between the checks of a child that its parent is still there.
_PARENT_CHECK = 0.5
#: The longest single wait for the child's pipe: a time limit of 1e10 s is waited for in steps
#: (``select`` refuses a timeout that far: "timestamp out of range").
_LONGEST_WAIT = 3600.0


class RunFailed(Exception):
    """An algorithm's run failed; the message is the run's ``error``."""


def failure_text(exc: BaseException) -> str:
    """``"ValueError: message"``, the way a run's ``error`` names what the algorithm raised
    (an exception that is not an ``Exception``, such as ``SystemExit``, says the algorithm raised
    it)."""
    text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return text if isinstance(exc, Exception) else f"{text} (raised by the algorithm)"


def family_keywords(name: str, fit: Any, table: Any, contract: Contract) -> dict[str, str]:
    """What the harness tells an algorithm of the table's family.

    A family that cannot be told from the entries' values (``inference_order`` None:
    categorical codes look like counts) is passed as ``kind=`` to the algorithms that
    take it (block CEM and VEM, and their selections); an algorithm that reads the
    entries as numbers is refused a table whose entries are unordered levels
    (``n_levels``), in one line suggesting the built-ins of its track (``contract``) that
    can read it.
    """
    from lbm_bench.algorithms import fits_family

    how = fits_family(fit, table.kind)
    if how == "values" and table.model.n_levels is not None:
        readers = contract.readers_of(table.kind)
        alternatives = ", ".join(
            readers[:-1]) + " or " + readers[-1] if len(readers) > 1 else "".join(readers)
        raise ValueError(
            f"{name} reads the entries as numbers, but the {table.kind} table holds "
            f"{table.model.n_levels} "
            f"unordered categories; use {alternatives} (or an algorithm taking a kind= keyword)"
        )
    if how == "kind" and table.model.family.estimation.inference_order is None:
        return {"kind": table.kind}
    return {}


def algorithm_input(fit: Any, table: Any) -> Any:
    """The table as an algorithm is given it: ``table.data`` (NaN at missing entries; a sparse
    table: explicit NaN values), or a NumPy masked array in the table's dtype for an algorithm
    that asks for one (attribute :data:`lbm_bench.algorithms.MASKED_INPUT`) when the dense
    table has missing entries."""
    from lbm_bench.algorithms.catalog import MASKED_INPUT
    from lbm_bench.models.data import TableData

    data = table.data
    if getattr(fit, MASKED_INPUT,
               False) and table.missing_mechanism is not None and not TableData.of(data).is_sparse:
        return table.masked_data()
    return data


def _prepare(name: str, track: str, table: Any) -> tuple[Any, Any, dict]:
    """The algorithm, the table as it is given it, and the family keywords (a refusal:
    ValueError)."""
    from lbm_bench.algorithms import resolve_algorithm

    _, fit = resolve_algorithm(name, track=track)
    family = family_keywords(name, fit, table, CONTRACTS[track])
    return fit, algorithm_input(fit, table), family


def _fit_here(fit: Any, data: Any, counts: Sequence[int], seed: int,
              family: dict) -> tuple[Any, Any, float]:
    """Call ``fit`` in this process: anything it raises becomes :class:`RunFailed`, except an
    interruption of this process (a Ctrl-C, a SIGTERM), which goes on."""
    with watching() as watch:
        start = time.perf_counter()
        try:
            rows, cols = fit(data, *counts, rng=np.random.default_rng(seed), **family)
        except BaseException as exc:
            if not watch.raised_by_code(exc):
                raise
            raise RunFailed(failure_text(exc)) from None
    return rows, cols, time.perf_counter() - start


def fit_labels(
    name: str,
    table: Any,
    counts: Sequence[int],
    seed: int,
    *,
    track: str = GIVEN_COUNTS.track,
    path: str | os.PathLike[str] | None = None,
    timeout: float | None = None,
) -> tuple[Any, Any, float]:
    """Fit the algorithm ``name`` of ``track`` to ``table``: its labels, as it returned them, and
    the seconds of the fit. Every track calls its algorithms here.

    ``counts`` are the numbers of clusters (known-clusters track) or their maxima
    (unknown-clusters); the algorithm gets the table as :func:`algorithm_input` says, the
    family keywords of :func:`family_keywords` and a Generator seeded by ``seed``.

    Parameters
    ----------
    name : str
        The algorithm (a registry name or ``module:function``).
    table : Table
        The table, loaded.
    counts : (int, int)
    seed : int
    track : str
        Where ``name`` is looked up.
    path : path, optional
        The table's file, which the child process loads (needed with ``timeout``).
    timeout : float, optional
        Seconds the fit may take, in a child process (None: in this process, no limit).

    Returns
    -------
    rows, cols : array-like
    seconds : float

    Raises
    ------
    RunFailed
        For anything the algorithm raised (``SystemExit`` included), a table it cannot read,
        a timeout, or a child process that ended without labels; an interruption of this
        process (Ctrl-C, SIGTERM) is raised as it is.
    """
    if timeout is None:
        try:
            fit, data, family = _prepare(name, track, table)
        except Exception as exc:  # a refused table: the run's failure, as any other
            raise RunFailed(failure_text(exc)) from None
        return _fit_here(fit, data, counts, seed, family)
    if path is None:
        raise ValueError("fit_labels needs the table's path to fit in a child process (timeout)")
    return _fit_in_child(name, track, str(path), [int(c) for c in counts], int(seed),
                         float(timeout))


# --------------------------------------------------------------------------- #
# The child process                                                           #
# --------------------------------------------------------------------------- #
#
# ``python -m lbm_bench.scoring.fit_process FD`` (which calls :func:`child_main`) reads its request
# (JSON) on stdin and writes to the pipe FD: ``S`` when the fit starts, then ``L`` and the labels as
# ``.npz``
# bytes, or ``E`` and the failure's text, then closes it. Its stdout and stderr are the
# benchmark's (an algorithm that prints prints as it would in the benchmark's process).


def _labels_bytes(rows: Any, cols: Any, seconds: float) -> bytes:
    """The labels as ``.npz`` bytes (no pickle: labels that are not arrays of numbers are
    refused); a masked array's mask goes with it (``<side>_mask``: ``.npz`` keeps no mask), so
    that the benchmark reads the labels as the algorithm returned them."""
    arrays = {}
    for side, labels in (("rows", rows), ("cols", cols)):
        if np.ma.isMaskedArray(labels):
            arrays[f"{side}_mask"] = np.ma.getmaskarray(labels)
            labels = np.ma.getdata(labels)
        try:
            array = np.asarray(labels)
        except (TypeError, ValueError) as exc:
            raise RunFailed(f"the algorithm's {side} are not an array of labels: {exc}") from None
        if array.dtype.kind not in "biuf":
            raise RunFailed(f"the algorithm's {side} are not numbers (dtype {array.dtype})")
        arrays[side] = array
    buffer = io.BytesIO()
    np.savez(buffer, **arrays, seconds=np.float64(seconds))
    return buffer.getvalue()


def _leave_with_parent() -> None:
    """End this process when the benchmark that started it is gone (killed): no fit outlives its
    run."""
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(_PARENT_CHECK)
        if os.getpgrp() == os.getpid():  # the leader of its own group: the algorithm's too
            os.killpg(os.getpid(), signal.SIGKILL)
        os._exit(1)

    threading.Thread(target=watch, daemon=True).start()


def child_main(fd: int) -> None:
    """The child's work: load, resolve, send ``S`` (the fit starts), fit, send the labels or the
    failure."""
    import json

    _leave_with_parent()
    with os.fdopen(fd, "wb", buffering=0) as out:
        try:
            request = json.loads(sys.stdin.read())
            sys.path[:] = request["sys_path"]
            from lbm_bench.storage import load_table

            table = load_table(request["path"])
            fit, data, family = _prepare(request["name"], request["track"], table)
            out.write(b"S")
            rows, cols, seconds = _fit_here(fit, data, request["counts"], request["seed"], family)
            message = b"L" + _labels_bytes(rows, cols, seconds)
        except RunFailed as exc:
            message = b"E" + str(exc).encode("utf-8", errors="replace")
        except BaseException as exc:  # the table or the algorithm could not be prepared
            message = b"E" + failure_text(exc).encode("utf-8", errors="replace")
        out.write(message)


def _fit_in_child(name: str, track: str, path: str, counts: list[int], seed: int,
                  timeout: float) -> tuple[Any, Any, float]:
    import json
    import subprocess

    request = json.dumps({
        "name": name, "track": track, "path": os.path.abspath(path), "counts": counts, "seed": seed,
        "sys_path": list(sys.path)
    })
    read_end, write_end = os.pipe()
    try:
        child = subprocess.Popen(
            [sys.executable, "-m", "lbm_bench.scoring.fit_process",
             str(write_end)], stdin=subprocess.PIPE, pass_fds=(write_end,),
            start_new_session=True)  # its group: the child and what the algorithm starts
    finally:
        os.close(write_end)
    with os.fdopen(read_end, "rb", buffering=0) as pipe:
        try:
            child.stdin.write(request.encode("utf-8"))
            child.stdin.close()
            message = _receive(pipe, 1, None)  # loading the table and importing: not timed
            if message == b"S":
                message = _receive(pipe, None, timeout)
            if message is None:
                raise RunFailed("TimeoutError: the fit ran longer than the time limit of "
                                f"{timeout:g} s; stopped")
        finally:
            _stop(child)
    if not message:
        raise RunFailed(f"the algorithm's process ended (exit status {child.returncode}) without "
                        "returning labels")
    kind, body = message[:1], message[1:]
    if kind == b"E":
        raise RunFailed(body.decode("utf-8", errors="replace"))
    with np.load(io.BytesIO(body), allow_pickle=False) as arrays:
        rows, cols = (np.ma.masked_array(arrays[side], mask=arrays[f"{side}_mask"])
                      if f"{side}_mask" in arrays else arrays[side] for side in ("rows", "cols"))
        return rows, cols, float(arrays["seconds"])


def _receive(pipe: Any, size: int | None, timeout: float | None) -> bytes | None:
    """Read ``size`` bytes of the child's pipe (None: until it closes), within ``timeout`` seconds
    (None: no limit); None when the time is over, fewer bytes when the pipe closes first."""
    import select

    deadline = None if timeout is None else time.monotonic() + timeout
    chunks: list[bytes] = []
    got = 0
    while size is None or got < size:
        left = None if deadline is None else deadline - time.monotonic()
        if left is not None and left <= 0:
            return None
        ready, _, _ = select.select([pipe], [], [], None if left is None else
                                    min(left, _LONGEST_WAIT))
        if not ready:
            continue
        chunk = pipe.read(1 << 16 if size is None else size - got)
        if not chunk:  # the child closed the pipe (finished, or ended)
            break
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def _stop(child: Any) -> None:
    """Stop the child and every process of its group (what the algorithm started: SIGTERM, then
    SIGKILL after a grace period), also when the child is done and the algorithm left a process
    behind, then reap the child. The group is signalled before the child is reaped, so that its
    number cannot be another process's meanwhile."""
    _signal_group(child.pid, signal.SIGTERM)
    if not _ended(child.pid, _STOP_GRACE):
        _signal_group(child.pid, signal.SIGKILL)
    _signal_group(child.pid, signal.SIGKILL)  # what outlived the child
    child.wait()


def _signal_group(group: int, signum: int) -> None:
    try:
        os.killpg(group, signum)
    except (ProcessLookupError, PermissionError):  # nothing left in the group
        pass


def _ended(pid: int, timeout: float) -> bool:
    """Whether the child ``pid`` ends within ``timeout`` seconds (left to be reaped)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
                return True
        except ChildProcessError:  # reaped already
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.02)
