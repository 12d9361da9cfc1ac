"""scripts/benchmarks/calibration_cost.py: one line per configuration, and a total whose entry count
is the tables computed times their entries."""

from __future__ import annotations

import re
from pathlib import Path

from tests.release.helpers import TINY_SPEC
from tests.scripts.helpers import run_script


def test_calibration_cost_counts_the_tables_entries(tmp_path: Path):
    spec = tmp_path / "tiny.toml"
    spec.write_text(TINY_SPEC)
    out = run_script("benchmarks", "calibration_cost", spec, "--jobs", "1").stdout
    lines = [line for line in out.splitlines() if "tables computed" in line]
    assert len(lines) == 3  # gaussian and bernoulli 30x20, poisson 24x24
    entries = 0
    for line in lines:
        computed = int(re.search(r"tables computed +(\d+)", line).group(1))
        shape = re.search(r"-(\d+)x(\d+)-", line)
        entries += computed * int(shape.group(1)) * int(shape.group(2))
        assert int(re.search(r"final n +(\d+)", line).group(1)) == 20  # the spec fixes 20 tables
    total = re.search(r"total: 3 configurations, .* table entries calibrated [\d.]+ million \((\d+)\)", out)
    assert total and int(total.group(1)) == entries > 0
    ratios = [float(re.search(r"guess ([-+]\d+\.\d+)", line).group(1)) for line in lines]
    first = re.search(r"first guess: log\(guess / calibrated scale\) mean ([-+]\d+\.\d+), sd (\d+\.\d+) over 3 ", out)
    assert first and abs(float(first.group(1)) - sum(ratios) / 3) < 2e-3
