"""Calibration (dichotomy with common random numbers) and rejection sampling."""

import numpy as np
import pytest

from lbm_bench import calibrate_scale, generate_table, random_design
from lbm_bench.protocol.common_random_numbers import CommonRandomNumbers
from lbm_bench.protocol.generate import RejectionError
from lbm_bench.protocol.separation import guessing_risk


@pytest.mark.parametrize("kind", ["gaussian", "poisson", "bernoulli"])
def test_calibration_meets_target(kind):
    result = calibrate_scale(kind, 40, 30, 2, 2, 0.1, n_tables=40, rng=1)
    assert abs(result.mean_error - 0.1) <= result.tolerance
    assert result.tolerance == pytest.approx(0.005)
    assert result.history.shape == (result.n_steps, 4)
    low, high = result.bracket
    assert low <= result.scale <= high
    assert result.design is not None and result.design.kind == kind


def test_common_random_numbers_make_error_monotone():
    """With common random numbers the mean apparent error is a monotone function of
    the scale on a fine grid (without them it would jitter by its Monte Carlo error)."""
    design = random_design("gaussian", 3, 3, rng=2)
    crn = CommonRandomNumbers(design, 30, 30, 30, np.random.SeedSequence(3))
    scales = np.linspace(0.3, 0.9, 13)
    errors = [crn.apparent_errors(s, n_init=4).mean() for s in scales]
    assert np.all(np.diff(errors) <= 0.002), errors
    # same scale, same numbers
    assert np.array_equal(crn.apparent_errors(0.5, 4), crn.apparent_errors(0.5, 4))


def test_calibration_reproducible():
    a = calibrate_scale("bernoulli", 30, 30, 2, 2, 0.15, n_tables=20, rng=4)
    b = calibrate_scale("bernoulli", 30, 30, 2, 2, 0.15, n_tables=20, rng=4)
    assert a.scale == b.scale and np.array_equal(a.history, b.history)


@pytest.mark.parametrize(
    "target, match",
    [(0.9, "guessing"), (1e-5, "below 1/"), (0.0, "target_risk must lie in"), (1.5, "target_risk")],
)
def test_unreachable_targets(target, match):
    with pytest.raises(ValueError, match=match):
        calibrate_scale("gaussian", 20, 20, 2, 2, target, n_tables=5, rng=0)


def test_calibration_bad_arguments():
    with pytest.raises(ValueError, match="more clusters than rows"):
        calibrate_scale("gaussian", 3, 20, 4, 2, 0.1)
    with pytest.raises(ValueError, match="kind must be one of"):
        calibrate_scale("normal", 20, 20, 2, 2, 0.1)
    with pytest.raises(ValueError, match="n_tables must be >= 1"):
        calibrate_scale("gaussian", 20, 20, 2, 2, 0.1, n_tables=0)


def test_guessing_risk():
    assert guessing_risk(np.array([0.5, 0.5]), np.array([0.25, 0.75])) == pytest.approx(
        0.5 + 0.25 - 0.125
    )


def test_generated_table_meets_target_and_is_reproducible():
    kwargs = dict(tolerance=0.02, n_samples=400, n_calibration_tables=30, rng=5)
    table = generate_table("gaussian", 40, 30, 2, 2, 0.1, **kwargs)
    assert table.criterion == "bayes" and table.certified_risk is table.bayes_risk
    assert abs(table.bayes_risk.risk - 0.1) <= 0.02
    assert table.bayes_rows.shape == (40,) and table.bayes_cols.shape == (30,)
    assert table.gibbs.rows.shape == (400, 40) and table.gibbs.cols.shape == (400, 30)
    assert table.seed == 5
    assert table.rejection.attempts >= 1
    assert table.rejection.acceptance_rate == pytest.approx(1 / table.rejection.attempts)
    assert len(table.rejection.candidate_risks) == table.rejection.attempts
    assert set(table.timings) == {"calibration", "rejection", "gibbs", "floor"}
    again = generate_table("gaussian", 40, 30, 2, 2, 0.1, **kwargs)
    assert again.data.tobytes() == table.data.tobytes()
    assert again.gibbs.rows.tobytes() == table.gibbs.rows.tobytes()
    assert again.risk == table.risk and again.bayes_risk == table.bayes_risk
    assert np.array_equal(again.bayes_rows, table.bayes_rows)


@pytest.mark.parametrize("kind", ["gaussian", "bernoulli"])
def test_kept_tables_centred_on_target(kind):
    """Over 24 kept 40x40 tables at 10% risk: the mean stored risk within 0.01 of the
    target (each is within the 0.02 rejection tolerance) and the mean apparent error
    of the X-only MAP within 0.03 (its per-table spread is about 0.06, so the
    standard error of the mean is about 0.012). This holds only because the MAP
    does not peek at the generating labels."""
    calibration = calibrate_scale(kind, 40, 40, 2, 2, 0.1, n_tables=100, rng=6)
    risks, apparent = [], []
    for seed in range(24):
        table = generate_table(kind, 40, 40, 2, 2, 0.1, tolerance=0.02, n_samples=500,
                               calibration=calibration, criterion="map", rng=100 + seed)
        risks.append(table.risk.risk)
        lr = np.mean(table.map_rows != table.truth_rows)
        lc = np.mean(table.map_cols != table.truth_cols)
        apparent.append(lr + lc - lr * lc)
    assert abs(np.mean(risks) - 0.1) <= 0.01
    assert abs(np.mean(apparent) - 0.1) <= 0.03


def test_balance_option_and_rejection_error():
    calibration = calibrate_scale("gaussian", 40, 30, 2, 2, 0.1, n_tables=30, rng=7)
    with pytest.raises(RejectionError, match="no table within"):
        generate_table("gaussian", 40, 30, 2, 2, 0.1, tolerance=1e-6, max_attempts=3,
                       n_samples=200, calibration=calibration, rng=1)
    table = generate_table("gaussian", 40, 30, 2, 2, 0.1, tolerance=0.03, balance=0.3,
                           n_samples=300, calibration=calibration, rng=2)
    low, high = sorted((table.bayes_risk.row_loss, table.bayes_risk.col_loss))
    assert low >= 0.3 * high
    assert table.rejection.balance == 0.3


@pytest.mark.parametrize("kind", ["gaussian", "poisson", "bernoulli"])
def test_criteria_bayes_and_map(kind):
    """Both criteria store both risks; the target applies to the criterion's risk;
    the floor is never above the MAP's risk beyond Monte Carlo error, and plain
    marginal modes do not beat the stored Bayes labels."""
    from lbm_bench.inference.bayes import expected_item_loss, label_frequencies

    calibration = calibrate_scale(kind, 50, 40, 3, 2, 0.2, n_tables=40, rng=3)
    for criterion in ("bayes", "map"):
        table = generate_table(kind, 50, 40, 3, 2, 0.2, tolerance=0.03, n_samples=600,
                               calibration=calibration, criterion=criterion, rng=11)
        assert table.criterion == criterion and table.request.criterion == criterion
        judged = table.bayes_risk if criterion == "bayes" else table.risk
        assert table.certified_risk is judged
        assert abs(judged.risk - 0.2) <= 0.03
        assert table.rejection.candidate_risks[-1] == judged.risk
        floor, map_risk = table.bayes_risk, table.risk
        assert floor.risk <= map_risk.risk + 3 * floor.mcse
        rows, cols = table.gibbs.rows, table.gibbs.cols
        modes = label_frequencies(rows, 3).argmax(1), label_frequencies(cols, 2).argmax(1)
        ours = expected_item_loss(rows, cols, table.bayes_rows, table.bayes_cols)
        assert ours <= expected_item_loss(rows, cols, *modes) + 1e-12
        assert ours <= expected_item_loss(rows, cols, table.map_rows, table.map_cols) + 1e-12
        r, c = table.posterior_marginals()
        assert r.shape == (50, 3) and c.shape == (40, 2) and r.dtype == np.float32
        np.testing.assert_allclose(r.sum(1), 1, atol=1e-6)


def test_floor_confirmed_by_fresh_draws():
    """The stored floor is confirmed by an independent Gibbs run (fresh draws, chains
    from the MAP): the stored Bayes labels score there within 4 combined MCSE."""
    from lbm_bench import gibbs_labels

    table = generate_table("bernoulli", 60, 50, 3, 3, 0.2, tolerance=0.03, n_samples=1000,
                           n_calibration_tables=40, rng=21)
    fresh = gibbs_labels(table.model, table.data, n_samples=2000, init=(table.map_rows, table.map_cols),
                         rng=99)
    again = fresh.risk(table.bayes_rows, table.bayes_cols)
    stored = table.bayes_risk
    assert abs(again.risk - stored.risk) <= 4 * (again.mcse**2 + stored.mcse**2) ** 0.5 + 0.002
    assert again.risk <= fresh.risk(table.map_rows, table.map_cols).risk + 3 * again.mcse


def test_generate_bad_arguments():
    with pytest.raises(ValueError, match="tolerance"):
        generate_table("gaussian", 20, 20, 2, 2, 0.1, tolerance=-1)
    with pytest.raises(ValueError, match="balance"):
        generate_table("gaussian", 20, 20, 2, 2, 0.1, balance=2.0)
    with pytest.raises(ValueError, match="non-negative seed"):
        generate_table("gaussian", 20, 20, 2, 2, 0.1, rng=-3)
    with pytest.raises(ValueError, match="criterion"):
        generate_table("gaussian", 20, 20, 2, 2, 0.1, criterion="floor")


@pytest.mark.parametrize("kind", ["gaussian", "poisson", "bernoulli"])
def test_batched_calibration_equals_one_by_one(kind):
    """Each table draws its MAP starts from its own stream, so batching the tables
    (any batch size) gives the same apparent errors as running them one by one."""
    design = random_design(kind, 3, 2, rng=5)
    seed = np.random.SeedSequence(6)
    errors = [
        CommonRandomNumbers(design, 30, 20, 12, seed, batch_bytes=b).apparent_errors(0.8, 4)
        for b in (1, 5 * 2 * 2 * 30 * 20 * 8, 2**30)
    ]
    crn = CommonRandomNumbers(design, 30, 20, 12, seed, batch_bytes=5 * 2 * 2 * 30 * 20 * 8)
    assert [len(b) for b in crn.batches()] == ([5, 5, 2] if design.model(1.0).n_stats == 2 else [10, 2])
    assert np.array_equal(errors[0], errors[1]) and np.array_equal(errors[0], errors[2])
    assert 0.0 < errors[0].mean() < 0.5


def test_calibration_batches_are_cache_sized():
    """Default batches hold about 2 MiB of statistics: small tables together, large alone."""
    small = CommonRandomNumbers(random_design("gaussian", 2, 2, rng=0), 50, 50, 200, np.random.SeedSequence(0))
    assert [len(b) for b in small.batches()][:2] == [26, 26]  # 2 MiB / (2 layouts x 2 stats x 2500 x 8 B)
    large = CommonRandomNumbers(random_design("bernoulli", 2, 2, rng=0), 400, 400, 3, np.random.SeedSequence(0))
    assert [len(b) for b in large.batches()] == [1, 1, 1]


def test_generate_table_spreads_a_large_tables_chains_with_the_same_bytes(monkeypatch):
    """jobs= and backend=: the calibration's tables and the chains (the table counts as large
    here) over 2 loky workers give the table of one process, bit for bit."""
    from lbm_bench.tasks import large

    monkeypatch.setattr(large, "LARGE_TABLE_ENTRIES", 1)
    request = dict(tolerance=0.05, n_samples=200, screen_samples=0, n_calibration_tables=4, rng=5)
    one = generate_table("bernoulli", 40, 30, 2, 2, 0.15, density=0.3, **request)
    two = generate_table("bernoulli", 40, 30, 2, 2, 0.15, density=0.3, jobs=2, backend="loky", **request)
    assert (one.data != two.data).nnz == 0 and one.scale == two.scale
    assert one.gibbs.rows.tobytes() == two.gibbs.rows.tobytes()
    assert one.gibbs.cols.tobytes() == two.gibbs.cols.tobytes() and one.risk == two.risk


@pytest.mark.parametrize("arguments, message", [
    ({"jobs": 0}, "jobs"),
    ({"backend": "spark"}, "backend"),
    ({"scheduler": "tcp://127.0.0.1:1"}, "a scheduler address needs backend='dask', got backend='loky'"),
])
def test_generate_table_checks_its_workers_at_the_boundary(arguments, message):
    with pytest.raises(ValueError, match=message):
        generate_table("bernoulli", 40, 30, 2, 2, 0.15, rng=5, **arguments)
