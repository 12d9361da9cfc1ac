"""Tests of lbm_bench.metrics.label_matching: the one matching of the conditional risk (the
certified optimum itself is tested through conditional_risk, in test_risk.py)."""

from __future__ import annotations

import numpy as np
import pytest

from lbm_bench.metrics.contingency_tables import TableStack
from lbm_bench.metrics.label_matching import alternating_matchings, cluster_map
from tests.metrics.helpers import brute_conditional_risk, gibbs_like


@pytest.mark.parametrize("seed", range(15))
def test_alternating_steps_find_brute_force_optimum_on_gibbs_like_sets(seed):
    rng = np.random.default_rng(100 + seed)
    g, m = int(rng.integers(2, 4)), int(rng.integers(2, 4))
    gp, mp = g + int(rng.integers(-1, 2)), m + int(rng.integers(-1, 2))
    z0, w0 = rng.integers(0, g, 12), rng.integers(0, m, 10)
    Z, W = gibbs_like(rng, z0, g, 20, 0.4), gibbs_like(rng, w0, m, 20, 0.4)
    zp = np.where(rng.random(12) < 0.3, rng.integers(0, max(gp, 1), 12), z0 % max(gp, 1))
    wp = np.where(rng.random(10) < 0.3, rng.integers(0, max(mp, 1), 10), w0 % max(mp, 1))
    rows = TableStack(Z, int(Z.max()) + 1, zp, int(zp.max()) + 1)
    cols = TableStack(W, int(W.max()) + 1, wp, int(wp.max()) + 1)
    sigma, tau, _ = alternating_matchings(rows, cols)
    hits = np.dot(rows.hits(sigma), cols.hits(tau))
    risk = 1 - hits / (Z.shape[0] * Z.shape[1] * W.shape[1])
    assert risk == pytest.approx(brute_conditional_risk(Z, W, zp, wp), abs=1e-14)


def test_the_cluster_map_leaves_empty_and_unmatched_clusters_out():
    sets = np.array([[0, 0, 1, 1]])
    stack = TableStack(sets, 2, np.array([2, 2, 0, 0]), 4)  # predicted cluster 1 and 3 empty
    mapped = cluster_map((np.array([0, 1]), np.array([2, 0])), stack)
    assert mapped.tolist() == [1, -1, 0, -1] and not mapped.flags.writeable
