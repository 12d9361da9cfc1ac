"""The sparse-engine benchmark runs (quick mode) and both engines draw the same label sets."""

from lbm_bench.bench.sparse import engine_rows, format_engine_rows, format_scaling_rows, main, scaling_rows


def test_sparse_benchmark_quick(capsys):
    rows = engine_rows(quick=True)
    assert rows and all(row["same"] for row in rows)
    assert all(row["gibbs_sparse_s"] > 0 and row["nnz"] > 0 for row in rows)
    assert "gibbs 200" in format_engine_rows(rows)
    scaling = scaling_rows(quick=True)
    assert [row["axis"] for row in scaling] == ["nnz", "nnz"] and scaling[1]["nnz"] > scaling[0]["nnz"]
    assert "s/sweep" in format_scaling_rows(scaling)
    assert main(["--quick"]) == 0
    assert "sparse engine vs the same tables densified" in capsys.readouterr().out


def test_lbm_bench_bench_sparse_scaling(capsys):
    """`lbm-bench bench --part sparse --scaling` prints both parts (docs/performance.md)."""
    from lbm_bench.cli import main as cli_main

    assert cli_main(["bench", "--part", "sparse", "--quick", "--scaling"]) == 0
    out = capsys.readouterr().out
    assert "sparse engine vs the same tables densified" in out and "s/sweep" in out
    assert cli_main(["bench", "--part", "sparse", "--quick"]) == 0
    assert "s/sweep" not in capsys.readouterr().out
