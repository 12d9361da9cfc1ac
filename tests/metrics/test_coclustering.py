"""Tests of lbm_bench.metrics.coclustering: CARI and the co-clustering losses."""

from __future__ import annotations

import time
from fractions import Fraction

import numpy as np
import pytest

from lbm_bench.metrics import (
    ami,
    ari,
    cari,
    ce,
    contingency,
    l_col,
    l_full,
    l_item,
    l_row,
    nmi,
    rand,
)
from tests.metrics.helpers import (
    brute_item_loss,
    comb2,
    exact_ari_from_table,
    item_labels,
)

# Robert & Vasseur, section 4.2 (Tables 3-5).
Z_42, W_42 = [1, 2, 2, 2, 1], [1, 1, 2, 1, 1, 2]
ZP_42, WP_42 = [1, 1, 2, 1, 1], [1, 1, 2, 1, 3, 2]
# Robert & Vasseur, section 4.1 (Table 2): equal up to a permutation.
Z_41, W_41 = [1, 1, 3, 2], [1, 2, 1, 4, 3]
ZP_41, WP_41 = [2, 2, 1, 3], [2, 1, 2, 3, 4]


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
    np.testing.assert_array_equal(batched, [cari(z, w, zp, wp) for z, w in zip(zs, ws, strict=True)])
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
            items, [l_item(z, w, zp, wp, match=match) for z, w in zip(zs, ws, strict=True)]
        )
        np.testing.assert_array_equal(
            full, [l_full(z, w, zp, wp, match=match) for z, w in zip(zs, ws, strict=True)]
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


@pytest.mark.slow
def test_cari_speed_million_labels_thousand_clusters():
    rng = np.random.default_rng(0)
    z, w, zp, wp = (rng.integers(0, 1000, 1_000_000) for _ in range(4))
    cari(z[:1000], w[:1000], zp[:1000], wp[:1000])  # warm-up
    start = time.perf_counter()
    value = cari(z, w, zp, wp)
    assert time.perf_counter() - start < 1.0
    assert abs(value) < 1e-3
