"""scripts/benchmarks/bench_path_search.py at a tiny size: ``--quick`` (two drawn tables, bounds 4x4) as a
file, old (``--against HEAD``) and new side by side, and the release form on a tiny release."""

import json

from lbm_bench.release import build_release
from tests.release.helpers import TINY_SPEC
from tests.scripts.helpers import run_script


def test_quick_side_by_side(tmp_path):
    out = run_script("benchmarks", "bench_path_search", "--quick", "--against", "HEAD",
                     "--json", str(tmp_path / "rows.json")).stdout
    assert "| gaussian-60x40-3x2 |" in out and "old (HEAD): criterion at least the grid's on" in out
    assert "new: criterion at least the grid's on" in out and "median cost" in out
    rows = json.loads((tmp_path / "rows.json").read_text())
    assert {r["version"] for r in rows} == {"old (HEAD)", "new"} and len(rows) == 4
    assert all(r["runs"] > 0 and r["ratio"] > 0 for r in rows)
    again = run_script("benchmarks", "bench_path_search", "--results", str(tmp_path / "rows.json")).stdout
    assert again.splitlines()[1:] == [line for line in out.splitlines() if not line.startswith("#")]  # as printed
    reused = run_script("benchmarks", "bench_path_search", "--quick", "--grid-from", str(tmp_path / "rows.json")).stdout
    assert [line.split(" | ")[1] for line in reused.splitlines() if line.startswith("| gaussian")] == \
        [line.split(" | ")[1] for line in out.splitlines() if line.startswith("| gaussian")]  # the saved grid


def test_on_a_release(tmp_path):
    (tmp_path / "tiny.toml").write_text(TINY_SPEC)
    assert build_release(tmp_path / "tiny.toml", tmp_path / "tiny").ok
    out = run_script("benchmarks", "bench_path_search", str(tmp_path / "tiny"), "--repeats", "1").stdout
    assert "new: criterion at least the grid's on" in out and out.count("\n| ") >= 5


def test_monotone_in_the_limit(tmp_path):
    out = run_script("benchmarks", "bench_path_search", "--quick", "--bounds", "2x2", "3x3", "4x4",
                     "--json", str(tmp_path / "rows.json")).stdout
    assert "| gaussian-60x40-3x2 |" in out and "monotone on 2/2 tables" in out
    rows = json.loads((tmp_path / "rows.json").read_text())
    assert all(row["monotone"] and row["values"] == sorted(row["values"]) for row in rows)
