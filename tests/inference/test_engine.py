"""Incremental block sums of the Gibbs sampler against the full-recompute baseline.

- Poisson and Bernoulli statistics are integers, summed exactly in float64 by
  both routes: ``method="incremental"`` and ``method="full"`` give the same
  label sets bit for bit (index updates, fallbacks and periodic recomputes all
  exercised; tables are small, so the size cut-off ``MIN_FULL_WORK`` is lowered
  to let small tables take the index route).
- Gaussian sums differ by rounding only. Measured (``python scripts/benchmarks/bench_gibbs_map.py
  --tolerance``, docs/performance.md): max ``|S_incremental - S_full|`` below
  1.1e-12 (relative to ``max|S|``: 1.7e-15) with the recompute every 50 sweeps,
  below 2.8e-12 (4.7e-15) with no recompute over 500 sweeps, on 300x300 to
  1000x1000 tables at 5-20% risk; no differing label in 12 runs (4 to 20
  million labels each). Asserted here: drift below ``1e-10 * max|S|`` after
  400 index updates without recompute, and fewer than 0.1% differing labels
  over 6,000 label sets (none differ in practice).
- No timing assertions: performance is measured by ``scripts/benchmarks/bench_gibbs_map.py``
  (its smoke test, tests/scripts/test_bench_gibbs_map.py, checks that both methods agree on its tables).
"""

import numpy as np
import pytest

from lbm_bench import gibbs_labels, random_model
from lbm_bench.inference import dense_sums as _dense
from lbm_bench.inference import engine as _engine
from lbm_bench.inference import gibbs as gibbs_module
from lbm_bench.inference.chains import run_chains
from lbm_bench.inference.engine import BlockSums, Sweeper, sample_categorical
from lbm_bench.inference.side import onehot_t
from lbm_bench.models import BernoulliLBM, GaussianLBM, PoissonLBM


@pytest.fixture
def index_on_small_tables(monkeypatch):
    """Let small tables take the index-update route (the default sends them to BLAS)."""
    monkeypatch.setattr(_dense, "MIN_FULL_WORK", 0)


def _model(kind, g, m, scale, seed):
    if kind == "poisson-effects":
        model = random_model("poisson", g, m, scale=scale, rng=seed, effects=(70, 50))
        return model
    return random_model(kind, g, m, scale=scale, rng=seed)


def _run_routes(model, X, *, n_chains, per_chain, seed, **options):
    """Counters of the incremental run equivalent to gibbs_labels(init='random')."""
    rng = np.random.default_rng(seed)
    _, w = gibbs_module._chain_starts(model, model.check_table(X), "random", n_chains, rng)
    run = run_chains(Sweeper(model, model.check_table(X)[None]), w, per_chain, rng, burn_in=10, **options)
    return run.row_sums, run.col_sums


# (kind, n_rows, n_cols, g, m, scale): small scales give high risk, so many labels
# change per sweep and the fallback to the full product is taken.
EXACT_CASES = [
    ("bernoulli", 70, 50, 2, 2, 0.15),
    ("bernoulli", 70, 50, 3, 3, 0.4),
    ("bernoulli", 120, 90, 3, 2, 0.3),
    ("bernoulli", 120, 90, 3, 2, 0.4),
    ("poisson", 70, 50, 2, 2, 0.1),
    ("poisson", 70, 50, 3, 3, 0.3),
    ("poisson", 120, 90, 2, 3, 0.2),
    ("poisson", 120, 90, 2, 3, 0.3),
    ("poisson-effects", 70, 50, 2, 2, 0.3),
]


@pytest.mark.parametrize("case", EXACT_CASES, ids=lambda c: "-".join(map(str, c)))
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_incremental_equals_full_bit_for_bit(case, seed, index_on_small_tables):
    kind, n, d, g, m, scale = case
    model = _model(kind, g, m, scale, seed)
    X, _, _ = model.sample(n, d, rng=seed)
    kwargs = dict(n_samples=600, n_chains=6, init="random", burn_in=10, rng=seed)
    inc = gibbs_labels(model, X, method="incremental", **kwargs)
    full = gibbs_labels(model, X, method="full", **kwargs)
    assert inc.rows.dtype == full.rows.dtype == np.uint8
    assert inc.rows.tobytes() == full.rows.tobytes()
    assert inc.cols.tobytes() == full.cols.tobytes()
    rows, cols = _run_routes(model, X, n_chains=6, per_chain=100, seed=seed)
    assert rows.n_index + cols.n_index + rows.n_fallback + cols.n_fallback > 0


def test_exact_cases_exercise_every_route(index_on_small_tables):
    """Across the cases above, index updates, fallbacks and periodic recomputes all occur
    (the same runs as in the bit-for-bit test)."""
    totals = {"index": 0, "fallback": 0, "recompute": 0}
    for kind, n, d, g, m, scale in EXACT_CASES:
        model = _model(kind, g, m, scale, 0)
        X, _, _ = model.sample(n, d, rng=0)
        for sums in _run_routes(model, X, n_chains=6, per_chain=100, seed=0):
            totals["index"] += sums.n_index
            totals["fallback"] += sums.n_fallback
            totals["recompute"] += sums.n_recompute
    assert all(count > 0 for count in totals.values()), totals


def test_bit_for_bit_with_default_thresholds():
    """A table big enough for the default cost model to choose index updates by itself."""
    model = random_model("bernoulli", 3, 3, scale=0.3, rng=4)
    X, _, _ = model.sample(800, 700, rng=4)  # above the single-statistic cut-off
    kwargs = dict(n_samples=400, n_chains=8, init="random", burn_in=5, rng=9)
    inc = gibbs_labels(model, X, method="incremental", **kwargs)
    full = gibbs_labels(model, X, method="full", **kwargs)
    assert inc.rows.tobytes() == full.rows.tobytes()
    assert inc.cols.tobytes() == full.cols.tobytes()
    rows, cols = _run_routes(model, X, n_chains=8, per_chain=50, seed=9)
    assert rows.n_index > 0 and cols.n_index > 0


@pytest.mark.parametrize("kernel", ["sparse", "dense"])
@pytest.mark.parametrize("kind", ["bernoulli", "poisson", "gaussian"])
def test_block_sums_follow_random_moves_several_tables(kind, kernel):
    """BlockSums on B=2 tables, C=5 chains, random moves of every size (duplicated columns
    across chains, moves back and forth): equal to the full product, exactly for
    integer statistics."""
    rng = np.random.default_rng(3)
    model = random_model(kind, 3, 4, scale=0.5, rng=3)
    tables = np.stack([model.sample(40, 30, rng=s)[0] for s in (1, 2)])
    sweeper = Sweeper(model, tables)
    for side, n_other, n_classes in (("rows", 30, 4), ("cols", 40, 3)):
        sums = BlockSums(sweeper, side, max_changed=10**9, recompute_every=10**9, kernel=kernel)
        labels = rng.integers(0, n_classes, (2, 5, n_other)).astype(np.uint8)
        sums.update(labels)
        for n_moves in (0, 1, 3, 20, 150, labels.size):
            labels = labels.copy()
            flat = rng.choice(labels.size, size=n_moves, replace=False)
            moved = labels.reshape(-1)[flat] + rng.integers(1, n_classes, n_moves)
            labels.reshape(-1)[flat] = moved % n_classes
            sums.update(labels)
            reference = sweeper.rows.full_sums(labels) if side == "rows" else sweeper.cols.full_sums(labels)
            if kind == "gaussian":
                np.testing.assert_allclose(sums.sums, reference, rtol=0, atol=1e-12 * np.abs(reference).max())
            else:
                assert sums.sums.tobytes() == reference.tobytes()
        assert sums.n_index == 5 and sums.n_unchanged == 1 and sums.n_full == 1


@pytest.mark.parametrize("kind", ["bernoulli", "poisson-effects"])
def test_dense_kernel_bit_for_bit(kind, index_on_small_tables):
    """The dense kernel (kept for comparison) also reproduces the full method exactly."""
    model = _model(kind, 3, 2, 0.3, 1) if kind != "poisson-effects" else _model(kind, 2, 2, 0.3, 1)
    X, _, _ = model.sample(70, 50, rng=1)
    X = model.check_table(X)
    rng = np.random.default_rng(1)
    _, w = gibbs_module._chain_starts(model, X, "random", 6, rng)
    state = rng.bit_generator.state
    runs = []
    for options in ({"incremental": False}, {"kernel": "dense"}, {"kernel": "sparse"}):
        rng.bit_generator.state = state
        run = run_chains(Sweeper(model, X[None]), w, 60, rng, burn_in=5, **options)
        runs.append((run.rows.tobytes(), run.cols.tobytes()))
        if "kernel" in options:
            assert run.row_sums.n_index > 0
    assert runs[0] == runs[1] == runs[2]


def test_gaussian_block_sums_drift_tolerance(index_on_small_tables):
    """Without any recompute, 400 sweeps of index updates keep the Gaussian block sums
    within 1e-10 * max|S| of the full product (measured: about 1e-15 relative)."""
    model = random_model("gaussian", 3, 3, scale=0.4, rng=5, equal_dispersions=True)
    X, z, w = model.sample(150, 120, rng=5)
    sweeper = Sweeper(model, X[None])
    rng = np.random.default_rng(5)
    C = 6
    zz = np.repeat(z.astype(np.uint8)[None, None], C, axis=1)
    ww = np.repeat(w.astype(np.uint8)[None, None], C, axis=1)
    options = dict(max_changed=10**9, recompute_every=10**9)
    row_sums = BlockSums(sweeper, "rows", **options)
    col_sums = BlockSums(sweeper, "cols", **options)
    worst = 0.0
    for _ in range(400):
        row_sums.update(ww)
        zz = sweeper.sample_rows(row_sums, rng)
        col_sums.update(zz)
        ww = sweeper.sample_cols(col_sums, rng)
        for sums, reference in (
            (row_sums, sweeper.rows.full_sums(row_sums.labels)),
            (col_sums, sweeper.cols.full_sums(col_sums.labels)),
        ):
            worst = max(worst, float(np.abs(sums.sums - reference).max() / np.abs(reference).max()))
    assert row_sums.n_index > 300 and row_sums.n_full == 1  # labels kept moving, no recompute
    assert worst < 1e-10


@pytest.mark.parametrize("seed", [0, 1])
def test_gaussian_labels_agree_over_long_run(seed, index_on_small_tables):
    """Incremental vs full on Gaussian tables, 6,000 label sets at a risk of a few
    percent: the label sets agree (a rounding difference could only flip a draw whose
    uniform falls within ~1e-13 of a CDF boundary)."""
    model = random_model("gaussian", 3, 3, scale=0.5, rng=seed, equal_dispersions=True)
    X, z, w = model.sample(100, 80, rng=seed)
    kwargs = dict(n_samples=6000, n_chains=6, init=(z, w), burn_in=0, rng=seed)
    inc = gibbs_labels(model, X, method="incremental", **kwargs)
    full = gibbs_labels(model, X, method="full", **kwargs)
    assert inc.risk(z, w).risk > 0.005  # labels do move
    differing = (np.sum(inc.rows != full.rows) + np.sum(inc.cols != full.cols)) / (
        inc.rows.size + inc.cols.size
    )
    assert differing <= 1e-3


def test_periodic_recompute_schedule():
    """Updates 0, k, 2k, ... are full products (none in between when few labels change),
    and a recompute leaves the sums exactly equal to the full product."""
    model = random_model("gaussian", 2, 2, scale=1.0, rng=1, equal_dispersions=True)
    X, z, w = model.sample(30, 20, rng=1)
    sweeper = Sweeper(model, X[None])
    rng = np.random.default_rng(0)
    sums = BlockSums(sweeper, "rows", recompute_every=7, max_changed=10**9)
    labels = np.repeat(w.astype(np.uint8)[None, None], 3, axis=1)
    routes = []
    for _ in range(30):
        labels = labels.copy()
        flat = rng.choice(labels.size, size=2, replace=False)
        labels.reshape(-1)[flat] ^= 1
        routes.append(sums.update(labels))
        if routes[-1] in ("full", "recompute"):
            assert sums.sums.tobytes() == sweeper.rows.full_sums(labels).tobytes()
    full_at = [i for i, r in enumerate(routes) if r in ("full", "recompute")]
    assert full_at == [0, 7, 14, 21, 28]
    assert sums.n_recompute == 4 and sums.n_fallback == 0


def test_default_recompute_every_50_sweeps():
    model = random_model("bernoulli", 3, 3, scale=0.3, rng=4)
    X, _, _ = model.sample(800, 700, rng=4)
    rows, cols = _run_routes(model, X, n_chains=8, per_chain=140, seed=2)
    n_updates = 10 + 140  # burn-in + kept sweeps, one update per sweep and side
    for sums in (rows, cols):
        assert _engine.RECOMPUTE_EVERY == 50
        assert sums.n_full == 1 + sums.n_recompute + sums.n_fallback
        if sums.n_fallback == 0:
            assert sums.n_recompute == (n_updates - 1) // 50


def test_fallback_when_many_labels_change():
    model = random_model("bernoulli", 2, 2, scale=1.0, rng=0)
    X, _, w = model.sample(30, 20, rng=0)
    sweeper = Sweeper(model, X[None])
    sums = BlockSums(sweeper, "rows", max_changed=5)
    labels = np.repeat(w.astype(np.uint8)[None, None], 2, axis=1)
    assert sums.update(labels) == "full"
    assert sums.update(labels) == "unchanged"
    few = labels.copy()
    few[0, 0, :5] ^= 1
    assert sums.update(few) == "index"
    many = few.copy()
    many[0, 1, :6] ^= 1
    assert sums.update(many) == "fallback"
    assert sums.sums.tobytes() == sweeper.rows.full_sums(many).tobytes()


def test_small_tables_use_the_full_product():
    """Below MIN_FULL_WORK the incremental method is the full method (no overhead)."""
    model = random_model("gaussian", 3, 3, scale=1.0, rng=0)
    X, _, w = model.sample(50, 50, rng=0)
    sums = BlockSums(Sweeper(model, X[None]), "rows")
    labels = np.repeat(w.astype(np.uint8)[None, None], 8, axis=1)
    sums.update(labels)
    assert sums.always_full
    assert sums.update(labels) == "full"


def test_single_statistic_cutoff_is_higher():
    """A 500x500 Poisson row step with 8 chains (6e6 multiply-adds) stays on the full
    product; the same work with two statistics (Gaussian 350x350) takes index updates."""
    for kind, size, expected in (("poisson", 500, True), ("gaussian", 350, False), ("poisson", 720, False)):
        model = random_model(kind, 3, 3, scale=1.0, rng=0)
        X, _, w = model.sample(size, size, rng=0)
        sums = BlockSums(Sweeper(model, X[None]), "rows")
        sums.update(np.repeat(w.astype(np.uint8)[None, None], 8, axis=1))
        assert sums.always_full is expected, (kind, size)


def test_method_argument_checked():
    model = random_model("bernoulli", 2, 2, scale=1.0, rng=0)
    X, _, _ = model.sample(10, 8, rng=0)
    with pytest.raises(ValueError, match="method"):
        gibbs_labels(model, X, n_samples=10, n_chains=2, method="fast")


def _reference_sample(logits, rng):
    """The sampler as first written (before the class-major rewrite)."""
    shifted = logits - logits.max(axis=-1, keepdims=True)
    cdf = np.cumsum(np.exp(shifted), axis=-1)
    u = rng.random(logits.shape[:-1])[..., None] * cdf[..., -1:]
    labels = (cdf <= u).sum(axis=-1)
    return np.minimum(labels, logits.shape[-1] - 1)


@pytest.mark.parametrize("k", [1, 2, 3, 7, 12])
def test_sampler_unchanged(k):
    rng = np.random.default_rng(k)
    logits = rng.normal(scale=5.0, size=(2, 3, 400, k))
    if k > 1:
        logits[0, 0, :10, 0] = -np.inf
    a = sample_categorical(logits, np.random.default_rng(1))
    b = _reference_sample(logits, np.random.default_rng(1))
    assert a.dtype == np.int64 and np.array_equal(a, b)


def _reference_row_logits(model, tables, w):
    """Row logits by the direct formula (B, C, n, g)."""
    T = np.stack([model.sufficient_statistics(t) for t in tables])  # (B, p, n, d)
    onehot = np.eye(model.n_col_clusters)[w]  # (B, C, d, m)
    sums = np.einsum("bpij,bcjl->bcipl", T, onehot)
    logits = np.einsum("bcipl,pkl->bcik", sums, model.natural_parameters)
    b = model.col_weights(tables.shape[2])
    mass = onehot.sum(2) if b is None else np.einsum("j,bcjl->bcl", b, onehot)
    a = model.row_weights(tables.shape[1])
    a = np.ones(tables.shape[1]) if a is None else a
    logits -= a[:, None] * (mass @ model.log_partition.T)[:, :, None, :]
    return logits + np.log(model.row_proportions)


@pytest.mark.parametrize(
    "model",
    [
        GaussianLBM([0.3, 0.7], [0.2, 0.5, 0.3], [[0, 1, 2], [1, -1, 0]], [[1, 2, 1], [0.5, 1, 1]]),
        PoissonLBM([0.3, 0.7], [0.5, 0.5], [[1, 3], [2, 0.5]], [0.5, 1.5, 1, 1, 2, 0.7], [1, 2, 0.5, 1, 1]),
        BernoulliLBM([0.3, 0.7], [0.5, 0.5], [[0.1, 0.6], [0.8, 0.3]]),
    ],
    ids=["gaussian", "poisson-effects", "bernoulli"],
)
def test_engine_logits_and_likelihood_several_tables(model):
    rng = np.random.default_rng(0)
    tables = np.stack([model.sample(6, 5, rng=s)[0] for s in range(3)])
    sweeper = Sweeper(model, tables)
    z = rng.integers(0, model.n_row_clusters, (3, 4, 6))
    w = rng.integers(0, model.n_col_clusters, (3, 4, 5))
    np.testing.assert_allclose(sweeper.row_logits(w), _reference_row_logits(model, tables, w), rtol=1e-12, atol=1e-12)
    assert sweeper.col_logits(z).shape == (3, 4, 5, model.n_col_clusters)
    value = sweeper.complete_log_likelihood(z, w)
    for b in range(3):
        for c in range(4):
            assert value[b, c] == pytest.approx(
                model.complete_log_likelihood(tables[b], z[b, c], w[b, c]), rel=1e-12, abs=1e-10
            )
    assert onehot_t(w.astype(np.uint8), 2).shape == (3, 4, 2, 5)


def test_col_logits_match_rows_of_transposed_model():
    """col_logits equals row_logits of the transposed Gaussian model."""
    model = GaussianLBM([0.3, 0.7], [0.2, 0.5, 0.3], [[0, 1, 2], [1, -1, 0]], [[1, 2, 1], [0.5, 1, 1]])
    transposed = GaussianLBM(model.col_proportions, model.row_proportions, model.means.T, model.stds.T)
    X, _, _ = model.sample(7, 6, rng=2)
    z = np.random.default_rng(1).integers(0, 2, (1, 3, 7))
    np.testing.assert_allclose(
        Sweeper(model, X[None]).col_logits(z), Sweeper(transposed, X.T[None]).row_logits(z), rtol=1e-13
    )
