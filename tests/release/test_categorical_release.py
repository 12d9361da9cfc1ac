"""The categorical release (repository/categorical.toml) built at a tiny size: ids, verify,
manifest, tables.csv and Croissant with ``categories``, cards, and a benchmark in which
CEM and VEM fit categorical blocks while the algorithms that read numbers are refused."""

import json

import pytest

from lbm_bench.release import build_release, load_release_table, read_spec, verify_release
from lbm_bench.scoring.benchmark import run_benchmark
from lbm_bench.storage import read_info
from tests.release.helpers import REPO, shrunk_spec

SPEC = REPO / "repository" / "categorical.toml"


def test_the_committed_spec():
    spec = read_spec(SPEC)
    assert {t.kind for t in spec.tables} == {"categorical"}
    assert {t.model_options["categories"] for t in spec.tables} == {3, 5}
    assert {t.shape for t in spec.tables} == {(200, 100), (1000, 500)}
    assert {t.risk for t in spec.tables} == {0.05, 0.1, 0.2} and {t.clusters for t in spec.tables} == {(3, 3)}
    assert "categorical-k5-1000x500-3x3-r0.2-01" in {t.id for t in spec.tables}
    assert len({t.id for t in spec.tables}) == len(spec.tables) == 12


def _tiny(tmp_path):
    """The committed spec, its grids kept (kinds, clusters, categories), at a tiny size."""
    return shrunk_spec(SPEC, tmp_path / "categorical-tiny.toml",
                       defaults={"tolerance": 0.04, "n_samples": 200, "n_chains": 4, "burn_in": 10,
                                 "screen_samples": 40, "n_calibration_tables": 16, "n_init": 3},
                       grid={"shapes": ["36x30"], "risks": [0.15]})


@pytest.mark.slow
def test_categorical_release_builds_verifies_and_benchmarks(tmp_path):
    spec = _tiny(tmp_path)
    out = tmp_path / "release"
    report = build_release(spec, out)
    assert report.ok, report.summary()
    assert verify_release(out) == []
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert {e["id"]: e["categories"] for e in manifest["tables"]} == {
        "categorical-k3-36x30-3x3-r0.15-01": 3, "categorical-k5-36x30-3x3-r0.15-01": 5}
    for entry in manifest["tables"]:
        info = read_info(out / entry["file"])
        assert info["format_version"] == "1.2" and info["categories"] == entry["categories"]
        table = load_release_table(out, entry["id"])
        assert table.model.probs.shape == (3, 3, entry["categories"]) and table.data.max() < entry["categories"]
    header = (out / "tables.csv").read_text(encoding="utf-8").splitlines()[0].split(",")
    assert header[-1] == "categories"
    croissant = json.loads((out / "croissant.json").read_text(encoding="utf-8"))
    fields = {f["name"]: f for f in croissant["recordSet"][0]["field"]}
    assert fields["categories"]["dataType"] == "sc:Integer" and "categorical" in fields["kind"]["description"]
    assert "categorical (categories 5)" in (out / "README.md").read_text(encoding="utf-8")
    assert "categorical (categories 5)" in (out / "index.html").read_text(encoding="utf-8")

    rows = run_benchmark(out, ["cem", "vem", "categorical-cem", "double-kmeans", "poisson-cem"], tmp_path / "res")
    by_run = {(r["algorithm"], r["table"]): r for r in rows}
    for entry in manifest["tables"]:
        for name in ("cem", "vem", "categorical-cem"):
            row = by_run[name, entry["id"]]
            assert not row["error"], row
            assert row["excess_risk"] == pytest.approx(row["risk"] - row["bayes_risk"])
            assert row["excess_risk"] > -4 * row["excess_mcse"] - 0.01  # no labels beat the floor
        for name in ("double-kmeans", "poisson-cem"):
            error = by_run[name, entry["id"]]["error"]
            assert "reads the entries as numbers" in error and "unordered categories" in error
            assert "\n" not in error
    assert "## Failures" in (tmp_path / "res" / "summary.md").read_text(encoding="utf-8")
    try:
        import mlcroissant as mlc
    except ImportError:
        return
    records = mlc.Dataset(jsonld=str(out / "croissant.json")).records("tables")
    read = {r["tables/id"].decode(): r["tables/categories"] for r in records}
    assert read == {e["id"]: e["categories"] for e in manifest["tables"]}
