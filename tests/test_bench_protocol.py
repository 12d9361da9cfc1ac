"""The protocol benchmarks run (quick mode) and their baselines agree with the new code."""

from lbm_bench._bench_protocol import calibration_rows, format_rows, whole_table_rows


def test_protocol_benchmarks_quick():
    rows = calibration_rows(quick=True) + whole_table_rows(quick=True)
    assert [r["benchmark"] for r in rows] == ["calibration step"] + ["whole table"] * 3
    for row in rows:
        assert row["baseline_s"] > 0 and row["new_s"] > 0 and row["peak_mib"] > 0
    text = format_rows(rows)
    assert "risk 0.2" in text and "calibration step" in text
