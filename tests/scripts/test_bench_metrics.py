"""scripts/benchmarks/bench_metrics.py at its quick size: the exact CARI against the naive
Kronecker one (equal), the cancellation case, and conditional_risk against label sets."""

import re

from tests.scripts.helpers import run_script


def test_quick():
    out = run_script("benchmarks", "bench_metrics", "--quick", "--repeat", "1").stdout
    # the Kronecker row, then, when sparsebm is installed (the test extra has it), its CARI's row
    kron, *sparsebm = [line for line in out.splitlines() if line.split()[:2] == ["10,000", "10"]]
    assert kron.split()[-2] == "0.0e+00"  # |exact - naive| on the Kronecker table
    assert len(sparsebm) == ("CARI vs sparsebm.utils.CARI" in out)
    assert all(line.split()[-1] == "0.0e+00" for line in sparsebm)  # |lbm_bench - sparsebm|
    assert re.search(r"CARI, independent 10\^4 x 10\^4 labels .*\n  exact .* rel\. error", out)
    assert "conditional_risk: one co-clustering vs 200 label sets of a 200 x 200 table" in out
