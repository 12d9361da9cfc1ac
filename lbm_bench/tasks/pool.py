"""Running tasks: the one module of the package that hands work to joblib.

A task is ``function(*call)`` for one ``call`` (a tuple of arguments) of a list. The
tasks run over the workers of the backend in force (:mod:`lbm_bench.tasks.backends`:
loky processes by default, a Dask cluster, or threads), each call's arguments given to
the worker as they are (so that joblib memory-maps a large array on loky, and a
:func:`~lbm_bench.tasks.shipping.shipped` input is a future on Dask):

- :func:`run_tasks`: every result, in the calls' order;
- :func:`iter_tasks`: the results one by one, in the calls' order or as they come
  (``as_done``), while later tasks still run;
- :class:`TaskPool`: one pool for a series of task lists (a release build's tables and
  then its verification, a model selection's rounds of EM runs);
- :func:`run_bundles`: items cut into bundles (:mod:`lbm_bench.tasks.bundles`), one task
  each, with inputs they all share crossing to the workers once; in this process when
  there is one bundle.

Every entry point starts at most one worker per task and, on this machine, per usable core
(:func:`~lbm_bench.tasks.backends.worker_count`), whatever ``jobs`` asks: the one place where
the workers are capped.

Two options say how a task runs in its worker: ``pin`` runs it on one BLAS thread
(:func:`~lbm_bench.tasks.threads.single_blas_thread`: the same float sums in any
process), ``trim`` gives the heap's free pages back after it
(:func:`~lbm_bench.tasks.heap.release_free_memory`, no collection: a worker lives on
between tasks). Every task runs under the settings in force where it was handed over
(:mod:`lbm_bench.tasks.carried`: the sparse kernel chosen for a call, say).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from lbm_bench.tasks.backends import worker_count
from lbm_bench.tasks.bundles import even_bundles
from lbm_bench.tasks.carried import carried_in, carried_settings
from lbm_bench.tasks.heap import release_free_memory
from lbm_bench.tasks.shipping import shipped
from lbm_bench.tasks.threads import single_blas_thread

__all__ = ["TaskPool", "iter_tasks", "run_bundles", "run_tasks"]


def run_tasks(function: Callable[..., Any], calls: Iterable[tuple], jobs: int, *, pin: bool = False,
              trim: bool = False) -> list:
    """``[function(*call) for call in calls]``, over ``jobs`` workers of the backend in force.

    Parameters
    ----------
    function : callable
        A module-level function (workers import it by name).
    calls : iterable of tuple
        Each task's positional arguments.
    jobs : int
        Workers, at most (:func:`~lbm_bench.tasks.backends.worker_count`: no more than the
        tasks and the usable cores).
    pin : bool, default=False
        Run each task on one BLAS thread.
    trim : bool, default=False
        Give the heap's free pages back after each task.

    Returns
    -------
    list
        The results, in the order of ``calls``.
    """
    from joblib import Parallel

    calls = list(calls)
    return Parallel(n_jobs=worker_count(jobs, len(calls)))(
        _delayed(function, call, pin, trim) for call in calls)


def iter_tasks(function: Callable[..., Any], calls: Iterable[tuple], jobs: int, *,
               as_done: bool = False, pin: bool = False, trim: bool = False) -> Iterator:
    """:func:`run_tasks`, its results yielded one by one while later tasks run: in the order of
    ``calls``, or with ``as_done`` in the order the tasks finish (the results must then say
    which call they answer). Closing the iterator early cancels the tasks not yet started.

    Parameters
    ----------
    function, calls, jobs, pin, trim
        As :func:`run_tasks`.
    as_done : bool, default=False
        Yield each result when its task finishes.

    Returns
    -------
    iterator
    """
    from joblib import Parallel

    order = "generator_unordered" if as_done else "generator"
    calls = list(calls)
    tasks = (_delayed(function, call, pin, trim) for call in calls)
    return Parallel(n_jobs=worker_count(jobs, len(calls)), return_as=order)(tasks)


class TaskPool:
    """One pool of ``jobs`` workers for a series of task lists.

    Used as a context manager (``with TaskPool(jobs) as pool``), the workers and the files
    that memory-map their inputs are kept from one list to the next until the block ends;
    without it, each list is a call of its own on the backend in force (the workers that
    loky keeps for reuse serve them all).

    Parameters
    ----------
    jobs : int
        Workers, at most (:func:`~lbm_bench.tasks.backends.worker_count`).
    backend : {"loky"}, optional
        Run on local processes whatever the backend in force; default: the backend in force.
    most_tasks : int, optional
        The most tasks any of its lists holds, when known (no more workers than that).
    """

    def __init__(self, jobs: int, *, backend: str | None = None,
                 most_tasks: int | None = None) -> None:
        from joblib import Parallel

        workers = worker_count(jobs, most_tasks, local=True if backend == "loky" else None)
        self._parallel = Parallel(n_jobs=workers, backend=backend,
                                  return_as="generator_unordered")

    def __enter__(self) -> TaskPool:
        self._parallel.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._parallel.__exit__(*exc)

    def as_done(self, function: Callable[..., Any], calls: Iterable[tuple], *, pin: bool = False,
                trim: bool = False) -> Iterator:
        """``function(*call)`` for each call, yielded as the tasks finish (:func:`iter_tasks`
        with ``as_done``)."""
        return self._parallel(_delayed(function, call, pin, trim) for call in calls)

    def map(self, function: Callable[..., Any], calls: Sequence[tuple], *, pin: bool = False,
            trim: bool = False) -> list:
        """``[function(*call) for call in calls]`` (:func:`run_tasks`) on this pool: each result
        put in its call's place as the tasks finish. A call's arguments cross together, as one
        tuple (on Dask, a set among them is not scattered item by item)."""
        from joblib import delayed

        results: list = [None] * len(calls)
        settings = carried_settings()
        tasks = (delayed(_numbered)(index, function, pin, trim, settings, call)
                 for index, call in enumerate(calls))
        for index, result in self._parallel(tasks):
            results[index] = result
        return results


def run_bundles(task: Callable[..., list], items: Sequence[Any], jobs: int, *args: Any,
                shared: tuple = ()) -> list:
    """``task(*shared, bundle, *args)`` on ``min(jobs, len(items))`` contiguous bundles of
    ``items`` (:func:`~lbm_bench.tasks.bundles.even_bundles`), in this process for one bundle,
    else as tasks over the workers of the backend in force, each giving back the heap's free
    pages after it. With more than one item every bundle runs on one BLAS thread (in this
    process too: the same float sums whatever ``jobs``). The ``shared`` inputs cross to each
    worker once (:func:`~lbm_bench.tasks.shipping.shipped`; memory-mapped on loky).

    Parameters
    ----------
    task : callable
        Returns one result per item of its bundle.
    items : sequence
    jobs : int
        Workers.
    *args
        Further arguments of every task.
    shared : tuple, default=()
        The first arguments of every task, large inputs they all read.

    Returns
    -------
    list
        One result per item, in the order of ``items``.
    """
    n_tasks = min(jobs, len(items))
    bundles = [list(items[b.start:b.stop]) for b in even_bundles(len(items), n_tasks)]
    if n_tasks == 1:
        with single_blas_thread() if len(items) > 1 else contextlib.nullcontext():
            return task(*shared, bundles[0], *args)
    shared = tuple(shipped(value) for value in shared)
    calls = [(*shared, bundle, *args) for bundle in bundles]
    parts = run_tasks(task, calls, n_tasks, pin=True, trim=True)
    return [result for part in parts for result in part]


def _delayed(function: Callable[..., Any], call: tuple, pin: bool, trim: bool) -> Any:
    """joblib's delayed call of ``function(*call)``, through :func:`_task` when it pins, trims
    or carries settings (:mod:`lbm_bench.tasks.carried`). The arguments stay those of the
    call, one by one: joblib's Dask backend scatters each large one that can be weakly
    referenced (an array, an object; not a tuple, list or dict) once for all the tasks of the
    list, and a :func:`~lbm_bench.tasks.shipping.shipped` future among them is given as it is.
    (A set would be scattered item by item: give it inside a tuple, as :meth:`TaskPool.map`
    does with its calls.)"""
    from joblib import delayed

    settings = carried_settings()
    if pin or trim or settings:
        return delayed(_task)(function, pin, trim, settings, *call)
    return delayed(function)(*call)


def _task(function: Callable[..., Any], pin: bool, trim: bool, settings: dict[str, Any],
          *args: Any) -> Any:
    """``function(*args)`` in a worker, under the ``settings`` carried from where it was handed
    over: on one BLAS thread with ``pin``, then with ``trim`` the heap's free pages given back
    (whatever the task raised)."""
    try:
        with carried_in(settings), single_blas_thread() if pin else contextlib.nullcontext():
            return function(*args)
    finally:
        if trim:
            release_free_memory(collect=False)


def _numbered(index: int, function: Callable[..., Any], pin: bool, trim: bool,
              settings: dict[str, Any], call: tuple) -> tuple[int, Any]:
    """``(index, result)`` of :func:`_task` on the arguments ``call``: a result that comes back as
    its task finishes says which call it answers."""
    return index, _task(function, pin, trim, settings, *call)
