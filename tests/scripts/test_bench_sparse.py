"""scripts/benchmarks/bench_sparse.py at its quick size: both engines draw the same label sets,
the scaling part runs, and the script prints both parts when run as a file."""

from tests.scripts.helpers import load_script, run_script


def test_sparse_benchmark_quick(capsys):
    bench = load_script("benchmarks", "bench_sparse")
    rows = bench.engine_rows(quick=True)
    assert rows and all(row["same"] for row in rows)
    assert all(row["gibbs_sparse_s"] > 0 and row["nnz"] > 0 for row in rows)
    assert "gibbs 200" in bench.format_engine_rows(rows)
    scaling = bench.scaling_rows(quick=True)
    assert [row["axis"] for row in scaling] == ["nnz", "nnz"] and scaling[1]["nnz"] > scaling[0]["nnz"]
    assert "s/sweep" in bench.format_scaling_rows(scaling)


def test_script_runs_as_a_file():
    """``--scaling`` adds part 2 (docs/performance.md); without it, part 1 only."""
    out = run_script("benchmarks", "bench_sparse", "--quick", "--scaling").stdout
    assert "sparse engine vs the same tables densified" in out and "s/sweep" in out and "log-log slopes" in out
    out = run_script("benchmarks", "bench_sparse", "--quick").stdout
    assert "sparse engine vs the same tables densified" in out and "s/sweep" not in out
