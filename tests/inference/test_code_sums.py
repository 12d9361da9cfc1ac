"""The code storage of the engine (lbm_bench.inference.code_sums): packed category counts.

Its block sums are integer counts: they must equal, bit for bit, those of the dense
storage holding the indicator statistics as float64 tables, by every route (full
products, index updates with moves split when a counter could overflow), and the
sampler's label sets must not depend on the route.
"""

import numpy as np
import pytest

from lbm_bench import gibbs_labels, random_model
from lbm_bench.inference import code_sums as _codes
from lbm_bench.inference.code_sums import CodeStatistics, pack_codes, words_per_entry
from lbm_bench.inference.dense_sums import DenseStatistics
from lbm_bench.inference.engine import BlockSums, Sweeper


@pytest.fixture(autouse=True)
def codes_on_small_tables(monkeypatch):
    """Small tables take the code storage too (by default they keep the dense one)."""
    monkeypatch.setattr(_codes, "CODE_MIN_TABLE_BYTES", 0)


def test_small_tables_keep_the_dense_storage(monkeypatch):
    monkeypatch.setattr(_codes, "CODE_MIN_TABLE_BYTES", 1 << 20)
    model = random_model("categorical", 2, 2, scale=0.5, categories=5, rng=0)
    small, large = (Sweeper.for_table(model, np.zeros(shape, np.uint8)) for shape in ((100, 100), (200, 200)))
    assert isinstance(small.storage, DenseStatistics) and isinstance(large.storage, CodeStatistics)


def _dense_twin(sweeper):
    """The same tables in the dense storage (the reference)."""
    s = sweeper
    sides = ((s.eta, s.log_partition, s.log_row_prior, None, None),
             (s.eta.swapaxes(1, 2), s.log_partition.T, s.log_col_prior, None, None))
    return DenseStatistics(s.model, s.storage.tables, sides)


@pytest.mark.parametrize("K", [2, 3, 5, 6, 9, 40])
def test_pack_codes_round_trip(K):
    codes = np.random.default_rng(K).integers(0, K, (7, 11))
    packed = pack_codes(codes, K - 1)
    assert packed.shape == (7, words_per_entry(K - 1), 11) and packed.dtype == np.uint64
    out = np.empty((7, K - 1, 11))
    _codes._unpack(packed.reshape(7, -1), K - 1, out)
    for c in range(1, K):
        np.testing.assert_array_equal(out[:, c - 1], codes == c)


@pytest.mark.parametrize("K", [2, 5, 9, 40])
def test_block_sums_equal_the_dense_storage_bit_for_bit(K):
    """B=2 tables, C=5 chains, random moves of every size: full sums and index updates of
    the packed counts equal the dense storage's float64 sums of the indicators."""
    rng = np.random.default_rng(K)
    model = random_model("categorical", 3, 4, scale=0.5, categories=K, rng=3)
    tables = np.stack([model.sample(40, 30, rng=s)[0] for s in (1, 2)])
    sweeper = Sweeper(model, tables)
    assert isinstance(sweeper.storage, CodeStatistics)
    dense = _dense_twin(sweeper)
    for side, twin, n_other, n_classes in (("rows", dense.rows, 30, 4), ("cols", dense.cols, 40, 3)):
        sums = BlockSums(sweeper, side, max_changed=10**9)
        labels = rng.integers(0, n_classes, (2, 5, n_other)).astype(np.uint8)
        sums.update(labels)
        assert sums.sums.tobytes() == twin.full_sums(labels).tobytes()
        for n_moves in (0, 1, 3, 20, 150, labels.size):
            labels = labels.copy()
            flat = rng.choice(labels.size, size=n_moves, replace=False)
            labels.reshape(-1)[flat] = (labels.reshape(-1)[flat] + rng.integers(1, n_classes, n_moves)) % n_classes
            sums.update(labels)
            assert sums.sums.tobytes() == twin.full_sums(labels).tobytes()
        assert sums.n_index == 5 and sums.n_unchanged == 1 and sums.n_full == 1 and sums.side.exact_sums


def test_counters_never_overflow(monkeypatch):
    """With a counter limit of 7 positions, full sums and index updates split their sums
    (the 16-bit limit at work on tables of more than 65,535 columns)."""
    monkeypatch.setattr(_codes, "FIELD_LIMIT", 7)
    rng = np.random.default_rng(0)
    model = random_model("categorical", 2, 2, scale=0.4, categories=6, rng=1)
    X = model.sample(25, 40, rng=2)[0]
    sweeper = Sweeper.for_table(model, X)
    dense = _dense_twin(sweeper)
    sums = BlockSums(sweeper, "rows", max_changed=10**9)
    labels = rng.integers(0, 2, (1, 3, 40)).astype(np.uint8)
    sums.update(labels)
    assert sums.sums.tobytes() == dense.rows.full_sums(labels).tobytes()
    labels = 1 - labels  # every label moves: moves of 40 positions, split in 6
    sums.update(labels)
    assert sums.sums.tobytes() == dense.rows.full_sums(labels).tobytes()


@pytest.mark.parametrize("seed", [0, 1])
def test_incremental_equals_full_gibbs_bit_for_bit(seed, monkeypatch):
    monkeypatch.setattr(_codes, "CODE_MIN_FULL_WORK", 0)  # small tables: let them take the index route
    model = random_model("categorical", 3, 2, scale=0.25, categories=5, rng=seed)
    X, _, _ = model.sample(90, 70, rng=seed)
    kwargs = dict(n_samples=600, n_chains=6, init="random", burn_in=10, rng=seed)
    inc = gibbs_labels(model, X, method="incremental", **kwargs)
    full = gibbs_labels(model, X, method="full", **kwargs)
    assert inc.rows.tobytes() == full.rows.tobytes() and inc.cols.tobytes() == full.cols.tobytes()


def test_cost_model_routes():
    """Few changed labels: an index update; more than the full product's word rows over
    CODE_UPDATE_COST: the full product; small problems: always the full product."""
    model = random_model("categorical", 3, 3, scale=0.5, categories=5, rng=0)
    X = model.sample(400, 300, rng=1)[0]
    sweeper = Sweeper.for_table(model, X)
    sums = BlockSums(sweeper, "rows")
    labels = np.zeros((1, 8, 300), dtype=np.uint8)
    assert sums.update(labels) == "full" and not sums.always_full
    labels[0, 0, :5] = 1
    assert sums.update(labels) == "index"
    labels = np.ones((1, 8, 300), dtype=np.uint8) * 2
    assert sums.update(labels) == "fallback"  # 2,400 changed > 8 * 300 / CODE_UPDATE_COST
    small = Sweeper.for_table(model, X[:30, :20])
    tiny = BlockSums(small, "rows")
    tiny.update(np.zeros((1, 2, 20), dtype=np.uint8))
    assert tiny.always_full


def test_entrywise_scores_match_the_dense_storage():
    model = random_model("categorical", 3, 2, scale=0.5, categories=7, rng=4)
    tables = np.stack([model.sample(50, 40, rng=s)[0] for s in (1, 2)])
    sweeper = Sweeper(model, tables)
    for got, want in zip(sweeper.entrywise_scores(), _dense_twin(sweeper).entrywise_scores(sweeper), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5)  # float32 by both routes


def test_code_storage_holds_no_dense_statistics():
    model = random_model("categorical", 2, 2, scale=0.5, categories=3, rng=0)
    sweeper = Sweeper.for_table(model, model.sample(10, 8, rng=1)[0])
    with pytest.raises(TypeError, match="CodeStatistics storage holds no dense statistics"):
        _ = sweeper.stats
