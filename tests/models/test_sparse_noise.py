"""Sparse noise (lbm_bench.models.sparse_noise): the small uniforms of one dense uniform table, drawn
band by band without the table, the same whatever order of levels is asked; Poisson counts from
survival uniforms; sparse tables from kept entries."""

import numpy as np
import pytest
from scipy import stats

from lbm_bench.models import PoissonLBM, sparse_noise
from lbm_bench.models.sparse_noise import (
    MAX_LEVEL,
    SparseNoise,
    candidate_entries,
    ladder_level,
    poisson_from_survival,
    sparse_table_from_entries,
)


def test_the_ladder_of_levels():
    assert ladder_level(0) == 2.0**-24
    assert ladder_level(2) / ladder_level(1) == pytest.approx(np.sqrt(2.0))
    assert ladder_level(70) > MAX_LEVEL  # the ladder reaches the highest level


def test_noise_does_not_depend_on_the_order_of_levels():
    weights = np.exp(np.random.default_rng(0).normal(0, 0.5, 300)), np.exp(np.random.default_rng(1).normal(0, 0.5, 200))
    for row_w, col_w in [(None, None), weights]:
        first = SparseNoise(300, 200, row_w, col_w, rng=np.random.default_rng(7))
        first.entries(0.01)
        first.entries(0.3)
        second = SparseNoise(300, 200, row_w, col_w, rng=np.random.default_rng(7))
        second.entries(0.3)
        assert np.array_equal(first.positions, second.positions)
        assert np.array_equal(first.uniforms, second.uniforms)
        assert np.all(np.diff(first.positions) > 0)


@pytest.mark.parametrize("effects", [False, True])
def test_noise_keeps_exactly_the_small_uniforms(effects):
    """Kept entries: every uniform below T_ij(level) is kept, each entry independently with
    probability T_ij(level), and kept uniforms are uniform below their threshold."""
    n, d, level = 400, 300, 0.05
    rng = np.random.default_rng(3)
    a = np.exp(rng.normal(0, 0.5, n)) if effects else None
    b = np.exp(rng.normal(0, 0.5, d)) if effects else None
    noise = SparseNoise(n, d, a, b, rng=rng)
    positions, uniforms = noise.entries(level)
    rows, cols = np.divmod(positions, d)
    exposure = np.ones(positions.size) if a is None else a[rows] * b[cols]
    threshold = -np.expm1(-exposure * level)
    below = uniforms < threshold
    all_thresholds = -np.expm1(-(np.ones((n, d)) if a is None else np.outer(a, b)) * level)
    expected = all_thresholds.sum()
    assert abs(below.sum() - expected) < 4 * np.sqrt(expected)
    # uniforms below their threshold, rescaled, are uniform (Kolmogorov-Smirnov, alpha = 1e-3)
    assert stats.kstest(uniforms[below] / threshold[below], "uniform").pvalue > 1e-3


def test_poisson_from_survival_is_poisson():
    rng = np.random.default_rng(4)
    for rate in (0.01, 0.7, 5.0, 60.0):
        u = rng.random(200_000)
        counts = poisson_from_survival(u, np.full(u.size, rate))
        assert np.array_equal(counts > 0, u < -np.expm1(-rate))
        values, observed = np.unique(counts, return_counts=True)
        probs = stats.poisson.pmf(values, rate)
        big = probs * u.size > 20
        chi2 = np.sum((observed[big] - probs[big] * u.size) ** 2 / (probs[big] * u.size))
        assert stats.chi2.sf(chi2, max(1, big.sum() - 1)) > 1e-4


def test_sparse_noise_refuses_levels_it_cannot_hold():
    model = PoissonLBM([0.5, 0.5], [0.5, 0.5], [[1.0, 5000.0], [3.0, 4.0]], sparse=True)
    noise = model.draw_noise(10, 10, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="dense table"):
        model.table_from_noise(noise, np.zeros(10, dtype=np.int64), np.ones(10, dtype=np.int64))


def test_entries_grow_with_the_level_and_keep_the_smaller_ones():
    noise = SparseNoise(200, 100, None, None, rng=np.random.default_rng(2))
    low_positions, low_uniforms = (a.copy() for a in noise.entries(0.02))
    high_positions, high_uniforms = noise.entries(0.2)
    assert set(low_positions) <= set(high_positions) and high_positions.size > low_positions.size
    kept = np.isin(high_positions, low_positions)
    assert np.array_equal(high_uniforms[kept], low_uniforms)  # an entry's uniform never changes
    assert noise.level >= 0.2 and noise.nbytes >= high_positions.nbytes + high_uniforms.nbytes


def test_a_sparse_table_from_its_entries():
    table = sparse_table_from_entries(np.array([1, 5, 6]), np.array([2, 1, 7]), (2, 4), np.int64)
    assert table.format == "csr" and table.dtype == np.int64 and table.has_canonical_format
    assert table.toarray().tolist() == [[0, 2, 0, 0], [0, 1, 7, 0]]
    model = PoissonLBM([0.5, 0.5], [0.5, 0.5], [[0.2, 2.0], [1.0, 0.5]], sparse=True)
    noise = model.draw_noise(30, 20, rng=np.random.default_rng(1))
    positions, uniforms, rows, cols = candidate_entries(noise, 2.0)
    assert np.array_equal(rows * 20 + cols, positions) and np.all(uniforms < -np.expm1(-2.0))
    with pytest.raises(TypeError, match="a sparse model needs SparseNoise"):
        candidate_entries(np.zeros((30, 20)), 2.0)


@pytest.mark.parametrize("effects", [False, True])
def test_merging_and_tables_by_chunks_change_nothing(monkeypatch, effects):
    """The bands are merged over ranges of positions and the table is built over chunks of
    candidates (bounded temporaries on tables of 1e8 stored entries): tiny ranges and chunks
    (many boundaries, entries repeated across bands at them) give the arrays of one range and
    one chunk, and the table built directly from the candidates."""
    rng = np.random.default_rng(3)
    weights = (np.exp(rng.normal(0, 0.5, 400)), np.exp(rng.normal(0, 0.5, 300))) if effects else (None, None)
    z, w = rng.integers(0, 3, 400), rng.integers(0, 2, 300)
    rates = np.array([[0.02, 0.3], [0.05, 0.01], [0.2, 0.1]])

    def draw():
        noise = SparseNoise(400, 300, *weights, rng=np.random.default_rng(11))
        noise.entries(0.01)  # a second call merges new bands into kept entries
        table = sparse_noise.sparse_table_from_noise(
            noise, 0.3, lambda u, r, c: poisson_from_survival(u, rates[z[r], w[c]]), np.int64)
        return noise, table

    whole_noise, whole = draw()
    for merge, chunk in [(1000, 777), (5000, 3)]:
        monkeypatch.setattr(sparse_noise, "_MERGE_ENTRIES", merge)
        monkeypatch.setattr(sparse_noise, "_TABLE_CHUNK", chunk)
        noise, table = draw()
        assert np.array_equal(noise.positions, whole_noise.positions)
        assert np.array_equal(noise.uniforms, whole_noise.uniforms)
        for name in ("data", "indices", "indptr"):
            assert getattr(table, name).dtype == getattr(whole, name).dtype
            assert np.array_equal(getattr(table, name), getattr(whole, name))
    positions, uniforms, rows, cols = candidate_entries(whole_noise, 0.3)
    counts = poisson_from_survival(uniforms, rates[z[rows], w[cols]])
    direct = sparse_table_from_entries(positions[counts > 0], counts[counts > 0], (400, 300), np.int64)
    assert (direct != whole).nnz == 0 and whole.nnz > 1000


@pytest.mark.parametrize("effects", [False, True])
def test_a_large_noise_builds_its_table_without_keeping_candidates(monkeypatch, effects):
    """A noise expected to keep more than ``_STREAM_CANDIDATES`` candidates (here: any) and
    with no band drawn yet builds its table range by range, a band's uniforms drawn range
    after range, and keeps nothing: the same table (values and dtypes) as from the kept
    candidates, at every range size, twice in a row (the bands drawn again)."""
    rng = np.random.default_rng(4)
    weights = (np.exp(rng.normal(0, 0.5, 400)), np.exp(rng.normal(0, 0.5, 300))) if effects else (None, None)
    z, w = rng.integers(0, 3, 400), rng.integers(0, 2, 300)
    rates = np.array([[0.02, 0.3], [0.05, 0.01], [0.2, 0.1]])

    def table(noise):
        return sparse_noise.sparse_table_from_noise(
            noise, 0.3, lambda u, r, c: poisson_from_survival(u, rates[z[r], w[c]]), np.int64)

    kept = SparseNoise(400, 300, *weights, rng=np.random.default_rng(11))
    whole = table(kept)
    assert kept.n_bands > 0 and whole.nnz > 1000
    monkeypatch.setattr(sparse_noise, "_STREAM_CANDIDATES", 0)
    for merge, chunk in [(1 << 22, 1 << 22), (1000, 777), (5000, 3)]:
        monkeypatch.setattr(sparse_noise, "_MERGE_ENTRIES", merge)
        monkeypatch.setattr(sparse_noise, "_TABLE_CHUNK", chunk)
        noise = SparseNoise(400, 300, *weights, rng=np.random.default_rng(11))
        for _ in range(2):
            streamed = table(noise)
            assert noise.n_bands == 0 and noise.nbytes == 0
            for name in ("data", "indices", "indptr"):
                assert getattr(streamed, name).dtype == getattr(whole, name).dtype
                assert np.array_equal(getattr(streamed, name), getattr(whole, name))
    assert kept.expected_candidates(0.3) >= kept.positions.size
