"""Spectral co-clustering baselines: thin wrappers of scikit-learn's methods.

scikit-learn is an optional extra, imported when a method is called: without
it, :func:`spectral_coclustering` and :func:`spectral_biclustering` raise an
``ImportError`` that says ``pip install 'lbm-bench[sklearn]'``.

Both need a complete table: **missing entries** (NaN or a masked array) are
imputed by the mean of their column's observed entries first (the baseline's
choice, not a model of the missing entries).
"""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from lbm_bench._docstrings import fill_doc
from lbm_bench.algorithms.inputs import check_incomplete_inputs, imputed_table
from lbm_bench.algorithms.kmeans import kmeans, onehot
from lbm_bench.metrics.contingency_tables import compact_labels
from lbm_bench.models.checks import refuse_sparse

__all__ = ["spectral_biclustering", "spectral_coclustering"]

_SKLEARN_HINT = "pip install 'lbm-bench[sklearn]'"


def _spectral_inputs(
    X: Any, n_row_clusters: Any, n_col_clusters: Any, algorithm: str
) -> tuple[Any, np.ndarray, int, int]:
    """Validated inputs of the spectral methods: (sklearn.cluster, data, g, m)."""
    refuse_sparse(X, algorithm, reason="empty rows and columns get a constant added to every "
                                       "entry, which densifies it",
                  remedy="use cem, vem, double-kmeans or sparsebm, or densify a small table with "
                         "X.toarray()")
    data, g, m = check_incomplete_inputs(X, n_row_clusters, n_col_clusters)
    table = imputed_table(data) if data.n_missing else data.table
    if min(table.shape) < 2:
        raise ValueError(f"X must have at least 2 rows and 2 columns, got shape {table.shape}")
    return _import_sklearn_cluster(), _nonnegative(table), g, m


def _import_sklearn_cluster() -> Any:
    try:
        return importlib.import_module("sklearn.cluster")
    except ImportError as exc:
        raise ImportError(
            f"the spectral co-clustering algorithms need scikit-learn: {_SKLEARN_HINT}"
        ) from exc


def _nonnegative(table: np.ndarray) -> np.ndarray:
    """The table as float64, non-negative with no all-zero row or column.

    A table with negative entries is shifted by its minimum; when a row or a
    column then sums to zero (sparse binary tables), ``1e-6`` times the mean
    entry (or ``1e-6`` for an all-zero table) is added to every entry, since
    the spectral normalisations divide by the row and column sums.
    """
    data = table.astype(np.float64)
    low = data.min()
    if low < 0:
        data = data - low
    if np.any(data.sum(0) == 0) or np.any(data.sum(1) == 0):
        mean = data.mean()
        data = data + 1e-6 * (mean if mean > 0 else 1.0)
    return data


def _seed(rng: np.random.Generator) -> int:
    return int(rng.integers(2**31 - 1))


def _merge_clusters(
    labels: np.ndarray, n_target: int, profiles: np.ndarray, rng: np.random.Generator
) -> np.ndarray:
    """Merge the clusters of ``labels`` into ``n_target`` groups by k-means on ``profiles``.

    ``profiles`` (n_clusters, q) describes each cluster (here its mean block
    values across the clusters of the other side).
    """
    groups = kmeans(profiles, n_target, n_init=10, max_iter=300, rng=rng)
    return groups[labels]


def _compact_labels(fitted: Any) -> tuple[np.ndarray, np.ndarray]:
    """A fitted scikit-learn co-clustering's row and column labels as 0..k-1, int64."""
    return compact_labels(fitted.row_labels_), compact_labels(fitted.column_labels_)


def _block_means(data: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """Mean of ``data`` per (row cluster, column cluster) of compact labels; 0 when empty."""
    R, C = onehot(rows, rows.max() + 1), onehot(cols, cols.max() + 1)
    sizes = np.outer(R.sum(0), C.sum(0))
    return (R.T @ data @ C) / np.maximum(sizes, 1.0)


@fill_doc
def spectral_coclustering(
    X: ArrayLike,
    n_row_clusters: int,
    n_col_clusters: int,
    *,
    rng: np.random.Generator | int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Dhillon's spectral co-clustering (scikit-learn's ``SpectralCoclustering``).

    The method finds ``k`` co-clusters, as many row as column clusters: with
    ``n_row_clusters != n_col_clusters`` it runs with ``k = max(g, m)``
    (capped by the table's smaller dimension) and the side that asked for
    fewer clusters has its ``k`` clusters merged into the requested number
    by k-means on their block-mean profiles, so that no side returns more
    clusters than requested. The method needs non-negative data: a table
    with negative entries (Gaussian) is shifted by its minimum, and a tiny
    constant is added when a row or column sums to zero. With ``k = 1`` both
    partitions are trivial. Needs 2 rows and 2 columns or more.

    {{sklearn_algorithm}}
    """
    rng = np.random.default_rng(rng)
    cluster, data, g, m = _spectral_inputs(X, n_row_clusters, n_col_clusters,
                                           "spectral-coclustering")
    k = min(max(g, m), *data.shape)
    if k == 1:
        return np.zeros(data.shape[0], dtype=np.int64), np.zeros(data.shape[1], dtype=np.int64)
    fitted = cluster.SpectralCoclustering(n_clusters=k, random_state=_seed(rng)).fit(data)
    rows, cols = _compact_labels(fitted)
    means = _block_means(data, rows, cols)
    if rows.max() + 1 > g:
        rows = _merge_clusters(rows, g, means, rng)
    if cols.max() + 1 > m:
        cols = _merge_clusters(cols, m, means.T, rng)
    return rows, cols


@fill_doc
def spectral_biclustering(
    X: ArrayLike,
    n_row_clusters: int,
    n_col_clusters: int,
    *,
    rng: np.random.Generator | int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Kluger et al.'s spectral biclustering (scikit-learn's ``SpectralBiclustering``).

    Runs ``SpectralBiclustering(n_clusters=(g, m))`` (checkerboard structure,
    bistochastic normalisation) on the table, shifted by its minimum when it
    has negative entries (plus a tiny constant when a row or column sums to
    zero). The numbers of singular vectors (6) and of kept ones (3) are
    reduced on tables too small for them. Needs 2 rows and 2 columns or more.

    {{sklearn_algorithm}}
    """
    rng = np.random.default_rng(rng)
    cluster, data, g, m = _spectral_inputs(X, n_row_clusters, n_col_clusters,
                                           "spectral-biclustering")
    n_components = max(1, min(6, min(data.shape) - 1))
    model = cluster.SpectralBiclustering(
        n_clusters=(g, m),
        n_components=n_components,
        n_best=min(3, n_components),
        random_state=_seed(rng),
    ).fit(data)
    return _compact_labels(model)
