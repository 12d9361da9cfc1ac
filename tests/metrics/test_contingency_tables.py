"""Tests of lbm_bench.metrics.contingency_tables: memory budgets and validation of every metric input."""

from __future__ import annotations

import numpy as np
import pytest

from lbm_bench.metrics import (
    ami,
    ari,
    cari,
    conditional_risk,
    contingency,
    contingency_tables,
    l_item,
    l_row,
    nmi,
    partition,
    rand,
)
from tests.metrics.helpers import (
    gibbs_like,
)


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
    monkeypatch.setattr(contingency_tables, "CELL_BUDGET", 8)
    monkeypatch.setattr(partition, "_EMI_BUDGET", 5)
    monkeypatch.setattr(contingency_tables, "INT64_SQUARE_LIMIT", 1)  # Python-int sums of squares
    got = compute()
    for want, have in zip(expected[:-1], got[:-1], strict=True):
        np.testing.assert_allclose(have, want, rtol=0, atol=1e-14)
    assert expected[-1].exact and not got[-1].exact
    assert got[-1].risk == expected[-1].risk
    assert got[-1].cari_mean == expected[-1].cari_mean


def test_different_lengths_name_arguments_and_shapes():
    with pytest.raises(ValueError, match=r"a and b .* \(3,\) and \(2,\)"):
        ari([0, 1, 1], [0, 1])
    with pytest.raises(ValueError, match=r"z and z_pred .* \(2, 3\) and \(2,\)"):
        l_row([[0, 1, 1], [0, 0, 1]], [0, 1])
    with pytest.raises(ValueError, match=r"w and w_pred"):
        cari([0, 1], [0, 1, 1], [0, 1], [0, 1])
    with pytest.raises(ValueError, match=r"a and b"):
        contingency([0, 1], [0, 1, 2])


def test_other_bad_input():
    with pytest.raises(TypeError, match=r"a must hold integer labels, got dtype float64"):
        ari([0.5, 1.0], [0, 1])
    with pytest.raises(TypeError, match=r"b must hold integer labels"):
        nmi([0, 1], ["x", "y"])
    with pytest.raises(TypeError, match=r"z_pred must hold integer labels"):
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
