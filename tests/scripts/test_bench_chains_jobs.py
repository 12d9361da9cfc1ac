"""scripts/benchmarks/bench_chains_jobs.py on a tiny table: both runs, the same bytes, the
table of seconds, ratios and serial fractions."""

import re

from tests.scripts.helpers import load_script, run_script


def test_tiny_table_at_two_worker_counts():
    out = run_script("benchmarks", "bench_chains_jobs", "--shape", "60x40", "--clusters", "2x2", "--risk", "0.15",
                     "--density", "0.3", "--seed", "3", "--jobs", "1", "2").stdout
    assert "same file bytes at every --jobs: yes" in out
    rows = [line for line in out.splitlines() if re.match(r"\| [12] \|", line)]
    assert len(rows) == 6 and re.fullmatch(r"\| 2 \| whole command \| [\d.]+ \| [\d.]+ \| -?[\d.]+% \|", rows[3])


def test_serial_fraction_and_usage():
    assert load_script("benchmarks", "bench_chains_jobs").serial_fraction(0.75, 2) == 0.5
    result = run_script("benchmarks", "bench_chains_jobs", "--jobs", "2", check=False)
    assert result.returncode == 2 and "--jobs" in result.stderr
