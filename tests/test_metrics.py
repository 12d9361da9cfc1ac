"""Tests of lbm_bench.metrics: reference values, brute force, properties, bad input."""

from __future__ import annotations

import dataclasses
import itertools
import math
import time
from fractions import Fraction

import numpy as np
import pytest

from lbm_bench.metrics import partition as metrics
from lbm_bench.metrics import (
    ConditionalRisk,
    adjusted_asymmetric_accuracy,
    ami,
    ari,
    cari,
    ce,
    conditional_risk,
    contingency,
    l_col,
    l_full,
    l_item,
    l_row,
    matching_error,
    nmi,
    normalized_accuracy,
    pair_sets_index,
    rand,
)

# Robert & Vasseur, section 4.2 (Tables 3-5).
Z_42, W_42 = [1, 2, 2, 2, 1], [1, 1, 2, 1, 1, 2]
ZP_42, WP_42 = [1, 1, 2, 1, 1], [1, 1, 2, 1, 3, 2]
# Robert & Vasseur, section 4.1 (Table 2): equal up to a permutation.
Z_41, W_41 = [1, 1, 3, 2], [1, 2, 1, 4, 3]
ZP_41, WP_41 = [2, 2, 1, 3], [2, 1, 2, 3, 4]

PARTITION_SCORES = [ari, rand, nmi, ami, normalized_accuracy, pair_sets_index]
SYMMETRIC = [ari, rand, nmi, ami, matching_error, normalized_accuracy, pair_sets_index]


# --------------------------------------------------------------------------- #
# Helpers                                                                     #
# --------------------------------------------------------------------------- #


def comb2(x: int) -> int:
    return x * (x - 1) // 2


def exact_ari_from_table(table: np.ndarray) -> Fraction:
    """ARI from its textbook formula, with Fractions and plain Python loops."""
    cells = [int(x) for x in table.ravel()]
    n = sum(cells)
    t = sum(comb2(x) for x in cells)
    p = sum(comb2(int(x)) for x in table.sum(axis=1))
    q = sum(comb2(int(x)) for x in table.sum(axis=0))
    expected = Fraction(p * q, comb2(n))
    return (t - expected) / (Fraction(p + q, 2) - expected)


def item_labels(z, w) -> np.ndarray:
    """Block label of every cell (i, j), as in the definition of the CARI."""
    z, w = np.asarray(z), np.asarray(w)
    return (z[:, None] * (w.max() + 1) + w[None, :]).ravel()


def random_labels(rng: np.random.Generator, n: int, k: int, offset: int = 0) -> np.ndarray:
    return rng.integers(0, k, n) * 3 + offset  # sparse values, shifted


def injections(k_ref: int, k_pred: int) -> list[np.ndarray]:
    """Every one-to-one map predicted -> reference (-1 = unmatched), maximal ones."""
    maps = set()
    for perm in itertools.permutations(range(max(k_ref, k_pred))):
        maps.add(tuple(p if p < k_ref else -1 for p in perm[:k_pred]))
    return [np.array(m) for m in maps]


def brute_item_loss(z, w, zp, wp) -> float:
    """Lomet's CE by enumerating every pair of matchings."""
    z, w, zp, wp = map(np.asarray, (z, w, zp, wp))
    best = 1.0
    for rmap in injections(z.max() + 1, zp.max() + 1):
        row_ok = z == rmap[zp]
        for cmap in injections(w.max() + 1, wp.max() + 1):
            col_ok = w == cmap[wp]
            best = min(best, 1 - np.outer(row_ok, col_ok).mean())
    return best


def brute_conditional_risk(Z, W, zp, wp) -> float:
    best = 2.0
    for rmap in injections(Z.max() + 1, zp.max() + 1):
        lr = (Z != rmap[zp]).mean(axis=1)
        for cmap in injections(W.max() + 1, wp.max() + 1):
            lc = (W != cmap[wp]).mean(axis=1)
            best = min(best, float((lr + lc - lr * lc).mean()))
    return best


def gibbs_like(rng, truth: np.ndarray, k: int, n_sets: int, flip: float) -> np.ndarray:
    """Label sets around ``truth`` in the same label space (no label switching)."""
    sets = np.tile(truth, (n_sets, 1))
    mask = rng.random(sets.shape) < flip
    sets[mask] = rng.integers(0, k, int(mask.sum()))
    return sets


# --------------------------------------------------------------------------- #
# Reference values from the papers                                            #
# --------------------------------------------------------------------------- #


def test_cari_paper_table_5():
    assert round(ari(Z_42, ZP_42), 4) == -0.1538
    assert round(ari(W_42, WP_42), 4) == 0.5872
    assert round(cari(Z_42, W_42, ZP_42, WP_42), 4) == 0.2501


def test_cari_paper_tables_3_and_4():
    n_zz = contingency(Z_42, ZP_42)
    n_ww = contingency(W_42, WP_42)
    np.testing.assert_array_equal(n_zz, [[2, 0], [2, 1]])
    np.testing.assert_array_equal(n_ww, [[3, 0, 1], [0, 2, 0]])
    table_4 = [
        [6, 0, 2, 0, 0, 0],
        [0, 4, 0, 0, 0, 0],
        [6, 0, 2, 3, 0, 1],
        [0, 4, 0, 0, 2, 0],
    ]
    np.testing.assert_array_equal(np.kron(n_zz, n_ww), table_4)
    np.testing.assert_array_equal(
        contingency(item_labels(Z_42, W_42), item_labels(ZP_42, WP_42)), table_4
    )
    # Margins of Table 4 and the CARI from them.
    assert np.kron(n_zz, n_ww).sum(axis=1).tolist() == [8, 4, 12, 6]
    assert np.kron(n_zz, n_ww).sum(axis=0).tolist() == [12, 8, 4, 3, 2, 1]
    assert cari(Z_42, W_42, ZP_42, WP_42) == float(exact_ari_from_table(np.array(table_4)))


def test_cari_paper_permuted_example_table_2():
    assert cari(Z_41, W_41, ZP_41, WP_41) == 1.0
    table = np.kron(contingency(Z_41, ZP_41), contingency(W_41, WP_41))
    assert table.shape == (12, 12)
    # (11 - 121/190) / (22/2 - 121/190) = 1 in the paper.
    assert sum(comb2(int(x)) for x in table.ravel()) == 11
    assert sum(comb2(int(x)) for x in table.sum(axis=1)) == 11
    assert comb2(table.sum()) == 190


def test_genieclust_reference_values():
    """Values printed by genieclust's compare_partitions doctest for this table."""
    table = np.array([[1, 10], [8, 2]])
    expected = {
        ari: 0.49,
        rand: 0.74,
        nmi: 0.41,
        ami: 0.39,
        normalized_accuracy: 0.71,
        pair_sets_index: 0.65,
        adjusted_asymmetric_accuracy: 0.71,
    }
    x = [1, 1, 2, 1, 2, 2, 2, 2, 1, 1, 2, 1, 1, 1, 1, 2, 2, 1, 2, 1, 2]
    y = [2, 2, 1, 2, 2, 1, 1, 1, 2, 2, 1, 1, 2, 2, 2, 1, 1, 2, 2, 2, 1]
    np.testing.assert_array_equal(contingency(x, y), table)
    for function, value in expected.items():
        assert round(function(table), 2) == value, function.__name__
        assert function(x, y) == function(table), function.__name__
    assert round(pair_sets_index(table, simplified=True), 2) == 0.63


def test_matching_error_worked_example():
    # Reference clusters {0,1,2,3}, {4,5,6}; prediction {0,1,4}, {2,3}, {5,6}.
    a = [0, 0, 0, 0, 1, 1, 1]
    b = [7, 7, 8, 8, 7, 9, 9]
    assert matching_error(a, b) == 3 / 7  # 7 -> 0 (2 items) is beaten by 8 -> 0, 9 -> 1
    assert l_row(a, b) == 3 / 7


# --------------------------------------------------------------------------- #
# Agreement with scikit-learn                                                 #
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("seed", range(6))
def test_agreement_with_sklearn(seed):
    skm = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 400))
    a = random_labels(rng, n, int(rng.integers(1, 9)), offset=-5)
    b = random_labels(rng, n, int(rng.integers(1, 9)), offset=2)
    assert ari(a, b) == pytest.approx(skm.adjusted_rand_score(a, b), abs=1e-12)
    assert rand(a, b) == pytest.approx(skm.rand_score(a, b), abs=1e-12)
    assert nmi(a, b) == pytest.approx(skm.normalized_mutual_info_score(a, b), abs=1e-10)
    assert ami(a, b) == pytest.approx(skm.adjusted_mutual_info_score(a, b), abs=1e-10)


def test_agreement_with_sklearn_correlated_and_large():
    skm = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(7)
    a = rng.integers(0, 12, 20_000)
    b = np.where(rng.random(a.size) < 0.3, rng.integers(0, 9, a.size), a % 9)
    assert ari(a, b) == pytest.approx(skm.adjusted_rand_score(a, b), abs=1e-12)
    assert nmi(a, b) == pytest.approx(skm.normalized_mutual_info_score(a, b), abs=1e-10)
    assert ami(a, b) == pytest.approx(skm.adjusted_mutual_info_score(a, b), abs=1e-10)


@pytest.mark.parametrize(
    "a, b",
    [
        ([3], [4]),
        ([1, 1, 1], [1, 1, 1]),
        ([1, 1, 1, 1], [0, 1, 2, 3]),
        ([0, 1, 2, 3], [0, 1, 2, 3]),
        ([0, 0, 1, 1], [0, 1, 0, 1]),
    ],
)
def test_edge_cases_match_sklearn(a, b):
    skm = pytest.importorskip("sklearn.metrics")
    assert ari(a, b) == pytest.approx(skm.adjusted_rand_score(a, b), abs=1e-12)
    assert rand(a, b) == pytest.approx(skm.rand_score(a, b), abs=1e-12)
    assert nmi(a, b) == pytest.approx(skm.normalized_mutual_info_score(a, b), abs=1e-12)
    assert ami(a, b) == pytest.approx(skm.adjusted_mutual_info_score(a, b), abs=1e-12)


def test_batched_ari_and_rand_match_sklearn_per_set():
    skm = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(3)
    sets = rng.integers(-2, 4, (25, 60))
    pred = rng.integers(0, 5, 60)
    batched = ari(sets, pred)
    assert isinstance(batched, np.ndarray) and batched.shape == (25,)
    expected_ari = [skm.adjusted_rand_score(s, pred) for s in sets]
    np.testing.assert_allclose(batched, expected_ari, atol=1e-12)
    expected_rand = [skm.rand_score(s, pred) for s in sets]
    np.testing.assert_allclose(rand(sets, pred), expected_rand, atol=1e-12)


# --------------------------------------------------------------------------- #
# Exactness                                                                   #
# --------------------------------------------------------------------------- #


def test_ari_is_exact_on_a_million_items():
    rng = np.random.default_rng(11)
    a = rng.integers(0, 4, 1_000_000)
    b = a.copy()
    b[:7] = (b[:7] + 1) % 4  # nearly identical: ARI just below 1
    expected = float(exact_ari_from_table(contingency(a, b)))
    assert ari(a, b) == expected
    assert ari(a[None, :], b)[0] == expected
    assert ari(contingency(a, b)) == expected


def test_cari_is_exact_with_millions_of_cells():
    rng = np.random.default_rng(12)
    z = rng.integers(0, 3, 3000)
    w = rng.integers(0, 4, 2500)
    zp, wp = z.copy(), w.copy()
    zp[:2] = (zp[:2] + 1) % 3
    wp[-3:] = (wp[-3:] + 1) % 4
    a, b = contingency(z, zp), contingency(w, wp)
    # Pair counts of kron(a, b) by brute force over the products of entries.
    kron = np.array([[x * y for y in b.ravel().tolist()] for x in a.ravel().tolist()], dtype=object)
    t = sum(comb2(int(x)) for x in kron.ravel())
    rows = [int(r) * int(s) for r in a.sum(axis=1) for s in b.sum(axis=1)]
    cols = [int(r) * int(s) for r in a.sum(axis=0) for s in b.sum(axis=0)]
    p, q = sum(comb2(x) for x in rows), sum(comb2(x) for x in cols)
    expected_index = Fraction(p * q, comb2(z.size * w.size))
    expected = (t - expected_index) / (Fraction(p + q, 2) - expected_index)
    assert cari(z, w, zp, wp) == float(expected)
    assert 0.99 < float(expected) < 1.0


# --------------------------------------------------------------------------- #
# CARI                                                                        #
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("seed", range(8))
def test_cari_equals_ari_of_item_labels(seed):
    rng = np.random.default_rng(seed)
    n_rows, n_cols = int(rng.integers(2, 15)), int(rng.integers(2, 15))
    z = rng.integers(0, int(rng.integers(1, 5)), n_rows)
    w = rng.integers(0, int(rng.integers(1, 5)), n_cols)
    zp = rng.integers(0, int(rng.integers(1, 5)), n_rows)
    wp = np.where(rng.random(n_cols) < 0.5, w, rng.integers(0, 6, n_cols))
    value = cari(z, w, zp, wp)
    assert value == ari(item_labels(z, w), item_labels(zp, wp))
    skm = pytest.importorskip("sklearn.metrics")
    reference = skm.adjusted_rand_score(item_labels(z, w), item_labels(zp, wp))
    assert value == pytest.approx(reference, abs=1e-12)


def test_cari_batched_and_broadcast():
    rng = np.random.default_rng(5)
    zs = rng.integers(0, 3, (6, 20))
    ws = rng.integers(0, 4, (6, 15))
    zp, wp = rng.integers(0, 3, 20), rng.integers(0, 2, 15)
    batched = cari(zs, ws, zp, wp)
    assert batched.shape == (6,)
    np.testing.assert_array_equal(batched, [cari(z, w, zp, wp) for z, w in zip(zs, ws)])
    np.testing.assert_array_equal(cari(zs, ws[0], zp, wp), [cari(z, ws[0], zp, wp) for z in zs])
    with pytest.raises(ValueError, match="equally many"):
        cari(zs, ws[:4], zp, wp)


def test_cari_symmetric_and_relabelling_invariant():
    rng = np.random.default_rng(8)
    z, zp = rng.integers(0, 4, 30), rng.integers(0, 3, 30)
    w, wp = rng.integers(0, 3, 25), rng.integers(0, 5, 25)
    value = cari(z, w, zp, wp)
    assert cari(zp, wp, z, w) == value
    relabel = np.array([10, -4, 7, 99])
    assert cari(relabel[z], w, zp, -3 * wp) == value


# --------------------------------------------------------------------------- #
# Properties of the partition measures                                        #
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("seed", range(4))
def test_symmetry(seed):
    rng = np.random.default_rng(seed)
    a, b = rng.integers(0, 4, 80), rng.integers(-2, 3, 80)
    for function in SYMMETRIC:
        assert function(a, b) == pytest.approx(function(b, a), abs=1e-14), function.__name__


@pytest.mark.parametrize("seed", range(4))
def test_relabelling_invariance(seed):
    rng = np.random.default_rng(seed)
    a, b = rng.integers(0, 5, 90), rng.integers(0, 4, 90)
    a2 = rng.permutation(np.arange(-50, 50, 10))[a]  # any integer values
    b2 = np.array([1000, -7, 3, 2**40])[b]
    for function in [*SYMMETRIC, adjusted_asymmetric_accuracy]:
        assert function(a2, b2) == pytest.approx(function(a, b), abs=1e-14), function.__name__
    assert l_row(a2, b2) == pytest.approx(l_row(a, b), abs=1e-15)


@pytest.mark.parametrize("k", [1, 2, 5])
def test_identical_partitions(k):
    rng = np.random.default_rng(k)
    a = rng.integers(0, k, 50)
    b = np.array([9, -1, 4, 6, 2])[a]  # same partition, other labels
    for function in [*PARTITION_SCORES, adjusted_asymmetric_accuracy]:
        assert function(a, b) == 1.0, function.__name__
    assert matching_error(a, b) == 0.0
    w = rng.integers(0, 3, 40)
    assert cari(a, w, b, w + 5) == 1.0
    assert l_item(a, w, b, w + 5) == 0.0
    assert l_full(a, w, b, w + 5) == 0.0


@pytest.mark.parametrize("seed", range(5))
def test_bounds(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 60))
    a, b = rng.integers(0, 6, n), rng.integers(0, 3, n)
    assert ari(a, b) <= 1.0
    assert ari(a, b) >= -1.0
    assert 0.0 <= rand(a, b) <= 1.0
    assert 0.0 <= nmi(a, b) <= 1.0
    assert ami(a, b) <= 1.0
    assert 0.0 <= matching_error(a, b) < 1.0
    assert 0.0 <= normalized_accuracy(a, b) <= 1.0
    assert 0.0 <= pair_sets_index(a, b) <= 1.0
    assert adjusted_asymmetric_accuracy(a, b) <= 1.0
    # Non-negative when the prediction has no more clusters than the reference.
    assert adjusted_asymmetric_accuracy(b, a) >= 0.0 or len(set(a)) > len(set(b))
    assert adjusted_asymmetric_accuracy(a, b) >= 0.0 or len(set(b)) > len(set(a))
    w, wp = rng.integers(0, 3, 20), rng.integers(0, 4, 20)
    assert 0.0 <= l_item(a, w, b, wp) <= 1.0
    assert cari(a, w, b, wp) <= 1.0


def test_chance_adjusted_scores_near_zero_on_independent_partitions():
    """Independent uniform partitions: |ARI|, |AMI|, |CARI| < 0.005 (seeded)."""
    rng = np.random.default_rng(2024)
    a, b = rng.integers(0, 5, 20_000), rng.integers(0, 4, 20_000)
    assert abs(ari(a, b)) < 0.005
    assert abs(ami(a, b)) < 0.005
    z, w = rng.integers(0, 4, 3000), rng.integers(0, 4, 3000)
    zp, wp = rng.integers(0, 4, 3000), rng.integers(0, 4, 3000)
    assert abs(cari(z, w, zp, wp)) < 0.005
    # Set matching scores are not adjusted for chance but stay small.
    assert normalized_accuracy(a, b) < 0.05
    assert pair_sets_index(a, b) < 0.05


def test_table_input_equals_label_input_and_drops_empty_clusters():
    rng = np.random.default_rng(9)
    a, b = rng.integers(0, 4, 100), rng.integers(0, 3, 100)
    table = contingency(a, b)
    padded = np.zeros((6, 5), dtype=int)
    padded[1:5, 2:5] = table
    for function in [*PARTITION_SCORES, matching_error, adjusted_asymmetric_accuracy]:
        assert function(padded) == function(a, b), function.__name__
        assert function(table.astype(float)) == function(a, b), function.__name__


def test_set_matching_conventions_with_different_cluster_counts():
    # Two reference clusters; the prediction splits one of them in two.
    a = [0, 0, 0, 0, 1, 1, 1, 1]
    b = [0, 0, 1, 1, 2, 2, 2, 2]
    assert matching_error(a, b) == 0.25
    assert normalized_accuracy(a, b) == (6 / 8 - 1 / 3) / (1 - 1 / 3)
    assert adjusted_asymmetric_accuracy(a, b) == 0.5  # recalls 1/2 and 1
    assert adjusted_asymmetric_accuracy(b, a) == 0.5  # recalls 1, 0 (unmatched) and 1
    # Eq. (18) of Rezaei & Franti with k = 3: s = 2/4 + 4/4, E = (4 + 2 + 0) / 8.
    assert pair_sets_index(a, b) == pytest.approx((1.5 - 0.75) / (3 - 0.75), abs=1e-15)
    assert pair_sets_index(a, b, simplified=True) == pytest.approx(0.25, abs=1e-15)
    worse_than_chance = ([0, 0, 0, 1, 1, 1, 2, 1], [2, 0, 0, 0, 1, 2, 0, 0])
    assert pair_sets_index(*worse_than_chance, clipped=False) < 0
    assert pair_sets_index(*worse_than_chance) == 0.0
    assert math.isnan(adjusted_asymmetric_accuracy([0, 0, 0], [0, 1, 1]))


@pytest.mark.parametrize("seed", range(6))
def test_matching_error_brute_force(seed):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, int(rng.integers(1, 5)), 30)
    b = rng.integers(0, int(rng.integers(1, 6)), 30)
    best = min(
        float(np.mean(a != m[b])) for m in injections(a.max() + 1, b.max() + 1)
    )
    assert matching_error(a, b) == pytest.approx(best, abs=1e-15)


# --------------------------------------------------------------------------- #
# Co-clustering losses                                                        #
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("seed", range(6))
def test_l_item_equals_brute_force_ce(seed):
    rng = np.random.default_rng(seed)
    z = rng.integers(0, int(rng.integers(1, 4)), 12)
    w = rng.integers(0, int(rng.integers(1, 4)), 9)
    zp = rng.integers(0, int(rng.integers(1, 5)), 12)
    wp = rng.integers(0, int(rng.integers(1, 4)), 9)
    expected = brute_item_loss(z, w, zp, wp)
    assert l_item(z, w, zp, wp) == pytest.approx(expected, abs=1e-15)
    assert ce(z, w, zp, wp) == l_item(z, w, zp, wp)
    lr, lc = l_row(z, zp), l_col(w, wp)
    assert l_item(z, w, zp, wp) == pytest.approx(lr + lc - lr * lc, abs=1e-15)


def test_losses_without_matching_compare_labels_as_they_are():
    z, zp = np.array([0, 0, 1, 1, 2]), np.array([1, 1, 0, 0, 2])
    w, wp = np.array([-1, 3, 3]), np.array([-1, 3, 0])
    assert l_row(z, zp) == 0.0
    assert l_row(z, zp, match=False) == 0.8
    assert l_col(w, wp, match=False) == pytest.approx(1 / 3)
    ok = np.outer(z == zp, w == wp)
    assert l_item(z, w, zp, wp, match=False) == pytest.approx(1 - ok.mean(), abs=1e-15)
    assert l_full(z, w, zp, w) == 0.0
    assert l_full(z, w, zp, w, match=False) == 1.0
    assert l_full(z, w, z, w, match=False) == 0.0
    assert l_full(z, w, z, wp) == 1.0


def test_batched_losses_match_per_set_calls():
    rng = np.random.default_rng(21)
    zs, ws = rng.integers(0, 3, (7, 30)), rng.integers(-1, 2, (7, 20))
    zp, wp = rng.integers(0, 4, 30), rng.integers(0, 3, 20)
    for match in (True, False):
        rows = l_row(zs, zp, match=match)
        cols = l_col(ws, wp, match=match)
        items = l_item(zs, ws, zp, wp, match=match)
        full = l_full(zs, ws, zp, wp, match=match)
        assert rows.shape == cols.shape == items.shape == full.shape == (7,)
        np.testing.assert_array_equal(rows, [l_row(z, zp, match=match) for z in zs])
        np.testing.assert_array_equal(cols, [l_col(w, wp, match=match) for w in ws])
        np.testing.assert_array_equal(
            items, [l_item(z, w, zp, wp, match=match) for z, w in zip(zs, ws)]
        )
        np.testing.assert_array_equal(
            full, [l_full(z, w, zp, wp, match=match) for z, w in zip(zs, ws)]
        )
    np.testing.assert_array_equal(ce(zs, ws, zp, wp), l_item(zs, ws, zp, wp))
    np.testing.assert_array_equal(l_item(zs, ws[0], zp, wp), [l_item(z, ws[0], zp, wp) for z in zs])


def test_one_dimensional_reference_returns_python_float():
    values = [
        ari([0, 1, 1], [0, 1, 0]),
        rand([0, 1, 1], [0, 1, 0]),
        nmi([0, 1, 1], [0, 1, 0]),
        ami([0, 1, 1], [0, 1, 0]),
        l_row([0, 1, 1], [0, 1, 0]),
        l_col([0, 1, 1], [0, 1, 0]),
        l_item([0, 1], [0, 1], [0, 0], [1, 0]),
        l_full([0, 1], [0, 1], [0, 0], [1, 0]),
        cari([0, 1], [0, 1], [0, 0], [1, 0]),
        ce([0, 1], [0, 1], [0, 0], [1, 0]),
    ]
    assert all(type(v) is float for v in values)


# --------------------------------------------------------------------------- #
# Conditional risk                                                            #
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("seed", range(40))
def test_conditional_risk_equals_brute_force(seed):
    """Any label sets (even adversarial ones): the certified matching is optimal."""
    rng = np.random.default_rng(seed)
    g, gp, m, mp = (int(x) for x in rng.integers(1, 5, 4))
    n_sets = int(rng.integers(1, 7))
    Z = rng.integers(0, g, (n_sets, int(rng.integers(2, 10))))
    W = rng.integers(0, m, (n_sets, int(rng.integers(2, 10))))
    zp, wp = rng.integers(0, gp, Z.shape[1]), rng.integers(0, mp, W.shape[1])
    result = conditional_risk(Z, W, zp, wp)
    assert result.exact
    assert result.risk == pytest.approx(brute_conditional_risk(Z, W, zp, wp), abs=1e-14)


@pytest.mark.parametrize("seed", range(15))
def test_alternating_steps_find_brute_force_optimum_on_gibbs_like_sets(seed):
    rng = np.random.default_rng(100 + seed)
    g, m = int(rng.integers(2, 4)), int(rng.integers(2, 4))
    gp, mp = g + int(rng.integers(-1, 2)), m + int(rng.integers(-1, 2))
    z0, w0 = rng.integers(0, g, 12), rng.integers(0, m, 10)
    Z, W = gibbs_like(rng, z0, g, 20, 0.4), gibbs_like(rng, w0, m, 20, 0.4)
    zp = np.where(rng.random(12) < 0.3, rng.integers(0, max(gp, 1), 12), z0 % max(gp, 1))
    wp = np.where(rng.random(10) < 0.3, rng.integers(0, max(mp, 1), 10), w0 % max(mp, 1))
    rows = metrics._TableStack(Z, int(Z.max()) + 1, zp, int(zp.max()) + 1)
    cols = metrics._TableStack(W, int(W.max()) + 1, wp, int(wp.max()) + 1)
    sigma, tau, _ = metrics._alternate(rows, cols)
    hits = np.dot(rows.hits(sigma), cols.hits(tau))
    risk = 1 - hits / (Z.shape[0] * Z.shape[1] * W.shape[1])
    assert risk == pytest.approx(brute_conditional_risk(Z, W, zp, wp), abs=1e-14)


def test_conditional_risk_is_consistent_with_the_losses():
    rng = np.random.default_rng(31)
    z0, w0 = rng.integers(0, 4, 60), rng.integers(0, 3, 40)
    Z, W = gibbs_like(rng, z0, 4, 50, 0.3), gibbs_like(rng, w0, 3, 50, 0.3)
    zp = np.array([2, 0, 4, 1])[z0]  # relabelled, cluster 3 left empty
    zp[:5] = 3
    wp = w0 % 2  # fewer predicted column clusters
    result = conditional_risk(Z, W, zp, wp, n_chains=2)
    assert isinstance(result, ConditionalRisk)
    assert result.n_sets == 50 and result.exact
    assert result.row_map.shape == (5,) and result.col_map.shape == (2,)
    assert result.row_map.tolist()[:3] == [1, 3, 0] and result.row_map[4] == 2
    assert set(result.col_map.tolist()) <= {0, 1, 2}
    # Scoring the mapped prediction without matching gives the same numbers.
    mapped_rows, mapped_cols = result.row_map[zp], result.col_map[wp]
    items = l_item(Z, W, mapped_rows, mapped_cols, match=False)
    assert result.risk == pytest.approx(items.mean(), abs=1e-15)
    assert result.mean_l_row == pytest.approx(l_row(Z, mapped_rows, match=False).mean(), abs=1e-15)
    assert result.mean_l_col == pytest.approx(l_col(W, mapped_cols, match=False).mean(), abs=1e-15)
    # One shared matching can never beat a matching per set.
    assert result.risk >= l_item(Z, W, zp, wp).mean() - 1e-15
    caris = cari(Z, W, zp, wp)
    assert result.cari_mean == pytest.approx(caris.mean(), abs=1e-15)
    assert result.cari_sd == pytest.approx(caris.std(ddof=1), abs=1e-15)
    assert result.mcse > 0
    assert result.row_map.flags.writeable is False
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.risk = 0.0  # type: ignore[misc]


def test_conditional_risk_without_enumeration_is_flagged():
    rng = np.random.default_rng(4)
    z0, w0 = rng.integers(0, 8, 80), rng.integers(0, 8, 80)
    Z, W = gibbs_like(rng, z0, 8, 30, 0.2), gibbs_like(rng, w0, 8, 30, 0.2)
    result = conditional_risk(Z, W, z0, w0)
    assert not result.exact
    assert result.risk == pytest.approx(l_item(Z, W, z0, w0, match=False).mean(), abs=1e-15)


def test_conditional_risk_identical_sets_and_single_set():
    z, w = np.array([0, 0, 1, 2]), np.array([1, 0, 1])
    result = conditional_risk(np.tile(z, (9, 1)), np.tile(w, (9, 1)), 2 - z, w)
    assert result.risk == 0.0 and result.mcse == 0.0 and result.cari_mean == 1.0
    assert result.cari_sd == 0.0
    single = conditional_risk(z, w, z, w)
    assert single.n_sets == 1 and math.isnan(single.mcse) and math.isnan(single.cari_sd)


def test_batch_means_mcse():
    rng = np.random.default_rng(0)
    iid = rng.normal(size=10_000)
    mcse = metrics._batch_means_mcse(iid, [10_000])
    assert mcse == pytest.approx(1 / math.sqrt(10_000), rel=0.25)
    # AR(1) with rho = 0.9: variance inflation (1 + rho) / (1 - rho) = 19.
    ar = np.empty(40_000)
    ar[0] = rng.normal()
    noise = rng.normal(scale=math.sqrt(1 - 0.81), size=ar.size)
    for t in range(1, ar.size):
        ar[t] = 0.9 * ar[t - 1] + noise[t]
    mcse = metrics._batch_means_mcse(ar, [20_000, 20_000])
    assert mcse == pytest.approx(math.sqrt(19 / ar.size), rel=0.3)
    assert metrics._batch_means_mcse(np.ones(50), [25, 25]) == 0.0
    assert math.isnan(metrics._batch_means_mcse(np.ones(1), [1]))


def test_chain_lengths():
    assert metrics._chain_lengths(10, 3, None) == [4, 3, 3]
    assert metrics._chain_lengths(10, 1, [6, 4]) == [6, 4]
    with pytest.raises(ValueError, match="sum to"):
        metrics._chain_lengths(10, 1, [6, 5])
    with pytest.raises(ValueError, match="n_chains"):
        metrics._chain_lengths(3, 4, None)
    with pytest.raises(ValueError, match="contradicts"):
        metrics._chain_lengths(10, 3, [5, 5])
    with pytest.raises(TypeError, match="n_chains"):
        metrics._chain_lengths(10, 1.5, None)


def test_conditional_risk_bad_input():
    Z, W = np.zeros((3, 4), dtype=int), np.zeros((3, 5), dtype=int)
    z, w = np.zeros(4, dtype=int), np.zeros(5, dtype=int)
    with pytest.raises(ValueError, match=r"gibbs_rows must be non-negative"):
        conditional_risk(Z - 1, W, z, w)
    with pytest.raises(ValueError, match=r"z_pred must be non-negative"):
        conditional_risk(Z, W, z - 1, w)
    with pytest.raises(ValueError, match=r"equally many label sets.*\(3, 4\).*\(2, 5\)"):
        conditional_risk(Z, W[:2], z, w)
    with pytest.raises(ValueError, match=r"w_pred must be 1-D, got shape \(1, 5\)"):
        conditional_risk(Z, W, z, w[None, :])
    with pytest.raises(ValueError, match=r"gibbs_cols and w_pred .* \(3, 5\) and \(4,\)"):
        conditional_risk(Z, W, z, w[:4])
    with pytest.raises(ValueError, match="sum to"):
        conditional_risk(Z, W, z, w, chain_lengths=[1, 1])


def test_small_memory_budget_gives_the_same_results(monkeypatch):
    """Chunked, sparse and non-cached code paths agree with the in-memory ones."""
    rng = np.random.default_rng(17)
    sets, pred = rng.integers(0, 12, (5, 20)), rng.integers(-6, 6, 20)
    w_sets, w_pred = rng.integers(0, 3, (5, 30)), rng.integers(0, 3, 30)
    z0, w0 = rng.integers(0, 3, 40), rng.integers(0, 3, 30)
    Z, W = gibbs_like(rng, z0, 3, 12, 0.2), gibbs_like(rng, w0, 3, 12, 0.2)

    def compute():
        return (
            ari(sets, pred), rand(sets, pred), nmi(sets[0], pred), ami(sets[0], pred),
            l_row(sets, pred), cari(sets, w_sets, pred, w_pred),
            conditional_risk(Z, W, z0, w0),
        )

    expected = compute()
    monkeypatch.setattr(metrics, "_CELL_BUDGET", 8)
    monkeypatch.setattr(metrics, "_EMI_BUDGET", 5)
    monkeypatch.setattr(metrics, "_INT64_SQUARE_LIMIT", 1)  # Python-int sums of squares
    got = compute()
    for want, have in zip(expected[:-1], got[:-1]):
        np.testing.assert_allclose(have, want, rtol=0, atol=1e-14)
    assert expected[-1].exact and not got[-1].exact
    assert got[-1].risk == expected[-1].risk
    assert got[-1].cari_mean == expected[-1].cari_mean


# --------------------------------------------------------------------------- #
# Bad input                                                                   #
# --------------------------------------------------------------------------- #


def test_different_lengths_name_arguments_and_shapes():
    with pytest.raises(ValueError, match=r"a and b .* \(3,\) and \(2,\)"):
        ari([0, 1, 1], [0, 1])
    with pytest.raises(ValueError, match=r"z and z_pred .* \(2, 3\) and \(2,\)"):
        l_row([[0, 1, 1], [0, 0, 1]], [0, 1])
    with pytest.raises(ValueError, match=r"w and w_pred"):
        cari([0, 1], [0, 1, 1], [0, 1], [0, 1])
    with pytest.raises(ValueError, match=r"a and b"):
        contingency([0, 1], [0, 1, 2])


@pytest.mark.parametrize("function", [contingency, nmi, ami, matching_error, pair_sets_index])
def test_two_dimensional_where_one_dimensional_expected(function):
    with pytest.raises(ValueError, match=r"a must be 1-D, got shape \(2, 2\)"):
        function([[0, 1], [1, 0]], [0, 1])


def test_other_bad_input():
    with pytest.raises(TypeError, match=r"a must hold integers, got dtype float64"):
        ari([0.5, 1.0], [0, 1])
    with pytest.raises(TypeError, match=r"b must hold integers"):
        nmi([0, 1], ["x", "y"])
    with pytest.raises(TypeError, match=r"z_pred must hold integers"):
        l_row([0, 1], [0, np.nan])
    with pytest.raises(ValueError, match=r"a must not be empty"):
        rand([], [])
    with pytest.raises(ValueError, match=r"z_pred must be 1-D, got shape \(1, 2\)"):
        l_item([0, 1], [0, 1], [[0, 1]], [0, 1])
    with pytest.raises(ValueError, match=r"z must be 1-D or 2-D"):
        cari(np.zeros((2, 2, 2), dtype=int), [0, 1], [0, 1], [0, 1])
    with pytest.raises(ValueError, match=r"a must be a 2-D contingency table"):
        ari([0, 1, 1])
    with pytest.raises(ValueError, match=r"non-negative counts"):
        ami([[1, -1], [2, 3]])
    with pytest.raises(ValueError, match=r"equally many"):
        l_item(np.zeros((3, 4), dtype=int), np.zeros((2, 4), dtype=int), [0] * 4, [0] * 4)
    with pytest.raises(TypeError, match=r"a must be an array of integers"):
        ari([[0, 1], [0]], [0, 1])
    with pytest.raises(ValueError, match=r"chain_lengths must be a 1-D sequence"):
        conditional_risk([[0, 1]] * 3, [[0, 1]] * 3, [0, 1], [0, 1], chain_lengths=[0, 3])
    # Integral floats and booleans are accepted as labels.
    assert ari([0.0, 1.0, 1.0], [True, False, False]) == 1.0


# --------------------------------------------------------------------------- #
# Speed (slow)                                                                #
# --------------------------------------------------------------------------- #


@pytest.mark.slow
def test_cari_speed_million_labels_thousand_clusters():
    rng = np.random.default_rng(0)
    z, w, zp, wp = (rng.integers(0, 1000, 1_000_000) for _ in range(4))
    cari(z[:1000], w[:1000], zp[:1000], wp[:1000])  # warm-up
    start = time.perf_counter()
    value = cari(z, w, zp, wp)
    assert time.perf_counter() - start < 1.0
    assert abs(value) < 1e-3


@pytest.mark.slow
def test_conditional_risk_speed_2000_sets():
    rng = np.random.default_rng(0)
    z0, w0 = rng.integers(0, 5, 1000), rng.integers(0, 5, 1000)
    Z, W = gibbs_like(rng, z0, 5, 2000, 0.3), gibbs_like(rng, w0, 5, 2000, 0.3)
    zp = np.where(rng.random(1000) < 0.2, rng.integers(0, 6, 1000), z0)
    conditional_risk(Z[:10], W[:10], zp, w0)  # warm-up
    start = time.perf_counter()
    result = conditional_risk(Z, W, zp, w0, n_chains=4)
    assert time.perf_counter() - start < 0.5
    assert result.exact and result.n_sets == 2000
