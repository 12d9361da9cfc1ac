"""The selection release (repository/selection.toml) built at a tiny size, and the unknown-clusters
track run on it by cem-icl and sparsebm-selection (sparsebm's own model selection on its Bernoulli
tables), as docs/benchmark.md runs them at full size (issue 28, item 5; vem-icl runs on a smaller
release in tests/scoring/test_unknown_clusters.py)."""

import json

import pytest

from lbm_bench.release import build_release, read_spec, verify_release
from lbm_bench.scoring.benchmark import run_benchmark
from tests.release.helpers import REPO, shrunk_spec

SPEC = REPO / "repository" / "selection.toml"
GIVEN = {"cem-icl": "cem", "sparsebm-selection": "sparsebm"}


def test_the_committed_spec():
    spec = read_spec(SPEC)
    assert {t.kind for t in spec.tables} == {"gaussian", "poisson", "bernoulli", "categorical"}
    assert {t.risk for t in spec.tables} == {0.05, 0.1} and {t.shape for t in spec.tables} == {(200, 100), (300, 200)}
    clusters = {kind: {t.clusters for t in spec.tables if t.kind == kind} for kind in ("gaussian", "bernoulli")}
    assert {(5, 2), (2, 7), (6, 4)} <= clusters["gaussian"] and {(5, 3), (3, 6), (6, 4)} <= clusters["bernoulli"]
    assert len(spec.tables) == 80 and len({t.id for t in spec.tables}) == 80


def _tiny(tmp_path):
    """The committed spec, its grids kept (kinds, clusters, categories), at a tiny size."""
    return shrunk_spec(SPEC, tmp_path / "selection-tiny.toml",
                       defaults={"tolerance": 0.04, "n_samples": 200, "n_chains": 4, "burn_in": 10,
                                 "screen_samples": 40, "n_calibration_tables": 16, "n_init": 3},
                       grid={"shapes": ["40x36"], "risks": [0.1]})


@pytest.mark.slow
@pytest.mark.sparsebm
def test_the_selection_release_builds_and_runs_the_unknown_clusters_track(tmp_path):
    pytest.importorskip("sparsebm")
    out = tmp_path / "release"
    report = build_release(_tiny(tmp_path), out, n_jobs=2)
    assert report.ok, report.summary()
    assert verify_release(out) == []
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert len(manifest["tables"]) == 20
    names = ["cem-icl", "sparsebm-selection"]
    rows = run_benchmark(out, names, tmp_path / "results", track="unknown-clusters", max_clusters=(8, 8),
                         n_jobs=2)
    by = {(r["algorithm"], r["table"]): r for r in rows}
    for entry in manifest["tables"]:
        for name in names:
            row = by[name, entry["id"]]
            if name == "sparsebm-selection" and entry["kind"] != "bernoulli":
                assert row["error"] and "\n" not in row["error"]
                continue
            assert not row["error"], row
            assert 1 <= row["found_row_clusters"] <= 8 and 1 <= row["found_col_clusters"] <= 8
            assert row["counts"] in ("found", "too few", "too many", "other")
            assert row["excess_risk"] > -4 * row["excess_mcse"] - 0.01  # the floor holds for any counts
            assert row["given_algorithm"] == GIVEN[name]
    summary = (tmp_path / "results" / "summary.md").read_text(encoding="utf-8")
    assert "| sparsebm-selection | bernoulli | 0.1 | 5 |" in summary
    assert "| cem-icl | categorical | 0.1 | 5 |" in summary
    assert len(list((tmp_path / "results" / "identifiability").glob("*.json"))) == 20
