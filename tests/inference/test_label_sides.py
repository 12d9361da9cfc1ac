"""Tests of lbm_bench.inference.label_sides: a side of the label sets, its counts exact in any
blocks and any integers (the descents of the Bayes rule are tested in test_bayes.py)."""

import numpy as np
import pytest

from lbm_bench.inference import label_sides
from lbm_bench.inference.label_sides import LabelSide


def test_prepared_sets_give_the_same_counts_in_any_blocks(monkeypatch):
    """The sparse minority indicators (kept in blocks of consecutive sets, subsets sharing
    whole blocks and copying the rows of cut ones) count exactly what direct comparisons
    of the label sets count, whatever the block size."""
    rng = np.random.default_rng(5)
    sets = np.where(rng.random((37, 23)) < 0.3, rng.integers(0, 3, (37, 23)), rng.integers(0, 3, 23))
    sets = sets.astype(np.uint8)
    labels = rng.integers(0, 3, 23)
    weights = rng.integers(0, 50, 37)
    current = rng.integers(0, 3, 23)

    def direct_best(chosen_sets, chosen_weights):
        scores = np.stack([(chosen_weights[:, None] * (chosen_sets == k)).sum(0) for k in range(3)], 1)
        return label_sides._best_labels(scores.astype(np.float64), current)

    for block_entries in (1, 50, 200, 1 << 26):
        monkeypatch.setattr(label_sides, "_BLOCK_ENTRIES", block_entries)
        side = LabelSide(sets, 3, bounds=[10, 11, 30])
        assert side.n_sets == 37 and side.blocks[0].begin == 0
        np.testing.assert_array_equal(side.agreements(labels), (sets == labels).sum(1))
        np.testing.assert_array_equal(side.best(weights, current), direct_best(sets, weights))
        for chosen in (np.arange(37) < 11, rng.random(37) < 0.5, np.arange(37) % 3 == 1):
            sub = side.subset(chosen)
            assert sub.n_sets == chosen.sum()
            np.testing.assert_array_equal(sub.agreements(labels), (sets[chosen] == labels).sum(1))
            np.testing.assert_array_equal(sub.best(weights[chosen], current),
                                          direct_best(sets[chosen], weights[chosen]))
            np.testing.assert_array_equal(sub.set_labels(2), sets[np.flatnonzero(chosen)[2]])
            again = sub.subset(np.arange(sub.n_sets) % 2 == 0)
            np.testing.assert_array_equal(again.agreements(labels), (sets[chosen][::2] == labels).sum(1))


@pytest.mark.parametrize("kernels", ["int32", "int64", "scipy"])
def test_counts_are_the_same_in_any_integers_and_kept_agreements_are_copies(kernels, monkeypatch):
    """The descent's products are integer sums: int16 or int32 when they fit, int64 otherwise,
    or scipy's own operators without its kernels; the same counts (and the best labels for
    weights far from zero but close to each other: their least times the class counts, plus
    the products of the small excess). A side keeps the agreements
    of its last labellings: asked again (an equal copy of the labels), the same values, in an
    array of the caller's own."""
    if kernels == "int64":
        monkeypatch.setattr(label_sides, "_sum_dtype", lambda bound: np.int64)
    if kernels == "scipy":
        monkeypatch.setattr(label_sides, "_csr_matvec", None)
        monkeypatch.setattr(label_sides, "_csc_matvec", None)
    rng = np.random.default_rng(8)
    sets = np.where(rng.random((41, 29)) < 0.3, rng.integers(0, 4, (41, 29)), rng.integers(0, 4, 29)).astype(np.uint8)
    side = LabelSide(sets, 4, bounds=[20])
    weights = rng.integers(0, 10**6, 41)
    current = rng.integers(0, 4, 29)
    scores = np.stack([(weights[:, None] * (sets == k)).sum(0) for k in range(4)], 1)
    np.testing.assert_array_equal(side.best(weights, current), label_sides._best_labels(scores, current))
    close = 10**9 + rng.integers(0, 3, 41)  # weights far from zero, close to each other: narrow excess
    scores = np.stack([(close[:, None] * (sets == k)).sum(0) for k in range(4)], 1)
    np.testing.assert_array_equal(side.best(close, current), label_sides._best_labels(scores, current))
    np.testing.assert_array_equal(side.class_counts(),
                                  [((sets == k) & (side.ref != k)).sum(0) for k in range(4)])
    for _ in range(2):
        for labels in (rng.integers(0, 4, 29), current, current.copy()):
            first = side.agreements(labels)
            first[0] = -1  # the caller's array: the kept one is untouched
            again = side.agreements(labels.copy())
            np.testing.assert_array_equal(again, (sets == labels).sum(1))
            assert again.dtype == np.int64
    assert len(side._agreed) <= label_sides._KEEP_AGREEMENTS
