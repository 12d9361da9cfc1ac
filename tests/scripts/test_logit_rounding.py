"""scripts/benchmarks/logit_rounding.py: its replicas of the engine's arithmetic, and a quick
watched build."""

import json
import re

import numpy as np

from lbm_bench.inference.side import sample_class_major
from tests.scripts.helpers import load_script, run_script


def test_draw_with_numpy_s_exp_is_the_engine_s_draw_bit_for_bit():
    bench = load_script("benchmarks", "logit_rounding")
    rng = np.random.default_rng(3)
    logits = rng.normal(scale=30.0, size=(2, 5, 4, 301))
    u = rng.random((2, 5, 301))
    assert np.array_equal(bench.draw(logits, u), sample_class_major(logits.copy(), u))


def test_plain_products_sum_term_by_term_in_order():
    bench = load_script("benchmarks", "logit_rounding")
    rng = np.random.default_rng(4)
    eta, sums = rng.normal(size=(3, 6)), rng.integers(0, 50, size=(4, 6, 7)).astype(float)
    expected = np.empty((4, 3, 7))
    for a in range(4):
        for r in range(3):
            for i in range(7):
                total = eta[r, 0] * sums[a, 0, i]
                for q in range(1, 6):
                    total = total + eta[r, q] * sums[a, q, i]
                expected[a, r, i] = total
    assert np.array_equal(bench.plain_products(eta, sums), expected)
    # and they are not BLAS's bits everywhere, or the script would measure nothing
    wide = rng.normal(size=(200, 6, 50)) * 1e3
    assert not np.array_equal(bench.plain_products(eta, wide), np.matmul(eta, wide))


def test_quick_watched_build_counts_the_logits_and_the_changed_labels(tmp_path):
    out = run_script("benchmarks", "logit_rounding", "--quick", "--json", tmp_path / "row.json").stdout
    row = json.loads((tmp_path / "row.json").read_text())
    assert row["calls"] > 100 and row["logits"] > row["decisions"] > 0
    assert 0 < row["products_differ"] < row["logits"]
    # seeded: in this build no last bit decided a label
    assert (row["map_changes"], row["draw_changes"], row["exp_draw_changes"]) == (0, 0, 0)
    assert re.search(r"^logits computed +[\d,]+$", out, re.M)
