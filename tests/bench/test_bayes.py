"""The Bayes-labels benchmark runs (quick mode) and its floor is never above the MAP's risk."""

from lbm_bench.bench.bayes import bayes_rows, format_rows


def test_bayes_benchmark_quick():
    rows = bayes_rows(quick=True)
    assert len(rows) == 2
    for row in rows:
        assert row["gibbs_s"] > 0 and row["bayes_labels_s"] > 0 and row["floor_certificate_s"] > 0
        # cross-fitted floor vs in-sample MAP risk: allow the Monte Carlo error
        assert row["bayes_risk"] <= row["map_risk"] + 3 * row["bayes_risk_mcse"] + 1e-3
    text = format_rows(rows)
    assert "bernoulli 80x60 2x2 @10%" in text and "floor" in text
