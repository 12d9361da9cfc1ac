"""scripts/benchmarks/calibration_statistics.py on a tiny configuration: one row with the
three statistics, and a difference consistent with its columns."""

from __future__ import annotations

import re

from tests.scripts.helpers import load_script, run_script


def test_one_row_per_configuration():
    out = run_script("benchmarks", "calibration_statistics", "--tables", "4",
                     "--config", "poisson", "30x20", "2x2", "0.1").stdout
    row = [line for line in out.splitlines() if line.startswith("poisson 30x20 2x2 @0.1")]
    assert len(row) == 1
    numbers = [float(v) for v in re.findall(r"[-+]?\d+\.\d+", row[0].split("@0.1", 1)[1])]
    apparent, short, certificate, difference = numbers[0], numbers[3], numbers[6], numbers[8]
    assert 0 <= apparent <= 1 and 0 <= short <= 1 and 0 <= certificate <= 1
    assert abs(difference - (short - certificate)) < 1e-3


def test_bad_config_is_one_line():
    result = run_script("benchmarks", "calibration_statistics", "--config", "gaussian", "40by30", "2x2", "0.2",
                        check=False)
    assert result.returncode == 2 and "--config" in result.stderr
    assert load_script("benchmarks", "calibration_statistics").parse_config("bernoulli", "5X4", "2x2", "0.2") == (
        "bernoulli", 5, 4, 2, 2, 0.2)
