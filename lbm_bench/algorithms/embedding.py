"""Low-rank embeddings of the rows and the columns of a table: where the model selection starts.

Block CEM started from k-means++ seeds on the raw rows and columns (the starts of
:func:`~lbm_bench.algorithms.fit_lbm`) often stops far from the best labelling of a
noisy table: on a 300x200 Poisson table with 3x3 clusters at a floor of 10%, ten such
starts end 78 ICL units below the table's Bayes labels (excess risk 0.43), while ten
starts from k-means on the leading singular vectors reach them (excess 0.006). The
model selection (:mod:`lbm_bench.algorithms.selection`) therefore seeds its starts and
splits its clusters on these coordinates: each row's (column's) projection on the
leading singular vectors of the column-centred table, ``U_r S_r``.

A sparse table stays sparse (the centring is applied implicitly, as a rank-one
correction of the products ARPACK makes), and the starting vector of ARPACK is fixed,
so that the embedding is the same at every call.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.sparse.linalg import LinearOperator, svds

from lbm_bench.models.data import TableData

__all__ = ["DENSE_SVD_LIMIT", "embed_rows"]

#: Tables whose smaller side is at most this are embedded by a dense SVD; larger ones, or
#: sparse ones, by ARPACK (``scipy.sparse.linalg.svds``).
DENSE_SVD_LIMIT = 600


def embed_rows(points: Any, rank: int) -> np.ndarray:
    """Coordinates of the rows of ``points`` (n, D), dense or sparse, on the ``rank`` leading
    singular vectors of the column-centred matrix, scaled by the singular values: (n, r)
    with ``r = min(rank, n - 1, D - 1)`` (at least 1).

    Examples
    --------
    >>> X = np.array([[0.0, 0.0, 5.0], [0.1, 0.0, 5.0], [5.0, 5.0, 0.0], [5.0, 5.1, 0.1]])
    >>> coords = embed_rows(X, 1)
    >>> coords.shape, bool(abs(coords[0, 0] - coords[1, 0]) < abs(coords[0, 0] - coords[2, 0]))
    ((4, 1), True)
    """
    data = TableData.of(points).as_float()
    n, width = data.shape
    r = max(1, min(rank, n - 1, width - 1))
    means = data.col_totals() / n
    # every row the same (an all-zero table): nothing to embed,
    if _centred_squares(data, means) <= 0:
        # and ARPACK, whose every product is zero, would fail ("starting vector is zero")
        return np.zeros((n, r))
    if not data.is_sparse and min(n, width) <= DENSE_SVD_LIMIT:
        u, s, _ = np.linalg.svd(data.table - means, full_matrices=False)
        return u[:, :r] * s[:r]
    table = data.table
    operator = LinearOperator(
        (n, width), dtype=np.float64,
        matvec=lambda v: np.asarray(table @ v).ravel() - means @ np.ravel(v),
        rmatvec=lambda u: np.asarray(table.T @ u).ravel() - means * np.sum(u),
    )
    v0 = np.random.default_rng(0).standard_normal(min(n, width))
    u, s, _ = svds(operator, k=r, v0=v0)
    order = np.argsort(s)[::-1]
    return u[:, order] * s[order]


def _centred_squares(data: TableData, means: np.ndarray) -> float:
    """The sum of squares of the column-centred table (0 when its rows are all the same), in
    one pass over the stored entries: ``sum x^2 - n sum mean^2``, cut at the rounding of the first
    term."""
    table = data.table
    squares = float(table.multiply(table).sum()) if data.is_sparse else float(
        np.square(table).sum())
    centred = squares - data.shape[0] * float(np.square(means).sum())
    return centred if centred > 1e-12 * squares else 0.0
