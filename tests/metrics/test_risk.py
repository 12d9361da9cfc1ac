"""Tests of lbm_bench.metrics.risk: the conditional risk and the item losses."""

from __future__ import annotations

import dataclasses
import math
import time

import numpy as np
import pytest

from lbm_bench.metrics import (
    ConditionalRisk,
    cari,
    conditional_risk,
    item_losses,
    l_col,
    l_item,
    l_row,
)
from lbm_bench.metrics import risk as risk_module
from tests.metrics.helpers import (
    brute_conditional_risk,
    gibbs_like,
)


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


@pytest.mark.parametrize("relabel", [lambda z: z * 10**12, lambda z: z + 2**62, lambda z: (z * 7919) ** 3])
def test_label_values_do_not_size_the_tables(relabel):
    """Any non-negative integers are labels: the predictions are renumbered, so labels
    times 10**12 or plus 2**62 score like the labels themselves, in the same time and
    memory (the contingency tables were sized by the largest label value)."""
    rng = np.random.default_rng(8)
    z0, w0 = rng.integers(0, 3, 80), rng.integers(0, 2, 50)
    Z, W = gibbs_like(rng, z0, 3, 40, 0.2), gibbs_like(rng, w0, 2, 40, 0.2)
    zp, wp = rng.integers(0, 4, 80), w0.copy()
    base = conditional_risk(Z, W, zp, wp, n_chains=2)
    start = time.perf_counter()
    big = conditional_risk(Z, W, relabel(zp), relabel(wp), n_chains=2)
    assert time.perf_counter() - start < 5.0
    for key in ("risk", "mcse", "mean_l_row", "mean_l_col", "cari_mean", "cari_sd", "exact"):
        assert getattr(big, key) == getattr(base, key), key
    assert big.row_map.tolist() == base.row_map.tolist() and big.col_map.tolist() == base.col_map.tolist()
    assert big.row_labels.tolist() == sorted(set(relabel(zp).tolist())) and base.row_labels.tolist() == [0, 1, 2, 3]
    rows, cols = big.matched_labels(relabel(zp), relabel(wp))
    assert big.risk == pytest.approx(l_item(Z, W, rows, cols, match=False).mean(), abs=1e-15)
    with pytest.raises(ValueError, match="z_pred holds the label 5, which the scored labels do not have"):
        big.matched_labels(np.full(80, 5), relabel(wp))


def test_conditional_risk_without_enumeration_is_flagged():
    rng = np.random.default_rng(4)
    z0, w0 = rng.integers(0, 8, 80), rng.integers(0, 8, 80)
    Z, W = gibbs_like(rng, z0, 8, 30, 0.2), gibbs_like(rng, w0, 8, 30, 0.2)
    result = conditional_risk(Z, W, z0, w0)
    assert not result.exact
    assert result.risk == pytest.approx(l_item(Z, W, z0, w0, match=False).mean(), abs=1e-15)


def test_conditional_risk_identical_sets_and_single_set():
    z, w = np.array([0, 0, 1, 2]), np.array([1, 0, 1])
    result = conditional_risk(np.tile(z, (10, 1)), np.tile(w, (10, 1)), 2 - z, w)
    assert result.risk == 0.0 and result.mcse == 0.0 and result.cari_mean == 1.0
    assert result.cari_sd == 0.0
    short = conditional_risk(np.tile(z, (9, 1)), np.tile(w, (9, 1)), 2 - z, w)  # a chain of 9: no MCSE
    assert short.risk == 0.0 and math.isnan(short.mcse)
    single = conditional_risk(z, w, z, w)
    assert single.n_sets == 1 and math.isnan(single.mcse) and math.isnan(single.cari_sd)


def test_chain_lengths():
    assert risk_module._chain_lengths(10, 3, None) == [4, 3, 3]
    assert risk_module._chain_lengths(10, 1, [6, 4]) == [6, 4]
    with pytest.raises(ValueError, match="sum to"):
        risk_module._chain_lengths(10, 1, [6, 5])
    with pytest.raises(ValueError, match="n_chains"):
        risk_module._chain_lengths(3, 4, None)
    with pytest.raises(ValueError, match="contradicts"):
        risk_module._chain_lengths(10, 3, [5, 5])
    with pytest.raises(TypeError, match="n_chains"):
        risk_module._chain_lengths(10, 1.5, None)


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


def test_item_losses_identity_matching_and_bad_input():
    rng = np.random.default_rng(5)
    Z, W = rng.integers(0, 3, (7, 12)), rng.integers(0, 2, (7, 9))
    z, w = rng.integers(0, 3, 12), rng.integers(-1, 2, 9)  # -1: an unmatched cluster
    row_loss, col_loss = item_losses(Z, W, z, w)
    assert row_loss.shape == col_loss.shape == (7,)
    np.testing.assert_array_equal(row_loss, l_row(Z, z, match=False))
    np.testing.assert_array_equal(col_loss, l_col(W, w, match=False))
    items = row_loss + col_loss - row_loss * col_loss
    np.testing.assert_allclose(items, l_item(Z, W, z, w, match=False), rtol=0, atol=1e-15)
    # one set given as a vector
    one_row, one_col = item_losses(Z[0], W[0], z, w)
    assert one_row.tolist() == [row_loss[0]] and one_col.tolist() == [col_loss[0]]
    with pytest.raises(ValueError, match=r"equally many label sets.*\(7, 12\).*\(6, 9\)"):
        item_losses(Z, W[:6], z, w)
    with pytest.raises(ValueError, match=r"z must have length 12, got shape \(11,\)"):
        item_losses(Z, W, z[:11], w)
    with pytest.raises(ValueError, match=r"gibbs_rows must be non-negative"):
        item_losses(Z - 1, W, z, w)
    with pytest.raises(TypeError, match=r"w must hold integer labels"):
        item_losses(Z, W, z, w + 0.5)
