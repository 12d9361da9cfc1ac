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

__all__ = ["BACKENDS", "check_backend", "in_threads", "kill_local_workers", "local_backend",
           "stop_local_workers", "worker_backend"]

#: The backends :func:`worker_backend` accepts (``lbm-bench --backend``).
BACKENDS = ("loky", "dask")
_DASK_HINT = "pip install 'lbm-bench[dask]'"
#: joblib's backends whose workers run on this machine.
_LOCAL_BACKENDS = ("LokyBackend", "MultiprocessingBackend", "ThreadingBackend", "SequentialBackend")


def check_backend(backend: str, n_jobs: int, scheduler: str | None) -> tuple[str, int, str | None]:
    """Validated ``(backend, n_jobs, scheduler)``: the arguments of :func:`worker_backend`.

    Raises
    ------
    ValueError
        Naming the bad argument: a backend not in :data:`BACKENDS`, ``n_jobs`` below 1, or a
        scheduler address with another backend than ``"dask"``.
    """
    check_choice("backend", backend, BACKENDS)
    n_jobs = check_count("n_jobs", n_jobs)
    if scheduler is not None and backend != "dask":
        raise ValueError(f"a scheduler address needs backend='dask', got backend={backend!r}")
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
        client = Client(scheduler)
    else:
        cluster = LocalCluster(n_workers=n_jobs, threads_per_worker=1, processes=True,
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
