"""scripts/benchmarks/bench_bayes.py at its quick size: the Bayes-labels benchmark runs and its
floor is never above the MAP's risk; the script runs as a file."""

import json

from tests.scripts.helpers import load_script, run_script


def test_bayes_benchmark_quick():
    bench = load_script("benchmarks", "bench_bayes")
    rows = bench.bayes_rows(quick=True)
    assert len(rows) == 2
    for row in rows:
        assert row["gibbs_s"] > 0 and row["bayes_labels_s"] > 0 and row["floor_certificate_s"] > 0
        # cross-fitted floor vs in-sample MAP risk: allow the Monte Carlo error
        assert row["bayes_risk"] <= row["map_risk"] + 3 * row["bayes_risk_mcse"] + 1e-3
    text = bench.format_rows(rows)
    assert "bernoulli 80x60 2x2 @10%" in text and "floor" in text


def test_script_runs_as_a_file(tmp_path):
    out = tmp_path / "rows.json"
    result = run_script("benchmarks", "bench_bayes", "--quick", "--repeats", "1", "--json", out)
    assert "Bayes labels for l_item vs the Gibbs run" in result.stdout
    assert [r["config"] for r in json.loads(out.read_text())] == ["gaussian 60x50 3x3 @20%", "bernoulli 80x60 2x2 @10%"]
