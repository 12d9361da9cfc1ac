"""The one sweep loop (lbm_bench.inference.chains): its sources of uniforms, burn-in and
thinning, and that every Gibbs run of the package goes through it."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

from lbm_bench import gibbs_labels, random_model
from lbm_bench.inference.chains import TableStreams, run_chains
from lbm_bench.inference.engine import Sweeper

PACKAGE = Path(__file__).resolve().parents[2] / "lbm_bench"


@pytest.fixture(scope="module")
def tables():
    model = random_model("poisson", 3, 2, scale=0.6, rng=4)
    drawn = [model.sample(40, 30, rng=10 + t) for t in range(3)]
    return model, [X for X, _, _ in drawn], [(z, w) for _, z, w in drawn]


def _starts(labels, n_chains):
    return np.stack([np.repeat(np.asarray(w)[None], n_chains, axis=0) for _, w in labels])


def test_a_table_stream_of_one_table_draws_what_its_generator_draws(tables):
    model, Xs, labels = tables
    w = _starts(labels[:1], 4)
    alone = run_chains(Sweeper(model, Xs[:1]), w, 10, np.random.default_rng(3))
    streams = run_chains(Sweeper(model, Xs[:1]), w, 10, TableStreams([np.random.default_rng(3)]))
    assert alone.rows.tobytes() == streams.rows.tobytes() and alone.cols.tobytes() == streams.cols.tobytes()


def test_with_table_streams_a_table_runs_as_alone_whatever_its_batch(tables):
    model, Xs, labels = tables
    w = _starts(labels, 4)
    batch = run_chains(Sweeper(model, Xs), w, 10, TableStreams([np.random.default_rng(s) for s in (5, 6, 7)]),
                       max_changed=-1)
    for t, seed in enumerate((5, 6, 7)):
        alone = run_chains(Sweeper(model, Xs[t:t + 1]), w[t:t + 1], 10, np.random.default_rng(seed), max_changed=-1)
        np.testing.assert_array_equal(batch.rows[t], alone.rows[0])
        np.testing.assert_array_equal(batch.cols[t], alone.cols[0])
    # one Generator for the batch draws other uniforms: the tables' sets are not those
    shared = run_chains(Sweeper(model, Xs), w, 10, np.random.default_rng(5), max_changed=-1)
    assert not np.array_equal(shared.rows[1], batch.rows[1])


def test_table_streams_refuse_a_batch_of_another_size():
    with pytest.raises(ValueError, match="uniforms for 3 tables asked of 2 streams"):
        TableStreams([np.random.default_rng(0), np.random.default_rng(1)]).random((3, 4, 5))


def test_burn_in_and_thinning_keep_the_sweeps_they_say(tables):
    model, Xs, labels = tables
    w = _starts(labels[:1], 3)
    every = run_chains(Sweeper(model, Xs[:1]), w, 11, np.random.default_rng(8))
    kept = run_chains(Sweeper(model, Xs[:1]), w, 4, np.random.default_rng(8), burn_in=3, thin=2)
    assert kept.rows.shape == (1, 3, 4, 40) and kept.cols.shape == (1, 3, 4, 30)
    np.testing.assert_array_equal(kept.rows, every.rows[:, :, [4, 6, 8, 10]])  # sweeps 5, 7, 9, 11
    np.testing.assert_array_equal(kept.cols, every.cols[:, :, [4, 6, 8, 10]])
    assert kept.rows.dtype == np.uint8 and kept.row_sums.n_full + kept.row_sums.n_index \
        + kept.row_sums.n_unchanged == 11


def test_gibbs_labels_is_the_loop_from_its_starts(tables):
    model, Xs, labels = tables
    samples = gibbs_labels(model, Xs[0], n_samples=40, n_chains=4, init=[labels[0]], burn_in=2, rng=9)
    run = run_chains(Sweeper.for_table(model, Xs[0]), _starts(labels[:1], 4), 10, np.random.default_rng(9), burn_in=2)
    np.testing.assert_array_equal(samples.rows, run.rows.reshape(-1, 40))
    np.testing.assert_array_equal(samples.cols, run.cols.reshape(-1, 30))


def _callers(*names: str) -> list[str]:
    return sorted(
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Call) and (
            node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
        ) in names
    )


def test_the_sweep_loop_is_written_once():
    """Label draws of the sampler (Sweeper.sample_rows and sample_cols, on the engine's one
    inverse-CDF draw) are called by the one loop only: the Gibbs sampler and the short runs
    of the calibration both call run_chains."""
    assert _callers("sample_rows", "sample_cols") == ["inference/chains.py", "inference/chains.py"]
    # and its module's sample_categorical (the MAP's random starts)
    assert set(_callers("sample_class_major")) == {"inference/engine.py", "inference/side.py"}
    users = sorted(
        str(path.relative_to(PACKAGE)) for path in PACKAGE.rglob("*.py")
        if "run_chains(" in path.read_text(encoding="utf-8") and path.name != "chains.py"
    )
    assert users == ["inference/gibbs.py", "protocol/short_run.py"]
