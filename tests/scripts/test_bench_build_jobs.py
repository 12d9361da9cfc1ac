"""scripts/benchmarks/bench_build_jobs.py on the tiny release spec: both packages at two worker
counts, the same bytes, the table of wall times and critical paths."""

import re

from tests.release.helpers import TINY_SPEC
from tests.scripts.helpers import load_script, run_script


def test_tiny_release_against_head_at_two_worker_counts(tmp_path):
    spec = tmp_path / "tiny.toml"
    spec.write_text(TINY_SPEC)
    out = run_script("benchmarks", "bench_build_jobs", "--spec", spec, "--against", "HEAD", "--jobs", "1", "2").stdout
    assert "old: same SHA256SUMS (every file) at every --jobs: yes" in out
    assert "new: same SHA256SUMS (every file) at every --jobs: yes" in out
    assert "same tables (manifest SHA-256) in both packages: yes" in out
    rows = [line for line in out.splitlines() if re.match(r"\| (old|new) \| [12] \|", line)]
    assert [row.split(" | ")[:2] for row in rows] == [["| old", "1"], ["| old", "2"], ["| new", "1"], ["| new", "2"]]
    path = r"[\d.]+ \((bernoulli|gaussian|poisson)-[^)]+\)"
    assert re.fullmatch(rf"\| new \| 2 \| [\d.]+ \| [\d.]+ \| [\d.]+ \| {path} \| [\d.]+ \| 0 \| .+ \|", rows[3])


def test_critical_path_is_a_configuration_s_calibration_and_longest_table():
    critical_path = load_script("benchmarks", "bench_build_jobs").critical_path
    run = {"calibration_seconds": {"a-2x2": 3.0, "b-2x2": 0.5},
           "table_seconds": {"a-2x2-01": {"gibbs": 1.0, "writing": 0.5}, "a-2x2-02": {"gibbs": 2.0},
                             "b-2x2-01": {"gibbs": 4.0, "floor": float("nan")}}}
    assert critical_path(run) == (5.0, "a-2x2")
