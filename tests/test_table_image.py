"""The grouped image of a table as arrays (lbm_bench.table_image): block means over observed entries,
binning into at most max_cells per side without densifying sparse tables, category counts, the
posterior uncertainty, the colour range, and the whole grouped view the pictures and the release
thumbnails show."""

from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from lbm_bench.storage import load_table
from lbm_bench.table_image import (
    as_table,
    binned_image,
    binned_values,
    block_boundaries,
    block_means,
    color_range,
    grouped_image,
    level_counts,
    posterior_uncertainty,
    reference_labels,
)

DATA = Path(__file__).resolve().parent / "data"


def test_block_means_over_the_observed_entries():
    X = np.array([[1.0, 2.0, 10.0], [3.0, np.nan, 20.0], [5.0, 6.0, np.nan]])
    rows, cols = np.array([0, 0, 1]), np.array([0, 0, 1])
    means = block_means(X, rows, cols)
    assert means[0].tolist() == [2.0, 15.0] and means[1, 0] == 5.5  # NaN entries left out
    assert np.isnan(means[1, 1])  # a block with no observed entry
    dense = np.arange(12.0).reshape(3, 4)
    assert np.allclose(block_means(sp.csr_array(dense), np.array([0, 1, 1]), np.array([1, 1, 0, 0])),
                       block_means(dense, np.array([0, 1, 1]), np.array([1, 1, 0, 0])))


def test_binning_reorders_and_averages_without_densifying(monkeypatch):
    X = np.arange(36.0).reshape(6, 6)
    order = np.array([5, 4, 3, 2, 1, 0])  # reversed rows and columns
    image, r_factor, c_factor = binned_image(X, order, order, max_cells=3)
    assert (r_factor, c_factor) == (2, 2) and image.shape == (3, 3)
    reversed_ = X[::-1, ::-1]
    assert image[0, 0] == reversed_[:2, :2].mean() and image[2, 1] == reversed_[4:, 2:4].mean()
    assert binned_values(np.arange(6.0), order, 3).tolist() == [4.5, 2.5, 0.5]
    from lbm_bench.models.data import SparseTableData

    def refuse(self):
        raise AssertionError("the sparse table was densified")

    monkeypatch.setattr(SparseTableData, "densify", refuse)
    assert np.array_equal(binned_image(sp.csr_array(X), order, order, 3)[0], image)


def test_categories_count_and_the_most_frequent_one_is_shown():
    codes = np.array([[0, 2, 2, 1], [2, 2, 0, 1]])
    counts = level_counts(codes, np.array([0, 0]), np.array([0, 0, 1, 1]), (1, 2), 3)
    assert counts.tolist() == [[[1, 0, 3], [1, 2, 1]]]
    image = binned_image(codes, np.arange(2), np.arange(4), max_cells=2, levels=3)[0]  # 1x2 entries per cell
    assert image.tolist() == [[0.0, 1.0], [2.0, 0.0]]  # each cell's most frequent category (ties: the lower)


def test_uncertainty_boundaries_and_colours():
    sets = np.array([[0, 1, 1], [0, 0, 1], [0, 1, 1], [0, 1, 0]])
    assert posterior_uncertainty(sets).tolist() == [0.0, 0.25, 0.25]
    with pytest.raises(ValueError, match="label_sets must have shape"):
        posterior_uncertainty(np.zeros(3, int))
    assert block_boundaries(np.array([2, 0, 0, 2, 2])).tolist() == [2]  # an empty class draws no line
    assert color_range(np.array([np.nan, np.nan]), False) == (0.0, 1.0)
    assert color_range(np.full(5, 3.0), False) == (3.0, 4.0)  # a flat image still has a range
    low, high = color_range(np.linspace(0, 100, 1001), False)
    assert low == pytest.approx(0.5) and high == pytest.approx(99.5)
    assert color_range(np.linspace(0, 100, 1001), True)[0] == 0.0


def test_the_grouped_view_of_a_table():
    table = load_table(DATA / "table_v1_1.h5")
    rows, cols, name = reference_labels(table)
    assert name == "Bayes labels" and np.array_equal(rows, table.bayes_rows)
    view = grouped_image(DATA / "table_v1_1.h5", max_cells=5)  # a path is read, a Table taken as it is
    again = grouped_image(as_table(table), max_cells=5)
    assert all(np.array_equal(a, b, equal_nan=True) if isinstance(a, np.ndarray) else a == b
               for a, b in zip(view, again, strict=True))
    assert view.image.shape == (4, 5) and view.kind == "poisson" and view.levels is None  # 12x10 in bins of 3x2
    assert view.vmin < view.vmax
    assert np.all((0 <= view.row_uncertainty) & (view.row_uncertainty <= 1)) and view.row_uncertainty.shape == (4,)
    assert np.all((0 < view.row_boundaries) & (view.row_boundaries < 1))
    categorical = grouped_image(DATA / "table_v1_2_categorical.h5")
    assert categorical.levels == 4 and (categorical.vmin, categorical.vmax) == (-0.5, 3.5)
    with pytest.raises(TypeError, match="table must be a Table or the path of a table file, got int"):
        as_table(3)
    old = load_table(DATA / "table_v1.h5")
    assert reference_labels(old)[2] == "MAP labels"
