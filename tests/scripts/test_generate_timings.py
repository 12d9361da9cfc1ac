"""scripts/benchmarks/generate_timings.py on a tiny request (``--table``): one markdown row
with the total, calibration and Gibbs seconds and the certified floor."""

import re

from tests.scripts.helpers import load_script, run_script


def test_tiny_request():
    out = run_script("benchmarks", "generate_timings", "--table", "gaussian", "40x30", "2x2", "0.2").stdout
    lines = out.splitlines()
    assert lines[0].startswith("| table | total | calibration |") and len(lines) == 3
    row = (r"\| gaussian 40x30 2x2, 20% \| [\d.]+ s \| [\d.]+ s \| [\d.]+ s \| [\d.]+ \| \d+ \((0|1)\.\d\d\) \| "
           r"0\.\d{4} \(0\.2\) \|")
    assert re.fullmatch(row, lines[2]), lines[2]


def test_cpu_clock_times_the_same_row_in_cpu_seconds():
    """``--clock cpu``: the same row (the same table, so the same attempts and floor), the
    total and the parts on the process's CPU clock (the total at least its parts)."""
    request = ("--table", "poisson", "40x30", "2x2", "0.2", "--seed", "3")
    wall = run_script("benchmarks", "generate_timings", *request).stdout.splitlines()[2]
    cpu = run_script("benchmarks", "generate_timings", *request, "--clock", "cpu").stdout.splitlines()[2]
    cells = [c.strip() for c in cpu.strip("|").split("|")]
    assert [c.strip() for c in wall.strip("|").split("|")][5:] == cells[5:]
    total, calibration, gibbs = (float(c.removesuffix(" s")) for c in cells[1:4])
    assert 0 < calibration + gibbs <= total + 0.05


def test_bad_table_is_a_usage_error():
    result = run_script("benchmarks", "generate_timings", "--table", "gaussian", "40by30", "2x2", "0.2", check=False)
    assert result.returncode == 2 and "--table" in result.stderr
    assert load_script("benchmarks", "generate_timings").parse_table("poisson", "50X40", "3x2", "0.1") == (
        "poisson", 50, 40, 3, 2, 0.1)


def test_phases_line_splits_the_calibration_and_lists_its_evaluations():
    """``--phases``: under the row, the calibration's seconds by phase (at most its total)
    and every evaluation (scale, mean floor, tables) of the table's calibration history."""
    request = ("--table", "poisson", "40x30", "2x2", "0.2", "--seed", "3", "--clock", "cpu")
    lines = run_script("benchmarks", "generate_timings", *request, "--phases").stdout.splitlines()
    assert len(lines) == 4 and lines[3].startswith("  calibration: tables ")
    phases = [float(v) for v in re.findall(r"([\d.]+) s\b", lines[3].split(";")[0])]
    calibration = float(lines[2].split("|")[3].strip().removesuffix(" s"))
    assert len(phases) == 5 and sum(phases) <= calibration + 0.05
    evaluations = re.findall(r"[\d.e-]+: (0\.\d{4}) on (\d+)", lines[3].split("evaluations")[1])
    assert evaluations and all(int(n) >= 1 for _, n in evaluations)
