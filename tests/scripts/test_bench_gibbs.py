"""scripts/benchmarks/bench_gibbs.py: without ``--against`` it is bench_gibbs_map.py; with
``--against REF`` it times the package at a git revision (here HEAD) against the working tree
on the benchmark's tables, and the label sets of the two are the same."""

import shutil

import pytest

from tests.scripts.helpers import ROOT, run_script


def test_passes_through_to_the_gibbs_map_benchmark():
    result = run_script("benchmarks", "bench_gibbs", "--quick", "--only", "40x30", "--no-memory")
    assert "gaussian 40x30 3x3 @10%" in result.stdout and "map n_init=10" in result.stdout


def test_against_head():
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs a git checkout")
    result = run_script("benchmarks", "bench_gibbs", "--against", "HEAD", "--quick", "--repeats", "1",
                        "--only", "40x30")
    lines = result.stdout.splitlines()
    assert lines[0].startswith("engine pieces on a 300x300 3x3 Gaussian table")
    assert any(line.startswith("sample_categorical (public)") for line in lines)
    (row,) = [line for line in lines if line.startswith("gaussian 40x30 3x3 @10%")]
    assert row.split()[-1] == "True"  # same MAP labels and label sets at HEAD and in the working tree
