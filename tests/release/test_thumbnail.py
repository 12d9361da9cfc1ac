"""Thumbnails drawn as pixels (lbm_bench.release.thumbnail): the grouped view's colours,
block boundaries and uncertainty strips, without a figure."""

import numpy as np
import pytest

pytest.importorskip("matplotlib")

from matplotlib.colors import to_rgba  # noqa: E402

from lbm_bench import generate_table  # noqa: E402
from lbm_bench.release.thumbnail import GAP_PIXELS, STRIP_PIXELS, thumbnail_pixels  # noqa: E402
from lbm_bench.table_image import grouped_image  # noqa: E402


@pytest.fixture(scope="module")
def table():
    return generate_table("gaussian", 60, 40, 3, 2, 0.1, tolerance=0.03, n_samples=200, rng=3)


def test_pixels_hold_the_grouped_view(table):
    pixels = thumbnail_pixels(table, 100, 120)
    assert pixels.shape == (100, 120, 4) and pixels.dtype == np.uint8
    assert np.all(pixels[..., 3] == 255)  # opaque
    offset = STRIP_PIXELS + GAP_PIXELS
    assert np.all(pixels[:offset, :offset, :3] == 255)  # the corner stays white
    view = grouped_image(table, 200)
    line = np.round(np.array(to_rgba(view.line)) * 255)
    # one boundary row per boundary between the 3 row groups and one column between the 2 column groups
    rows_as_line = [y for y in range(offset, 100) if np.all(pixels[y, offset:] == line)]
    cols_as_line = [x for x in range(offset, 120) if np.all(pixels[offset:, x] == line)]
    assert len(rows_as_line) == view.row_boundaries.size == 2 and len(cols_as_line) == view.col_boundaries.size == 1
    # the picture's pixels are the colour map's colours of the block averages
    inside = pixels[offset:, offset:, :3].reshape(-1, 3)
    assert len(np.unique(inside, axis=0)) > 20
    # the strips are greys (equal channels), darker where the labels are less certain
    strip = pixels[offset:, :STRIP_PIXELS, :3]
    assert np.all(strip[..., 0] == strip[..., 1]) and np.all(strip[..., 1] == strip[..., 2])
    assert 0.0 <= view.row_uncertainty.min() and view.row_uncertainty.max() <= 1.0


def test_same_pixels_from_the_table_and_its_file(table, tmp_path):
    from lbm_bench import save_table

    path = save_table(table, tmp_path / "t.h5")
    assert np.array_equal(thumbnail_pixels(table), thumbnail_pixels(path))


def test_too_small_a_picture_is_refused(table):
    with pytest.raises(ValueError, match="at least 16 pixels, got 10x40"):
        thumbnail_pixels(table, 10, 40)
