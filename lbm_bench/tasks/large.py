"""The large-table threshold: from how many entries a table's own work spreads over the workers.

Below :data:`LARGE_TABLE_ENTRIES` entries (rows times columns) a table's chains run
in one batched loop, its MAP's starts in one process and its floor's descents one
after the other, whatever ``jobs``; a release build makes such a table one task of its
pool, and ``verify`` checks it in a worker. From it, the chains, the starts and the
descents may run as tasks over the workers (:mod:`lbm_bench.tasks.pool`), a build
certifies the table in its own process over the whole pool, and ``verify`` checks it
in its own process, one at a time, so that two large tables' label sets are never in
memory at once. Every one of these decisions asks :func:`is_large`.
"""

from __future__ import annotations

__all__ = ["LARGE_TABLE_ENTRIES", "is_large"]

#: Entries (rows times columns) from which a table is large (:func:`is_large`).
LARGE_TABLE_ENTRIES = 2**22


def is_large(n_rows: int, n_cols: int) -> bool:
    """Whether a table of ``n_rows`` by ``n_cols`` entries is large: at least
    :data:`LARGE_TABLE_ENTRIES` entries.

    Parameters
    ----------
    n_rows, n_cols : int

    Returns
    -------
    bool

    Examples
    --------
    >>> is_large(2048, 2048), is_large(2048, 2047)
    (True, False)
    """
    return n_rows * n_cols >= LARGE_TABLE_ENTRIES
