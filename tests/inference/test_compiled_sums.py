"""The compiled kernel of sparse tables (lbm_bench.inference.compiled_sums) against scipy's
(lbm_bench.inference.sparse_sums): the same block sums, index updates, logits, start scores,
labels and label sets, bit for bit, on every kind of sparse table it takes; and the tables it
leaves to scipy's kernel."""

import numpy as np
import pytest
from scipy import sparse

from lbm_bench.inference import compiled_sums
from lbm_bench.inference.classifier import map_labels
from lbm_bench.inference.compiled_sums import CompiledSide, CompiledStatistics, compiled_applies
from lbm_bench.inference.engine import BlockSums, Sweeper
from lbm_bench.inference.gibbs import gibbs_labels
from lbm_bench.inference.kernel_choice import use_kernel
from lbm_bench.inference.kernels import TableLayout
from lbm_bench.models.data import TableData
from lbm_bench.models.design import random_design

#: Skipped without numba, except in CI (CI=true), where the skip fails the run (tests/conftest.py).
pytestmark = pytest.mark.numba


@pytest.fixture(autouse=True)
def _numba_installed():
    pytest.importorskip("numba", reason="numba is not installed (pip install 'lbm-bench[fast]')")


def _table(kind, n_rows, n_cols, density, seed, effects=False, missing=None):
    """A sparse table of a random design and its labels; with ``missing`` (``"random"`` or
    ``"block"``), a tenth of its entries missing by that mechanism."""
    options = {"effects": (n_rows, n_cols), "effects_spread": 0.5} if effects else {}
    model = random_design(kind, 3, 2, density=density, rng=seed, **options).model(1.0)
    if missing == "block":
        model = model.with_missing_probs(np.full((3, 2), 0.1) + np.arange(2) * 0.1)
    X, z, w = model.sample(n_rows, n_cols, rng=seed + 1)
    if missing is not None:
        observed = np.random.default_rng(seed + 2).random((n_rows, n_cols)) >= 0.1
        X = model.check_data(sparse.csr_array(np.where(observed, X.toarray(), 0)), observed)
    return model, X, z, w


#: (kind, effects, missing entries): the tables the compiled kernel takes.
CASES = [("bernoulli", False, None), ("poisson", False, None), ("poisson", True, None),
         ("bernoulli", False, "random"), ("poisson", False, "block")]


def _sweepers(model, tables):
    with use_kernel("scipy"):
        scipy_sweeper = Sweeper(model, tables)
    with use_kernel("compiled"):
        compiled_sweeper = Sweeper(model, tables)
    assert scipy_sweeper.kernel.name == "sparse" and compiled_sweeper.kernel.name == "compiled"
    assert isinstance(compiled_sweeper.storage, CompiledStatistics)
    return scipy_sweeper, compiled_sweeper


@pytest.mark.parametrize("kind, effects, missing", CASES)
def test_full_sums_index_updates_and_logits_are_scipy_s_bit_for_bit(kind, effects, missing):
    """Two tables, both steps, 5 chains: full products and forced index updates (few and many
    labels moved: both routes of the update) give scipy's sums, hence its logits."""
    model, X, _, _ = _table(kind, 300, 200, 0.06, 3, effects, missing)
    Y = model.sample(300, 200, rng=7)[0]
    if missing is not None:
        Y = model.check_data(Y, X.missing_indicator().toarray() == 0)
    scipy_sweeper, compiled_sweeper = _sweepers(model, [X, Y])
    rng = np.random.default_rng(12)
    for side, n_other, k in (("rows", 200, 2), ("cols", 300, 3)):
        mine = BlockSums(compiled_sweeper, side, max_changed=10**9)
        theirs = BlockSums(scipy_sweeper, side, max_changed=10**9)
        labels = rng.integers(0, k, size=(2, 5, n_other)).astype(np.uint8)
        for step in range(8):
            flip = rng.random(labels.shape) < (0.4 if step % 3 == 0 else 0.03)
            labels = np.where(flip, rng.integers(0, k, size=labels.shape), labels).astype(np.uint8)
            assert mine.update(labels) == theirs.update(labels)
            assert np.array_equal(mine.sums, theirs.sums)
            full = getattr(compiled_sweeper, side).full_sums(labels.astype(np.int64))
            assert np.array_equal(full, mine.sums)
            mine_logits = getattr(compiled_sweeper, side).logits(mine.sums, mine.labels)
            assert np.array_equal(mine_logits, getattr(scipy_sweeper, side).logits(theirs.sums,
                                                                                   theirs.labels))
        assert mine.n_index >= 5


def test_index_updates_take_both_routes(monkeypatch):
    """The two-stage update (entries summed per move, then added) and the direct one (each entry
    moved twice) give the same sums; the work space's bound decides between them."""
    model, X, _, _ = _table("poisson", 400, 300, 0.05, 5)
    _, compiled_sweeper = _sweepers(model, [X])
    rng = np.random.default_rng(1)
    base = rng.integers(0, 2, size=(1, 6, 300)).astype(np.uint8)
    moved = np.where(rng.random(base.shape) < 0.3, 1 - base, base).astype(np.uint8)
    results = []
    for limit in (0, 10**9):
        monkeypatch.setattr(compiled_sums, "_PAIR_BYTES", limit)
        sums = BlockSums(compiled_sweeper, "rows", max_changed=10**9)
        sums.update(base)
        assert sums.update(moved) == "index"
        results.append(sums.sums.copy())
    assert np.array_equal(results[0], results[1])
    assert np.array_equal(results[0], compiled_sweeper.rows.full_sums(moved))


def test_rows_too_large_for_int32_are_summed_in_int64():
    """Counts whose row sums pass 2**31 take an int64 accumulator: still exact."""
    X = sparse.csr_array(np.array([[5, 2**30, 2**30], [0, 3, 2**30]], dtype=np.int64))
    model = random_design("poisson", 2, 2, density=0.5, rng=0).model(1.0)
    scipy_sweeper, compiled_sweeper = _sweepers(model, [X])
    assert compiled_sweeper.rows.sum_dtype == np.int64
    w = np.array([[[0, 1, 1], [1, 1, 0]]])
    assert np.array_equal(compiled_sweeper.rows.full_sums(w), scipy_sweeper.rows.full_sums(w))
    assert compiled_sweeper.rows.full_sums(w)[0, 0, 1, 0, 0] == 2**31  # chain 0, class 1, row 0


@pytest.mark.parametrize("kind, effects, missing", CASES)
def test_map_and_gibbs_runs_are_scipy_s(kind, effects, missing):
    """The MAP (its start scores, alternation and likelihoods) and the Gibbs label sets."""
    model, X, z, w = _table(kind, 400, 250, 0.05, 9, effects, missing)
    runs = []
    for kernel in ("scipy", "compiled"):
        with use_kernel(kernel):
            result = map_labels(model, X, rng=1)
            samples = gibbs_labels(model, X, n_samples=80, n_chains=4, burn_in=5, rng=2)
        runs.append((result.rows, result.cols, result.start_log_likelihoods, samples.rows,
                     samples.cols))
    for a, b in zip(*runs, strict=True):
        assert np.array_equal(a, b)


def test_entrywise_scores_without_effects_are_scipy_s():
    model, X, _, _ = _table("poisson", 500, 300, 0.08, 11)
    scipy_sweeper, compiled_sweeper = _sweepers(model, [X])
    for a, b in zip(scipy_sweeper.entrywise_scores(), compiled_sweeper.entrywise_scores(),
                    strict=True):
        assert np.array_equal(a, b)


def test_the_missing_entries_exposures_with_effects_stay_with_scipy():
    """With row and column effects the missing entries' channel holds exposures, not integers:
    the compiled kernel does not take such tables, and its side refuses them."""
    model, X, _, _ = _table("poisson", 60, 40, 0.2, 13, effects=True, missing="random")
    layout = TableLayout([X], True, True, 60, 40)
    with use_kernel("compiled"):
        assert not compiled_applies(model, layout)
        assert Sweeper(model, [X]).kernel.name == "sparse"
        complete = _table("poisson", 60, 40, 0.2, 13, effects=True)
        assert compiled_applies(complete[0], TableLayout([TableData.of(complete[1])], True,
                                                         False, 60, 40))
    half = sparse.csr_array(np.array([[0.5, 1.0]]))
    sweeper = Sweeper(model, [X])
    parts = (sweeper.eta[:1], sweeper.log_partition, sweeper.log_row_prior, None, None)
    with pytest.raises(TypeError, match="integer statistics"):
        CompiledSide([half], [half.T.tocsr()], 1, *parts)


def test_dense_tables_and_mixed_storages_are_not_the_compiled_kernel_s():
    model, X, _, _ = _table("bernoulli", 50, 40, 0.1, 15)
    with use_kernel("compiled"):
        assert Sweeper(model, [X.toarray()]).kernel.name == "dense"
        with pytest.raises(TypeError, match="sparse"):
            Sweeper(model, [X, X.toarray()])


def test_a_table_with_missing_entries_has_its_missing_channel_summed():
    model, X, _, _ = _table("bernoulli", 200, 100, 0.1, 17, missing="random")
    _, compiled_sweeper = _sweepers(model, [X])
    assert compiled_sweeper.rows.n_stats == 2 and compiled_sweeper.rows.binary
    assert isinstance(X, TableData) and X.has_missing


def test_start_scores_of_counts_too_spread_for_a_lookup_are_scipy_s_too():
    """Stored values more than ``_LOOKUP_VALUES`` apart: scipy's way of adding the gains."""
    rng = np.random.default_rng(19)
    X = sparse.random_array((80, 60), density=0.2, rng=rng, format="csr")
    X.data[:] = rng.choice([1.0, 2.0, 6000.0], X.nnz)
    X = X.astype(np.int64)
    model = random_design("poisson", 3, 2, density=0.2, rng=0).model(0.5)
    scipy_sweeper, compiled_sweeper = _sweepers(model, [X])
    for a, b in zip(scipy_sweeper.entrywise_scores(), compiled_sweeper.entrywise_scores(), strict=True):
        assert np.all(np.isfinite(a)) and np.array_equal(a, b)


@pytest.mark.parametrize("n_terms", [1, 2, 3, 7, 8])
@pytest.mark.parametrize("axis", [1, 2])
def test_the_compiled_logsumexp_is_scipy_s_bit_for_bit(n_terms, axis):
    """On arrays with ties and wide ranges, either axis; 8 terms or more are numpy's sum."""
    from scipy.special import logsumexp

    rng = np.random.default_rng(n_terms * 10 + axis)
    shape = (3001, n_terms, 4) if axis == 1 else (3001, 4, n_terms)
    x = rng.normal(scale=30.0, size=shape)
    x[::7] = np.round(x[::7])  # ties
    x[5] = 0.0
    got = CompiledStatistics.logsumexp(x, axis)
    assert np.array_equal(got, logsumexp(x, axis=axis))


def test_start_scores_with_effects_are_scipy_s():
    model, X, _, _ = _table("poisson", 700, 400, 0.08, 21, effects=True)
    scipy_sweeper, compiled_sweeper = _sweepers(model, [X])
    for a, b in zip(scipy_sweeper.entrywise_scores(), compiled_sweeper.entrywise_scores(), strict=True):
        assert np.array_equal(a, b)


def _compiled_sweep_in_a_worker(seed):
    """A task: a compiled Sweeper's full sums in a worker; which compiled loops it used."""
    import os

    from lbm_bench.inference import compiled_loops as module

    model, X, _, w = _table("bernoulli", 120, 80, 0.1, seed)
    with use_kernel("compiled"):
        sweeper = Sweeper.for_table(model, X)
    sweeper.rows.full_sums(w[None, None])
    return os.getpid(), id(module.compiled_loops()), module.compiled_loops.cache_info().misses


def test_workers_compile_once_per_process_not_per_task():
    from lbm_bench.tasks.backends import worker_backend
    from lbm_bench.tasks.pool import run_tasks

    with worker_backend("loky", 2):
        results = run_tasks(_compiled_sweep_in_a_worker, [(seed,) for seed in range(6)], 2)
    by_process = {}
    for pid, loops, misses in results:
        by_process.setdefault(pid, set()).add((loops, misses))
    assert all(len(seen) == 1 for seen in by_process.values())  # one set of loops per process
    assert {misses for seen in by_process.values() for _, misses in seen} == {1}


@pytest.mark.parametrize("kind, effects, missing", CASES)
def test_the_transposed_tables_hold_small_integers_where_scipy_s_hold_float64(kind, effects,
                                                                             missing):
    """Every CSR the compiled storage makes by transposing holds a byte per stored value
    (scipy's kernel: 8), the same entries; the user's table itself is left as it is."""
    model, X, _, _ = _table(kind, 120, 80, 0.1, 5, effects, missing)
    scipy_sweeper, compiled_sweeper = _sweepers(model, [X])
    made = 0
    for side in ("rows", "cols"):
        mine = getattr(compiled_sweeper.storage, side).stacked_other
        theirs = getattr(scipy_sweeper.storage, side).stacked_other
        assert np.array_equal(mine.indptr, theirs.indptr)
        assert np.array_equal(mine.indices, theirs.indices)
        assert np.array_equal(mine.data, theirs.data)
        if any(mine is table for table in compiled_sweeper.storage.values):
            continue  # the table as given
        assert theirs.data.dtype == np.float64 and mine.data.dtype == np.uint8
        made += 1
    assert made == (1 if missing is None else 2)


def test_values_beyond_small_integers_keep_scipy_s_transposed_table():
    """Counts too large for uint32, or negative, are not compacted: the transposed table is
    scipy's (float64)."""
    model, X, _, _ = _table("poisson", 60, 40, 0.2, 9)
    X = X.copy()
    X.data[0] = 2.0**33
    _, compiled_sweeper = _sweepers(model, [X])
    assert compiled_sweeper.storage.by_cols[0].data.dtype == np.float64


def test_the_table_checks_read_in_ranges(monkeypatch):
    """Binary and integer values are recognised range by range, a range at its edge too."""
    from lbm_bench.inference import sparse_sums

    monkeypatch.setattr(sparse_sums, "_GATHER_CHUNK", 4)
    ones = np.ones(9)
    assert sparse_sums._all_ones(ones) and sparse_sums._all_integers(ones)
    ones[8] = 2.0
    assert not sparse_sums._all_ones(ones) and sparse_sums._all_integers(ones)
    ones[8] = 2.5
    assert not sparse_sums._all_integers(ones)
    assert sparse_sums._all_ones(np.empty(0)) and sparse_sums._all_integers(np.empty(0))
    assert sparse_sums._all_integers(np.arange(5, dtype=np.uint8))
