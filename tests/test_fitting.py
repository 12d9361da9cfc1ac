"""lbm_bench.fitting: designs fitted to a table (issue 34), fitted back to what drew the table.

Round trips: tables drawn from a known model (each family, dense and sparse where the family
allows it, with and without missing entries, at random and by block) are fitted back to their
counts, and to their parameters within stated tolerances once the classes are matched:
proportions within 0.05, block parameters within 20% (relative; Gaussian means within 0.15 of
the table's unit spread), missing rates within 0.03.
"""

import itertools

import numpy as np
import pytest
import scipy.sparse as sp

from lbm_bench import fit_design, get_family
from lbm_bench.models.data import TableData
from lbm_bench.models.missing import MaskNoise, MissingDesign, mask_table

ROW_PROPS, COL_PROPS = [0.5, 0.3, 0.2], [0.6, 0.4]


def _truth(kind: str, sparse: bool):
    family = get_family(kind)
    params = {
        "gaussian": {"means": [[0.0, 2.0], [2.0, 0.0], [-1.5, 1.0]], "stds": [[1.0, 0.8], [1.2, 1.0], [1.0, 1.0]]},
        "poisson": {"rates": [[1.0, 4.0], [5.0, 1.5], [0.5, 0.5]]},
        "bernoulli": {"probs": [[0.15, 0.7], [0.8, 0.25], [0.45, 0.05]]},
        "categorical": {"probs": [[[0.7, 0.2, 0.1], [0.1, 0.8, 0.1]], [[0.1, 0.1, 0.8], [0.6, 0.2, 0.2]],
                                  [[0.2, 0.6, 0.2], [0.15, 0.15, 0.7]]]},
    }[kind]
    if sparse:
        params = {"poisson": {"rates": [[0.05, 0.4], [0.5, 0.08], [0.02, 0.2]]},
                  "bernoulli": {"probs": [[0.03, 0.3], [0.35, 0.05], [0.15, 0.01]]}}[kind]
        return family.model(ROW_PROPS, COL_PROPS, **params, sparse=True)
    return family.model(ROW_PROPS, COL_PROPS, **params)


def _matched(fitted, truth_z, truth_w, z, w):
    """The permutations of the fitted classes that best match the true ones."""
    g, m = fitted
    rows = max(itertools.permutations(range(g)), key=lambda p: np.sum(np.asarray(p)[z] == truth_z))
    cols = max(itertools.permutations(range(m)), key=lambda p: np.sum(np.asarray(p)[w] == truth_w))
    return np.argsort(rows), np.argsort(cols)


CASES = [(kind, False, 0.0) for kind in ("gaussian", "poisson", "bernoulli", "categorical")]
CASES += [("poisson", True, 0.0), ("bernoulli", True, 0.0), ("poisson", False, 0.2), ("gaussian", False, 0.2),
          ("bernoulli", True, 0.01), ("categorical", False, 0.2), ("bernoulli", False, 0.2), ("poisson", True, 0.05)]


def _assert_blocks_close(model, truth, rows, cols):
    """Block parameters within 20% (0.01 absolute), Gaussian means within 0.15."""
    for name, true in truth.block_parameters().items():
        value = model.block_parameters()[name][np.ix_(rows, cols)]
        if name == "means":
            np.testing.assert_allclose(value, true, atol=0.15)
        else:
            np.testing.assert_allclose(value, true, rtol=0.2, atol=0.01)


@pytest.mark.parametrize("kind,sparse,missing", CASES)
def test_round_trip_counts_and_parameters(kind, sparse, missing):
    truth = _truth(kind, sparse)
    n_rows, n_cols = (600, 400) if sparse else (240, 160)
    rng = np.random.default_rng(7)
    X, z, w = truth.sample(n_rows, n_cols, rng=rng)
    if missing:
        design = MissingDesign(missing)
        mask = MaskNoise(n_rows, n_cols, design, sparse, rng=rng)
        X = mask_table(X, mask, np.full((3, 2), missing), z, w).with_nan()
    fitted = fit_design(X, (4, 4), kind=kind, certify=False, rng=1)
    assert fitted.counts == (3, 2)
    rows, cols = _matched(fitted.counts, z, w, fitted.selection.rows, fitted.selection.cols)
    design = fitted.design
    np.testing.assert_allclose(design.row_proportions[rows], ROW_PROPS, atol=0.05)
    np.testing.assert_allclose(design.col_proportions[cols], COL_PROPS, atol=0.05)
    model = fitted.model
    _assert_blocks_close(model, truth, rows, cols)
    assert (design.density is not None) == sparse
    if sparse:
        values = X.data if sp.issparse(X) else np.asarray(X).ravel()  # missing entries: explicit NaN
        observed = n_rows * n_cols - np.count_nonzero(np.isnan(values))
        nonzero = np.count_nonzero(np.nan_to_num(values))
        assert design.density == pytest.approx(nonzero / observed, rel=1e-9)  # over the observed entries
    if missing:
        assert design.missing.mechanism == "random"
        assert design.missing.rate == pytest.approx(missing, abs=0.03)
    else:
        assert design.missing is None
    assert fitted.design.model(1.0).block_parameters().keys() == model.block_parameters().keys()


def test_poisson_effects_are_fitted_and_kept():
    rng = np.random.default_rng(3)
    n_rows, n_cols = 200, 150
    mu, nu = rng.lognormal(0, 0.6, n_rows), rng.lognormal(0, 0.6, n_cols)
    mu, nu = mu / mu.mean(), nu / nu.mean()
    truth = get_family("poisson").model([0.5, 0.5], [0.5, 0.5], [[1.0, 4.0], [4.0, 1.0]], mu, nu)
    X, _, _ = truth.sample(n_rows, n_cols, rng=rng)
    fitted = fit_design(X, (4, 4), kind="poisson", certify=False, rng=0)
    assert fitted.effects_kept is True
    # the selection's LBM has no effects: it splits the blocks by degree too (here 4x4), and the
    # effects keep what the extra clusters leave; at the true labels they are the true ones
    assert np.corrcoef(np.log(fitted.design.row_effects), np.log(mu))[0, 1] > 0.5
    assert np.corrcoef(np.log(fitted.design.col_effects), np.log(nu))[0, 1] > 0.5


def test_poisson_effects_at_the_true_labels():
    rng = np.random.default_rng(3)
    mu, nu = rng.lognormal(0, 0.6, 200), rng.lognormal(0, 0.6, 150)
    mu, nu = mu / mu.mean(), nu / nu.mean()
    family = get_family("poisson")
    truth = family.model([0.5, 0.5], [0.5, 0.5], [[1.0, 4.0], [4.0, 1.0]], mu, nu)
    X, z, w = truth.sample(200, 150, rng=rng)
    X = X.astype(float)
    X[rng.uniform(size=X.shape) < 0.1] = np.nan  # over the observed entries
    start = family.model([0.5, 0.5], [0.5, 0.5], [[1.0, 1.0], [1.0, 1.0]])
    fitted = family.estimation.fit_effects(TableData.incomplete(X), z, w, start)
    assert np.corrcoef(np.log(fitted.row_effects), np.log(mu))[0, 1] > 0.97
    assert np.corrcoef(np.log(fitted.col_effects), np.log(nu))[0, 1] > 0.97
    # a class's rates and its mean effect are identified only together: the fitted effects have
    # mean one within each class, and the rates carry the classes' mean effects
    for labels, effects in ((z, fitted.row_effects), (w, fitted.col_effects)):
        np.testing.assert_allclose(np.bincount(labels, weights=effects) / np.bincount(labels), 1.0, rtol=1e-12)
    true_rates = np.array([[1.0, 4.0], [4.0, 1.0]]) * np.outer(np.bincount(z, weights=mu) / np.bincount(z),
                                                               np.bincount(w, weights=nu) / np.bincount(w))
    np.testing.assert_allclose(fitted.rates, true_rates, rtol=0.1)


def test_effects_are_dropped_without_heterogeneity():
    truth = _truth("poisson", False)
    X, _, _ = truth.sample(150, 100, rng=2)
    fitted = fit_design(X, (4, 4), certify=False, rng=0)
    assert fitted.effects_kept is False and fitted.design.row_effects is None


@pytest.mark.parametrize("kind", ["gaussian", "categorical", "poisson"])
def test_block_missing_rates_are_fitted(kind):
    """Entries missing by block (not at random): the counts, the blocks and every block's missing
    rate (within 0.03) are fitted back."""
    truth = _truth(kind, False)
    n_rows, n_cols = 240, 160
    rng = np.random.default_rng(5)
    X, z, w = truth.sample(n_rows, n_cols, rng=rng)
    probs = np.array([[0.05, 0.4], [0.3, 0.1], [0.2, 0.2]])
    X = X.astype(float)
    X[rng.uniform(size=X.shape) < probs[np.ix_(z, w)]] = np.nan
    fitted = fit_design(X, (4, 4), kind=kind, certify=False, rng=0)
    assert fitted.counts == (3, 2)
    rows, cols = _matched(fitted.counts, z, w, fitted.selection.rows, fitted.selection.cols)
    assert fitted.design.missing.mechanism == "block"
    np.testing.assert_allclose(fitted.design.missing_probs(1.0)[np.ix_(rows, cols)], probs, atol=0.03)
    np.testing.assert_allclose(fitted.design.row_proportions[rows], ROW_PROPS, atol=0.05)
    np.testing.assert_allclose(fitted.design.col_proportions[cols], COL_PROPS, atol=0.05)
    _assert_blocks_close(fitted.model, truth, rows, cols)


def test_summary_reports_counts_runners_up_and_the_certified_floor():
    truth = _truth("bernoulli", False)
    X, _, _ = truth.sample(120, 80, rng=4)
    fitted = fit_design(X, (4, 4), n_samples=200, rng=0)
    text = fitted.summary()
    assert "counts 3x2 by exact-icl" in text and "runner-up cells:" in text
    assert "a table like yours, if it followed the model, has a floor of" in text
    assert 0 < fitted.floor.risk.risk < 0.5
    assert len(fitted.file.runners_up) == 3
    assert all(value <= fitted.file.criterion_value for _, _, value in fitted.file.runners_up)


def test_same_seed_same_design():
    X, _, _ = _truth("poisson", False).sample(100, 60, rng=0)
    a, b = (fit_design(X, (3, 3), certify=False, rng=5) for _ in range(2))
    np.testing.assert_array_equal(a.design.path.natural, b.design.path.natural)


def test_a_certification_that_cannot_fit_is_refused_before_the_selection(monkeypatch):
    """``fit --samples 100000000`` allocated 7.45 GiB after the whole model selection had run
    (issue 48, item 1): sized from n_samples first, one line."""
    import lbm_bench.fitting as fitting
    from lbm_bench.protocol.memory import MemoryLimitError

    def selection(*args, **kwargs):
        raise AssertionError("the selection ran before the refusal")

    monkeypatch.setattr(fitting, "select_lbm", selection)
    X = np.random.default_rng(0).poisson(2.0, size=(30, 20))
    with pytest.raises(MemoryLimitError) as info:
        fit_design(X, (4, 4), n_samples=100_000_000, max_memory="2G", rng=0)
    message = str(info.value)
    assert message.startswith("certifying the fitted design's floor on a 30x20 table with 100000000 Gibbs label "
                              "sets needs about 9.")
    assert "allowed by max_memory=; use fewer Gibbs label sets (n_samples=)" in message
    with pytest.raises(AssertionError, match="the selection ran"):  # no certification: no refusal
        fit_design(X, (4, 4), certify=False, n_samples=100_000_000, max_memory="2G", rng=0)
