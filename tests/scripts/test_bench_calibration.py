"""scripts/benchmarks/bench_calibration.py runs against a git revision (here HEAD)."""

import shutil

import pytest

from tests.scripts.helpers import ROOT, run_script


def test_bench_calibration_against_head():
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs a git checkout")
    result = run_script("benchmarks", "bench_calibration", "--against", "HEAD", "--quick", "--repeats", "1")
    lines = result.stdout.splitlines()
    assert lines[-1].startswith("all shapes") and len(lines) == 6
    assert lines[3].startswith("gaussian 50x50 3x3") and lines[4].startswith("bernoulli 100x80 4x3")
