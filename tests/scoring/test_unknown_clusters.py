"""The unknown-clusters track of the benchmark (lbm_bench.scoring.unknown_clusters) and its
command line: counts found and their kinds, the identifiability cached with the results,
the same method told the counts, the known-clusters track unchanged, and bad input in one
line with nothing written (issue 28, items 2, 3 and 6)."""

import csv
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from lbm_bench.scoring import identifiability as identifiability_module
from lbm_bench.scoring.benchmark import run_benchmark
from lbm_bench.scoring.harness import RESULT_COLUMNS
from lbm_bench.scoring.unknown_clusters import UNKNOWN_CLUSTERS_COLUMNS, run_unknown_clusters

ALGORITHMS = """
import numpy as np


def two(X, max_row_clusters, max_col_clusters, *, rng):
    return np.arange(X.shape[0]) % 2, np.arange(X.shape[1]) % 2


def one(X, max_row_clusters, max_col_clusters, *, rng):
    return np.zeros(X.shape[0], int), np.zeros(X.shape[1], int)


one.given_counts = "double-kmeans"


def short(X, max_row_clusters, max_col_clusters, *, rng):
    return np.zeros(X.shape[0] - 1, int), np.zeros(X.shape[1], int)


def many(X, max_row_clusters, max_col_clusters, *, rng):
    return np.arange(X.shape[0]) % (max_row_clusters + 1), np.zeros(X.shape[1], int)


def negative(X, max_row_clusters, max_col_clusters, *, rng):
    return np.arange(X.shape[0]) % 2 - 1, np.zeros(X.shape[1], int)


def infinite(X, max_row_clusters, max_col_clusters, *, rng):
    return np.where(np.arange(X.shape[0]) % 2 == 0, np.inf, 0.0), np.zeros(X.shape[1], int)


def fractional(X, max_row_clusters, max_col_clusters, *, rng):
    return np.zeros(X.shape[0], int), np.arange(X.shape[1]) / 2
"""



@pytest.fixture()
def algorithms(tmp_path, monkeypatch):
    (tmp_path / "trackalgos.py").write_text(ALGORITHMS)
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def _rows(path):
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_the_track_scores_counts_and_caches_identifiability(release, algorithms, tmp_path, monkeypatch):
    out = tmp_path / "results"
    rows = run_unknown_clusters(release, ["cem-icl", "trackalgos:two", "trackalgos:one"], out,
                               max_clusters=(4, 4))
    assert len(rows) == 15 and not any(r["error"] for r in rows)
    written = _rows(out / "results.csv")
    assert list(written[0]) == UNKNOWN_CLUSTERS_COLUMNS
    by = {(r["algorithm"], r["table"]): r for r in written}
    for r in written:
        true = (int(r["n_row_clusters"]), int(r["n_col_clusters"]))
        found = (int(r["found_row_clusters"]), int(r["found_col_clusters"]))
        assert (r["max_row_clusters"], r["max_col_clusters"]) == ("4", "4")
        if r["algorithm"] == "trackalgos:one":
            assert found == (1, 1) and r["counts"] == "too few"
            assert r["miss"] == ("search" if r["identifiable"] == "True" else "criterion")
            assert r["given_algorithm"] == "double-kmeans" and r["given_excess_risk"] != ""
        if r["algorithm"] == "trackalgos:two":
            assert found == (2, 2) and r["given_algorithm"] == "" and r["given_excess_risk"] == ""
            assert r["counts"] == ("found" if true == (2, 2) else "too few") and (r["miss"] == "") == (true == (2, 2))
        if r["algorithm"] == "cem-icl":
            assert r["given_algorithm"] == "cem"
            assert float(r["given_excess_risk"]) == json.loads((out / "runs" / "cem" / f"{r['table']}.json")
                                                               .read_text())["excess_risk"]
    assert any(by["cem-icl", t]["counts"] == "found" for t in {r["table"] for r in written})
    records = {p.stem: json.loads(p.read_text()) for p in (out / "identifiability").glob("*.json")}
    assert len(records) == 5
    for table_id, record in records.items():
        assert record["key"]["max_clusters"] == [4, 4] and record["labels"] == "bayes"
        assert record["identifiable"] == (record["labels_value"] > record["best_other_value"])
        assert all(r["identifiable"] == str(record["identifiable"]) for r in written if r["table"] == table_id)
    summary = (out / "summary.md").read_text()
    assert "| trackalgos:one | bernoulli | 0.1 | 2 | 0% | 100% | 0% | 0% |" in summary
    assert "## Identifiable counts" in summary and "counts given: mean CARI" in summary

    def refuse(*args, **kwargs):
        raise AssertionError("the identifiability was computed again")

    monkeypatch.setattr(identifiability_module, "identifiability", refuse)
    again = run_unknown_clusters(release, ["cem-icl", "trackalgos:two", "trackalgos:one"], out, max_clusters=(4, 4))
    assert again == rows  # every run and every identifiability read back
    with pytest.raises(AssertionError, match="computed again"):  # other bounds: another question
        run_unknown_clusters(release, ["trackalgos:two"], out, max_clusters=(3, 3))


@pytest.mark.parametrize("name, message", [
    ("trackalgos:short", "returned row labels of shape (29,) for table bernoulli-30x20-2x2-r0.1-01, which has 30 "
                         "rows: an algorithm returns one label per row"),
    ("trackalgos:many", "returned 5 row clusters for table"),
])
def test_a_broken_contract_stops_the_run_and_leaves_nothing(release, algorithms, tmp_path, name, message):
    out = tmp_path / "new"
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        run_unknown_clusters(release, [name], out, max_clusters=(4, 4))
    assert not out.exists()
    kept = tmp_path / "kept"  # a results folder of an earlier run keeps its files, and only them
    run_unknown_clusters(release, ["trackalgos:two"], kept, max_clusters=(4, 4))
    before = sorted(p.relative_to(kept) for p in kept.rglob("*"))
    with pytest.raises(ValueError, match="an algorithm returns one label per row|more than the 4 allowed"):
        run_unknown_clusters(release, ["trackalgos:two", name], kept, max_clusters=(4, 4))
    assert sorted(p.relative_to(kept) for p in kept.rglob("*")) == before


@pytest.mark.parametrize("name, message", [
    ("trackalgos:negative", "row labels must be non-negative, got min -1"),
    ("trackalgos:infinite", "row labels must hold integer labels, got dtype float64"),
    ("trackalgos:fractional", "column labels must hold integer labels, got dtype float64"),
])
def test_labels_that_are_not_clusters_break_the_contract(release, algorithms, tmp_path, name, message):
    """-1, inf or 2.5 is not a cluster label: refused with the check every scored label gets
    (evaluate and the known-clusters track refuse the same labels), never counted as a cluster."""
    from lbm_bench._validation import check_labels
    from lbm_bench.scoring import evaluate

    out = tmp_path / "new"
    with pytest.raises(ValueError, match="that are not cluster labels: " + message):
        run_unknown_clusters(release, [name], out, max_clusters=(4, 4))
    assert not out.exists()
    table = next(iter(sorted((release / "tables").glob("*.h5"))))
    labels = {"negative": [-1, 0], "infinite": [np.inf, 0.0], "fractional": [0.5, 1.0]}[name.split(":")[1]]
    for refuse in (lambda v: check_labels("rows", v), lambda v: evaluate(table, np.resize(v, 30), np.zeros(20))):
        with pytest.raises((TypeError, ValueError)):
            refuse(np.array(labels))


def test_vem_icl_runs_on_the_track(release, tmp_path):
    rows = run_benchmark(release, ["vem-icl"], tmp_path / "vem", track="unknown-clusters", max_clusters=(4, 4))
    assert len(rows) == 5 and not any(r["error"] for r in rows)
    assert {r["given_algorithm"] for r in rows} == {"vem"} and all(r["given_excess_risk"] != "" for r in rows)
    # on these tiny tables the ICL recovers the counts of some tables only (the two Bernoulli
    # tables and one Gaussian table at the release's seeds): every one of those is found, and
    # every other miss is the criterion's, not the search's
    assert 1 <= sum(r["identifiable"] for r in rows) < len(rows)
    assert all(r["identifiable"] for r in rows if r["kind"] == "bernoulli")
    assert all(r["counts"] == "found" for r in rows if r["identifiable"])
    assert all(r["miss"] == "criterion" for r in rows if not r["identifiable"])


def test_the_known_clusters_track_is_unchanged(release, tmp_path):
    rows = run_benchmark(release, ["double-kmeans"], tmp_path / "known")
    assert list(_rows(tmp_path / "known" / "results.csv")[0]) == RESULT_COLUMNS
    same = run_benchmark(release, ["double-kmeans"], tmp_path / "explicit", track="known-clusters")
    assert [{k: r[k] for k in RESULT_COLUMNS if k != "seconds"} for r in rows] == \
           [{k: r[k] for k in RESULT_COLUMNS if k != "seconds"} for r in same]
    assert not (tmp_path / "known" / "identifiability").exists()
    with pytest.raises(ValueError, match="max_clusters is an option of the unknown-clusters track"):
        run_benchmark(release, ["double-kmeans"], tmp_path / "x", max_clusters=(3, 3))
    with pytest.raises(ValueError, match="track must be one of"):
        run_benchmark(release, ["double-kmeans"], tmp_path / "x", track="unknown-cluster")
    assert not (tmp_path / "x").exists()


def _cli(cwd, *args):
    return subprocess.run([sys.executable, "-m", "lbm_bench", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, env={**os.environ, "PYTHONPATH": str(cwd)})


@pytest.mark.parametrize("args, message", [
    (["--max-clusters", "0x3"], "--max-clusters must be at least 1x1, got '0x3'"),
    (["--max-clusters", "9"], "--max-clusters must be two positive integers as GxM (e.g. 8x8), got '9'"),
    (["--max-clusters", "8x25"], "max_clusters 8x25 exceeds the 30 rows and 20 columns of table "),
    (["--max-clusters", "2x1"], "max_clusters 2x1 is below the 2x2 clusters of table "),
    (["--track", "unknown-cluster"], "--track must be known-clusters or unknown-clusters, got 'unknown-cluster'"),
    (["--algorithm", "cem"], "'cem' is an algorithm of the known-clusters track"),
    (["--algorithm", "trackalgos:short"], "returned row labels of shape (29,)"),
])
def test_bad_input_is_one_line_exit_2_and_nothing_written(release, algorithms, args, message):
    base = {"--track": "unknown-clusters", "--algorithm": "cem-icl"}
    options = dict(zip(args[::2], args[1::2], strict=True))
    argv = [a for key, value in {**base, **options}.items() for a in (key, value)]
    done = _cli(algorithms, "benchmark", release, *argv, "--out", "results", "-q")
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and "Traceback" not in done.stderr, done.stderr
    assert not (algorithms / "results").exists()


def test_max_clusters_belongs_to_the_unknown_clusters_track(release, tmp_path):
    done = _cli(tmp_path, "benchmark", release, "--algorithm", "cem", "--max-clusters", "3x3", "--out", "r", "-q")
    assert done.returncode == 2 and "--max-clusters goes with --track unknown-clusters" in done.stderr
    assert not (tmp_path / "r").exists()
