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


def _minority(sets, ref, begin, end, n_classes):
    """The CSR patterns of the minority entries by class, from the sets directly."""
    out = []
    for k in range(n_classes):
        rows = [np.flatnonzero((s == k) & (ref != k)) for s in sets[begin:end]]
        out.append((np.concatenate([np.zeros(0, dtype=np.int64), *rows]),
                    np.concatenate([[0], np.cumsum([r.size for r in rows], dtype=np.int64)])))
    return out


def test_count_tables_in_bands_equals_one_band():
    rng = np.random.default_rng(5)
    sets = rng.integers(0, 3, (40, 500)).astype(np.uint8)
    labellings = [set_counts.Labelling(rng.integers(0, 4, 500), 4),
                  set_counts.Labelling(rng.integers(0, 2, 500), 2, np.array([0, 7, 39]))]
    whole = set_counts.count_tables(sets, 3, labellings, floor=True, picked=[3, 30])
    banded = set_counts.count_tables(sets, 3, labellings, floor=True, picked=[3, 30], band_labels=40 * 33)
    assert len(banded.items) == 16
    for a, b in zip(whole.tables, banded.tables, strict=True):
        np.testing.assert_array_equal(a, b)
    for lab, tables in zip(labellings, banded.tables, strict=True):
        chosen = sets if lab.sets is None else sets[lab.sets]
        np.testing.assert_array_equal(tables, set_counts.set_tables(chosen, 3, lab.codes, lab.k))
    np.testing.assert_array_equal(whole.ref, banded.ref)
    counts = np.stack([np.count_nonzero(sets == c, axis=0) for c in range(3)], axis=1)
    np.testing.assert_array_equal(banded.ref, counts.argmax(axis=1))
    for begin, end in ((5, 21), (0, 40), (39, 40), (7, 7)):
        expected = _minority(sets, banded.ref, begin, end, 3)
        for counted in (whole, banded):
            got = counted.minority(begin, end)
            for (indices, indptr), (want_indices, want_indptr) in zip(got, expected, strict=True):
                assert indices.dtype == indptr.dtype == np.int32
                np.testing.assert_array_equal(indices, want_indices)
                np.testing.assert_array_equal(indptr, want_indptr)
    assert all(np.array_equal(whole.picked_sets([3, 30])[s], sets[s]) for s in (3, 30))
    assert whole.picked_sets([3, 30]).keys() == banded.picked_sets([3, 30]).keys()


@pytest.mark.parametrize("n_classes, k", [(1, 1), (2, 1), (3, 4), (5, 256)])
def test_entry_tables_count_what_set_tables_counts(n_classes, k):
    """The tables of the modal classes corrected by the minority entries, for all the sets
    and for a subset of them renumbered."""
    rng = np.random.default_rng(n_classes * 10 + k)
    modal = rng.integers(0, n_classes, 300)
    sets = np.where(rng.random((37, 300)) < 0.2, rng.integers(0, n_classes, (37, 300)), modal).astype(np.uint8)
    codes = rng.integers(0, k, 300).astype(np.min_scalar_type(k - 1))
    ref, n_minority = set_counts.modal_classes(sets, n_classes)
    assert n_minority == np.count_nonzero(sets != ref)
    set_index, item_index = np.nonzero(sets != ref)
    entries = (set_index, item_index, sets[set_index, item_index])
    np.testing.assert_array_equal(set_counts.entry_tables(entries, ref, 37, n_classes, codes, k),
                                  set_counts.set_tables(sets, n_classes, codes, k))
    chosen = np.array([2, 3, 30])
    keep = np.isin(set_index, chosen)
    renumbered = (np.searchsorted(chosen, set_index[keep]), item_index[keep], entries[2][keep])
    np.testing.assert_array_equal(set_counts.entry_tables(renumbered, ref, 3, n_classes, codes, k),
                                  set_counts.set_tables(sets[chosen], n_classes, codes, k))


def test_modal_classes_take_the_first_on_ties():
    sets = np.array([[0, 1, 2, 2], [1, 1, 0, 2], [1, 0, 2, 1], [0, 0, 1, 1]], dtype=np.uint8)
    ref, n_minority = set_counts.modal_classes(sets, 4)
    assert ref.tolist() == [0, 0, 2, 1] and ref.dtype == np.int64 and n_minority == 16 - 8
    assert set_counts.modal_classes(sets[:0], 3)[1] == 0


@pytest.mark.parametrize("fraction", [0.0, 1.0])
def test_tables_without_the_floor_are_the_same_from_entries_or_every_label(fraction, monkeypatch):
    """Without the floor, a band is counted from its minority entries only when few labels
    differ from their modal class (``ENTRIES_FRACTION``); the tables are the same either way,
    and so with many clusters or classes (counted label by label)."""
    monkeypatch.setattr(set_counts, "ENTRIES_FRACTION", fraction)
    rng = np.random.default_rng(9)
    for n_classes, k in ((3, 4), (3, 300), (20, 3)):
        sets = np.where(rng.random((30, 200)) < 0.1, rng.integers(0, n_classes, (30, 200)),
                        rng.integers(0, n_classes, 200)).astype(np.uint8)
        labellings = [set_counts.Labelling(rng.integers(0, k, 200), k),
                      set_counts.Labelling(rng.integers(0, 2, 200), 2, np.array([1, 4, 29]))]
        counted = set_counts.count_tables(sets, n_classes, labellings, band_labels=30 * 64)
        assert counted.ref is None and counted.items == []
        for lab, tables in zip(labellings, counted.tables, strict=True):
            chosen = sets if lab.sets is None else sets[lab.sets]
            np.testing.assert_array_equal(tables, set_counts.set_tables(chosen, n_classes, lab.codes, lab.k))
