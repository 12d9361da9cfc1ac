"""Thumbnails of a release's tables, as pixels: no matplotlib figure per table.

A release's HTML card (:mod:`lbm_bench.release.card`) shows one thumbnail per table.
:func:`thumbnail_pixels` draws :func:`lbm_bench.plot_table`'s grouped view reduced to
what a thumbnail shows, straight into an RGBA array from
:func:`lbm_bench.table_image.grouped_image` in the family's colours
(:func:`lbm_bench.plotting.family_colormap`): a few milliseconds per table instead of a
figure's tenth of a second.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lbm_bench.plotting import family_colormap
from lbm_bench.table_image import grouped_image

__all__ = ["thumbnail_pixels", "STRIP_PIXELS", "GAP_PIXELS"]

#: Pixels of a thumbnail's uncertainty strips and of the gap between them and the picture.
STRIP_PIXELS = 7
GAP_PIXELS = 2


def thumbnail_pixels(table: Any, height: int = 186, width: int = 218, *,
                     max_cells: int = 200) -> np.ndarray:
    """A table's grouped view as RGBA pixels, drawn without a matplotlib figure.

    The table grouped by its labels (:func:`lbm_bench.table_image.reference_labels`), as
    block averages of at most ``max_cells`` cells per side stretched to the pixels
    (nearest cell), in the family's colour map and colour range; the block boundaries
    in the family's line colour; the per-row and per-column posterior uncertainty as
    grey strips on the left and on top (white 0, black ``1 - 1/max(g, m)``). No axes,
    ticks or colour bar.

    Parameters
    ----------
    table : Table or path
    height, width : int
        Size of the picture in pixels, strips included (at least 16 each).
    max_cells : int, default=200
        Largest image size per side before it is stretched to the pixels.

    Returns
    -------
    ndarray of shape (height, width, 4), uint8
    """
    from matplotlib import colormaps
    from matplotlib.colors import to_rgba

    if min(height, width) < 16:
        raise ValueError(f"height and width must be at least 16 pixels, got {height}x{width}")
    view = grouped_image(table, max_cells)
    cmap = family_colormap(view.family, view.levels)[0]
    cmap = colormaps[cmap] if isinstance(cmap, str) else cmap
    offset = STRIP_PIXELS + GAP_PIXELS
    h, w = height - offset, width - offset
    # nearest image cell of every pixel: pixel p covers cells [p r / h, (p + 1) r / h)
    cell_rows = np.minimum((np.arange(h) * view.image.shape[0]) // h, view.image.shape[0] - 1)
    cell_cols = np.minimum((np.arange(w) * view.image.shape[1]) // w, view.image.shape[1] - 1)
    scaled = (view.image[np.ix_(cell_rows, cell_cols)] - view.vmin) / (view.vmax - view.vmin)
    pixels = np.full((height, width, 4), 255, dtype=np.uint8)
    pixels[offset:, offset:] = cmap(np.clip(scaled, 0.0, 1.0), bytes=True)
    line = np.round(np.array(to_rgba(view.line)) * 255).astype(np.uint8)
    for y in np.round(view.row_boundaries * h).astype(np.int64):
        pixels[offset + min(y, h - 1), offset:] = line
    for x in np.round(view.col_boundaries * w).astype(np.int64):
        pixels[offset:, offset + min(x, w - 1)] = line
    greys = colormaps["Greys"]
    pixels[offset:, :STRIP_PIXELS] = greys(view.row_uncertainty[cell_rows], bytes=True)[:, None]
    pixels[:STRIP_PIXELS, offset:] = greys(view.col_uncertainty[cell_cols], bytes=True)[None, :]
    return pixels
