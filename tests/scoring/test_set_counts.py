"""lbm_bench.scoring.set_counts: the bands of items and the per-set contingency tables
(evaluate's report from them: tests/scoring/test_evaluate_bands.py)."""

import numpy as np
import pytest

from lbm_bench.metrics.contingency_tables import iter_tables
from lbm_bench.scoring import set_counts


def test_band_edges_follow_the_chunks():
    assert set_counts.band_edges(2000, 100_000, 64, 2000 * 6400) == [*range(0, 100_000, 6400), 100_000]
    assert set_counts.band_edges(2000, 100, 64, 1) == [0, 64, 100]
    assert set_counts.band_edges(10, 5, 1, 1 << 27) == [0, 5]


@pytest.mark.parametrize("n_classes, k", [(1, 1), (2, 1), (3, 4), (16, 256), (17, 3), (3, 257)])
def test_set_tables_count_like_bincount(n_classes, k):
    rng = np.random.default_rng(n_classes * 1000 + k)
    sets = rng.integers(0, n_classes, (37, 300)).astype(np.uint8)
    codes = rng.integers(0, k, 300)
    expected = np.concatenate([t for _, t in iter_tables(sets, n_classes, codes, k)])
    np.testing.assert_array_equal(set_counts.set_tables(sets, n_classes, codes, k), expected)
    small = codes.astype(np.min_scalar_type(k - 1))
    np.testing.assert_array_equal(set_counts.set_tables(sets, n_classes, small, k), expected)


def test_count_tables_in_bands_equals_one_band():
    rng = np.random.default_rng(5)
    sets = rng.integers(0, 3, (40, 500)).astype(np.uint8)
    labellings = [set_counts.Labelling(rng.integers(0, 4, 500), 4),
                  set_counts.Labelling(rng.integers(0, 2, 500), 2, np.array([0, 7, 39]))]
    whole = set_counts.count_tables(sets, 3, labellings, floor=True, picked=[3, 30])
    banded = set_counts.count_tables(sets, 3, labellings, floor=True, picked=[3, 30], band_labels=40 * 33)
    for a, b in zip(whole.tables, banded.tables, strict=True):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(whole.ref, banded.ref)
    for a, b in zip(whole.entries(5, 21), banded.entries(5, 21), strict=True):
        np.testing.assert_array_equal(a, b)
    assert all(np.array_equal(whole.picked_sets([3, 30])[s], sets[s]) for s in (3, 30))
    assert whole.picked_sets([3, 30]).keys() == banded.picked_sets([3, 30]).keys()
    set_index, item_index, labels = banded.entries(0, 40)
    assert np.array_equal(labels, sets[set_index, item_index]) and np.all(labels != banded.ref[item_index])
    assert set_index.size == np.count_nonzero(sets != banded.ref)
