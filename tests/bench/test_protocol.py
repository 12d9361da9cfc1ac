"""The protocol benchmarks run (quick mode) and their baselines agree with the new code."""

from lbm_bench.bench.protocol import calibration_rows, format_rows, whole_table_rows


def test_protocol_benchmarks_quick():
    rows = calibration_rows(quick=True) + whole_table_rows(quick=True)
    assert [r["benchmark"] for r in rows] == ["calibration step"] + ["whole table"] * 3
    for row in rows:
        assert row["baseline_s"] > 0 and row["new_s"] > 0 and row["peak_mib"] > 0
    text = format_rows(rows)
    assert "risk 0.2" in text and "calibration step" in text
    # batched + incremental calibration must give exactly the one-by-one, full-product errors
    assert all(r["detail"]["identical"] == "yes" for r in rows[:1]), text
    # the old calibration (bisection, fixed tables) against the new: both scales and risks shown
    for row in rows[1:]:
        assert "/" in row["detail"]["scales"] and "/" in row["detail"]["risks"]


def test_bench_calibration_script_against_head():
    """scripts/bench_calibration.py runs against a git revision (here HEAD)."""
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    import pytest

    root = Path(__file__).resolve().parents[2]
    if shutil.which("git") is None or not (root / ".git").exists():
        pytest.skip("needs a git checkout")
    result = subprocess.run(
        [sys.executable, "scripts/bench_calibration.py", "--against", "HEAD", "--quick", "--repeats", "1"],
        cwd=root, capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[-1].startswith("all shapes") and len(lines) == 6


def test_batch_size_sweep_quick():
    from lbm_bench.bench.protocol import batch_size_lines

    lines = batch_size_lines(quick=True, repeats=1)
    assert len(lines) == 3 and lines[2].startswith("gaussian 30x30")
    assert lines[2].count("*") == 1  # the default budget puts all 8 small tables in one batch
