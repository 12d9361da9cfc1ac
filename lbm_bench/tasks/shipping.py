"""A task's large input crosses to the workers once, not once per task.

On loky, joblib memory-maps every array above 1 MiB found in a task's arguments (the
dense table, the CSR arrays of a sparse one, a mask): the parent writes it to a file (in
``/dev/shm`` when it can) once per task list and array, and every task gets a reference
to that file, whose pages the workers share. On a Dask cluster, :func:`shipped` scatters
such an input once to every worker (``broadcast=True``) and the tasks take its future:
the parent keeps the futures of the last few inputs it shipped, keyed by their content,
so the MAP's starts, the screening and certifying runs of one table reuse one copy per
worker and nothing large travels in the task graph. :func:`release_shipped` drops them
when the cluster's client closes (:func:`~lbm_bench.tasks.backends.worker_backend`).
"""

from __future__ import annotations

import contextlib
import hashlib
import pickle
from collections import OrderedDict
from typing import Any

__all__ = ["SHIP_BYTES", "release_shipped", "shipped"]

#: Pickled bytes from which :func:`shipped` scatters a task's input to a Dask cluster
#: rather than sending it in the task graph.
SHIP_BYTES = 2**20
#: Inputs whose futures :func:`shipped` keeps for reuse: the last ones shipped (a table and
#: its model); older ones are released from the workers.
_KEEP_SHIPPED = 2
_SHIPPED: OrderedDict = OrderedDict()


def shipped(value: Any, *, broadcast: bool = True, reuse: bool = True) -> Any:
    """``value``, or on a Dask cluster (the backend in force) the future of ``value``
    scattered once, to give to tasks in its place.

    On Dask, an input of at least :data:`SHIP_BYTES` pickled bytes is scattered
    (``hash=False``; to every worker with ``broadcast``, else to one, the others fetching it
    when a task needs it) and its future returned; the futures of the last inputs shipped
    are kept, keyed by the input's content (a digest of its pickle, arrays read in place),
    so an input shipped again (the same table for its MAP starts, then its Gibbs runs)
    does not cross again; with ``reuse=False`` (an input of one call) it is not kept. Anywhere
    else (loky, which memory-maps large arrays, threads, or in this process) ``value`` itself.

    Parameters
    ----------
    value : object
        A task's input.
    broadcast : bool, default=True
        Scatter to every worker (else to one).
    reuse : bool, default=True
        Keep the future for the next call that ships the same content.

    Returns
    -------
    object
        ``value`` or its future.
    """
    client = _dask_client()
    if client is None:
        return value
    buffers: list[pickle.PickleBuffer] = []
    try:
        head = pickle.dumps(value, protocol=5, buffer_callback=buffers.append)
    except (pickle.PicklingError, TypeError, AttributeError):  # cloudpickle's to send, as before
        return value
    if len(head) + sum(memoryview(b).nbytes for b in buffers) < SHIP_BYTES:
        return value
    if not reuse:  # in a list: a tuple or dict given alone would be scattered item by item
        return client.scatter([value], broadcast=broadcast, hash=False)[0]
    digest = hashlib.sha256(head)
    for buffer in buffers:
        digest.update(memoryview(buffer).cast("B"))
    for stale in [key for key in _SHIPPED if key[0] != id(client)]:  # another cluster's futures
        del _SHIPPED[stale]
    key = (id(client), broadcast, digest.hexdigest())
    if key in _SHIPPED and _SHIPPED[key].status == "finished":
        _SHIPPED.move_to_end(key)
        return _SHIPPED[key]
    _SHIPPED[key] = client.scatter([value], broadcast=broadcast, hash=False)[0]
    while len(_SHIPPED) > _KEEP_SHIPPED:
        _SHIPPED.popitem(last=False)[1].release()
    return _SHIPPED[key]


def release_shipped() -> None:
    """Release every input :func:`shipped` keeps (their copies on the workers are dropped):
    called when the Dask client of :func:`~lbm_bench.tasks.backends.worker_backend` closes."""
    while _SHIPPED:
        with contextlib.suppress(Exception):  # a closed client's futures are gone already
            _SHIPPED.popitem()[1].release()


def _dask_client() -> Any:
    """The Dask client of the backend in force, or None (loky, threads, no backend)."""
    from joblib.parallel import get_active_backend

    backend, _ = get_active_backend()
    client = getattr(backend, "client", None)
    if client is None or type(backend).__name__ != "DaskDistributedBackend":
        return None
    return client if client.status == "running" else None
