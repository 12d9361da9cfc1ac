"""Where the workers run: local processes (loky), a Dask cluster, or threads of this process.

:func:`worker_backend` sets the backend, for the work run inside it, the same way
``lbm-bench build`` and ``generate`` do: ``"loky"`` runs ``n_jobs`` local worker
processes; ``"dask"`` connects to the Dask scheduler at ``scheduler``
(``tcp://host:8786``) or, without one, starts a local cluster of ``n_jobs``
single-threaded worker processes, and closes what it opened on exit. The tasks of
:mod:`lbm_bench.tasks.pool` then run there (loky when no backend is set).
:func:`in_threads` runs them as threads of this process instead, for tasks that share
its memory and whose kernels free the GIL. loky keeps its workers for the next task
list; :func:`stop_local_workers` and :func:`kill_local_workers` stop them where a
command ends. Randomness never depends on the backend or the number of workers: tasks
get their seeds from their identity (``SeedSequence`` children), not from a worker.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from lbm_bench._validation import check_choice, check_count
from lbm_bench.tasks.shipping import release_shipped

__all__ = ["BACKENDS", "CONNECT_TIMEOUT", "check_backend", "in_threads", "kill_local_workers",
           "local_backend", "reach_scheduler", "stop_local_workers", "usable_cores",
           "worker_backend", "worker_count"]

#: The backends :func:`worker_backend` accepts (``lbm-bench --backend``).
BACKENDS = ("loky", "dask")
_DASK_HINT = "pip install 'lbm-bench[dask]'"
#: joblib's backends whose workers run on this machine.
_LOCAL_BACKENDS = ("LokyBackend", "MultiprocessingBackend", "ThreadingBackend", "SequentialBackend")
#: Seconds a Dask scheduler has to accept a connection and greet it (:func:`reach_scheduler`),
#: and the client to connect, before the work is refused.
CONNECT_TIMEOUT = 10.0
#: A Dask scheduler greets a connection first: a message whose first 8 bytes are its length
#: (little-endian), a few hundred bytes; anything longer is not a scheduler's greeting.
_GREETING_BYTES = 1 << 20
_SCHEDULER_FORM = "tcp://HOST:PORT, as dask-scheduler prints it"


def _tcp_location(scheduler: str) -> tuple[str, int] | None:
    """``(host, port)`` of a TCP scheduler address (``tcp://host:port`` or ``host:port``), None for
    another of Dask's protocols (``tls://``, ``ws://``...); ValueError naming ``scheduler`` for
    an address that is neither."""
    if not isinstance(scheduler, str) or not scheduler.strip():
        raise ValueError(f"scheduler must be an address ({_SCHEDULER_FORM}), got {scheduler!r}")
    protocol, separator, location = scheduler.partition("://")
    if not separator:
        protocol, location = "tcp", scheduler
    if protocol != "tcp":
        return None
    host, colon, port = location.rpartition(":")
    host = host.strip("[]")  # an IPv6 address: tcp://[::1]:8786
    if not colon or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"scheduler={scheduler!r} is not the address of a Dask scheduler "
                         f"({_SCHEDULER_FORM})")
    return host, int(port)


def reach_scheduler(scheduler: str, timeout: float | None = None) -> None:
    """Refuse, before the work and before anything is written, a scheduler address where no Dask
    scheduler answers within ``timeout`` seconds (default :data:`CONNECT_TIMEOUT`): nothing
    listening, a server that accepts and never speaks, another protocol's server (an HTTP
    server, whose reply Dask read as the length of a message of exabytes). A scheduler greets
    every connection first; this reads the length of its greeting and closes. Addresses of
    Dask's other protocols (``tls://``...) are left to the client's own timeout.

    Raises
    ------
    ValueError
        Naming ``scheduler``, in one line.
    """
    import socket
    import struct

    location = _tcp_location(scheduler)
    if location is None:
        return
    timeout = CONNECT_TIMEOUT if timeout is None else timeout
    where = f"scheduler={scheduler!r}"
    try:
        with socket.create_connection(location, timeout=timeout) as connection:
            header = b""
            while len(header) < 8:
                chunk = connection.recv(8 - len(header))
                if not chunk:
                    raise ValueError(f"{where} closed the connection without answering as a Dask "
                                     "scheduler")
                header += chunk
    except TimeoutError:
        raise ValueError(f"{where}: no Dask scheduler answered within {timeout:g} s (connection "
                         "timed out)") from None
    except OSError as exc:
        reason = (exc.strerror or str(exc)).lower()
        raise ValueError(f"{where}: could not connect ({reason})") from None
    (length,) = struct.unpack("<Q", header)
    if not 0 < length <= _GREETING_BYTES:
        raise ValueError(f"{where} answered, but not as a Dask scheduler (is it the scheduler's "
                         "address, not its dashboard's?)")


def check_backend(backend: str, n_jobs: int, scheduler: str | None) -> tuple[str, int, str | None]:
    """Validated ``(backend, n_jobs, scheduler)``: the arguments of :func:`worker_backend`.

    Raises
    ------
    ValueError
        Naming the bad argument: a backend not in :data:`BACKENDS`, ``n_jobs`` below 1, a
        scheduler address with another backend than ``"dask"``, or one that is not an address.
    """
    check_choice("backend", backend, BACKENDS)
    n_jobs = check_count("n_jobs", n_jobs)
    if scheduler is not None and backend != "dask":
        raise ValueError(f"a scheduler address needs backend='dask', got backend={backend!r}")
    if scheduler is not None:
        _tcp_location(scheduler)
    return backend, n_jobs, scheduler


@contextlib.contextmanager
def worker_backend(backend: str = "loky", n_jobs: int = 1,
                   scheduler: str | None = None) -> Iterator[None]:
    """Run the enclosed tasks (:mod:`lbm_bench.tasks.pool`) on ``backend`` with ``n_jobs`` workers.

    Parameters
    ----------
    backend : {"loky", "dask"}, default="loky"
    n_jobs : int, default=1
        Local workers (loky), or workers of the local Dask cluster.
    scheduler : str, optional
        Address of a running Dask scheduler (dask only).

    Raises
    ------
    ImportError
        For the dask backend without dask.distributed (``pip install 'lbm-bench[dask]'``).
    ValueError
        For a scheduler that does not answer (:func:`reach_scheduler`), before the work.
    """
    import joblib

    backend, n_jobs, scheduler = check_backend(backend, n_jobs, scheduler)
    if backend == "loky":
        with joblib.parallel_config(backend="loky", n_jobs=n_jobs):
            yield
        return
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        raise ImportError(f"the dask backend needs dask.distributed: {_DASK_HINT}") from None
    cluster = None
    if scheduler:
        reach_scheduler(scheduler)
        client = Client(scheduler, timeout=CONNECT_TIMEOUT)
    else:
        cluster = LocalCluster(n_workers=worker_count(n_jobs, local=True), threads_per_worker=1,
                               processes=True,
                               host="127.0.0.1", dashboard_address=None)
        client = Client(cluster)
    try:
        with joblib.parallel_config(backend="dask", n_jobs=n_jobs):
            yield
    finally:
        release_shipped()  # the last tables' copies, before the client that holds them closes
        client.close()
        if cluster is not None:
            cluster.close()


def usable_cores() -> int:
    """The cores this process may run on: its CPU affinity and its control group's CPU quota
    (joblib's ``cpu_count``), at least 1."""
    from joblib import cpu_count

    return max(1, int(cpu_count()))


def worker_count(jobs: int, n_tasks: int | None = None, *, local: bool | None = None) -> int:
    """The workers that ``jobs`` starts: never more than the tasks (``n_tasks``, when known) and,
    on this machine, than its usable cores (:func:`usable_cores`). ``--jobs 200`` once started
    200 processes for 12 tasks on 2 cores (each with its copy of the work's inputs); the same
    seed gives the same bytes on any number of workers, so the cap changes no result.

    Parameters
    ----------
    jobs : int
        Workers asked for (at least 1).
    n_tasks : int, optional
        Tasks to run (0 counts as 1).
    local : bool, optional
        Whether the workers run on this machine; default: whether the backend in force does
        (:func:`local_backend`; a Dask cluster at a scheduler's address has cores of its own).

    Examples
    --------
    >>> worker_count(200, 3, local=False)  # a Dask cluster's workers: at most the tasks
    3
    >>> worker_count(200, local=True) == usable_cores()
    True
    """
    workers = check_count("jobs", jobs)
    if n_tasks is not None:
        workers = min(workers, max(1, int(n_tasks)))
    if local if local is not None else local_backend():
        workers = min(workers, usable_cores())
    return workers


def in_threads() -> contextlib.AbstractContextManager:
    """Run the enclosed tasks (:mod:`lbm_bench.tasks.pool`) as threads of this process: they
    share its memory (no input is copied or memory-mapped), for kernels that free the GIL
    (the floor's descents on label sides already in memory).

    Returns
    -------
    context manager
    """
    from joblib import parallel_config

    return parallel_config(backend="threading")


def local_backend() -> bool:
    """Whether the backend in force runs its workers on this machine (loky, the default;
    multiprocessing; threads), so that they can write to this machine's files."""
    from joblib.parallel import get_active_backend

    backend = type(get_active_backend()[0]).__name__
    return backend in _LOCAL_BACKENDS


def stop_local_workers(*, kill: bool = False) -> None:
    """Stop the local worker processes joblib keeps for reuse (loky) and wait for them.

    joblib leaves its workers running after the work, for the next call, and stops
    them from an exit hook of the interpreter. The command line calls this before it
    returns instead, where its Ctrl-C handling applies: an interrupt while the
    workers stop then prints its one line ("interrupted"), not a traceback from the
    exit hook. Does nothing when no worker was started.

    With ``kill=True`` (a command stopped by Ctrl-C or SIGTERM), workers still busy are
    killed rather than awaited, and the pool is taken down before the interpreter exits:
    left to the exit hook, the killed pool's semaphores were reported as leaked by
    loky's resource tracker, two warnings after the command's one line.
    """
    from joblib.externals.loky import reusable_executor

    executor = getattr(reusable_executor, "_executor", None)
    if executor is not None:
        executor.shutdown(wait=True, kill_workers=kill)


def kill_local_workers() -> None:
    """:func:`stop_local_workers` for a stopped command (Ctrl-C, SIGTERM): workers still busy
    are killed, before the command prints its one line; a second signal meanwhile changes
    nothing (the command is stopping already)."""
    try:
        stop_local_workers(kill=True)
    except BaseException:  # noqa: BLE001 - stopping: whatever happens, the one line follows
        pass
