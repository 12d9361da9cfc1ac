"""scripts/benchmarks/bench_categorical.py at its quick size: a row per variant, the code and
dense storages give the same label sets, and the script runs as a file."""

import json

from tests.scripts.helpers import load_script, run_script


def test_run_benchmarks_quick():
    bench = load_script("benchmarks", "bench_categorical")
    rows = bench.run_benchmarks(quick=True, rng=0)
    assert [r["variant"] for r in rows] == ["bernoulli", "categorical", "categorical dense"]
    assert all(r["seconds_per_sweep"] > 0 and r["identical"] for r in rows)
    assert rows[0]["ratio_to_bernoulli"] == 1.0 and rows[1]["categories"] == 5
    assert "x bernoulli" in bench.format_table(rows)


def test_script_runs_as_a_file(tmp_path):
    out = tmp_path / "rows.json"
    result = run_script("benchmarks", "bench_categorical", "--quick", "--json", out)
    assert "120x100 3x3 K=5 @10%" in result.stdout and "OPENBLAS_NUM_THREADS" in result.stdout
    assert len(json.loads(out.read_text())) == 3
