"""The MAP classifier, Algorithm 1 (lbm_bench.inference.classifier): reproducible X-only starts (random
ones and the entrywise ones, one stream per table), bad arguments, and the alternation with block sums
updated for the changed labels against full products (same labels, bit for bit). Against the exact
posterior: tests/inference/test_inference.py."""

import numpy as np
import pytest

from lbm_bench import map_labels
from tests.inference.tiny import TINY_MODELS


def test_map_reproducible_and_x_only():
    model = TINY_MODELS["gaussian"]
    X, z, w = model.sample(40, 30, rng=8)
    a = map_labels(model, X, rng=1)
    b = map_labels(model, X, rng=1)
    assert np.array_equal(a.rows, b.rows) and np.array_equal(a.cols, b.cols)
    assert a.n_starts == 12  # 10 random + 2 entrywise-marginal starts
    with_truth = map_labels(model, X, init=(z, w), rng=1)
    assert with_truth.n_starts == 13
    only_truth = map_labels(model, X, init=(z, w), n_init=0)
    assert only_truth.n_starts == 1 and only_truth.converged


def test_map_bad_arguments():
    model = TINY_MODELS["bernoulli"]
    X, z, w = model.sample(6, 5, rng=0)
    with pytest.raises(ValueError, match="n_init"):
        map_labels(model, X, n_init=0)
    with pytest.raises(ValueError, match=r"init\[1\]"):
        map_labels(model, X, init=(z, np.full(5, 7)))
    with pytest.raises(ValueError, match="X must hold 0/1"):
        map_labels(model, X * 2)


@pytest.mark.parametrize("kind", ["gaussian", "poisson", "bernoulli", "categorical"])
def test_incremental_map_equals_full_recompute(kind, monkeypatch):
    """Algorithm 1 with block sums updated for the changed labels reaches the same
    labels, iteration counts and likelihoods as with full products at every step."""
    from lbm_bench.inference import code_sums as _codes
    from lbm_bench.inference import dense_sums as _dense
    from lbm_bench.inference import engine as _engine
    from lbm_bench.inference.classifier import alternate, initial_column_labels
    from lbm_bench.models.design import random_model

    monkeypatch.setattr(_dense, "MIN_FULL_WORK", 0)  # small tables: force the index route
    monkeypatch.setattr(_codes, "CODE_MIN_FULL_WORK", 0)
    monkeypatch.setattr(_codes, "CODE_MIN_TABLE_BYTES", 0)  # categorical: the code storage
    routes = []
    update = _engine.BlockSums.update
    monkeypatch.setattr(
        _engine.BlockSums, "update", lambda self, labels: routes.append(update(self, labels)) or routes[-1]
    )
    model = random_model(kind, 3, 3, scale=0.7, rng=1, **({"categories": 5} if kind == "categorical" else {}))
    tables = np.stack([model.sample(200, 150, rng=s)[0] for s in range(4)])
    sweeper = _engine.Sweeper(model, tables)
    w0 = initial_column_labels(sweeper, 10, np.random.default_rng(2))
    full = alternate(sweeper, w0, incremental=False)
    assert set(routes) == {"full"}
    routes.clear()
    fast = alternate(sweeper, w0)
    for a, b in zip(full, fast, strict=True):
        assert np.array_equal(a, b)
    assert routes.count("index") >= 2, routes  # the index updates were exercised


def test_map_starts_one_stream_per_table():
    """Starts drawn with one Generator per table do not depend on the other tables."""
    from lbm_bench.inference.classifier import initial_column_labels
    from lbm_bench.inference.engine import Sweeper

    model = TINY_MODELS["bernoulli"]
    tables = np.stack([model.sample(20, 15, rng=s)[0] for s in range(3)])
    together = initial_column_labels(
        Sweeper(model, tables), 4, [np.random.default_rng(s) for s in range(3)]
    )
    for b in range(3):
        alone = initial_column_labels(Sweeper(model, tables[b : b + 1]), 4, np.random.default_rng(b))
        assert np.array_equal(together[b], alone[0])
    with pytest.raises(ValueError, match="3 Generators"):
        initial_column_labels(Sweeper(model, tables), 4, [np.random.default_rng(0)])
    # the entrywise scores are the sums of log-mixtures they claim to be
    from scipy.special import logsumexp

    X = tables[0]
    rows, cols = Sweeper(model, X[None]).entrywise_scores()
    # log-densities up to the base measure (the same for every class): eta . T(x) - A
    stats, eta, A = model.sufficient_statistics(X), model.natural_parameters, model.log_partition
    dens = np.einsum("pij,pkl->klij", stats, eta) - A[:, :, None, None]  # (g, m, n, d)
    log_pi, log_rho = np.log(model.row_proportions), np.log(model.col_proportions)
    expected_rows = logsumexp(dens + log_rho[None, :, None, None], axis=1).sum(-1).T + log_pi
    expected_cols = logsumexp(dens + log_pi[:, None, None, None], axis=0).sum(-2).T + log_rho
    np.testing.assert_allclose(rows[0], expected_rows, rtol=1e-5)
    np.testing.assert_allclose(cols[0], expected_cols, rtol=1e-5)
