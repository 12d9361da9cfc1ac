"""What the benchmark's tracks share (lbm_bench.scoring.harness): the row schema, the one call of an
algorithm on a table (family keywords, the input it is given, the seed), run files, CSV, means and
the plot."""

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from lbm_bench.algorithms.catalog import CHOSEN_COUNTS, GIVEN_COUNTS
from lbm_bench.scoring import harness
from lbm_bench.scoring.evaluate import evaluate
from lbm_bench.scoring.report import Report
from lbm_bench.storage import load_table

DATA = Path(__file__).resolve().parents[1] / "data"


@pytest.fixture(scope="module")
def categorical():
    return load_table(DATA / "table_v1_2_categorical.h5")


@pytest.fixture(scope="module")
def poisson():
    return load_table(DATA / "table_v1_1.h5")


def test_the_row_schema():
    assert len(set(harness.RESULT_COLUMNS)) == len(harness.RESULT_COLUMNS)
    assert set(harness.REPORT_FIELDS) <= set(harness.RESULT_COLUMNS)
    assert {f for f in harness.REPORT_FIELDS} <= {f.name for f in Report.__dataclass_fields__.values()}
    entry = {"id": "t-1", "kind": "poisson", "shape": [12, 10], "clusters": [2, 3], "target_risk": 0.1,
             "risk": 0.12, "bayes_risk": 0.09, "file": "tables/t-1.h5"}
    row = harness.entry_row("cem", entry, 7)
    assert row == {"algorithm": "cem", "table": "t-1", "kind": "poisson", "n_rows": 12, "n_cols": 10,
                   "n_row_clusters": 2, "n_col_clusters": 3, "target_risk": 0.1, "bayes_risk": 0.09,
                   "map_risk": 0.12, "seed": 7, "error": ""}
    assert set(row) <= set(harness.RESULT_COLUMNS)
    old = harness.entry_row("cem", {k: v for k, v in entry.items() if k != "bayes_risk"} | {"missing_rate": 0.2}, 7)
    assert old["bayes_risk"] == 0.12 and old[harness.MISSING_COLUMN] == 0.2  # format 1.0: the MAP's risk


def test_report_values_are_the_report_fields(poisson):
    report = evaluate(poisson, poisson.map_rows, poisson.map_cols)
    values = harness.report_values(report)
    assert list(values) == list(harness.REPORT_FIELDS)
    assert values["risk"] == report.risk and values["reference"] == report.reference


@pytest.mark.parametrize("contract, suggestion", [
    (GIVEN_COUNTS, "use cem, vem, categorical-cem or categorical-vem"),
    (CHOSEN_COUNTS, "use cem-icl or vem-icl"),
])
def test_a_table_of_unordered_levels_is_refused_to_number_readers(categorical, contract, suggestion):
    """The suggestion lists the track's own built-ins that can read the table (from its contract)."""
    from lbm_bench.algorithms import double_kmeans

    with pytest.raises(ValueError, match="double-kmeans reads the entries as numbers, but the categorical table "
                                         f"holds 4 unordered categories; {suggestion} "):
        harness.family_keywords("double-kmeans", double_kmeans, categorical, contract)


def test_family_keywords_tell_the_kind_only_when_the_values_cannot(categorical, poisson):
    from lbm_bench.algorithms import FAMILY_ALGORITHMS, cem

    assert harness.family_keywords("cem", cem, categorical, GIVEN_COUNTS) == {"kind": "categorical"}
    assert harness.family_keywords("categorical-cem", FAMILY_ALGORITHMS["categorical_cem"], categorical,
                                   GIVEN_COUNTS) == {}
    assert harness.family_keywords("cem", cem, poisson, GIVEN_COUNTS) == {}  # counts tell their family


def test_fit_labels_calls_the_algorithm_once_with_its_seed(poisson, monkeypatch):
    calls = []

    def fit(X, n_row_clusters, n_col_clusters, *, rng):
        calls.append((X.shape, n_row_clusters, n_col_clusters, rng.integers(1 << 30)))
        return np.zeros(X.shape[0], int), np.arange(X.shape[1]) % n_col_clusters

    monkeypatch.setitem(GIVEN_COUNTS.builtins, "probe", fit)
    rows, cols, seconds = harness.fit_labels("probe", poisson, (2, 3), 11)
    assert calls == [((12, 10), 2, 3, np.random.default_rng(11).integers(1 << 30))]
    assert rows.tolist() == [0] * 12 and cols.tolist() == [0, 1, 2] * 3 + [0] and seconds >= 0
    with pytest.raises(harness.RunFailed, match="ValueError: 'probe' is an algorithm of the known-clusters track"):
        harness.fit_labels("probe", poisson, (2, 3), 11, track="unknown-clusters")  # the run's failure


def test_a_table_with_missing_entries_is_given_as_asked(poisson):
    """NaN in float64 by default; a masked array in the table's dtype for an algorithm that asks for it
    (dense tables); a sparse table as it is (explicit NaN values); a complete table as it is."""
    import dataclasses

    from lbm_bench.algorithms import MASKED_INPUT

    def plain(X, g, m, *, rng):
        return X

    def masked(X, g, m, *, rng):
        return X

    setattr(masked, MASKED_INPUT, True)
    sparse = load_table(DATA / "table_v1_3_missing_sparse.h5")
    dense = dataclasses.replace(sparse, data=sparse.data.toarray())
    assert harness.algorithm_input(plain, sparse) is sparse.data
    assert harness.algorithm_input(masked, sparse) is sparse.data
    assert harness.algorithm_input(plain, dense) is dense.data and np.isnan(dense.data).sum() == 10
    given = harness.algorithm_input(masked, dense)
    assert isinstance(given, np.ma.MaskedArray) and given.dtype == np.int64
    assert np.array_equal(given.mask, np.isnan(dense.data))
    assert harness.algorithm_input(masked, poisson) is poisson.data


def test_run_files_csv_and_means(tmp_path):
    assert harness.safe_name("../x/y:fit") == "_x_y_fit"
    assert harness.safe_name(".hidden") == "hidden"
    path = harness.run_path(tmp_path, "mod:fit", "t-1")
    assert path == tmp_path / "runs" / "mod_fit" / "t-1.json"
    harness.write_json(path, {"b": 1, "a": 2.5})
    assert path.read_text() == '{"a": 2.5, "b": 1}' and [p.name for p in path.parent.iterdir()] == ["t-1.json"]
    harness.write_csv(tmp_path / "r.csv", [{"a": 1, "b": 2, "c": 3}, {"a": 4}], ["a", "b"])
    with open(tmp_path / "r.csv", newline="") as handle:
        assert list(csv.reader(handle)) == [["a", "b"], ["1", "2"], ["4", ""]]
    rows = [{"x": 1.0}, {"x": ""}, {"x": None}, {"x": "3"}, {}]
    assert harness.mean_of(rows, "x") == 2.0
    assert np.isnan(harness.mean_of([{"x": ""}], "x"))


def test_the_plot_needs_a_successful_run(tmp_path):
    pytest.importorskip("matplotlib")
    picture = tmp_path / "excess_risk.png"
    ok = [{"algorithm": "a", "bayes_risk": 0.1, "excess_risk": 0.02, "error": ""}]
    assert harness.plot_excess(picture, ok) and picture.read_bytes()[:4] == b"\x89PNG"
    assert not harness.plot_excess(picture, [{"algorithm": "a", "error": "failed"}])
    assert not picture.exists()  # a stale picture is removed
    assert json.dumps(ok)  # rows stay plain data


def _square(x):
    return {"x": x, "y": x * x}


def test_the_track_loop_writes_each_record_where_keep_says_and_a_broken_contract_undoes_the_run(tmp_path):
    """run_track_tasks, the skeleton of both tracks: every result's record written by this
    process at the hook's path; a ContractError from the hook removes what the run wrote; any
    other interruption keeps the finished records and removes only the folders left empty."""
    from lbm_bench.scoring.harness import ContractError, Writes, finish_track, run_track_tasks

    out = tmp_path / "out"
    writes, kept = Writes(), []
    writes.folder(out)

    def keep(result):
        kept.append(result)
        return out / "runs" / f"{result['x']}.json", result

    run_track_tasks(_square, [(1,), (2,), (3,)], writes, n_jobs=1, progress=False, keep=keep)
    assert sorted(p.name for p in (out / "runs").iterdir()) == ["1.json", "2.json", "3.json"]
    assert sorted(r["y"] for r in kept) == [1, 4, 9]

    def refuse(result):
        if result["x"] == 5:
            raise ContractError("x=5 breaks the contract")
        return out / "more" / f"{result['x']}.json", result

    other = Writes()
    other.folder(out / "more")
    with pytest.raises(ContractError, match="breaks the contract"):
        run_track_tasks(_square, [(4,), (5,)], other, n_jobs=1, progress=False, keep=refuse)
    assert not (out / "more").exists() and (out / "runs" / "1.json").is_file()

    def stop(result):
        if result["x"] == 7:
            raise KeyboardInterrupt
        return out / "again" / f"{result['x']}.json", result

    third = Writes()
    third.folder(out / "again")
    with pytest.raises(KeyboardInterrupt):
        run_track_tasks(_square, [(6,), (7,)], third, n_jobs=1, progress=False, keep=stop)
    assert [p.name for p in (out / "again").iterdir()] == ["6.json"]
    rows = [{"algorithm": "b", "table": "t", "error": "bang"}, {"algorithm": "a", "table": "t", "error": "boom"}]
    finish_track(out, rows, lambda rows: ["algorithm", "table", "error"], lambda rows: "# rows\n")
    assert (out / "results.csv").read_text().splitlines() == ["algorithm,table,error", "a,t,boom", "b,t,bang"]
    assert (out / "summary.md").read_text() == "# rows\n" and not (out / "excess_risk.png").exists()
