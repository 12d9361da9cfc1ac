"""The calibration's root finding (lbm_bench.protocol.scale_search) on tables whose risks are known in
closed form: the secant and the paper's bisection meet the target within the tolerance, every
evaluation is recorded once, the sequential number of tables grows only as the cost rule asks, and a
target no scale reaches is refused in words."""

import math

import numpy as np
import pytest
from scipy import special

from lbm_bench import random_design
from lbm_bench.protocol.scale_search import (
    AUTO_FIRST_TABLES,
    AUTO_MOST_TABLES,
    cost_optimal_tables,
    first_tables,
    search_scale,
)


class ClosedForm:
    """Common random numbers whose table ``t`` has risk ``expit(offset_t - slope log(scale / scale0))``:
    the same tables at every scale, as the calibration's are."""

    criterion = "map"

    def __init__(self, n_tables=40, scale0=1.7, slope=2.5, spread=0.3, n_rows=200, n_cols=100, floor=0.0):
        self.design = random_design("gaussian", 2, 2, equal_proportions=True, rng=0)
        self.n_tables, self.n_rows, self.n_cols = n_tables, n_rows, n_cols
        self.scale0, self.slope, self.floor = scale0, slope, floor
        self.offsets = special.logit(0.1) + spread * np.random.default_rng(1).standard_normal(n_tables)
        self.calls = []

    def risks(self, scale, n, n_init):
        self.calls.append((scale, n))
        risk = special.expit(self.offsets[:n] - self.slope * math.log(scale / self.scale0))
        return self.floor + (1 - self.floor) * risk

    def mean(self, scale, n=None):
        return float(self.risks(scale, n or self.n_tables, 0).mean())


@pytest.mark.parametrize("target", [0.05, 0.1, 0.2])
def test_the_secant_meets_the_target(target):
    crn = ClosedForm()
    result = search_scale(crn, target, 0.005, 10, 30, None, "secant", True, 0.5)
    assert abs(result.mean_error - target) <= 0.005 or abs(result.mean_error - target) <= 0.5 * result.error_std
    assert abs(crn.mean(result.scale, result.n_tables) - result.mean_error) < 1e-12
    assert result.method == "secant" and result.criterion == "map" and result.target_risk == target
    assert result.n_steps == len(result.history) and result.history.shape[1] == 4
    assert AUTO_FIRST_TABLES <= result.n_tables <= crn.n_tables
    assert result.bracket[0] <= result.scale <= result.bracket[1]


def test_the_bisection_meets_the_target_on_every_table():
    crn = ClosedForm(n_tables=20)
    result = search_scale(crn, 0.1, 0.005, 10, 40, None, "bisection", False, 0.5)
    assert abs(result.mean_error - 0.1) <= 0.005 and result.n_tables == 20
    assert {n for _, n in crn.calls} == {20}  # a fixed number of tables


def test_every_evaluation_is_recorded_once_and_reported():
    crn = ClosedForm()
    seen = []
    result = search_scale(crn, 0.1, 0.005, 10, 30, lambda scale, mean: seen.append((scale, mean)), "secant",
                          True, 0.5)
    assert len(crn.calls) == len(set(crn.calls)) == result.n_steps == len(seen)  # no evaluation twice
    assert [(h[0], h[1]) for h in result.history] == seen
    assert all(n in (result.history[:, 3]) for _, n in crn.calls)


def test_a_target_no_scale_reaches_is_refused():
    crn = ClosedForm(floor=0.3)  # every table keeps a risk of 0.3 however far apart the blocks
    with pytest.raises(ValueError, match=r"could not bracket target_risk=0.1 within 8 steps \(errors seen from 0.3"):
        search_scale(crn, 0.1, 0.005, 10, 8, None, "secant", True, 0.5)


def test_how_many_tables():
    assert first_tables(200, 100) == AUTO_FIRST_TABLES and first_tables(100_000, 10_000) == 2
    assert first_tables(1000, 1000, most=3) == 3
    assert cost_optimal_tables(0.0, 0.01, 16.0) == 1  # no spread: one table says it all
    assert cost_optimal_tables(0.05, 0.01, math.inf) == AUTO_MOST_TABLES
    counts = [cost_optimal_tables(sd, 0.01, 16.0) for sd in (0.005, 0.02, 0.05, 0.1)]
    assert counts == sorted(counts) and counts[0] < counts[-1] <= AUTO_MOST_TABLES
