"""The image of a table grouped by labels, as arrays (no matplotlib): block means over the
observed entries, the table binned into at most ``max_cells`` cells per side (``R @ X @ C``
with sparse 0/1 aggregation matrices, so a sparse table is never densified), the most
frequent category of each cell of a categorical table, and the posterior uncertainty of
rows and columns from Gibbs label sets, and the whole grouped view of a table
(:func:`grouped_image`). :mod:`lbm_bench.plotting` draws these arrays, and the release
thumbnails (:mod:`lbm_bench.release.thumbnail`) write the grouped view as pixels.
"""

from __future__ import annotations

import os
from typing import Any, NamedTuple

import numpy as np
import scipy.sparse as sp

from lbm_bench.models.data import TableData
from lbm_bench.models.family import Family

__all__ = [
    "GroupedImage", "as_table", "binned_image", "binned_values", "block_boundaries", "block_means",
    "color_range", "grouped_image", "level_counts", "posterior_uncertainty", "reference_labels"
]


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
    return sp.csr_array((np.ones(n), (np.arange(n), labels.astype(np.int64))),
                        shape=(n, int(labels.max()) + 1))


def block_means(data: Any, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """Mean entry of each block ``(k, l)`` of a co-clustering, over its observed entries
    (``nan`` for empty blocks and blocks with no observed entry).

    Parameters
    ----------
    data : ndarray or scipy.sparse array of shape (n_rows, n_cols)
        NaN (or a mask) at missing entries, as :meth:`~lbm_bench.models.data.TableData.incomplete`
        reads.
    rows : ndarray of shape (n_rows,)
    cols : ndarray of shape (n_cols,)

    Returns
    -------
    ndarray of shape (rows.max() + 1, cols.max() + 1)
    """
    return _observed_means(TableData.incomplete(data, name="data"),
                           _onehot(rows).T.tocsr(),
                           _onehot(cols).T.tocsr())


def _observed_means(data: TableData, left: sp.csr_array, right: sp.csr_array) -> np.ndarray:
    """Means of the observed entries of the groups ``left @ X @ right.T`` (NaN: none observed)."""
    counts = np.asarray(data.observed_counts(left, right), dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0,
                        _group_sums(data, left, right) / np.where(counts > 0, counts, 1), np.nan)


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


def binned_image(data: Any, row_order: np.ndarray, col_order: np.ndarray, max_cells: int,
                 levels: int | None = None) -> tuple[np.ndarray, int, int]:
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
    # the bins' sizes when complete
    return _observed_means(TableData.of(data), r, c), r_factor, c_factor


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
    >>> table = np.array([[0, 2], [2, 2]])
    >>> level_counts(table, np.array([0, 0]), np.array([0, 1]), (1, 2), 3).tolist()
    [[[1, 0, 1], [0, 0, 2]]]
    """
    # NaN or a mask: missing entries are not counted
    wrapped = TableData.incomplete(data, name="data")
    table = np.asarray(wrapped.densify(), dtype=np.int64)
    observed = getattr(wrapped, "observed", None)
    a, b = groups
    counts = np.zeros(a * b * levels, dtype=np.int64)
    cols = np.asarray(cols, dtype=np.int64) * levels
    step = max(1, (4 << 20) // (8 * max(table.shape[1], 1)))
    for start in range(0, table.shape[0], step):
        band = table[start : start + step]
        index = (np.asarray(rows[start:start + step], dtype=np.int64)[:, None] *
                 (b * levels) + cols) + band
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


def reference_labels(table: Any) -> tuple[np.ndarray, np.ndarray, str]:
    """The co-clustering a table is grouped by: its Bayes labels, else its MAP labels.

    Returns
    -------
    rows : ndarray of shape (n_rows,)
    cols : ndarray of shape (n_cols,)
    name : str
        ``"Bayes labels"`` or ``"MAP labels"``.
    """
    rows, cols = getattr(table, "bayes_rows", None), getattr(table, "bayes_cols", None)
    if rows is not None and cols is not None:
        return np.asarray(rows), np.asarray(cols), "Bayes labels"
    return np.asarray(table.map_rows), np.asarray(table.map_cols), "MAP labels"


def color_range(image: np.ndarray, sparse: bool) -> tuple[float, float]:
    """The colour range of an image of a table: its 0.5% and 99.5% quantiles (0 and the 99%
    quantile for a sparse table), widened when they meet; (0, 1) for an image without a value."""
    finite = image[np.isfinite(image)]
    if finite.size == 0:
        return 0.0, 1.0
    low, high = np.quantile(
        finite, [0.005, 0.995]) if not sparse else (0.0, float(np.quantile(finite, 0.99)))
    if not high > low:
        low, high = float(finite.min()), float(finite.max())
    if not high > low:
        high = low + 1.0
    return float(low), float(high)


class GroupedImage(NamedTuple):
    """A table's grouped view as data (:func:`grouped_image`): the (r, c) block averages (most
    frequent codes with categories, ``levels`` of them; None for numbers), the colour range,
    the block-boundary colour, the boundaries as fractions of the sides, and the rows' (r,)
    and columns' (c,) posterior uncertainty in [0, 1] of its largest value. The colour map is
    the family's (:func:`lbm_bench.plotting.family_colormap` of ``family`` and ``levels``)."""

    image: np.ndarray
    vmin: float
    vmax: float
    family: Family
    levels: int | None
    line: str
    row_boundaries: np.ndarray
    col_boundaries: np.ndarray
    row_uncertainty: np.ndarray
    col_uncertainty: np.ndarray

    @property
    def kind(self) -> str:
        """The name of the table's family."""
        return self.family.kind


def as_table(table: Any) -> Any:
    """``table`` itself when it is a :class:`~lbm_bench.protocol.table.Table`, the table of the file
    at ``table`` when it is a path (:func:`~lbm_bench.storage.load_table`); a TypeError
    otherwise."""
    from lbm_bench.protocol.table import Table
    from lbm_bench.storage import load_table

    if isinstance(table, (str, os.PathLike)):
        return load_table(table)
    if not isinstance(table, Table):
        raise TypeError("table must be a Table or the path of a table file, got "
                        f"{type(table).__name__}")
    return table


def grouped_image(table: Any, max_cells: int = 200) -> GroupedImage:
    """A table grouped by :func:`reference_labels` as at most ``max_cells`` cells per side,
    with its colour range, block boundaries and uncertainty (:func:`lbm_bench.plot_table`'s
    ``view="ordered"``).

    Parameters
    ----------
    table : Table or path
        A table with its Gibbs label sets (:class:`~lbm_bench.protocol.table.Table`) or its file.
    max_cells : int, default=200
        Largest image size per side.

    Returns
    -------
    GroupedImage
    """
    table = as_table(table)
    rows, cols = (np.asarray(labels, dtype=np.int64) for labels in reference_labels(table)[:2])
    row_order, col_order, levels = *(np.argsort(v, kind="stable")
                                     for v in (rows, cols)), table.model.n_levels
    image = binned_image(table.data, row_order, col_order, max_cells, levels)[0]
    family = table.model.family
    line = family.presentation.boundary_color
    vmin, vmax = color_range(image,
                             TableData.of(table.data).is_sparse) if levels is None else (-0.5,
                                                                                         levels -
                                                                                         0.5)
    g, m = max(table.n_row_clusters, 2), max(table.n_col_clusters, 2)
    row_u, col_u = (binned_values(posterior_uncertainty(sets, k), order, max_cells) /
                    (1.0 - 1.0 / max(g, m))
                    for sets, k, order in ((table.gibbs.rows, g, row_order), (table.gibbs.cols, m,
                                                                              col_order)))
    bounds = (block_boundaries(rows) / rows.size, block_boundaries(cols) / cols.size)
    return GroupedImage(image, vmin, vmax, family, levels, line, *bounds,
                        np.clip(row_u, 0.0, 1.0), np.clip(col_u, 0.0, 1.0))
