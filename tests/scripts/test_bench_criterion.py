"""scripts/benchmarks/bench_criterion.py at its quick size: one table per criterion, the
floor criterion certifies the floor and the MAP criterion the MAP's risk."""

from tests.scripts.helpers import load_script, run_script


def test_quick_rows(capsys):
    rows = load_script("benchmarks", "bench_criterion").main(["--quick"])
    assert [(r["config"], r["criterion"]) for r in rows] == [
        ("bernoulli 50x50 3x3 @20%", "bayes"), ("bernoulli 50x50 3x3 @20%", "map")]
    bayes, map_ = rows
    assert bayes["certified"] == bayes["floor"] and map_["certified"] == map_["map"]
    for row in rows:
        assert 0 < row["acceptance"] <= 1 and row["seconds"] > 0
        assert abs(row["certified"] - 0.2) <= 0.01  # kept within the default rejection tolerance
    assert "all (bayes): mean seconds" in capsys.readouterr().out


def test_script_runs_as_a_file():
    assert "all (map): mean seconds" in run_script("benchmarks", "bench_criterion", "--quick").stdout
