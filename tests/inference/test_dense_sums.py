"""Block sums of dense tables (lbm_bench.inference.dense_sums): the full product against the block sums
written out, the index update's direct call of scipy's CSR kernel against scipy's products (same
bits), the CSR helpers, and the entrywise scores of the MAP's starts looked up per value."""

import numpy as np
import pytest

from lbm_bench import random_model
from lbm_bench.inference import dense_sums as _dense
from lbm_bench.inference.engine import BlockSums, Sweeper


@pytest.mark.parametrize("kind", ["gaussian", "poisson", "bernoulli"])
def test_full_sums_are_the_block_sums_of_the_statistics(kind):
    """``S[b, c, l, p, i] = sum_j T_p(x_ij) [w_cj == l]``: the rows' side, several tables and chains."""
    model = random_model(kind, 3, 2, scale=1.0, rng=0)
    tables = np.stack([model.sample(20, 15, rng=seed)[0] for seed in (1, 2)])
    sweeper = Sweeper(model, tables)
    labels = np.random.default_rng(3).integers(0, 2, (2, 4, 15)).astype(np.uint8)
    got = sweeper.rows.full_sums(labels)
    stats = np.stack([model.sufficient_statistics(t) for t in tables])  # (B, p, n, d)
    want = np.einsum("bpij,bclj->bclpi", stats, np.eye(2)[labels].transpose(0, 1, 3, 2))
    assert got.shape == want.shape == (2, 4, 2, model.n_stats, 20)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_csr_rows_orders_entries_by_row():
    rows = np.array([3, 0, 3, 1, 0])
    order, indptr = _dense.csr_rows(rows, 5)
    assert rows[order].tolist() == [0, 0, 1, 3, 3] and indptr.tolist() == [0, 2, 3, 3, 5, 5]
    assert order.tolist() == [1, 4, 3, 0, 2]  # stable: the entries of a row keep their order


def _reference_sparse_update(stats, sums, old_labels, labels):
    """The sparse index update written with scipy csr_array products (as before the
    kernel was called directly): one- or two-stage, ``sums + D @ stats``."""
    from scipy import sparse

    def csr(rows, cols, values, shape):
        order = np.argsort(rows, kind="stable")
        indptr = np.zeros(shape[0] + 1, dtype=np.int64)
        np.cumsum(np.bincount(rows, minlength=shape[0]), out=indptr[1:])
        return sparse.csr_array((values[order], cols[order], indptr), shape=shape)

    B, C, o, p, n = sums.shape
    n_other = stats.shape[1]
    stats = stats.reshape(B * n_other, p * n)
    b, c, j = np.nonzero(old_labels != labels)
    old, new = old_labels[b, c, j].astype(np.int64), labels[b, c, j].astype(np.int64)
    slot, position, k = (b * C + c) * o, b * n_other + j, b.size
    moves = (slot + old) * o + new
    counts = np.bincount(moves, minlength=B * C * o * o)
    used = np.flatnonzero(counts)
    if k + 2 * used.size < 2 * k:
        index = np.zeros(counts.size, dtype=np.int64)
        index[used] = np.arange(used.size)
        summed = csr(index[moves], position, np.ones(k), (used.size, B * n_other)) @ stats
        rows = np.concatenate([used // (o * o) * o + used % o, used // o])
        diff = csr(rows, np.tile(np.arange(used.size), 2), np.repeat([1.0, -1.0], used.size),
                   (B * C * o, used.size))
        delta = diff @ summed
    else:
        diff = csr(np.concatenate([slot + new, slot + old]), np.tile(position, 2),
                   np.repeat([1.0, -1.0], k), (B * C * o, B * n_other))
        delta = diff @ stats
    return sums + delta.reshape(sums.shape)


@pytest.mark.parametrize("fallback", [False, True])
def test_sparse_kernel_same_bits_as_scipy_products(fallback, monkeypatch):
    """Gaussian sums (float, order-sensitive): the index update that calls scipy's
    kernel directly into reused buffers gives the same bits as csr_array products,
    through both stages and the one-stage form; so does its public-API fallback."""
    if fallback:
        monkeypatch.setattr(_dense, "_csr_matvecs", None)
    rng = np.random.default_rng(5)
    model = random_model("gaussian", 3, 3, scale=0.5, rng=5)
    tables = np.stack([model.sample(60, 50, rng=s)[0] for s in (1, 2)])
    sweeper = Sweeper(model, tables)
    sums = BlockSums(sweeper, "rows", max_changed=10**9, recompute_every=10**9)
    labels = rng.integers(0, 3, (2, 6, 50)).astype(np.uint8)
    sums.update(labels)
    # few moves over many chains (two-stage: repeated (chain, l, l') moves), then many
    # scattered ones (one-stage)
    for n_moves, spread in ((40, 2), (3, 50), (300, 50), (25, 5), (600, 50)):
        new = labels.copy()
        flat = rng.choice(new.size, size=n_moves, replace=False)
        if spread < 50:  # concentrate the moves on a few columns, same shift: few distinct moves
            flat = np.unique(flat // 50 * 50 + flat % spread)
            new.reshape(-1)[flat] = (new.reshape(-1)[flat] + 1) % 3
        else:
            new.reshape(-1)[flat] = (new.reshape(-1)[flat] + rng.integers(1, 3, flat.size)) % 3
        expected = _reference_sparse_update(sweeper.storage.by_col, sums.sums, labels, new)
        buffers = (sums._delta, sums._summed)
        assert sums.update(new) == "index"
        assert sums.sums.tobytes() == expected.tobytes()
        labels = new
    assert buffers[0] is sums._delta  # reused, not reallocated
    assert sums.n_index == 5


def test_csr_times_dense_matches_scipy():
    from scipy import sparse

    rng = np.random.default_rng(0)
    rows = rng.integers(0, 7, 40)
    cols = rng.integers(0, 9, 40)  # duplicates kept
    values = rng.choice([1.0, -1.0, 2.5], 40)
    order, indptr = _dense.csr_rows(rows, 7)
    dense = rng.normal(size=(9, 13))
    out = np.full((7, 13), np.nan)
    _dense.csr_times_dense(indptr, cols[order], values[order], dense, out)
    expected = sparse.csr_array((values[order], cols[order], indptr), shape=(7, 9)) @ dense
    assert out.tobytes() == expected.tobytes()


@pytest.mark.parametrize(
    "kind, rate", [("poisson", 2.0), ("poisson", 40.0), ("bernoulli", None), ("categorical", None)]
)
def test_entrywise_scores_looked_up_per_value_same_bits(kind, rate, monkeypatch):
    """Integer tables: the entrywise starts' log-densities are computed once per value and
    looked up; the scores are those of the entry-by-entry computation, bit for bit (same
    float32 operations per value), for several tables at once and for values from a
    lowest one above 0 (Poisson rates near 40)."""
    from lbm_bench import random_design

    options = {"categories": 5} if kind == "categorical" else {}
    if rate is not None:
        options["base_rate"] = rate
    model = random_design(kind, 4, 3, rng=7, **options).model(0.4)
    tables = [model.sample(61, 47, rng=seed)[0] for seed in range(3)]
    sweeper = Sweeper(model, tables)
    assert _dense._distinct_values(np.stack(tables)) is not None  # the lookup is taken
    looked_up = sweeper.entrywise_scores()
    if rate == 40.0:
        assert min(int(t.min()) for t in tables) > 0
    monkeypatch.setattr(_dense, "LOOKUP_MAX_VALUES", 0)  # every entry computed
    direct = sweeper.entrywise_scores()
    for a, b in zip(looked_up, direct, strict=True):
        assert np.array_equal(a, b)
