"""The one sweep loop (lbm_bench.inference.chains): its sources of uniforms, burn-in and
thinning, chains as tasks in any grouping, and that every Gibbs run of the package goes
through it."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from lbm_bench import gibbs_labels, random_model
from lbm_bench.inference import chains
from lbm_bench.inference.chains import ChainStreams, chain_groups, chain_seeds, run_chain_tasks, run_chains
from lbm_bench.inference.engine import Sweeper
from lbm_bench.tasks import large
from lbm_bench.tasks.backends import worker_backend

PACKAGE = Path(__file__).resolve().parents[2] / "lbm_bench"


@pytest.fixture(scope="module")
def tables():
    model = random_model("poisson", 3, 2, scale=0.6, rng=4)
    drawn = [model.sample(40, 30, rng=10 + t) for t in range(3)]
    return model, [X for X, _, _ in drawn], [(z, w) for _, z, w in drawn]


def _starts(labels, n_chains):
    return np.stack([np.repeat(np.asarray(w)[None], n_chains, axis=0) for _, w in labels])


def _streams(seeds_by_table, n_chains):
    return ChainStreams([[np.random.default_rng(s) for s in chain_seeds(np.random.default_rng(t), n_chains)]
                         for t in seeds_by_table])


def test_with_chain_streams_a_chain_runs_as_alone_whatever_its_batch(tables):
    model, Xs, labels = tables
    w = _starts(labels, 4)
    batch = run_chains(Sweeper(model, Xs), w, 10, _streams((5, 6, 7), 4), max_changed=-1)
    for t, seed in enumerate((5, 6, 7)):
        seeds = chain_seeds(np.random.default_rng(seed), 4)
        for c in range(4):
            alone = run_chains(Sweeper(model, Xs[t:t + 1]), w[t:t + 1, c:c + 1], 10,
                               ChainStreams([[np.random.default_rng(seeds[c])]]), max_changed=-1)
            np.testing.assert_array_equal(batch.rows[t, c], alone.rows[0, 0])
            np.testing.assert_array_equal(batch.cols[t, c], alone.cols[0, 0])
    # one Generator for the batch draws other uniforms: the tables' sets are not those
    shared = run_chains(Sweeper(model, Xs), w, 10, np.random.default_rng(5), max_changed=-1)
    assert not np.array_equal(shared.rows[1], batch.rows[1])


def test_chain_streams_refuse_a_batch_of_another_size():
    with pytest.raises(ValueError, match="uniforms for 3 tables of 4 chains asked of streams for"):
        _streams((0, 1), 4).random((3, 4, 5))
    with pytest.raises(ValueError, match=r"streams for \[2, 2\] chains"):
        _streams((0, 1), 2).random((2, 4, 5))


def test_chain_groups_follow_the_table_not_only_the_jobs():
    assert chain_groups(8, 4, large=False, exact=True) == [range(8)]
    assert chain_groups(8, 4, large=False, exact=False) == [range(8)]
    assert chain_groups(8, 1, large=True, exact=True) == [range(8)]
    assert chain_groups(8, 3, large=True, exact=True) == [range(0, 3), range(3, 5), range(5, 8)]
    assert chain_groups(3, 8, large=True, exact=True) == [range(0, 1), range(1, 2), range(2, 3)]
    # float sums: one chain per group whatever the jobs (rounding in a batch never decides a label)
    assert chain_groups(4, 1, large=True, exact=False) == chain_groups(4, 2, large=True, exact=False) \
        == [range(c, c + 1) for c in range(4)]


def test_table_groups_ask_whether_the_table_is_large(tables, monkeypatch):
    """A table's chains are grouped by its size (the threshold of lbm_bench.tasks.large), and by
    whether its sums are exact (integer tables)."""
    model, Xs, _ = tables
    gaussian = random_model("gaussian", 3, 2, scale=0.6, rng=4)
    assert chains.table_groups(model, Xs[0], 4, 2) == [range(4)]  # a small table: one batched loop
    assert chains.table_groups(gaussian, Xs[0].astype(float), 4, 2) == [range(4)]
    monkeypatch.setattr(large, "LARGE_TABLE_ENTRIES", Xs[0].size)  # 40 x 30 is large now
    assert chains.table_groups(model, Xs[0], 4, 2) == [range(0, 2), range(2, 4)]
    assert chains.table_groups(gaussian, Xs[0].astype(float), 4, 2) == [range(c, c + 1) for c in range(4)]


def _incomplete(X, rng):
    X = X.astype(float)
    X[rng.random(X.shape) < 0.2] = np.nan
    return X


CASES = {
    "bernoulli dense": ("bernoulli", False, False),
    "bernoulli dense missing": ("bernoulli", False, True),
    "poisson sparse": ("poisson", True, False),
    "bernoulli sparse missing": ("bernoulli", True, True),
    "gaussian dense": ("gaussian", False, False),
    "gaussian dense missing": ("gaussian", False, True),
}


def _case_table(model, n_rows, sparse, missing):
    """A table of ``n_rows`` x 40 drawn from ``model`` (seed 2), made sparse (30% of its
    entries kept) and incomplete as the case says, with its generating labels."""
    X, z, w = model.sample(n_rows, 40, rng=2)
    rng = np.random.default_rng(3)
    if sparse:
        X = sp.csr_array(X * (rng.random(X.shape) < 0.3))
    if missing:
        X = _incomplete(X.toarray() if sparse else X, rng)
        X = sp.csr_array(np.where(X == 0, 0, X)) if sparse else X  # NaN kept as explicit entries
    return X, z, w


@pytest.mark.parametrize("case", list(CASES))
def test_same_label_sets_whatever_jobs_and_backend(case, monkeypatch):
    """The chains of a table as tasks: in one process, over 2 loky workers and over a local
    Dask cluster of 2 workers, the same bytes (the table counts as large here)."""
    kind, sparse, missing = CASES[case]
    monkeypatch.setattr(large, "LARGE_TABLE_ENTRIES", 1)
    model = random_model(kind, 2, 3, scale=1.0, rng=1)
    X, z, w = _case_table(model, 50, sparse, missing)
    options = dict(n_samples=60, n_chains=4, burn_in=3, init=[(z, w)], rng=4)
    one = gibbs_labels(model, X, jobs=1, **options)
    assert one.rows.shape == (60, 50)
    with worker_backend("loky", 2):
        loky = gibbs_labels(model, X, jobs=2, **options)
    assert one.rows.tobytes() == loky.rows.tobytes() and one.cols.tobytes() == loky.cols.tobytes()
    if case == "poisson sparse":
        pytest.importorskip("dask.distributed")
        with worker_backend("dask", 2):
            dask = gibbs_labels(model, X, jobs=2, **options)
        assert one.rows.tobytes() == dask.rows.tobytes() and one.cols.tobytes() == dask.cols.tobytes()


@pytest.mark.parametrize("case", list(CASES))
def test_the_map_starts_of_a_large_table_run_as_tasks_with_the_same_labels(case, monkeypatch):
    """map_labels' starts as tasks over 2 loky workers give the labels of one process; for
    integer statistics also those of today's one batched loop (a small table's)."""
    from lbm_bench import map_labels

    kind, sparse, missing = CASES[case]
    model = random_model(kind, 2, 3, scale=0.7, rng=1)
    X, _, _ = _case_table(model, 60, sparse, missing)
    batched = map_labels(model, X, n_init=5, rng=4)
    monkeypatch.setattr(large, "LARGE_TABLE_ENTRIES", 1)
    one = map_labels(model, X, n_init=5, jobs=1, rng=4)
    with worker_backend("loky", 2):
        two = map_labels(model, X, n_init=5, jobs=2, rng=4)
    for result in (two, *([batched] if kind != "gaussian" else [])):
        np.testing.assert_array_equal(one.rows, result.rows)
        np.testing.assert_array_equal(one.cols, result.cols)
        np.testing.assert_array_equal(one.start_log_likelihoods, result.start_log_likelihoods)
    assert one.start_log_likelihoods.shape == (7,)  # 5 random starts and the 2 deterministic ones
    with pytest.raises(ValueError, match="jobs"):
        map_labels(model, X, jobs=0)


def test_a_chain_draws_the_same_labels_in_any_group_for_integer_statistics(tables, monkeypatch):
    model, Xs, labels = tables
    monkeypatch.setattr(large, "LARGE_TABLE_ENTRIES", 1)
    w = _starts(labels[:1], 5)[0]
    seeds = chain_seeds(np.random.default_rng(11), 5)
    one = run_chain_tasks(model, Xs[0], w, 6, seeds, jobs=1, burn_in=2)
    split = run_chain_tasks(model, Xs[0], w, 6, seeds, jobs=3, burn_in=2)  # groups of 2, 1 and 2 chains
    assert one[0].shape == (5, 6, 40)
    np.testing.assert_array_equal(one[0], split[0])
    np.testing.assert_array_equal(one[1], split[1])
    # the workers of a cluster (not this machine's) send their sets back instead of writing a file
    monkeypatch.setattr(chains, "local_backend", lambda: False)
    sent = run_chain_tasks(model, Xs[0], w, 6, seeds, jobs=3, burn_in=2)
    np.testing.assert_array_equal(one[0], sent[0])
    np.testing.assert_array_equal(one[1], sent[1])
    with pytest.raises(ValueError, match="seeds must hold 5 entries, got 4"):
        run_chain_tasks(model, Xs[0], w, 6, seeds[:4])


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
    rng = np.random.default_rng(9)
    run = run_chains(Sweeper.for_table(model, Xs[0]), _starts(labels[:1], 4), 10,
                     ChainStreams([[np.random.default_rng(s) for s in chain_seeds(rng, 4)]]), burn_in=2)
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
    of the calibration both call run_chains (the sampler through its chain tasks)."""
    assert _callers("sample_rows", "sample_cols") == ["inference/chains.py", "inference/chains.py"]
    # and its module's sample_categorical (the MAP's random starts)
    assert set(_callers("sample_class_major")) == {"inference/engine.py", "inference/side.py"}
    users = sorted(
        str(path.relative_to(PACKAGE)) for path in PACKAGE.rglob("*.py")
        if "run_chains(" in path.read_text(encoding="utf-8") and path.name != "chains.py"
    )
    assert users == ["protocol/short_run.py"]
    assert "run_chain_tasks(" in (PACKAGE / "inference" / "gibbs.py").read_text(encoding="utf-8")


def test_streams_give_each_chains_own_uniforms_in_order_whatever_the_requests():
    """Small requests come from what each chain drew ahead, large ones straight from its
    Generator: every chain's uniforms are the ones its Generator gives in sequence, bit for
    bit, across requests that cross the buffer's end and mix both kinds."""
    from lbm_bench.inference.chains import AHEAD

    seeds = [[np.random.SeedSequence([t, c]) for c in range(3)] for t in range(2)]
    streams = ChainStreams([[np.random.default_rng(s) for s in table] for table in seeds])
    sizes = [5, 40, AHEAD - 30, 17, AHEAD + 3, 1, AHEAD, 9]
    drawn = [streams.random((2, 3, n)) for n in sizes]
    for t in range(2):
        for c in range(3):
            expected = np.random.default_rng(seeds[t][c]).random(sum(sizes))
            assert np.array_equal(np.concatenate([d[t, c] for d in drawn]), expected)
    assert drawn[0].shape == (2, 3, 5)
