"""scripts/benchmarks/bench_sparse_io.py at a tiny shape: a sparse table written twice with the
same bytes, its datasets listed, read back, and `lbm-bench info` and `evaluate` run on it."""

from lbm_bench import load_table
from tests.scripts.helpers import run_script


def test_tiny_table(tmp_path):
    kept = tmp_path / "small.h5"
    out = run_script("benchmarks", "bench_sparse_io", "--shape", "300x200", "--density", "0.05",
                     "--samples", "16", "--keep", kept).stdout
    assert "identical bytes: True" in out
    for name in ("data/indices", "gibbs/rows", "load_table:", "lbm-bench info:", "lbm-bench info --json:",
                 "lbm-bench evaluate:"):
        assert name in out, out
    table = load_table(kept)
    assert table.shape == (300, 200) and table.gibbs.n_samples == 16
