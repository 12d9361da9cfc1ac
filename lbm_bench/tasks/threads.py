"""BLAS thread pinning: one helper for every task that must compute the same bytes anywhere.

A table's floating-point results may depend on how many threads the BLAS splits a
product over. Tasks run in worker processes (a release build's tables, the
calibration's tables spread over ``jobs``) pin BLAS to one thread (the ``pin`` of
:mod:`lbm_bench.tasks.pool`, or this context around the work), so that an
in-process run, loky workers and Dask workers compute the same bytes and do not
oversubscribe the cores. ``threadpoolctl`` does the pinning when it is installed
(it comes with the ``dask`` and ``test`` extras and with scikit-learn); without it
the context does nothing (docs/releases.md).
"""

from __future__ import annotations

import contextlib
from typing import Any

__all__ = ["single_blas_thread"]


def single_blas_thread() -> Any:
    """A context manager limiting BLAS to one thread (threadpoolctl), or a no-op without it."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - documented in docs/releases.md
        return contextlib.nullcontext()
    return threadpool_limits(limits=1, user_api="blas")
