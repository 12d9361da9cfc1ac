"""Pictures of a user's own table (``lbm-bench show DATA``): :func:`plot_user_table` and
:func:`plot_file`.

A user's table (any file :func:`~lbm_bench.read_user_table` reads) has no model: it is drawn
in its stored order and, given labels (a co-clustering, or the MAP labels of a design file's
fitted model), grouped by them with the block boundaries, in its family's colours, on the
heatmaps of :mod:`lbm_bench.plotting` (no block means, no uncertainty).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from lbm_bench._validation import check_choice, describe_percent
from lbm_bench.models.data import TableData
from lbm_bench.models.registry import as_family
from lbm_bench.plotting import (
    MAX_CELLS,
    VIEWS,
    check_plot_labels,
    draw_heatmap,
    family_colormap,
    matplotlib_modules,
    plot_table,
)
from lbm_bench.table_image import binned_image, block_boundaries, color_range

__all__ = ["plot_file", "plot_user_table"]


def plot_user_table(
    table: Any,
    *,
    labels: tuple[Any, Any] | None = None,
    labels_name: str = "the given labels",
    kind: Any = None,
    view: str = "both",
    max_cells: int = MAX_CELLS,
    title: bool = True,
    figsize: tuple[float, float] | None = None,
):
    """Draw a user's own table (any file :func:`~lbm_bench.read_user_table` reads, or a
    :class:`~lbm_bench.storage.user_data.UserTable`) as :func:`plot_table` draws a table file:
    in its stored order and, given labels, grouped by them with the block boundaries, in its
    family's colours (inferred, or ``kind``). It has no model: no block means or uncertainty.

    Parameters
    ----------
    table : UserTable or path
    labels : (rows, cols), optional
        A co-clustering to group by (e.g. :func:`~lbm_bench.fitting.design_labels`); without
        it, only the stored order is drawn.
    labels_name : str
        How the picture names the labels.
    kind : str or Family, optional
    view, max_cells, title, figsize
        As :func:`plot_table` (``view`` applies with labels).

    Returns
    -------
    matplotlib.figure.Figure
    """
    from lbm_bench.algorithms.inputs import infer_family
    from lbm_bench.storage.user_data import UserTable, read_user_table

    _, Figure = matplotlib_modules()
    check_choice("view", view, VIEWS)
    if not isinstance(table, UserTable):
        table = read_user_table(table)
    data = table.data
    if kind is not None:
        family = as_family(kind)
    else:  # the file's own (an lbm-bench table file's @kind), else inferred from the values
        values = data.with_nan() if data.has_missing else data.table
        family = table.family or infer_family(TableData.incomplete(values))
    n, d = table.shape
    views = ("drawn",) if labels is None else {"both": ("drawn", "ordered"), "drawn": ("drawn",),
                                               "ordered": ("ordered",)}[view]
    orders = {"drawn": (np.arange(n), np.arange(d))}
    if labels is not None:
        rows = check_plot_labels("labels[0] (rows)", labels[0], n)
        cols = check_plot_labels("labels[1] (cols)", labels[1], d)
        orders["ordered"] = (np.argsort(rows, kind="stable"), np.argsort(cols, kind="stable"))
    cmap, line = family_colormap(family, None, data.has_missing)
    fig = Figure(figsize=figsize or (6.0 * len(views), 5.2), layout="constrained")
    axes = fig.subplots(1, len(views), squeeze=False)[0]
    images = {name: binned_image(data, *orders[name], max_cells) for name in views}
    vmin, vmax = color_range(images[views[-1]][0], data.is_sparse)
    for ax, name in zip(axes, views, strict=True):
        image, r_factor, c_factor = images[name]
        im = draw_heatmap(ax, image, (0, d, n, 0), vmin, vmax, cmap)
        if name == "ordered":
            for y in block_boundaries(rows):
                ax.axhline(y, color=line, linewidth=1.2)
            for x in block_boundaries(cols):
                ax.axvline(x, color=line, linewidth=1.2)
        where = "stored order" if name == "drawn" else f"grouped by {labels_name}"
        ax.set_xlabel(f"columns ({where})")
        ax.set_ylabel(f"rows ({where})")
        ax.set_yticks([])
        ax.tick_params(labelsize=7)
    what = ("density (mean entry)"
            if data.is_sparse else "mean entry") if r_factor > 1 or c_factor > 1 else "entry"
    label = what if what == "entry" else f"{what} of {r_factor}x{c_factor} cells"
    if data.has_missing:
        label += f" ({family.presentation.missing_color_name}: missing)"
    fig.colorbar(im, ax=list(axes), shrink=0.8, label=label)
    if title:
        share = describe_percent(data.missing_fraction, 0)
        missing = f", {share} missing" if data.has_missing else ""
        storage = f", {data.storage_text()}" if data.storage_text() else ""
        fig.suptitle(f"{table.name}: {n}x{d} {family.presentation.entries} "
                     f"({family.kind}){storage}{missing}",
                     fontsize=10)
    return fig


def plot_file(path: str | os.PathLike[str], *, labels: tuple[Any, Any] | None = None,
              design: Any = None, view: str = "both", max_cells: int = MAX_CELLS, rng: Any = 0,
              header: Any = None, row_names: Any = None):
    """The picture ``lbm-bench show`` draws of a file: :func:`plot_table` of an lbm-bench table
    file, :func:`plot_user_table` of any other table :func:`~lbm_bench.read_user_table` reads
    (with ``header`` and ``row_names``), grouped by ``labels``, or by a design file's classes:
    the fitted classes it keeps when the table is its source (format 1.2, the same SHA-256),
    else the MAP labels of its fitted model (:func:`~lbm_bench.fitting.design_labels`, with
    seed ``rng``)."""
    from lbm_bench.storage.user_data import read_user_table
    from lbm_bench.storage.user_formats import format_of

    if design is None and format_of(Path(path), str(path)) == "table":
        return plot_table(path, labels=labels, view=view, max_cells=max_cells)
    if labels is not None and design is not None:
        raise ValueError("give labels or a design to group by, not both")
    table = read_user_table(path, header=header, row_names=row_names)
    kind, name = None, "the given labels"
    if design is not None:
        from lbm_bench.fitting import design_labels
        from lbm_bench.models.design_file import read_design_file

        record = read_design_file(design)
        kind = record.design.family
        if record.row_classes is not None and record.source_sha256 == table.sha256:
            labels, name = (record.row_classes, record.col_classes), (
                f"the fitted classes of {Path(design).name}")
        else:
            labels = design_labels(record.design, table, rng=rng)
            name = f"the MAP labels of {Path(design).name}"
    return plot_user_table(table, labels=labels, labels_name=name, kind=kind, view=view,
                           max_cells=max_cells)
