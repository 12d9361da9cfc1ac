"""scripts/benchmarks/bench_protocol.py at its quick size: the calibration step and whole tables
run, and their baselines agree with the new code; the batch-size sweep; the script runs as a file."""

from tests.scripts.helpers import load_script, run_script


def test_protocol_benchmarks_quick():
    bench = load_script("benchmarks", "bench_protocol")
    rows = bench.calibration_rows(quick=True) + bench.whole_table_rows(quick=True)
    assert [r["benchmark"] for r in rows] == ["calibration step"] + ["whole table"] * 3
    for row in rows:
        assert row["baseline_s"] > 0 and row["new_s"] > 0 and row["peak_mib"] > 0
    text = bench.format_rows(rows)
    assert "risk 0.2" in text and "calibration step" in text
    # batched + incremental calibration must give exactly the one-by-one, full-product errors
    assert all(r["detail"]["identical"] == "yes" for r in rows[:1]), text
    # the old calibration (bisection, fixed tables) against the new: both scales and risks shown
    for row in rows[1:]:
        assert "/" in row["detail"]["scales"] and "/" in row["detail"]["risks"]


def test_batch_size_sweep_runs_as_a_file():
    lines = run_script("benchmarks", "bench_protocol", "--quick", "--batches").stdout.splitlines()
    assert len(lines) == 3 and lines[2].startswith("gaussian 30x30")
    assert lines[2].count("*") == 1  # the default budget puts all 8 small tables in one batch
