"""The joblib backends of parallel work: local processes (loky) or a Dask cluster.

:func:`joblib_backend` configures joblib, for the code run inside it, the same
way ``lbm-bench build`` does for releases: ``"loky"`` runs ``n_jobs`` local
worker processes; ``"dask"`` connects to the Dask scheduler at ``scheduler``
(``tcp://host:8786``) or, without one, starts a local cluster of ``n_jobs``
single-threaded worker processes, and closes what it opened on exit. Code that
calls ``joblib.Parallel`` without naming a backend then runs there.
Randomness never depends on the backend or the number of workers: tasks get
their seeds from their identity (``SeedSequence`` children), not from a worker.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from lbm_bench._validation import check_choice, check_count
from lbm_bench.inference.chains import release_shipped

__all__ = ["BACKENDS", "check_backend", "joblib_backend", "kill_local_workers", "stop_local_workers"]

#: The backends ``--backend`` accepts.
BACKENDS = ("loky", "dask")
_DASK_HINT = "pip install 'lbm-bench[dask]'"


def check_backend(backend: str, n_jobs: int, scheduler: str | None) -> tuple[str, int, str | None]:
    """Validated ``(backend, n_jobs, scheduler)``; ValueError naming the bad one."""
    check_choice("backend", backend, BACKENDS)
    n_jobs = check_count("n_jobs", n_jobs)
    if scheduler is not None and backend != "dask":
        raise ValueError("a scheduler address needs the dask backend (--backend dask)")
    return backend, n_jobs, scheduler


@contextlib.contextmanager
def joblib_backend(backend: str = "loky", n_jobs: int = 1, scheduler: str | None = None) -> Iterator[None]:
    """Run the enclosed joblib work on ``backend`` with ``n_jobs`` workers.

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
        cluster = LocalCluster(n_workers=n_jobs, threads_per_worker=1, processes=True, host="127.0.0.1",
                               dashboard_address=None)
        client = Client(cluster)
    try:
        with joblib.parallel_config(backend="dask", n_jobs=n_jobs):
            yield
    finally:
        release_shipped()  # the last tables' copies, before the client that holds them closes
        client.close()
        if cluster is not None:
            cluster.close()


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
