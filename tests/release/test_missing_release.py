"""repository/missing.toml at a tiny size: the four kinds crossed with 0, 10, 30 and 50% of
entries missing at one risk, built, verified and benchmarked (issue 25's release)."""

import csv
import json

import pytest

from lbm_bench.release import build_release, load_release_table, read_spec, verify_release
from lbm_bench.scoring.benchmark import run_benchmark
from tests.release.helpers import REPO, shrunk_spec

SPEC = REPO / "repository" / "missing.toml"
#: The committed spec, shrunk: tiny tables and short Gibbs runs (the grids are kept).
TINY = {"shapes": ["40x30"], "tolerance": 0.05, "n_samples": 200, "n_chains": 4, "burn_in": 10,
        "screen_samples": 0, "n_calibration_tables": 10, "n_init": 3, "risks": [0.15]}


def test_committed_spec_crosses_kinds_and_missing_rates():
    spec = read_spec(SPEC)
    rates = {(t.kind, t.request.model_options.missing) for t in spec.tables}
    kinds = ("gaussian", "poisson", "bernoulli", "categorical")
    assert rates == {(k, r) for k in kinds for r in (0.0, 0.1, 0.3, 0.5)}
    assert len({t.risk for t in spec.tables}) == 1
    ids = {t.id for t in spec.tables}
    assert "gaussian-120x80-3x2-r0.1-01" in ids and "gaussian-120x80-3x2-r0.1-m0.3-01" in ids
    assert "categorical-k4-120x80-3x2-r0.1-m0.5-01" in ids


def _tiny_spec(tmp_path):
    grid = {k: v for k, v in TINY.items() if k in ("shapes", "risks")}
    defaults = {k: v for k, v in TINY.items() if k not in ("shapes", "risks")}
    return shrunk_spec(SPEC, tmp_path / "missing.toml", defaults=defaults, grid=grid)


@pytest.mark.slow
def test_tiny_missing_release_builds_verifies_and_benchmarks(tmp_path):
    out = tmp_path / "release"
    report = build_release(_tiny_spec(tmp_path), out, n_jobs=2)
    assert report.ok, report.summary()
    assert verify_release(out) == []
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert len(manifest["tables"]) == 16
    for entry in manifest["tables"]:
        rate = 0.0 if "-m0." not in entry["id"] else float(entry["id"].split("-m")[1].split("-")[0])
        if rate == 0:
            assert "missing_rate" not in entry
            continue
        assert entry["missing_rate"] == rate and entry["missing_mechanism"] == "random"
        assert abs(entry["n_missing"] / (40 * 30) - rate) < 0.08
        table = load_release_table(out, entry["id"])
        assert table.missing_rate == rate and abs(table.bayes_risk.risk - 0.15) <= 0.05
    with open(out / "tables.csv", encoding="utf-8") as handle:
        header = next(csv.reader(handle))
    assert header[-3:] == ["missing_rate", "missing_mechanism", "n_missing"]
    croissant = json.loads((out / "croissant.json").read_text(encoding="utf-8"))
    assert "missing data" in croissant["keywords"]
    assert any("observed mask" in o["description"] for o in croissant["distribution"])
    assert "| missing |" in (out / "README.md").read_text(encoding="utf-8")
    assert "<th>missing</th>" in (out / "index.html").read_text(encoding="utf-8")
    rows = run_benchmark(out, ["cem", "double-kmeans", "sparsebm"], tmp_path / "results")
    for row in rows:
        if row["algorithm"] == "sparsebm" or (row["kind"] == "categorical" and row["algorithm"] != "cem"):
            continue  # refuses masked tables (or categorical ones), or absent: its errors are tested elsewhere
        assert not row["error"], row
    with open(tmp_path / "results" / "results.csv", encoding="utf-8") as handle:
        assert "missing_rate" in next(csv.reader(handle))
    summary = (tmp_path / "results" / "summary.md").read_text(encoding="utf-8")
    assert "## By missing rate" in summary
    refusals = [r["error"] for r in rows if r["algorithm"] == "sparsebm" and "-m0." in r["table"]
                and r["kind"] == "bernoulli"]
    assert all("sparsebm does not fit tables with missing entries" in e for e in refusals)
