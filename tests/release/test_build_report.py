"""`release/build_report.py`: a build's report, its timings per configuration and stage, unknown stages said so."""

from lbm_bench.release.build_report import BuildReport


def test_timings_by_configuration_arithmetic(tmp_path):
    report = BuildReport(out_dir=tmp_path)
    report.calibration_seconds = {"gaussian-30x20-2x2-r0.1": 6.0}
    report.attempts = {"gaussian-30x20-2x2-r0.1-01": 1, "gaussian-30x20-2x2-r0.1-02": 3}
    report.table_seconds = {
        t: {"rejection": 1.0, "gibbs": 0.5, "floor": 0.25, "writing": 0.5, "thumbnail": 0.25} for t in report.attempts
    }
    (row,) = report.timings_by_configuration()
    assert row["tables"] == 2 and row["attempts"] == 4 and row["floor"] == 0.5 and row["thumbnail"] == 0.5
    assert row["per_kept_table"] == (6.0 + 2 * 2.5) / 2
    total = report.format_timings().splitlines()[-1].split()
    assert total[0] == "total" and total[-4:] == ["0.50", "1.00", "0.50", "5.50"]  # floor, write, thumb, per table
    # every stage to the hundredth: the configurations' cells add up to the total line
    assert total[3:6] == ["6.00", "2.00", "1.00"]  # calibration, rejection, Gibbs


def test_timings_without_the_floor_say_so(tmp_path):
    """Timings of a generator that does not time the floor: '-' (unknown), not 0 s."""
    report = BuildReport(out_dir=tmp_path)
    report.calibration_seconds = {"gaussian-30x20-2x2-r0.1": 6.0}
    report.attempts = {"gaussian-30x20-2x2-r0.1-01": 1}
    report.table_seconds = {"gaussian-30x20-2x2-r0.1-01": {"rejection": 1.0, "gibbs": 0.5, "writing": 0.5}}
    (row,) = report.timings_by_configuration()
    assert row["floor"] != row["floor"] and row["per_kept_table"] == 8.0  # NaN, left out of the total
    assert report.format_timings().splitlines()[-1].split()[-4:] == ["-", "0.50", "-", "8.00"]
    report.stage_seconds = {"calibration": 6.0, "rejection": 1.0, "gibbs": 0.5, "floor": float("nan")}
    assert "floor" not in report.summary() and "gibbs 0.5 s" in report.summary()
