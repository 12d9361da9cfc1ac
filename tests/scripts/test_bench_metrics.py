"""scripts/benchmarks/bench_metrics.py at its quick size: the exact CARI against the naive
Kronecker one (equal), the cancellation case, and conditional_risk against label sets."""

import re

from tests.scripts.helpers import run_script


def test_quick():
    out = run_script("benchmarks", "bench_metrics", "--quick", "--repeat", "1").stdout
    (kron,) = [line for line in out.splitlines() if line.split()[:2] == ["10,000", "10"]]
    assert kron.split()[-2] == "0.0e+00"  # |exact - naive| on the Kronecker table
    assert re.search(r"CARI, independent 10\^4 x 10\^4 labels .*\n  exact .* rel\. error", out)
    assert "conditional_risk: one co-clustering vs 200 label sets of a 200 x 200 table" in out
