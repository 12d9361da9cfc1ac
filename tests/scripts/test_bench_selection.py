"""scripts/benchmarks/bench_selection.py at a tiny size: the recovery and grid parts on a tiny
release (every table, whatever its risk and shape), the cost and sparse parts of ``--quick`` run as a
file, and densifying refused within the sparse part and allowed again after it."""

import scipy.sparse as sp

from lbm_bench.release import build_release
from tests.release.helpers import TINY_SPEC
from tests.scripts.helpers import load_script, run_script


def test_recovery_on_a_tiny_release(tmp_path, capsys):
    (tmp_path / "tiny.toml").write_text(TINY_SPEC)
    assert build_release(tmp_path / "tiny.toml", tmp_path / "tiny").ok
    bench = load_script("benchmarks", "bench_selection")
    rows = bench.recovery(tmp_path / "tiny", tmp_path / "runs", 0.2, 1, 0, True, min_shape=(1, 1), max_clusters=(4, 4))
    assert {r["kind"] for r in rows if r["part"] == "recovery"} == {"bernoulli", "gaussian", "poisson"}
    assert sum(r["tables"] for r in rows if r["part"] == "recovery") == 5
    assert [r["tables"] for r in rows if r["part"] == "gaussian-criteria"] == [2]
    counts = [r for r in rows if r["part"] == "recovery"]
    assert all(r["found_identifiable"] <= r["identifiable"] <= r["tables"] for r in counts)
    assert all(r["found"] + r["criterion"] + r["search"] == r["tables"] for r in counts)
    assert "| family | tables | counts found |" in capsys.readouterr().out
    grid = bench.grid(tmp_path / "tiny", tmp_path / "runs", 0.2, 1, 0, min_shape=(1, 1), max_clusters=(4, 4))
    assert len(grid) == 5 and all(r["runs"] == 4 * 4 * 10 for r in grid)
    assert "| family | tables | found by the path | found by the grid |" in capsys.readouterr().out


def test_script_runs_as_a_file():
    out = run_script("benchmarks", "bench_selection", "--quick").stdout
    assert "| quick |" in out and "selection " in out and "(true 5x4)" in out


def test_densifying_is_refused_and_restored():
    bench = load_script("benchmarks", "bench_selection")
    X = sp.csr_array(sp.eye(3))
    with bench._densifying_refused():
        try:
            X.toarray()
        except RuntimeError as exc:
            assert "densified" in str(exc)
        else:
            raise AssertionError("toarray was not refused")
    assert X.toarray().shape == (3, 3) and X.todense().shape == (3, 3)
