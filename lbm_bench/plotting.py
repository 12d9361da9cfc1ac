"""Pictures of tables: :func:`plot_table` and :func:`save_figure` (``lbm-bench show``).

(A user's own table, which has no model, is drawn by :mod:`lbm_bench.user_plots`, on the
heatmaps, labels and colour maps of this module.)

A table is drawn as a heatmap twice: in its drawn order (what an algorithm
receives) and with its rows and columns grouped by a co-clustering (the Bayes
labels when the table has them, else its MAP labels, or a user's labels), with
the block boundaries and the block means. A table whose entries are unordered
categories (a family with ``n_levels``: categorical blocks) is drawn in a
qualitative colour map with a legend of the categories, each image cell showing
its most frequent category and each block its most frequent category and share. Beside the grouped
view, two strips show the per-row and per-column posterior uncertainty ``1 - max_k p(z_i = k | X)``
estimated from the Gibbs label sets stored with the table: dark rows are the
ones no classifier can be sure of.

Large and sparse tables
-----------------------
The image never has more than ``max_cells`` cells per side: rows and columns are
grouped into consecutive bins (after reordering) and each image cell is the mean
of the entries of its bin, computed as ``R @ X @ C`` with sparse 0/1 aggregation
matrices ``R`` and ``C``. A sparse table (scipy.sparse) is never densified: the
memory is that of its non-zeros plus an image of at most ``max_cells**2`` cells.
The same code draws dense tables, so small tables get one image cell per entry.

A table with missing entries is drawn from its observed entries; a cell (or block)
with none is drawn in the family's neutral ``missing_color``, named in the key.

matplotlib (the ``plots`` extra) is imported only when a picture is drawn;
figures are made without pyplot (no global state, no display needed) and saved
by :func:`save_figure` without timestamps or version strings, so the same table
gives the same PNG bytes.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

import numpy as np

from lbm_bench._atomic import atomic_path
from lbm_bench._validation import check_choice, describe_percent, describe_value
from lbm_bench.models.data import TableData
from lbm_bench.models.family import Family
from lbm_bench.table_image import (
    as_table,
    binned_image,
    binned_values,
    block_boundaries,
    block_means,
    color_range,
    level_counts,
    posterior_uncertainty,
    reference_labels,
)

__all__ = [
    "MAX_CELLS", "VIEWS", "check_plot_labels", "draw_heatmap", "family_colormap",
    "matplotlib_modules", "plot_table", "save_figure"
]

#: Largest number of image cells per side (rows or columns) of a heatmap.
MAX_CELLS = 1000
#: Blocks above which block means are not written on the picture.
_MAX_ANNOTATED_BLOCKS = 64
#: The views of a picture: both, the grouped one, the stored order.
VIEWS = ("both", "ordered", "drawn")


def matplotlib_modules():
    """The matplotlib modules used here; a one-line ImportError when not installed."""
    try:
        import matplotlib
        from matplotlib.figure import Figure
    except ImportError:
        raise ImportError(
            "drawing tables needs matplotlib: pip install 'lbm-bench[plots]'") from None
    return matplotlib, Figure


def check_plot_labels(name: str, labels: Any, length: int) -> np.ndarray:
    """A user's labels, checked and renumbered ``0..k-1`` in increasing order: the blocks drawn
    depend on the partition, and their count (not the label values) sizes the arrays."""
    from lbm_bench._validation import check_labels
    from lbm_bench.metrics.contingency_tables import compact_labels

    return compact_labels(check_labels(name, labels, length=length))


def _plus_minus(value: float, mcse: float, sep: str = " ± ") -> str:
    """``value ± mcse`` with the MCSE to two significant digits and the value to as many
    decimals (at least three), so a small MCSE never prints as ``± 0.000``.

    Examples
    --------
    >>> _plus_minus(0.10683, 0.00012)
    '0.10683 ± 0.00012'
    >>> _plus_minus(0.2, 0.02), _plus_minus(0.25, 0.0)
    ('0.200 ± 0.020', '0.250 ± 0')
    """
    if not math.isfinite(mcse) or mcse <= 0:
        return f"{value:.3f}{sep}{0 if mcse == 0 else mcse}"
    decimals = max(3, 1 - math.floor(math.log10(mcse)))
    # 0.0996 rounds up to 0.10: one decimal fewer
    if round(mcse, decimals) >= 10.0 ** (2 - decimals):
        decimals = max(3, decimals - 1)
    return f"{value:.{decimals}f}{sep}{mcse:.{decimals}f}"


def _title(table: Any, order_name: str | None) -> str:
    """Kind, shape, clusters and the certified risk: the floor (the MAP labels' risk for a
    table without one, format 1.0), as every report leads with."""
    n, d = table.shape
    g, m = table.n_row_clusters, table.n_col_clusters
    # explicit NaN (missing) are not stored entries
    data = TableData.incomplete(table.data, name="data")
    storage = data.storage_text()
    storage = f", {storage}" if storage else ""
    if data.has_missing:
        share = describe_percent(data.missing_fraction, 0)
        storage += f", {share} missing ({table.missing_mechanism})"
    storage += "".join(f", {name} {value}" for name, value in table.header_values().items())
    target = f"target {table.target_risk:g}"
    if table.bayes_risk is not None:
        risk = f"floor {_plus_minus(table.bayes_risk.risk, table.bayes_risk.mcse)} ({target})"
    else:
        risk = f"MAP risk {_plus_minus(table.risk.risk, table.risk.mcse)} ({target}; no floor)"
    head = f"{table.kind} {n}x{d}{storage}, {g}x{m} clusters, {risk}"
    return head if order_name is None else f"{head}\nright: grouped by {order_name}"


def family_colormap(family: Family, levels: int | None = None,
                    missing: bool = False) -> tuple[Any, str]:
    """Colour map and block-boundary colour of the tables of ``family`` (its presentation
    facet): with ``levels`` (unordered categories), one colour per
    category from the family's qualitative map, or from turbo when that map has too few
    colours; with ``missing``, the map draws missing cells (NaN) in the family's neutral
    ``missing_color``."""
    shown = family.presentation
    if levels is None and not missing:
        return shown.colormap, shown.boundary_color
    matplotlib, _ = matplotlib_modules()
    from matplotlib.colors import ListedColormap

    base = matplotlib.colormaps[shown.colormap]
    if levels is None:
        cmap = base
    else:
        colors = getattr(base, "colors", ())
        if len(colors) >= levels:
            cmap = ListedColormap(list(colors)[:levels], name=f"{shown.colormap}_{levels}")
        else:
            cmap = ListedColormap(matplotlib.colormaps["turbo"](np.linspace(0, 1, levels)),
                                  name=f"turbo_{levels}")
    return (cmap.with_extremes(bad=shown.missing_color) if missing else cmap), shown.boundary_color


def _block_texts(data: Any, rows: np.ndarray, cols: np.ndarray, levels: int | None) -> np.ndarray:
    """The annotation of each block: its mean entry, or its most frequent category and
    that category's share (``"2: 64%"``), over its observed entries; None for an empty block."""
    if levels is None:
        mu = block_means(data, rows, cols)
        return np.array([[f"{v:.2g}" if np.isfinite(v) else None for v in row] for row in mu],
                        dtype=object)
    counts = level_counts(data, rows, cols, (int(rows.max()) + 1, int(cols.max()) + 1), levels)
    total = counts.sum(axis=2)
    mode = counts.argmax(axis=2)
    share = np.take_along_axis(counts, mode[:, :, None], axis=2)[:, :, 0] / np.maximum(total, 1)
    return np.array([[f"{c}: {s:.0%}" if t else None for c, s, t in zip(*rows_, strict=True)]
                     for rows_ in zip(mode, share, total, strict=True)], dtype=object)


def draw_heatmap(ax, image, extent, vmin, vmax, cmap):
    """An image of a table's (binned) cells on ``ax``, nearest-neighbour, first row at the top."""
    return ax.imshow(image, aspect="auto", interpolation="nearest", extent=extent, vmin=vmin,
                     vmax=vmax, cmap=cmap, origin="upper")


def _draw_ordered(ax, table, rows, cols, name, image, extent, vmin, vmax, cmap, line, *,
                  means: bool, uncertainty: bool, max_cells: int, row_order, col_order):
    n, d = table.shape
    im = draw_heatmap(ax, image, extent, vmin, vmax, cmap)
    r_bounds, c_bounds = block_boundaries(rows), block_boundaries(cols)
    for y in r_bounds:
        ax.axhline(y, color=line, linewidth=1.2)
    for x in c_bounds:
        ax.axvline(x, color=line, linewidth=1.2)
    if means:
        texts = _block_texts(table.table_data(), rows, cols, table.model.n_levels)
        row_edges = np.concatenate([[0], np.cumsum(np.bincount(rows))])
        col_edges = np.concatenate([[0], np.cumsum(np.bincount(cols))])
        if np.sum(texts !=
                  None) <= _MAX_ANNOTATED_BLOCKS:  # noqa: E711 - elementwise on an object array
            for k in range(texts.shape[0]):
                for l in range(texts.shape[1]):
                    if texts[k, l] is None:
                        continue
                    ax.text(
                        (col_edges[l] + col_edges[l + 1]) / 2,
                        (row_edges[k] + row_edges[k + 1]) / 2, texts[k, l], ha="center",
                        va="center", fontsize=7, color="black", bbox={
                            "boxstyle": "round,pad=0.15", "facecolor": "white", "alpha": 0.75,
                            "linewidth": 0
                        })
    ax.set_xlabel(f"columns grouped by {name}")
    ax.set_yticks([])
    if uncertainty:
        g = max(table.n_row_clusters, 2)
        m = max(table.n_col_clusters, 2)
        top = 1.0 - 1.0 / max(g, m)
        row_u = binned_values(posterior_uncertainty(table.gibbs.rows, g), row_order, max_cells)
        col_u = binned_values(posterior_uncertainty(table.gibbs.cols, m), col_order, max_cells)
        left = ax.inset_axes((-0.055, 0.0, 0.035, 1.0))
        above = ax.inset_axes((0.0, 1.02, 1.0, 0.035))
        strip = {
            "aspect": "auto", "interpolation": "nearest", "cmap": "Greys", "vmin": 0.0, "vmax": top
        }
        u = left.imshow(row_u[:, None], extent=(0, 1, n, 0), **strip)
        above.imshow(col_u[None, :], extent=(0, d, 1, 0), **strip)
        for a in (left, above):
            a.set_xticks([])
            a.set_yticks([])
        left.set_ylabel(f"rows grouped by {name}")
        ax.set_xlabel(f"columns grouped by {name}\nstrips: posterior uncertainty 1 - max p, "
                      f"white 0 to black {top:.2f} (Gibbs label sets)")
        return im, u
    ax.set_ylabel(f"rows grouped by {name}")
    return im, None


def plot_table(
    table: Any,
    ax: Any = None,
    *,
    labels: tuple[Any, Any] | None = None,
    view: str = "both",
    max_cells: int = MAX_CELLS,
    means: bool = True,
    uncertainty: bool = True,
    title: bool = True,
    figsize: tuple[float, float] | None = None,
):
    """Draw a table as a heatmap, in its drawn order and grouped by a co-clustering.

    Parameters
    ----------
    table : Table or path
        A table, or the path of a table file.
    ax : matplotlib Axes, optional
        Draw the grouped view (``view="ordered"``) or the drawn order
        (``view="drawn"``) into this Axes; the uncertainty strips are attached to
        its sides. By default a new figure is made.
    labels : (rows, cols), optional
        A co-clustering to group by, e.g. an algorithm's labels: integer vectors
        of shape (n_rows,) and (n_cols,). Default: the table's Bayes labels
        (``table.bayes_rows``/``bayes_cols``) when it has them, else its MAP labels.
    view : {"both", "ordered", "drawn"}, default="both"
        Both panels side by side, only the grouped view, or only the drawn order.
        With ``ax``, ``"both"`` (the default) draws the grouped view.
    max_cells : int, default=1000
        Largest image size per side: bigger tables are shown as block averages
        of consecutive rows/columns (a density view for sparse tables); the memory
        used beyond the table is ``O(nnz + max_cells**2)`` for a sparse table and
        ``O(max_cells**2)`` plus 4 MiB bands for a dense one.
    means : bool, default=True
        Write the block means in the grouped view (up to 64 blocks).
    uncertainty : bool, default=True
        Strips of per-row and per-column posterior uncertainty from the table's
        Gibbs label sets.
    title : bool, default=True
        Title with the kind, shape, clusters and certified risk.
    figsize : (float, float), optional
        Size of a new figure in inches.

    Returns
    -------
    matplotlib.figure.Figure
        The figure drawn into (not shown; save it with :func:`save_figure`).

    Examples
    --------
    >>> import tempfile
    >>> fig = plot_table("tests/data/table_v1_1.h5")   # a table file, or a Table
    >>> fig.get_suptitle().splitlines()[0]
    'poisson 12x10, 2x2 clusters, floor 0.081 ± 0.015 (target 0.1)'
    >>> save_figure(fig, os.path.join(tempfile.mkdtemp(), "table.png")).name
    'table.png'
    """
    _, Figure = matplotlib_modules()
    table = as_table(table)
    check_choice("view", view, VIEWS)
    if ax is not None and view == "both":
        view = "ordered"
    if not isinstance(max_cells, (int, np.integer)) or isinstance(max_cells, bool) or max_cells < 1:
        raise ValueError(f"max_cells must be a positive integer, got {describe_value(max_cells)}")
    n, d = table.shape
    if labels is None:
        rows, cols, name = reference_labels(table)
    else:
        if not isinstance(labels, (tuple, list)) or len(labels) != 2:
            raise TypeError("labels must be a pair (rows, cols)")
        rows = check_plot_labels("labels[0] (rows)", labels[0], n)
        cols = check_plot_labels("labels[1] (cols)", labels[1], d)
        name = "the given labels"
    rows, cols = np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64)
    data = table.table_data()  # with its mask: missing entries are drawn apart
    sparse = data.is_sparse
    levels = table.model.n_levels
    cmap, line = family_colormap(table.model.family, levels, data.has_missing)
    if ax is None:
        ncols = 2 if view == "both" else 1
        fig = Figure(figsize=figsize or (6.0 * ncols, 5.2), layout="constrained")
        axes = fig.subplots(1, ncols, squeeze=False)[0]
    else:
        fig = ax.figure
        axes = [ax]
    identity_r, identity_c = np.arange(n), np.arange(d)
    row_order, col_order = np.argsort(rows, kind="stable"), np.argsort(cols, kind="stable")
    extent = (0, d, n, 0)
    drawn = ordered = None
    if view in ("both", "drawn"):
        drawn, r_factor, c_factor = binned_image(data, identity_r, identity_c, max_cells, levels)
    if view in ("both", "ordered"):
        ordered, r_factor, c_factor = binned_image(data, row_order, col_order, max_cells, levels)
    if levels is None:
        vmin, vmax = color_range(ordered if ordered is not None else drawn, sparse)
    else:
        vmin, vmax = -0.5, levels - 0.5
    im = None
    panel = 0
    if drawn is not None:
        a = axes[panel]
        im = draw_heatmap(a, drawn, extent, vmin, vmax, cmap)
        a.set_xlabel("columns (drawn order)")
        a.set_ylabel("rows (drawn order)")
        a.set_yticks([])
        panel += 1
    if ordered is not None:
        im, _ = _draw_ordered(axes[panel], table, rows, cols, name, ordered, extent, vmin, vmax,
                              cmap, line, means=means, uncertainty=uncertainty, max_cells=max_cells,
                              row_order=row_order, col_order=col_order)
    for a in axes:
        a.tick_params(labelsize=7)
    gap = table.model.family.presentation.missing_color_name if data.has_missing else None
    if levels is not None:
        _level_key(fig, axes, im, cmap, levels, r_factor, c_factor, gap)
    else:
        if r_factor > 1 or c_factor > 1:
            what = "density (mean entry)" if sparse else "mean entry"
            label = f"{what} of {r_factor}x{c_factor} cells"
        else:
            label = "entry"
        if gap is not None:
            label += f" ({gap}: missing" + (", no observed entry in the cell)"
                                            if r_factor > 1 or c_factor > 1 else ")")
        fig.colorbar(im, ax=list(axes), shrink=0.8, label=label)
    if title:
        fig.suptitle(_title(table, name if view == "both" else None), fontsize=10)
    return fig


#: Categories above which the legend gives way to a colour bar of the codes.
_MAX_LEGEND_LEVELS = 20


def _level_key(fig, axes, im, cmap, levels: int, r_factor: int, c_factor: int,
               missing: str | None = None) -> None:
    """A legend of the categories (a colour bar of the codes when there are many), with the
    colour of ``missing`` entries (a name) when the table has some."""
    title = ("category" if r_factor == 1 and c_factor == 1
             else f"most frequent category\nof {r_factor}x{c_factor} cells")
    if levels > _MAX_LEGEND_LEVELS:
        label = title.replace("\n", " ") + ("" if missing is None else f" ({missing}: missing)")
        fig.colorbar(im, ax=list(axes), shrink=0.8, label=label)
        return
    from matplotlib.patches import Patch

    handles = [Patch(facecolor=cmap(c), edgecolor="none", label=str(c)) for c in range(levels)]
    if missing is not None:
        handles.append(
            Patch(facecolor=cmap.get_bad(), edgecolor="none", label=f"missing ({missing})"))
    axes[-1].legend(handles=handles, title=title, loc="upper left", bbox_to_anchor=(1.01, 1.0),
                    fontsize=7, title_fontsize=7, frameon=False, borderaxespad=0.0)


def save_figure(fig: Any, path: str | os.PathLike[str], *, dpi: int = 100,
                overwrite: bool = True) -> Path:
    """Save a figure without timestamps or version strings, atomically.

    The same figure gives the same bytes (PNG, PDF or SVG) with the same
    matplotlib: the metadata that would record the software version or the date
    is removed, and the file is written under a temporary name and then given
    its name.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
    path : path
        Output file; its suffix chooses the format (``.png``, ``.pdf``, ``.svg``).
    dpi : int, default=100
    overwrite : bool, default=True
        Replace an existing file. With False an existing file is never replaced,
        also one another process creates meanwhile: FileExistsError instead
        (as :func:`lbm_bench.save_table`).

    Returns
    -------
    Path
    """
    matplotlib, _ = matplotlib_modules()
    path = Path(path)
    fmt = path.suffix.lstrip(".").lower() or "png"
    metadata = {
        "png": {"Software": None},
        "pdf": {"Creator": None, "Producer": None, "CreationDate": None},
        "svg": {"Creator": None, "Date": None},
    }.get(fmt)
    if metadata is None:
        raise ValueError(f"output must end in .png, .pdf or .svg, got {path.name!r}")
    if not path.parent.exists():
        raise ValueError(f"output directory {path.parent} does not exist")
    if not overwrite and os.path.lexists(path):
        raise FileExistsError(f"{path} exists (overwrite=True replaces it)")
    try:
        with atomic_path(path, overwrite=overwrite) as temporary:
            with matplotlib.rc_context({"svg.hashsalt": "lbm-bench", "pdf.compression": 6}):
                fig.savefig(temporary, format=fmt, dpi=dpi, metadata=metadata)
    except FileExistsError:
        raise FileExistsError(f"{path} exists (overwrite=True replaces it)") from None
    return path
