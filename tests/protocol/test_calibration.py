"""Calibration of the scale: root finding, sequential tables, common random numbers, the
unbiasedness identity behind it, and the guard against leaks into the X-only classifier."""

import math

import numpy as np
import pytest

from lbm_bench import calibrate_scale, floor_certificate, gibbs_labels, random_design
from lbm_bench.protocol.calibration import (
    CommonRandomNumbers,
    classifier_labels,
    table_gap,
)
from lbm_bench.protocol.scale_search import (
    AUTO_FIRST_TABLES,
    AUTO_SPREAD_FRACTION,
    GAP_MAP_SE_FRACTION,
    GAP_MAX_TABLES,
    GAP_SE_FRACTION,
)
from lbm_bench.protocol.separation import first_guess, predicted_error


@pytest.mark.parametrize("kind", ["gaussian", "poisson", "bernoulli"])
@pytest.mark.parametrize("criterion", ["map", "bayes"])
def test_secant_meets_target_with_auto_tables(kind, criterion):
    result = calibrate_scale(kind, 40, 30, 2, 2, 0.1, criterion=criterion, rng=1)
    assert abs(result.mean_error - 0.1) <= result.tolerance
    assert result.method == "secant" and result.criterion == criterion
    history = result.history
    assert history.shape == (result.n_steps, 4)
    assert history[0, 3] == AUTO_FIRST_TABLES
    assert np.all(np.diff(history[:, 3]) >= 0)  # tables are only ever added
    assert result.n_tables == history[-1, 3] and result.scale == history[-1, 0]
    # stops at the standard error aimed at (half the tolerance or a quarter of the
    # tables' spread, whichever is looser), or at the most tables
    se = result.error_std / math.sqrt(result.n_tables)
    aimed = max(0.5 * result.tolerance, AUTO_SPREAD_FRACTION * result.error_std)
    assert se <= aimed * 1.0001 or result.n_tables == 200
    assert result.n_tables <= math.ceil(AUTO_SPREAD_FRACTION ** -2)
    if criterion == "map":
        assert result.gap == 0.0 and result.gap_history is None
        assert result.mean_error == history[-1, 1]
    else:  # the MAP's mean minus the gap measured at the calibrated scale
        gaps = result.gap_history
        assert gaps.shape[1] == 4 and gaps[-1, 0] == result.scale and result.gap == gaps[-1, 1]
        assert result.mean_error == pytest.approx(history[-1, 1] - result.gap, abs=1e-15)
        # the gap to the looser of a quarter of the tolerance and half the MAP mean's SE
        aimed = max(GAP_SE_FRACTION * result.tolerance, GAP_MAP_SE_FRACTION * se)
        assert gaps[-1, 2] / math.sqrt(gaps[-1, 3]) <= aimed * 1.15 or gaps[-1, 3] == GAP_MAX_TABLES


def test_fixed_number_of_tables_and_bisection_kept():
    fixed = calibrate_scale("gaussian", 40, 30, 2, 2, 0.1, n_tables=30, rng=2)
    assert set(fixed.history[:, 3]) == {30} and abs(fixed.mean_error - 0.1) <= fixed.tolerance
    old = calibrate_scale("gaussian", 40, 30, 2, 2, 0.1, n_tables=30, method="bisection", rng=2)
    assert old.method == "bisection" and old.history[0, 0] == 1.0  # the paper's start
    assert abs(old.mean_error - 0.1) <= old.tolerance
    # same design, same tables: both scales are roots of the same smooth curve
    assert fixed.scale == pytest.approx(old.scale, rel=0.1)


def test_errors_are_cached_and_extended_table_by_table():
    design = random_design("bernoulli", 2, 2, rng=0)
    crn = CommonRandomNumbers(design, 30, 20, 12, np.random.SeedSequence(3), criterion="map")
    first = crn.errors(0.8, 5, 4)
    more = crn.errors(0.8, 12, 4)
    assert np.array_equal(more[:5], first)
    fresh = CommonRandomNumbers(design, 30, 20, 12, np.random.SeedSequence(3), criterion="map")
    assert np.array_equal(fresh.apparent_errors(0.8, 4), more)


def test_no_state_carried_across_scales():
    """Guard: a table's classifier at one scale uses nothing found at another scale."""
    design = random_design("gaussian", 3, 2, rng=4)
    seed = np.random.SeedSequence(5)
    direct = CommonRandomNumbers(design, 30, 25, 6, seed, criterion="bayes")
    errors, gaps = direct.errors(0.6, 6, 3), direct.gaps(0.6, 4, 3)
    crn = CommonRandomNumbers(design, 30, 25, 6, seed, criterion="bayes")
    for scale in (0.3, 1.2):
        crn.errors(scale, 6, 3)
        crn.gaps(scale, 4, 3)
    assert np.array_equal(crn.errors(0.6, 6, 3), errors)
    assert np.array_equal(crn.gaps(0.6, 4, 3), gaps)


@pytest.mark.parametrize("jobs", [2])
def test_same_errors_whatever_the_number_of_workers(jobs):
    design = random_design("gaussian", 2, 2, rng=9)
    seed = np.random.SeedSequence(10)
    one = CommonRandomNumbers(design, 30, 20, 7, seed, criterion="bayes")
    many = CommonRandomNumbers(design, 30, 20, 7, seed, criterion="bayes", jobs=jobs)
    assert np.array_equal(one.apparent_errors(0.5, 3), many.apparent_errors(0.5, 3))
    assert np.array_equal(one.table_gaps(0.5, 3, range(3)), many.table_gaps(0.5, 3, range(3)))


@pytest.mark.parametrize("kind", ["gaussian", "poisson", "bernoulli"])
def test_first_guess_is_near_the_calibrated_scale(kind):
    design = random_design(kind, 3, 3, rng=11)
    scale, slope = first_guess(design, 200, 100, 0.1)
    assert slope < 0
    assert predicted_error(design, 200, 100, scale) == pytest.approx(0.1, abs=1e-3)
    result = calibrate_scale(kind, 200, 100, 3, 3, 0.1, design=design, criterion="map", rng=12)
    assert 0.7 < scale / result.scale < 1.4


def test_bad_arguments():
    with pytest.raises(ValueError, match="n_tables"):
        calibrate_scale("gaussian", 20, 20, 2, 2, 0.1, n_tables="many")
    with pytest.raises(ValueError, match="criterion"):
        calibrate_scale("gaussian", 20, 20, 2, 2, 0.1, criterion="median")
    with pytest.raises(ValueError, match="method"):
        calibrate_scale("gaussian", 20, 20, 2, 2, 0.1, method="newton")
    with pytest.raises(ValueError, match="jobs"):
        calibrate_scale("gaussian", 20, 20, 2, 2, 0.1, jobs=0)
    with pytest.raises(ValueError, match="spread_fraction.*1.5"):
        calibrate_scale("gaussian", 20, 20, 2, 2, 0.1, spread_fraction=1.5)


def test_spread_bounds_the_number_of_tables():
    """Widely spread errors (small tables at a high risk): the mean is measured to a
    quarter of the spread, 16 tables; without the spread bound, to half the tolerance."""
    bounded = calibrate_scale("bernoulli", 50, 40, 2, 2, 0.2, criterion="map", rng=3)
    assert bounded.error_std > 8 * 0.5 * bounded.tolerance  # so the spread's rule is the looser
    assert bounded.n_tables == math.ceil(AUTO_SPREAD_FRACTION ** -2) == 16
    assert abs(bounded.mean_error - 0.2) <= bounded.tolerance
    precise = calibrate_scale("bernoulli", 50, 40, 2, 2, 0.2, criterion="map", spread_fraction=0, rng=3)
    assert precise.n_tables > 100
    se = precise.error_std / math.sqrt(precise.n_tables)
    assert se <= 0.5 * precise.tolerance * 1.0001 or precise.n_tables == 200
    # same design and tables: both scales are roots of nearly the same curve
    assert bounded.scale == pytest.approx(precise.scale, rel=0.1)


def test_mean_apparent_error_equals_mean_conditional_risk():
    """The identity that makes calibration sound: for an X-only classifier, the apparent
    error against the generating labels has, over tables, the mean of its conditional risk.

    Over 300 tables at one scale, the paired difference (apparent error - Gibbs estimate
    of the conditional risk of the same labels, 400 sets from chains started at the
    classifier's labels, independent of the generating labels) must be 0 within 3
    standard errors.
    """
    design = random_design("gaussian", 2, 2, rng=13)
    n_rows, n_cols, n_tables, scale = 30, 24, 300, 0.45
    crn = CommonRandomNumbers(design, n_rows, n_cols, n_tables, np.random.SeedSequence(14))
    model = design.model(scale)
    errors = crn.errors(scale, n_tables, 3)
    differences = np.empty(n_tables)
    for t in range(n_tables):
        z0, w0 = crn.table_labels(t)
        X = model.table_from_noise(crn.noise(t), z0, w0)
        # the classifier the calibration ran on table t (it is given X and the seed only)
        (rows, cols), = classifier_labels(model, X[None], [crn.table_seeds[t]], 3)
        row, col = np.mean(rows != z0), np.mean(cols != w0)
        assert errors[t] == row + col - row * col
        samples = gibbs_labels(model, X, n_samples=400, n_chains=4, burn_in=30, init=[(rows, cols)],
                               rng=np.random.default_rng(1000 + t))
        differences[t] = errors[t] - samples.risk(rows, cols).risk
    mean, se = differences.mean(), differences.std(ddof=1) / math.sqrt(n_tables)
    assert 0.05 < errors.mean() < 0.3  # a scale where the classifier errs, not a trivial one
    assert abs(mean) <= 3 * se, (mean, se)


def test_mean_floor_of_the_calibration_is_the_mean_certified_floor():
    """What criterion="bayes" calibrates: over tables at one scale, the MAP's mean
    apparent error minus the mean gap (short runs, as the calibration measures them)
    equals the mean floor certificate (2,000 sets, as generate_table certifies).

    200 Poisson 40x30 tables; the two means are compared within 3 standard errors of
    their difference plus 0.002: the short run's cross-fitted floor chooses labels on
    100 sets, not 1,000, which biases the gap low by a little (measured: +0.0008 on
    20 Poisson 300x200 tables at 10%).
    """
    design = random_design("poisson", 3, 2, rng=21)
    n_rows, n_cols, n_tables, scale = 40, 30, 200, 0.5
    crn = CommonRandomNumbers(design, n_rows, n_cols, n_tables, np.random.SeedSequence(22), criterion="bayes")
    model = design.model(scale)
    errors = crn.errors(scale, n_tables, 3)
    gaps = crn.gaps(scale, n_tables, 3)
    floors = np.empty(n_tables)
    for t in range(n_tables):
        z0, w0 = crn.table_labels(t)
        X = model.table_from_noise(crn.noise(t), z0, w0)
        (rows, cols), = classifier_labels(model, X[None], [crn.table_seeds[t]], 3)
        samples = gibbs_labels(model, X, n_samples=2000, n_chains=8, init=[(z0, w0), (rows, cols)],
                               rng=np.random.default_rng(5000 + t))
        floors[t] = floor_certificate(samples, starts=[(rows, cols)]).risk.risk
    assert 0.05 < floors.mean() < 0.3 and gaps.mean() > 0
    difference = errors - gaps - floors
    se = difference.std(ddof=1) / math.sqrt(n_tables)
    assert abs(difference.mean()) <= 3 * se + 0.002, (difference.mean(), se)


def test_table_gap_is_about_zero_at_the_bayes_labels_and_positive_at_a_worse_map():
    """The gap of the Bayes labels (from a long run) is 0 within the short run's error;
    on this table the 3-start MAP is much worse than the floor and its gap says so."""
    design = random_design("gaussian", 3, 3, rng=23)
    model = design.model(0.6)
    X, _, _ = model.sample(40, 30, rng=24)
    (rows, cols), = classifier_labels(model, X[None], [np.random.SeedSequence(25)], 3)
    samples = gibbs_labels(model, X, n_samples=2000, n_chains=8, init=[(rows, cols)], rng=3)
    floor = floor_certificate(samples, starts=[(rows, cols)])
    long_gap = samples.risk(rows, cols).risk - floor.risk.risk
    assert long_gap > 0.05
    assert table_gap(model, X, rows, cols, rng=26) == pytest.approx(long_gap, abs=0.02)
    assert abs(table_gap(model, X, floor.rows, floor.cols, rng=26)) < 0.01
    assert table_gap(model, X, rows, cols, rng=26) == table_gap(model, X, rows, cols, rng=26)


def test_calibration_record_round_trip(tmp_path):
    """The file keeps every evaluation (scale, mean error, sd, n_tables) and the method."""
    import h5py

    from lbm_bench import FormatError, generate_table, load_table, save_table

    table = generate_table("bernoulli", 40, 30, 2, 2, 0.15, tolerance=0.05, n_samples=200,
                           criterion="map", rng=15)
    cal = table.calibration
    assert cal.method == "secant" and cal.history.shape == (cal.n_steps, 4)
    save_table(table, tmp_path / "t.h5")
    loaded = load_table(tmp_path / "t.h5").calibration
    assert loaded.method == "secant" and np.array_equal(loaded.history, cal.history)
    assert loaded.scale == cal.scale and loaded.n_tables == cal.n_tables
    with h5py.File(tmp_path / "t.h5", "r+") as f:  # the method goes with the 4-column history
        assert f.attrs["format_version"] == b"1.1" or f.attrs["format_version"] == "1.1"
        del f["calibration"].attrs["method"]
    with pytest.raises(FormatError, match="calibration@method is missing"):
        load_table(tmp_path / "t.h5")


def test_masks_are_common_random_numbers_whatever_the_batches_and_workers():
    """With missing entries, a table's mask is drawn from its own seed: the errors do not
    depend on batching or workers, and the masks of a higher rate are nested in a lower one's."""
    import dataclasses

    from lbm_bench.models.missing import MissingDesign

    base = random_design("gaussian", 2, 2, rng=9)
    design = dataclasses.replace(base, missing=MissingDesign(0.3))
    seed = np.random.SeedSequence(10)
    one = CommonRandomNumbers(design, 30, 20, 5, seed, criterion="bayes")
    alone = CommonRandomNumbers(design, 30, 20, 5, seed, criterion="bayes", batch_bytes=1)
    many = CommonRandomNumbers(design, 30, 20, 5, seed, criterion="bayes", jobs=2)
    errors = one.apparent_errors(0.5, 3)
    assert np.array_equal(errors, alone.apparent_errors(0.5, 3))
    assert np.array_equal(errors, many.apparent_errors(0.5, 3))
    assert np.array_equal(one.table_gaps(0.5, 3, range(2)), many.table_gaps(0.5, 3, range(2)))
    higher = CommonRandomNumbers(dataclasses.replace(base, missing=MissingDesign(0.6)), 30, 20, 5, seed)
    probs = np.full((2, 2), 0.3)
    low = one.mask_noise(0).observed(probs, *one.table_labels(0))
    high = higher.mask_noise(0).observed(np.full((2, 2), 0.6), *higher.table_labels(0))
    assert np.all(high <= low) and high.mean() < low.mean()
    assert np.array_equal(one.table_labels(0)[0], higher.table_labels(0)[0])
