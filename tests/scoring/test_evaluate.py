"""Scoring co-clusterings against the Gibbs ground truths of a table."""

import numpy as np
import pytest

from lbm_bench import calibrate_scale, evaluate, generate_table, map_labels
from lbm_bench.algorithms import cem
from lbm_bench.scoring.evaluate import read_labels


@pytest.fixture(scope="module")
def table():
    return generate_table("gaussian", 60, 40, 3, 2, 0.1, tolerance=0.02, n_samples=600,
                          n_calibration_tables=40, rng=11)


def test_map_labels_score_the_stored_risk(table):
    report = evaluate(table, table.map_rows, table.map_cols)
    assert report.excess_risk == pytest.approx(0.0, abs=1e-12) or report.excess_risk <= 0
    assert report.risk == pytest.approx(table.risk.risk, abs=max(1e-12, report.risk_mcse))
    assert report.bayes_risk == table.risk.risk
    assert report.n_samples == 600


def test_relabelled_predictions_score_the_same(table):
    rows = np.array([2, 0, 1])[table.truth_rows] + 5  # any integer labels
    cols = np.array([1, 0])[table.truth_cols]
    base = evaluate(table, table.truth_rows, table.truth_cols)
    permuted = evaluate(table, rows, cols)
    for key in ("risk", "risk_mcse", "excess_risk", "cari_mean", "cari_std", "ari_rows",
                "ari_cols", "apparent_l_item", "apparent_cari", "matching_error_rows"):
        assert getattr(permuted, key) == pytest.approx(getattr(base, key), abs=1e-12), key
    assert base.apparent_l_item == 0.0 and base.apparent_cari == 1.0


def test_true_parameter_algorithms_cannot_beat_the_reference():
    """Classifiers that know the true parameters (the truth-started MAP, which even
    peeks at the generating labels) do not beat the Bayes reference by more than
    3 paired MCSE plus 0.005 on any of 5 tables."""
    calibration = calibrate_scale("bernoulli", 50, 40, 2, 2, 0.15, n_tables=40, rng=3)
    for seed in range(5):
        table = generate_table("bernoulli", 50, 40, 2, 2, 0.15, tolerance=0.03, n_samples=800,
                               calibration=calibration, rng=seed)
        peek = map_labels(table.model, table.data, init=(table.truth_rows, table.truth_cols), n_init=0)
        report = evaluate(table, peek.rows, peek.cols)
        assert report.excess_risk >= -3 * report.excess_mcse - 0.005


def test_block_cem_recovers_easy_tables():
    table = generate_table("poisson", 80, 60, 3, 3, 0.01, tolerance=0.01, n_samples=400,
                           n_calibration_tables=40, rng=2)
    rows, cols = cem(table.data, 3, 3, rng=0)
    report = evaluate(table, rows, cols)
    assert report.risk <= 0.03
    assert report.excess_risk <= 0.02


def test_fewer_or_more_predicted_clusters(table):
    report = evaluate(table, np.zeros(60, dtype=int), np.arange(40) % 5)
    assert 0 < report.risk <= 1
    assert report.row_map[0] in (0, 1, 2)
    assert sum(v >= 0 for v in report.col_map) == 2  # only two reference column classes


def test_bad_predictions(table):
    with pytest.raises(ValueError, match="rows must have length 60"):
        evaluate(table, np.zeros(59, dtype=int), table.truth_cols)
    with pytest.raises(TypeError, match="cols must hold integer labels"):
        evaluate(table, table.truth_rows, np.full(40, 0.5))
    with pytest.raises(ValueError, match="rows must be non-negative"):
        evaluate(table, -np.ones(60, dtype=int), table.truth_cols)


def test_read_labels_formats(tmp_path):
    (tmp_path / "a.txt").write_text("3\n1\n\n2\n")
    np.testing.assert_array_equal(read_labels(tmp_path / "a.txt"), [3, 1, 2])
    (tmp_path / "b.csv").write_text('"cluster"\n1\n2\n')
    np.testing.assert_array_equal(read_labels(tmp_path / "b.csv"), [1, 2])
    np.save(tmp_path / "c.npy", np.array([0, 1, 1]))
    np.testing.assert_array_equal(read_labels(tmp_path / "c.npy"), [0, 1, 1])
    (tmp_path / "d.txt").write_text("1\n2.5\n")
    with pytest.raises(ValueError, match="line 2 is not an integer"):
        read_labels(tmp_path / "d.txt")
    np.save(tmp_path / "e.npy", np.zeros((2, 2)))
    with pytest.raises(ValueError, match="1-D"):
        read_labels(tmp_path / "e.npy")
    with pytest.raises(ValueError, match="does not exist"):
        read_labels(tmp_path / "missing.txt")
    np.save(tmp_path / "f.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(ValueError, match="not a readable .npy"):
        read_labels(tmp_path / "f.npy")
