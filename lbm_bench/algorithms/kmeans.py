"""k-means: k-means++ seeding, the k-means used by the baselines, and double k-means.

:func:`double_kmeans` is the naive co-clustering baseline (k-means on the rows,
and separately on the columns). The k-means++ seeding also gives the X-only
starting partitions of block CEM and VEM (:func:`_seeded_labels`).

Why our own k-means (numpy: k-means++ seeding, Lloyd iterations until the
labels stop changing, empty clusters re-seeded, best of ``n_init`` runs) and
not a library's: ``python scripts/benchmarks/bench_kmeans.py`` runs it against
``scipy.cluster.vq.kmeans2(..., minit="++", rng=Generator)`` (best of 10
runs, as ours) and scikit-learn's ``KMeans(n_init=10)`` on the inputs of
double k-means (rows and columns of 3x3-cluster tables of 50x50 to 1000x1000,
k=3). Measured with ``python scripts/benchmarks/bench_kmeans.py --sizes 50 200 --repeat 3``
and ``python scripts/benchmarks/bench_kmeans.py --sizes 500 1000 --repeat 2 --scipy-iters 10``
on a shared 2-core machine (load about 12), times as ratios to ours,
interleaved, best of 3 or 2:

* quality: kmeans2 reached exactly our inertia and ARI on all 16 inputs
  (with ``iter=10``, scipy's default, and ``iter=300``, our cap: kmeans2 runs
  a fixed number of iterations, with no convergence test). scikit-learn's
  greedy k-means++ found 0.24% to 0.34% lower inertia on 3 of the 4 50x50 inputs
  (ARI 0.42-0.48 against our 0.31-0.37 on these hard small inputs) and
  0.01-0.02% higher inertia on 2 others; identical elsewhere.
* time: up to 500x500, ours was the fastest: kmeans2 (``iter=10``) took
  1.4x to 31x our time (25x to 260x with ``iter=300``, run up to 200x200);
  KMeans 1.9x to 395x (its per-call overhead dominates on small inputs).
  On 1000x1000, kmeans2
  took 0.6x to 0.8x and KMeans 0.85x to 1.2x of our time with the default
  BLAS threads on the loaded machine, where our matrix products suffer from
  thread contention (ours: 4.0-5.8 s per fit); with one thread
  (``OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 python scripts/benchmarks/bench_kmeans.py
  --sizes 1000 --repeat 1 --scipy-iters 10``; ours 0.5-2.1 s) kmeans2 took
  1.3x to 3.7x our time and KMeans 0.28x to 1.24x (faster on 3 of 4 inputs).

So kmeans2 is never better (same labels, slower except under BLAS thread
contention), and KMeans is faster only on the largest inputs. The benchmark
tables of ``docs/benchmark.md`` are 60x40 and 120x80, where ours is several
times faster at the same quality; and scikit-learn is an optional extra, so
using it when installed would make the same seed give different labels on
different installations. Same seed (Generator), same labels: the
runs consume one Generator in a fixed order.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from lbm_bench._docstrings import fill_doc
from lbm_bench._validation import check_count
from lbm_bench.algorithms.inputs import check_incomplete_inputs, imputed_table
from lbm_bench.models.data import TableData

__all__ = ["double_kmeans", "fill_empty", "kmeans", "onehot", "seeded_labels"]


def onehot(labels: np.ndarray, n_classes: int) -> np.ndarray:
    return np.eye(n_classes)[labels]


def fill_empty(labels: np.ndarray, k: int, misfit: Callable[[], np.ndarray]) -> np.ndarray:
    """Give every empty cluster the worst-fitting item of a cluster with two items or more.

    ``misfit()`` scores every item (higher is worse); it is evaluated only
    when some cluster is empty. Requires ``len(labels) >= k``.
    """
    counts = np.bincount(labels, minlength=k)
    if counts.min() > 0:
        return labels
    labels, badness = labels.copy(), np.array(misfit(), dtype=np.float64)
    for empty in np.flatnonzero(counts == 0):
        movable = np.flatnonzero(counts[labels] > 1)
        item = movable[np.argmax(badness[movable])]
        counts[labels[item]] -= 1
        labels[item], counts[empty] = empty, 1
        badness[item] = -np.inf
    return labels


# -- k-means (numpy; kept over scipy and scikit-learn, see the module docstring) ---------------
def _squared_distances(data: np.ndarray, centers: np.ndarray, data_sq: np.ndarray) -> np.ndarray:
    """Squared Euclidean distances (n, k) of points (n, d) to centers (k, d)."""
    d2 = data_sq[:, None] - 2.0 * data @ centers.T + np.einsum("kd,kd->k", centers, centers)
    return np.maximum(d2, 0.0)


def _kmeans_plus_plus(
    points: TableData, k: int, data_sq: np.ndarray, rng: np.random.Generator
) -> np.ndarray:
    """k-means++ seeding: centers (k, d) drawn with probability proportional to D^2."""
    data = points.table
    n = data.shape[0]
    centers = np.empty((k, data.shape[1]))
    centers[0] = points.dense_row(rng.integers(n))
    closest = _squared_distances(data, centers[:1], data_sq)[:, 0]
    for c in range(1, k):
        total = closest.sum()
        index = rng.choice(n, p=closest / total) if total > 0 else rng.integers(n)
        centers[c] = points.dense_row(index)
        closest = np.minimum(closest, _squared_distances(data, centers[c : c + 1], data_sq)[:, 0])
    return centers


def _own_distances(d2: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """The squared distance (n,) of every point to the center of its cluster, from d2 (n, k)."""
    return d2[np.arange(len(labels)), labels]


def _lloyd(
    data: np.ndarray, centers: np.ndarray, data_sq: np.ndarray, max_iter: int
) -> tuple[np.ndarray, float]:
    """Lloyd iterations until the labels stop changing; returns (labels, inertia).

    An empty cluster takes the point farthest from its center (among clusters
    of two points or more).
    """
    k = centers.shape[0]
    labels = np.full(data.shape[0], -1)
    for _ in range(max_iter):
        d2 = _squared_distances(data, centers, data_sq)
        new = d2.argmin(1)
        new = fill_empty(new, k, partial(_own_distances, d2, new))
        if np.array_equal(new, labels):
            break
        labels = new
        indicators = onehot(labels, k)
        centers = (indicators.T @ data) / indicators.sum(0)[:, None]
    return labels, float(_own_distances(_squared_distances(data, centers, data_sq), labels).sum())


def kmeans(
    data: Any, k: int, *, n_init: int, max_iter: int, rng: np.random.Generator
) -> np.ndarray:
    """Best of ``n_init`` k-means runs (k-means++ seeding, Lloyd iterations) on the rows of
    ``data`` (dense or sparse, rows as points): labels (n,)."""
    points = TableData.of(data).as_float()
    data_sq = points.row_squared_norms()
    best_labels, best_inertia = None, math.inf
    for _ in range(n_init):
        labels, inertia = _lloyd(points.table, _kmeans_plus_plus(points, k, data_sq, rng), data_sq,
                                 max_iter)
        if inertia < best_inertia:
            best_labels, best_inertia = labels, inertia
    return np.asarray(best_labels, dtype=np.int64)


def seeded_labels(data: Any, k: int, rng: np.random.Generator) -> np.ndarray:
    """Labels of the nearest of k points (rows of ``data``, dense or sparse) drawn by k-means++
    seeding (every class used)."""
    points = TableData.of(data)
    data_sq = points.row_squared_norms()
    d2 = _squared_distances(points.table, _kmeans_plus_plus(points, k, data_sq, rng), data_sq)
    labels = d2.argmin(1)
    return fill_empty(labels, k, partial(_own_distances, d2, labels))


# -- double k-means -----------------------------------------------------------------------
@fill_doc
def double_kmeans(
    X: ArrayLike,
    n_row_clusters: int,
    n_col_clusters: int,
    *,
    n_init: int = 10,
    max_iter: int = 300,
    rng: np.random.Generator | int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Naive co-clustering: k-means on the rows, and separately on the columns.

    Rows are points of R^n_cols and columns points of R^n_rows (raw values,
    Euclidean distance). Each k-means keeps the best of ``n_init`` runs
    (k-means++ seeding, Lloyd iterations until the labels stop changing);
    numpy only.

    Parameters
    ----------
    X : array-like or scipy.sparse matrix of shape (n_rows, n_cols)
        The table (any numeric values). A sparse table stays sparse: the
        distances come from sparse products, the centers are dense
        (``n_row_clusters x n_cols`` and ``n_col_clusters x n_rows``).
        **Missing entries** (NaN, a masked array, explicit NaN of a sparse
        table) are imputed by the mean of their column's observed entries
        before both k-means (k-means needs a complete table; the imputation is
        the baseline's, not a model of the missing entries).
    n_row_clusters, n_col_clusters : int
        Numbers of row and column clusters.
    n_init : int, default=10
        k-means runs per side.
    max_iter : int, default=300
        Maximum Lloyd iterations per run.
    rng : None, int or numpy.random.Generator

    {{coclustering}}

    Examples
    --------
    >>> X = [[0.0, 0.1, 5.0], [0.2, 0.0, 5.1], [5.0, 5.2, 0.1]]
    >>> rows, cols = double_kmeans(X, 2, 2, rng=0)
    >>> bool(rows[0] == rows[1] != rows[2]), bool(cols[0] == cols[1] != cols[2])
    (True, True)
    """
    rng = np.random.default_rng(rng)
    table, g, m = check_incomplete_inputs(X, n_row_clusters, n_col_clusters)
    n_init = check_count("n_init", n_init)
    max_iter = check_count("max_iter", max_iter)
    data = TableData.of(imputed_table(table)).as_float()
    rows = kmeans(data, g, n_init=n_init, max_iter=max_iter, rng=rng)
    cols = kmeans(data.transposed(), m, n_init=n_init, max_iter=max_iter, rng=rng)
    return rows, cols
