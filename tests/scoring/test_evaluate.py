"""Scoring co-clusterings against the Gibbs ground truths of a table (lbm_bench.scoring.evaluate)."""

import numpy as np
import pytest

from lbm_bench import calibrate_scale, evaluate, generate_table, map_labels
from lbm_bench.algorithms import cem


@pytest.fixture(scope="module")
def table():
    return generate_table("gaussian", 60, 40, 3, 2, 0.1, tolerance=0.02, n_samples=600,
                          n_calibration_tables=40, rng=11)


def test_map_labels_score_the_stored_risk(table):
    report = evaluate(table, table.map_rows, table.map_cols)
    assert report.map_excess_risk == pytest.approx(0.0, abs=1e-12) or report.map_excess_risk <= 0
    assert report.risk == pytest.approx(table.risk.risk, abs=max(1e-12, report.risk_mcse))
    assert report.map_risk == table.risk.risk and report.bayes_risk == table.bayes_risk.risk
    assert (report.reference, report.criterion, report.note) == ("bayes", "bayes", "")
    assert report.n_samples == 600
    # the MAP is not below the floor (paired: same sets)
    assert report.excess_risk >= -3 * report.excess_mcse - 1e-12


def test_bayes_labels_score_the_floor(table):
    """The stored Bayes labels score about the floor (in-sample, a hair below: the
    floor is cross-fitted) and the floor's paired MCSE is small."""
    report = evaluate(table, table.bayes_rows, table.bayes_cols)
    assert abs(report.excess_risk) <= 3 * report.excess_mcse + 0.002
    assert report.excess_risk <= 0.002
    assert report.map_excess_risk <= 3 * report.map_excess_mcse + 1e-12


def test_marginal_modes_do_not_beat_the_floor(table):
    """Plain marginal modes of an independent Gibbs run (fresh draws, X-only MAP start):
    excess risk over the floor not below -3 paired MCSE."""
    from lbm_bench import gibbs_labels
    from lbm_bench.inference.bayes import label_frequencies

    fresh = gibbs_labels(table.model, table.data, n_samples=600, init=(table.map_rows, table.map_cols), rng=5)
    rows = label_frequencies(fresh.rows, 3).argmax(1)
    cols = label_frequencies(fresh.cols, 2).argmax(1)
    report = evaluate(table, rows, cols)
    assert report.excess_risk >= -3 * report.excess_mcse - 0.002


def test_format_1_0_table_uses_the_map_reference(table):
    import dataclasses

    old = dataclasses.replace(table, bayes_rows=None, bayes_cols=None, bayes_risk=None, criterion="map")
    report = evaluate(old, table.map_rows, table.map_cols)
    assert report.reference == "map" and report.bayes_risk == report.map_risk == table.risk.risk
    assert report.excess_risk == pytest.approx(0.0, abs=1e-12) and "no floor" in report.note
    assert report.summary().splitlines()[2].startswith("note: table in memory: no floor stored")


@pytest.mark.parametrize("name, version", [("table_v1.h5", "1.0"), ("table_v1_1_sparse.h5", "1.1"),
                                           ("table_v1_3_missing_sparse.h5", "1.3")])
def test_a_file_without_floor_is_named_by_its_own_format_version(name, version):
    """A table without a floor may be of any format version (the paper's protocol, criterion
    map): info and evaluate name the file's version, not 1.0."""
    from pathlib import Path

    from lbm_bench import load_table

    path = Path(__file__).resolve().parents[1] / "data" / name
    table = load_table(path)
    assert table.format_version == version and table.bayes_risk is None
    assert f"floor: not stored (format {version} file)" in table.summary()
    report = evaluate(path, table.map_rows, table.map_cols)
    assert report.note.startswith(f"format {version} file: no floor stored")


def test_huge_label_values_score_like_the_labels(table):
    """Labels times 10**9 (or plus 2**62) are the same partition: the same scores, a matching
    as long as the number of clusters (labels times 10**5 gave a 200,001-entry row_map)."""
    base = evaluate(table, table.bayes_rows, table.bayes_cols)
    for shift in (lambda z: z * 10**9, lambda z: z + 2**62):
        big = evaluate(table, shift(table.bayes_rows), shift(table.bayes_cols))
        for key in ("risk", "risk_mcse", "excess_risk", "excess_mcse", "map_excess_risk", "cari_mean", "ari_rows",
                    "ari_cols", "apparent_l_item", "apparent_cari", "matching_error_rows", "predicted_clusters",
                    "row_map", "col_map", "warning"):
            assert getattr(big, key) == getattr(base, key), key
        assert big.row_labels == [int(shift(np.int64(k))) for k in range(3)] and base.row_labels == [0, 1, 2]
        assert len(big.to_dict()["row_map"]) == 3


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
    peeks at the generating labels) do not beat the floor by more than 3 paired
    MCSE plus 0.005 on any of 5 tables."""
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


def test_the_report_shows_the_chance_level(table):
    """The report spans the scale: the chance level (random labels drawn from the model's
    proportions, scored like a submission) beside the floor and the user's risk, in the text
    and the JSON; reproducible, and what random labels do score (issue 27, item 6)."""
    import json

    report = evaluate(table, table.map_rows, table.map_cols)
    again = evaluate(table, table.bayes_rows, table.bayes_cols)
    assert (report.chance_risk, report.chance_mcse) == (again.chance_risk, again.chance_mcse)
    # the floor is cross-fitted, the MAP's risk in-sample: paired, within 3 MCSE (as above)
    assert report.bayes_risk <= report.risk + 3 * report.excess_mcse + 1e-12
    assert report.risk < report.chance_risk < 1
    assert 0 < report.chance_mcse < 0.02
    rng = np.random.default_rng(123)
    g, m = table.model.row_proportions, table.model.col_proportions
    random = [evaluate(table, rng.choice(3, 60, p=g), rng.choice(2, 40, p=m)).risk for _ in range(30)]
    se = np.hypot(report.chance_mcse, np.std(random) / np.sqrt(30))
    assert abs(np.mean(random) - report.chance_risk) <= 4 * se
    lines = report.summary().splitlines()
    floor = next(i for i, ln in enumerate(lines) if ln.startswith("floor (Bayes, l_item)"))
    assert lines[floor + 1] == (f"chance level             {report.chance_risk:.4f} +- {report.chance_mcse:.4f}  "
                                "(random labels drawn from the proportions)")
    data = json.loads(report.to_json())
    assert data["chance_risk"] == report.chance_risk and data["chance_mcse"] == report.chance_mcse
    assert data["table_clusters"] == [3, 2] and data["predicted_clusters"] == [3, 2] and data["warning"] == ""
    assert not any(ln.startswith("warning:") for ln in lines)


def test_a_labelling_with_other_numbers_of_clusters_is_flagged(table):
    """3 column clusters for a 2-cluster table is scored, with one warning line (issue 27, item 6)."""
    report = evaluate(table, table.map_rows, np.arange(40) % 3)
    assert report.predicted_clusters == [3, 3] and report.table_clusters == [3, 2]
    assert report.warning.startswith("your labels have 3 column clusters where the table has 2;")
    assert report.summary().splitlines()[1] == f"warning: {report.warning}"
    fewer = evaluate(table, np.zeros(60, dtype=int), table.map_cols + 7)  # labels need not start at 0
    assert fewer.warning.startswith("your labels have 1 row cluster where the table has 3;")
    both = evaluate(table, np.arange(60) % 4, np.zeros(40, dtype=int))
    assert "4 row clusters where the table has 3 and 1 column cluster where the table has 2" in both.warning


def test_split_and_merged_bayes_labels_never_score_below_the_floor(table):
    """The floor is a lower bound whatever the numbers of clusters (issue 28, item 4): every
    cluster of the table's Bayes labels split in two (one item off, a half, a random third),
    every two merged, and a row split with a column merge, score an excess risk over the
    floor of at least -3 paired MCSE (the tolerance of the tests above); the report states
    the labelling's counts beside the table's."""
    rng = np.random.default_rng(0)
    z, w = table.bayes_rows, table.bayes_cols
    variants = {0: [], 1: []}
    for side, labels in ((0, z), (1, w)):
        k = int(labels.max()) + 1
        for c in range(k):
            members = np.flatnonzero(labels == c)
            for part in (members[:1], members[: members.size // 2], rng.permutation(members)[: members.size // 3]):
                split = labels.copy()
                split[part] = k
                variants[side].append(split)
        variants[side] += [np.where(labels == b, a, labels) for a in range(k) for b in range(a + 1, k)]
    labellings = [(rows, w) for rows in variants[0]] + [(z, cols) for cols in variants[1]]
    labellings.append((variants[0][1], variants[1][-1]))  # a row split and a column merge at once
    excesses = []
    for rows, cols in labellings:
        report = evaluate(table, rows, cols)
        assert report.excess_risk >= -3 * report.excess_mcse - 0.002, (report.predicted_clusters, report.excess_risk)
        excesses.append(report.excess_risk)
        counts = report.predicted_clusters
        assert f"numbers of clusters      {counts[0]}x{counts[1]}  (the table's: 3x2)" in report.summary()
    assert max(excesses) > 0.1  # not a vacuous test: merging clusters costs much


def _own_bayes_labels_margin(kind, shape, chains, seed):
    """(risk of the table's own Bayes labels - its floor) / the floor's MCSE, at the fewest legal sets."""
    from lbm_bench.protocol.settings import MIN_SAMPLES

    table = generate_table(kind, *shape, 2, 2, 0.15, tolerance=0.05, n_samples=MIN_SAMPLES, n_chains=chains,
                           screen_samples=0, n_calibration_tables=6, n_init=3, rng=seed)
    report = evaluate(table, table.bayes_rows, table.bayes_cols)
    mcse = table.bayes_risk.mcse
    assert np.isfinite(mcse) and mcse > 0 and report.bayes_mcse == mcse
    return (report.risk - table.bayes_risk.risk) / mcse


@pytest.mark.parametrize("chains", [2, 4, 8])
@pytest.mark.parametrize("kind", ["gaussian", "bernoulli", "poisson"])
def test_own_bayes_labels_never_score_below_the_floor_beyond_3_mcse(kind, chains):
    """At the fewest legal label sets (200; 8 sets in 8 chains once certified "+- 0.0000"), the
    table's own Bayes labels, chosen on all its sets, score at most 3 of the floor's MCSE
    below its cross-fitted floor (at 100 sets: up to 5)."""
    for shape, seed in (((30, 20), 8), ((60, 40), 1)):
        assert _own_bayes_labels_margin(kind, shape, chains, seed) >= -3.0


@pytest.mark.slow
@pytest.mark.parametrize("chains", [2, 4, 8])
@pytest.mark.parametrize("kind", ["gaussian", "bernoulli", "poisson"])
def test_own_bayes_labels_never_score_below_the_floor_beyond_3_mcse_on_more_tables(kind, chains):
    margins = [_own_bayes_labels_margin(kind, shape, chains, seed) for shape in ((30, 20), (60, 40))
               for seed in range(12)]
    assert min(margins) >= -3.0, margins


def test_the_report_says_when_the_table_has_missing_entries(table):
    from pathlib import Path

    from lbm_bench import load_table

    path = Path(__file__).resolve().parents[1] / "data" / "table_v1_3_missing_sparse.h5"
    incomplete = load_table(path)
    report = evaluate(incomplete, incomplete.map_rows, incomplete.map_cols)
    assert report.missing == ("10 of 120 (8.3%; mechanism block): the Gibbs sets, the floor and every risk here are "
                              "given the observed entries; your labels are scored on every row and column")
    assert f"missing entries: {report.missing}" in report.summary().splitlines()
    assert evaluate(table, table.map_rows, table.map_cols).missing == ""  # a complete table: nothing said


def test_an_evaluation_is_sized_from_the_sets_the_file_declares(tmp_path, monkeypatch):
    """A 68 KB file declaring 20 million label sets took 10 GB and two minutes, or died in a
    MemoryError traceback (issue 48, item 1): refused up front, one line naming the file and the
    estimate."""
    from lbm_bench import load_table, save_table
    from lbm_bench.protocol import memory, memory_limits
    from lbm_bench.protocol.memory import MemoryLimitError
    from lbm_bench.protocol.memory_limits import MemoryLimit
    from tests.storage.tables import declare_label_sets

    source = save_table(generate_table("bernoulli", 30, 20, 2, 2, 0.1, tolerance=0.03, n_samples=200, rng=3),
                        tmp_path / "t.h5")
    table = load_table(source)
    huge = declare_label_sets(source, tmp_path / "huge.h5", 40_000_000_000)
    with pytest.raises(MemoryLimitError) as info:
        evaluate(huge, table.map_rows, table.map_cols)
    message = str(info.value)
    assert message.startswith(f"{huge}: reading the 40000000000 Gibbs label sets of the 30x20 table needs about")
    assert "per-set tables" in message and "\n" not in message
    # the issue's file, 20 million sets, on a machine with 2 GiB: refused, no longer 10 GB
    limit = MemoryLimit(2 * 2**30, "the cgroup's memory.max")
    monkeypatch.setattr(memory, "memory_limit", lambda: limit)
    monkeypatch.setattr(memory_limits, "memory_limit", lambda: limit)
    issue = declare_label_sets(source, tmp_path / "issue.h5", 20_000_000)
    refused = r"issue.h5: .* more than the 2 GiB available \(the cgroup's memory.max\)"
    with pytest.raises(MemoryLimitError, match=refused):
        evaluate(issue, table.map_rows, table.map_cols)
    assert evaluate(source, table.map_rows, table.map_cols).n_samples == 200  # an honest file: as ever
