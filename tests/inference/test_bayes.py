"""The Bayes rule for l_item against exact enumeration on tiny tables.

On a 6x5 table with 2x2 clusters (2^6 * 2^5 labelings) and a 5x4 table with 3x2
clusters (3^5 * 2^4), the posterior p(z, w | X) is enumerated exactly
(tests/exact.py, scipy densities), and the expected l_item of *every* candidate
labelling is computed exactly (1 - A^T P B / (n d), with A and B the row and column
agreement counts between labelings). The exact minimiser is the Bayes rule.

Label sets are exact i.i.d. posterior draws (from the enumeration), so these tests
check the optimiser and the cross-fitted estimate, not the mixing of the sampler
(tests/inference/test_inference.py checks the sampler). Tolerances: the exact risk of the
chosen labels within 1e-3 of the exact minimum (20,000 draws: on these very
ambiguous tables, risks 0.12 to 0.65, the two best labellings can differ by 0.005
only, and 4,000 draws may prefer the second); the cross-fitted risk within
4 MCSE (+1e-3) of the exact minimum.
"""

import numpy as np
import pytest

from lbm_bench import (
    BernoulliLBM,
    GaussianLBM,
    GibbsSamples,
    PoissonLBM,
    gibbs_labels,
    map_labels,
)
from lbm_bench.inference.bayes import (
    bayes_labels,
    expected_item_loss,
    label_frequencies,
)
from lbm_bench.inference.floor import floor_certificate
from tests.exact import exact_posterior

MODELS_2x2 = {
    "gaussian": GaussianLBM([0.6, 0.4], [0.45, 0.55], [[0.0, 1.0], [0.9, -0.4]], [[1.0, 0.8], [1.2, 0.9]]),
    "poisson": PoissonLBM([0.55, 0.45], [0.5, 0.5], [[1.0, 3.0], [2.5, 0.8]]),
    "bernoulli": BernoulliLBM([0.5, 0.5], [0.6, 0.4], [[0.8, 0.3], [0.25, 0.7]]),
    "poisson-effects": PoissonLBM(
        [0.55, 0.45], [0.5, 0.5], [[1.0, 3.0], [2.5, 0.8]],
        row_effects=[0.8, 1.2, 1.0, 0.9, 1.1, 1.0], col_effects=[1.3, 0.7, 1.0, 1.0, 0.9],
    ),
}
MODELS_3x2 = {
    "gaussian": GaussianLBM(
        [0.4, 0.3, 0.3], [0.5, 0.5], [[0.0, 1.5], [1.2, -0.5], [-1.0, 0.4]], [[1.0, 0.9], [1.1, 0.8], [0.9, 1.0]]
    ),
    "poisson": PoissonLBM([0.4, 0.3, 0.3], [0.55, 0.45], [[1.0, 4.0], [3.5, 1.0], [0.6, 0.7]]),
    "bernoulli": BernoulliLBM([0.4, 0.3, 0.3], [0.5, 0.5], [[0.85, 0.2], [0.2, 0.8], [0.6, 0.6]]),
    "poisson-effects": PoissonLBM(
        [0.4, 0.3, 0.3], [0.55, 0.45], [[1.0, 4.0], [3.5, 1.0], [0.6, 0.7]],
        row_effects=[0.8, 1.2, 1.0, 0.9, 1.1], col_effects=[1.3, 0.7, 1.0, 1.0],
    ),
}
CASES = [(name, 6, 5, MODELS_2x2[name]) for name in MODELS_2x2] + [
    (name, 5, 4, MODELS_3x2[name]) for name in MODELS_3x2
]


def exact_item_risks(model, X):
    """Exact posterior expected l_item of every labelling: (Z, W, risks[a, b])."""
    Z, W, log_joint = exact_posterior(model, X)
    post = np.exp(log_joint - log_joint.max())
    post /= post.sum()
    n, d = Z.shape[1], W.shape[1]
    row_agree = (Z[:, None, :] == Z[None, :, :]).sum(-1)  # (Nz, Nz)
    col_agree = (W[:, None, :] == W[None, :, :]).sum(-1)  # (Nw, Nw)
    risks = 1.0 - row_agree.T @ post @ col_agree / (n * d)
    return Z, W, post, risks


def exact_draws(Z, W, post, size, seed):
    draws = np.random.default_rng(seed).choice(post.size, size=size, p=post.ravel())
    a, b = np.unravel_index(draws, post.shape)
    return Z[a].astype(np.uint8), W[b].astype(np.uint8)


def risk_of(Z, W, risks, z, w):
    a = int(np.flatnonzero((Z == z).all(1))[0])
    b = int(np.flatnonzero((W == w).all(1))[0])
    return float(risks[a, b])


@pytest.fixture(params=CASES, ids=[f"{c[0]}-{c[1]}x{c[2]}" for c in CASES])
def case(request):
    _name, n, d, model = request.param
    X, _, _ = model.sample(n, d, rng=11)
    Z, W, post, risks = exact_item_risks(model, X)
    return model, X, Z, W, post, risks


def test_exact_risks_are_the_expected_loss(case):
    """The enumeration formula agrees with a direct sum for one labelling."""
    _model, _X, Z, W, post, risks = case
    z, w = Z[3], W[2]
    lr = np.mean(Z != z, axis=1)[:, None]
    lc = np.mean(W != w, axis=1)[None, :]
    assert risks[3, 2] == pytest.approx(float(np.sum(post * (lr + lc - lr * lc))), abs=1e-12)


def test_bayes_labels_reach_exact_minimum(case):
    model, X, Z, W, post, risks = case
    rows, cols = exact_draws(Z, W, post, 20_000, seed=1)
    map_result = map_labels(model, X, rng=0)
    z, w = bayes_labels(rows, cols, starts=[(map_result.rows, map_result.cols)])
    best = float(risks.min())
    assert risk_of(Z, W, risks, z, w) <= best + 1e-3
    assert risk_of(Z, W, risks, z, w) <= risk_of(Z, W, risks, map_result.rows, map_result.cols) + 1e-3
    # never worse than the MAP labels on the sets it was chosen on
    assert expected_item_loss(rows, cols, z, w) <= expected_item_loss(rows, cols, map_result.rows, map_result.cols)


def test_bayes_labels_minimise_the_empirical_loss_exactly(case):
    """On the sets themselves, no labelling (enumerated) does better than ours, or
    (for a local optimiser) no single row or column change does."""
    model, _X, Z, W, post, _risks = case
    rows, cols = exact_draws(Z, W, post, 300, seed=5)
    z, w = bayes_labels(rows, cols)
    ours = expected_item_loss(rows, cols, z, w)
    n, d = Z.shape[1], W.shape[1]
    row_agree = (Z[:, None, :] == rows[None, :, :]).sum(-1)  # (Nz, S)
    col_agree = (W[:, None, :] == cols[None, :, :]).sum(-1)  # (Nw, S)
    empirical = 1.0 - row_agree @ col_agree.T / (len(rows) * n * d)
    assert ours <= empirical.min() + 1e-12
    g, _m = model.block_shape
    for i in range(n):
        for k in range(g):
            other = z.copy()
            other[i] = k
            assert expected_item_loss(rows, cols, other, w) >= ours - 1e-12


def test_floor_certificate_risk_agrees_with_exact(case):
    _model, _X, Z, W, post, risks = case
    rows, cols = exact_draws(Z, W, post, 20_000, seed=2)
    samples = GibbsSamples(rows=rows, cols=cols, chain_lengths=np.full(8, 2500), burn_in=0, thin=1)
    floor = floor_certificate(samples)
    best = float(risks.min())
    assert risk_of(Z, W, risks, floor.rows, floor.cols) <= best + 1e-3
    estimate = floor.risk
    assert abs(estimate.risk - best) <= 4 * estimate.mcse + 1e-3, (estimate, best)
    assert estimate.n_samples == 20_000 and estimate.n_chains == 8
    assert estimate.rhat == pytest.approx(1.0, abs=0.05)
    assert floor.losses.shape == (20_000,)
    assert floor.losses.mean() == pytest.approx(estimate.risk)
    assert floor.row_loss == estimate.row_loss and floor.col_loss == estimate.col_loss


def test_floor_certificate_on_gibbs_chains():
    """The same on real Gibbs chains (a table whose second mode holds little mass)."""
    model = MODELS_2x2["gaussian"]
    X, _z0, _w0 = model.sample(6, 5, rng=11)
    Z, W, _post, risks = exact_item_risks(model, X)
    samples = gibbs_labels(model, X, n_samples=40_000, n_chains=4, init="random", burn_in=200, rng=1)
    floor = floor_certificate(samples)
    best = float(risks.min())
    assert risk_of(Z, W, risks, floor.rows, floor.cols) <= best + 1e-3
    assert abs(floor.risk.risk - best) <= max(0.01, 4 * floor.risk.mcse)


def test_bayes_beats_map_when_they_differ():
    """A posterior where the MAP labelling is not the l_item minimiser: rows 0-1 are
    each a coin flip but perfectly anti-correlated; the joint mode differs from the
    marginal modes only through the coupling of rows and columns."""
    rows = np.array([[0, 0, 0]] * 4 + [[1, 1, 1]] * 3 + [[1, 1, 1]] * 3)
    cols = np.array([[0, 0]] * 4 + [[1, 1]] * 3 + [[0, 1]] * 3)
    z, w = bayes_labels(rows, cols)
    # the joint mode (0,0,0),(0,0) has 4/10 of the mass; the l_item minimiser:
    candidates = [
        (np.array(a), np.array(b))
        for a in np.ndindex(2, 2, 2)
        for b in np.ndindex(2, 2)
    ]
    best = min(expected_item_loss(rows, cols, a, b) for a, b in candidates)
    assert expected_item_loss(rows, cols, z, w) == pytest.approx(best)
    assert expected_item_loss(rows, cols, z, w) < expected_item_loss(rows, cols, [0, 0, 0], [0, 0])


def test_starts_and_determinism():
    rng = np.random.default_rng(0)
    rows = rng.integers(0, 3, size=(50, 20))
    cols = rng.integers(0, 2, size=(50, 10))
    a = bayes_labels(rows, cols)
    b = bayes_labels(rows, cols)
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
    start = (rng.integers(0, 3, 20), rng.integers(0, 2, 10))
    c = bayes_labels(rows, cols, starts=[start])
    assert expected_item_loss(rows, cols, *c) <= expected_item_loss(rows, cols, *a)
    assert a[0].dtype == np.int64 and a[0].shape == (20,) and a[1].shape == (10,)


def test_label_frequencies():
    rows = np.array([[0, 2], [1, 2], [0, 0], [0, 2]], dtype=np.uint8)
    freq = label_frequencies(rows, 3)
    np.testing.assert_allclose(freq, [[0.75, 0.25, 0.0], [0.25, 0.0, 0.75]])
    np.testing.assert_allclose(freq.sum(1), 1.0)
    with pytest.raises(ValueError, match="n_classes"):
        label_frequencies(rows, 2)


@pytest.mark.parametrize(
    "args, kwargs, error, match",
    [
        (([[0, 1]], [[0], [1]]), {}, ValueError, "same number of sets"),
        (([0, 1], [[0]]), {}, ValueError, "row_sets must be a non-empty 2-D"),
        (([[0.5]], [[0]]), {}, TypeError, "integer labels"),
        (([[-1]], [[0]]), {}, ValueError, "non-negative"),
        (([[0, 1]], [[0]]), {"starts": [([0], [0])]}, ValueError, r"starts\[0\]\[0\]"),
        (([[0, 1]], [[0]]), {"max_sweeps": 0}, ValueError, "max_sweeps"),
        (([[0, 1]], [[0]]), {"n_set_starts": -1}, ValueError, "n_set_starts"),
    ],
)
def test_bayes_labels_bad_arguments(args, kwargs, error, match):
    with pytest.raises(error, match=match):
        bayes_labels(*args, **kwargs)


@pytest.mark.parametrize("max_sweeps", [1, 2, 1000])
def test_descent_counts_the_start_s_row_agreements_only_when_kept(max_sweeps, monkeypatch):
    """The descent (rows' agreements counted once the rows are chosen) ends where the descent
    counting them at the start too ends: the same labels, objective and sweeps, from random
    starts and from starts already at a fixed point; and one count fewer when the rows move."""
    from lbm_bench.inference import bayes, label_sides

    def eager(rows, cols, z, w, max_sweeps):
        row_agree, col_agree, sweeps = rows.agreements(z), cols.agreements(w), 0
        while sweeps < max_sweeps:
            sweeps += 1
            new_z = rows.best(col_agree, z)
            if not np.array_equal(new_z, z):
                z, row_agree = new_z, rows.agreements(new_z)
            new_w = cols.best(row_agree, w)
            if np.array_equal(new_w, w):
                break
            w, col_agree = new_w, cols.agreements(new_w)
        return z, w, int(np.dot(row_agree, col_agree)), sweeps

    rng = np.random.default_rng(max_sweeps)
    row_sets = np.where(rng.random((30, 40)) < 0.4, rng.integers(0, 3, (30, 40)), rng.integers(0, 3, 40))
    col_sets = np.where(rng.random((30, 25)) < 0.4, rng.integers(0, 2, (30, 25)), rng.integers(0, 2, 25))
    rows, cols = label_sides.LabelSide(row_sets, 3), label_sides.LabelSide(col_sets, 2)
    fixed = bayes.descend(rows, cols, rng.integers(0, 3, 40), rng.integers(0, 2, 25), 1000)[:2]
    for z, w in [(rng.integers(0, 3, 40), rng.integers(0, 2, 25)) for _ in range(5)] + [fixed]:
        got, want = bayes.descend(rows, cols, z, w, max_sweeps), eager(rows, cols, z, w, max_sweeps)
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])
        assert got[2:] == want[2:]
    counted = []
    monkeypatch.setattr(label_sides.LabelSide, "agreements", lambda self, labels: counted.append(self) or
                        (np.asarray(self.sets) == labels).sum(1))
    z = (rows.ref + 1) % 3  # far from the rows' choice: they move at the first sweep
    bayes.descend(rows, cols, z, rng.integers(0, 2, 25), 1)
    assert counted.count(rows) == 1


def test_descents_in_threads_sharing_sides_end_where_they_end_one_by_one(monkeypatch):
    """The floor's descents may run in threads sharing a side (its kept agreements and class
    counts) and the kernels' buffers of ones (grown by whichever thread needs more): each
    descent ends where it ends alone."""
    from concurrent.futures import ThreadPoolExecutor

    from lbm_bench.inference import bayes, label_sides

    rng = np.random.default_rng(12)
    row_sets = np.where(rng.random((60, 900)) < 0.2, rng.integers(0, 3, (60, 900)), rng.integers(0, 3, 900))
    col_sets = np.where(rng.random((60, 700)) < 0.2, rng.integers(0, 3, (60, 700)), rng.integers(0, 3, 700))
    starts = [(rng.integers(0, 3, 900), rng.integers(0, 3, 700)) for _ in range(16)]
    side = label_sides.LabelSide
    alone = [bayes.descend(side(row_sets, 3), side(col_sets, 3), z, w, 1000) for z, w in starts]
    monkeypatch.setattr(label_sides, "_ONES", {})
    monkeypatch.setattr(label_sides, "_KEEP_AGREEMENTS", 1)
    rows, cols = label_sides.LabelSide(row_sets, 3), label_sides.LabelSide(col_sets, 3)
    with ThreadPoolExecutor(4) as pool:
        shared = list(pool.map(lambda start: bayes.descend(rows, cols, *start, 1000), starts))
    for (z, w, objective, sweeps), (z2, w2, objective2, sweeps2) in zip(alone, shared, strict=True):
        assert np.array_equal(z, z2) and np.array_equal(w, w2) and (objective, sweeps) == (objective2, sweeps2)
