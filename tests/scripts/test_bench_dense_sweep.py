"""scripts/benchmarks/bench_dense_sweep.py on tiny tables: the engine and the compiled prototype of
a whole half-sweep side by side, the same label sets."""

import json
import re

import numpy as np
import pytest

from tests.scripts.helpers import load_script, run_script


@pytest.mark.numba
def test_quick_run_times_both_and_finds_the_same_label_sets(tmp_path):
    pytest.importorskip("numba", reason="numba is not installed (pip install 'lbm-bench[fast]')")
    out = run_script("benchmarks", "bench_dense_sweep", "--quick", "--json", tmp_path / "rows.json").stdout
    rows = re.findall(r"^\| (\w+ \d+x\d+) \| [\d.]+ \| [\d.]+ \| [\d.]+ \| yes \|$", out, re.M)
    assert rows == ["bernoulli 30x20", "poisson 30x20"]
    saved = json.loads((tmp_path / "rows.json").read_text())
    assert [r["same"] for r in saved] == [True, True]


def test_the_prototype_half_sweep_as_plain_python_draws_the_engine_s_labels():
    """The prototype's arithmetic (plain Python, what numba compiles) against the engine's
    draws on one tiny table: the same label sets."""
    bench = load_script("benchmarks", "bench_dense_sweep")
    from lbm_bench import random_design
    from lbm_bench.inference.chains import run_chains
    from lbm_bench.inference.engine import Sweeper

    model = random_design("poisson", 3, 3, rng=4).model(1.0)
    X, _, w_true = model.sample(12, 9, rng=5)
    X = np.asarray(X, dtype=np.float64)
    w = np.repeat(w_true[None, None].astype(np.uint8), bench.CHAINS, axis=1)
    sweeper = Sweeper.for_table(model, X)
    run = run_chains(sweeper, w, 3, bench._streams(7), burn_in=bench.BURN_IN)
    rows, cols = bench.prototype_run(bench.half_sweep, sweeper, X, w, 3, bench._streams(7))
    assert np.array_equal(run.rows[0], rows) and np.array_equal(run.cols[0], cols)
