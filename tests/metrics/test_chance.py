"""Tests of lbm_bench.metrics.chance: the chance level of the conditional risk."""

from __future__ import annotations

import math

import numpy as np
import pytest

from lbm_bench.metrics import chance_risk, conditional_risk


def test_chance_risk_is_what_random_labels_score():
    """The chance level is the mean conditional risk of labellings drawn from the proportions
    (scored with their own matching): reproducible from its seed, within 4 standard errors
    of an independent Monte Carlo over all sets, below the fixed-matching value 1 - 1/g per
    side for equal proportions, and close to it on a large table."""
    rng = np.random.default_rng(5)
    pi, rho = np.array([0.5, 0.3, 0.2]), np.array([0.6, 0.4])
    z = rng.choice(3, size=120, p=pi)
    w = rng.choice(2, size=60, p=rho)
    rows = np.where(rng.random((200, 120)) < 0.1, rng.integers(0, 3, (200, 120)), z)
    cols = np.where(rng.random((200, 60)) < 0.05, rng.integers(0, 2, (200, 60)), w)
    risk, se = chance_risk(rows, cols, pi, rho, rng=0)
    assert (risk, se) == chance_risk(rows, cols, pi, rho, rng=0)
    assert 0 < se < 0.01
    independent = [conditional_risk(rows, cols, rng.choice(3, 120, p=pi), rng.choice(2, 60, p=rho)).risk
                   for _ in range(40)]
    assert abs(np.mean(independent) - risk) <= 4 * math.hypot(se, np.std(independent) / math.sqrt(40))
    # equal proportions: 1 - 1/g per side under a fixed matching; the fitted matching gains a little
    big_rows = rng.integers(0, 2, size=(30, 4000))
    big_cols = rng.integers(0, 2, size=(30, 4000))
    big, big_se = chance_risk(big_rows, big_cols, [0.5, 0.5], [0.5, 0.5], n_draws=10, rng=1)
    assert 0.75 - 0.02 < big < 0.75 and big_se < 0.005
    small, _ = chance_risk(big_rows[:, :20], big_cols[:, :20], [0.5, 0.5], [0.5, 0.5], rng=1)
    assert small < big - 0.01  # on 20 items the matching fitted to the draws gains more


def test_chance_risk_checks_its_inputs():
    sets = np.zeros((4, 6), dtype=int)
    with pytest.raises(ValueError, match="row_proportions must sum to 1"):
        chance_risk(sets, sets, [0.5, 0.6], [0.5, 0.5])
    with pytest.raises(ValueError, match="n_draws must be >= 2"):
        chance_risk(sets, sets, [0.5, 0.5], [0.5, 0.5], n_draws=1)
    with pytest.raises(ValueError, match="equally many label sets"):
        chance_risk(sets, sets[:3], [0.5, 0.5], [0.5, 0.5])
