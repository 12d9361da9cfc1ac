"""scripts/benchmarks/bench_gibbs_map.py (the Gibbs/MAP benchmark) at its quick size: rows
for every table, both Gibbs methods give the same label sets, and the script runs as a file;
its cost-model and rounding measurements at tiny sizes."""

import json
import math

from tests.scripts.helpers import load_script, run_script


def test_run_benchmarks_quick():
    bench = load_script("benchmarks", "bench_gibbs_map")
    rows = bench.run_benchmarks(quick=True, rng=0)
    gibbs_rows = [r for r in rows if r["task"].startswith("gibbs")]
    map_rows = [r for r in rows if r["task"].startswith("map")]
    assert len(gibbs_rows) == len(map_rows) == len(bench.QUICK_CONFIGS)
    for row in gibbs_rows:
        assert row["baseline_s"] > 0 and row["new_s"] > 0 and row["ratio"] > 0
        assert row["sets_per_s"] > 0 and row["peak_mib_new"] > 0
        assert row["identical"] == 1.0
    for row in map_rows:
        assert row["new_s"] > 0
    # the 300x300 table takes the index route (what QUICK_CONFIGS says)
    assert gibbs_rows[-1]["index_updates"] > 0
    assert "upd index/recomp/fallb" in bench.format_table(rows)


def test_script_runs_as_a_file(tmp_path):
    out = tmp_path / "rows.json"
    result = run_script("benchmarks", "bench_gibbs_map", "--quick", "--no-memory", "--only", "40x30",
                        "--json", out)
    assert "gaussian 40x30 3x3 @10%" in result.stdout and "benchmark wall time" in result.stdout
    rows = json.loads(out.read_text())
    assert [r["task"] for r in rows] == ["gibbs 200", "map n_init=10"]
    assert all(math.isnan(r["peak_mib_new"]) for r in rows)  # --no-memory
    bad = run_script("benchmarks", "bench_gibbs_map", "--quick", "--only", "no such table", check=False)
    assert bad.returncode == 2 and "no configuration matches" in bad.stderr


def test_threshold_and_tolerance_at_tiny_sizes():
    bench = load_script("benchmarks", "bench_gibbs_map")
    rows = bench.measure_threshold(n=200, repeats=1, fractions=(0.01, 0.1))
    assert [r["fraction"] for r in rows] == [0.01, 0.1]
    assert all(r["t_sparse_ms"] > 0 and r["t_dense_ms"] > 0 and r["cost_ratio"] > 0 for r in rows)
    (row,) = bench.measure_gaussian_tolerance(cases=((60, 0.2, 200),), seeds=(0,), drift_sweeps=20)
    assert row["differing_labels"] <= row["labels"] // 1000
    assert row["max_rel_recompute_50"] < 1e-10 and row["max_rel_no_recompute"] < 1e-10
