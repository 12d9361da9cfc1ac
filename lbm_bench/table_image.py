"""The image of a table grouped by labels, as arrays (no matplotlib): block means over the
observed entries, the table binned into at most ``max_cells`` cells per side (``R @ X @ C``
with sparse 0/1 aggregation matrices, so a sparse table is never densified), the most
frequent category of each cell of a categorical table, and the posterior uncertainty of
rows and columns from Gibbs label sets. :mod:`lbm_bench.plotting` draws these arrays, and
the release thumbnails (:mod:`lbm_bench.release.thumbnail`) write them as pixels.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from lbm_bench.models.data import TableData

__all__ = ["binned_image", "binned_values", "block_boundaries", "block_means", "level_counts",
           "posterior_uncertainty"]


def posterior_uncertainty(label_sets: np.ndarray, n_classes: int | None = None) -> np.ndarray:
    """Per-item posterior uncertainty ``1 - max_k p(label = k)`` from label sets.

    Parameters
    ----------
    label_sets : ndarray of shape (n_samples, n_items)
        Label sets drawn from the posterior (e.g. ``table.gibbs.rows``); they live
        in one label space (no label switching), as Gibbs sets with the true
        parameters do.
    n_classes : int, optional
        Number of classes (default: the largest label + 1).

    Returns
    -------
    ndarray of shape (n_items,)
        In ``[0, 1 - 1/n_classes]``; 0 when every set gives the item the same class.

    Examples
    --------
    >>> posterior_uncertainty(np.array([[0, 1], [0, 0], [0, 1], [0, 1]])).tolist()
    [0.0, 0.25]
    """
    from lbm_bench.inference.bayes import label_frequencies

    sets = np.asarray(label_sets)
    if sets.ndim != 2 or sets.shape[0] == 0:
        raise ValueError(f"label_sets must have shape (n_samples >= 1, n_items), got {sets.shape}")
    return 1.0 - label_frequencies(sets, n_classes).max(axis=1)


def _onehot(labels: np.ndarray) -> sp.csr_array:
    n = labels.shape[0]
    return sp.csr_array((np.ones(n), (np.arange(n), labels.astype(np.int64))), shape=(n, int(labels.max()) + 1))


def block_means(data: Any, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """Mean entry of each block ``(k, l)`` of a co-clustering, over its observed entries
    (``nan`` for empty blocks and blocks with no observed entry).

    Parameters
    ----------
    data : ndarray or scipy.sparse array of shape (n_rows, n_cols)
        NaN (or a mask) at missing entries, as :meth:`~lbm_bench.models.data.TableData.incomplete` reads.
    rows : ndarray of shape (n_rows,)
    cols : ndarray of shape (n_cols,)

    Returns
    -------
    ndarray of shape (rows.max() + 1, cols.max() + 1)
    """
    return _observed_means(TableData.incomplete(data, name="data"), _onehot(rows).T.tocsr(), _onehot(cols).T.tocsr())


def _observed_means(data: TableData, left: sp.csr_array, right: sp.csr_array) -> np.ndarray:
    """Means of the observed entries of the groups ``left @ X @ right.T`` (NaN: none observed)."""
    counts = np.asarray(data.observed_counts(left, right), dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0, _group_sums(data, left, right) / np.where(counts > 0, counts, 1), np.nan)


def _group_sums(data: Any, left: sp.csr_array, right: sp.csr_array) -> np.ndarray:
    """``left @ data @ right.T`` as a dense array of shape (a, b): the sums of ``data``
    over groups of rows (0/1 matrix ``left`` of shape (a, n_rows)) and of columns
    (``right`` of shape (b, n_cols)); a sparse table stays sparse, a dense one is
    converted by bands (:meth:`~lbm_bench.models.data.TableData.group_sums`)."""
    return TableData.of(data).group_sums(left, right)


def _bin_index(order: np.ndarray, max_cells: int) -> tuple[np.ndarray, int, int]:
    """The bin of every item (consecutive bins of the order), the number of bins and the
    items per bin."""
    n = order.shape[0]
    factor = max(1, -(-n // max_cells))
    position = np.empty(n, dtype=np.int64)
    position[order] = np.arange(n)
    return position // factor, -(-n // factor), factor


def _bins(order: np.ndarray, max_cells: int) -> tuple[sp.csr_array, np.ndarray, int]:
    """Aggregation matrix of the items into consecutive bins of the order.

    Returns ``(A, sizes, factor)``: ``A`` of shape (n_bins, n_items) with
    ``A[b, i] = 1`` when item ``i`` falls in bin ``b``, the bin sizes, and the
    items per bin.
    """
    bins, n_bins, factor = _bin_index(order, max_cells)
    n = order.shape[0]
    a = sp.csr_array((np.ones(n), (bins, np.arange(n))), shape=(n_bins, n))
    return a, np.bincount(bins, minlength=n_bins).astype(float), factor


def binned_image(
    data: Any, row_order: np.ndarray, col_order: np.ndarray, max_cells: int, levels: int | None = None
) -> tuple[np.ndarray, int, int]:
    """Mean entry of each (row bin, column bin) of the reordered table, as a dense image;
    with ``levels`` (entries are unordered categories), its most frequent category. Over
    the observed entries of a table with missing entries: NaN for a cell with none."""
    if levels is not None:
        row_bins, n_row_bins, r_factor = _bin_index(row_order, max_cells)
        col_bins, n_col_bins, c_factor = _bin_index(col_order, max_cells)
        counts = level_counts(data, row_bins, col_bins, (n_row_bins, n_col_bins), levels)
        image = counts.argmax(axis=2).astype(float)
        image[counts.sum(axis=2) == 0] = np.nan  # no observed entry in the cell
        return image, r_factor, c_factor
    (r, _, r_factor), (c, _, c_factor) = _bins(row_order, max_cells), _bins(col_order, max_cells)
    return _observed_means(TableData.of(data), r, c), r_factor, c_factor  # the bins' sizes when complete


def level_counts(
    data: Any, rows: np.ndarray, cols: np.ndarray, groups: tuple[int, int], levels: int
) -> np.ndarray:
    """How many entries of each category fall in each group of rows and of columns.

    Parameters
    ----------
    data : ndarray of shape (n_rows, n_cols)
        Category codes ``0 .. levels - 1`` (dense).
    rows : ndarray of shape (n_rows,)
        Group of every row, in ``[0, groups[0])``.
    cols : ndarray of shape (n_cols,)
        Group of every column, in ``[0, groups[1])``.
    groups : (int, int)
    levels : int

    Returns
    -------
    ndarray of shape (groups[0], groups[1], levels) of int64
        Counted by bands of rows of at most 4 MiB of indices.

    Examples
    --------
    >>> level_counts(np.array([[0, 2], [2, 2]]), np.array([0, 0]), np.array([0, 1]), (1, 2), 3).tolist()
    [[[1, 0, 1], [0, 0, 2]]]
    """
    wrapped = TableData.incomplete(data, name="data")  # NaN or a mask: missing entries are not counted
    table = np.asarray(wrapped.densify(), dtype=np.int64)
    observed = getattr(wrapped, "observed", None)
    a, b = groups
    counts = np.zeros(a * b * levels, dtype=np.int64)
    cols = np.asarray(cols, dtype=np.int64) * levels
    step = max(1, (4 << 20) // (8 * max(table.shape[1], 1)))
    for start in range(0, table.shape[0], step):
        band = table[start : start + step]
        index = (np.asarray(rows[start : start + step], dtype=np.int64)[:, None] * (b * levels) + cols) + band
        if observed is None:
            counts += np.bincount(index.ravel(), minlength=counts.size)
        else:
            counts += np.bincount(index[observed[start : start + step]], minlength=counts.size)
    return counts.reshape(a, b, levels)


def binned_values(values: np.ndarray, order: np.ndarray, max_cells: int) -> np.ndarray:
    a, sizes, _ = _bins(order, max_cells)
    return (a @ values) / sizes


def block_boundaries(labels: np.ndarray) -> np.ndarray:
    """Positions (in sorted order) between consecutive non-empty classes."""
    counts = np.bincount(labels)
    return np.cumsum(counts[counts > 0])[:-1]
