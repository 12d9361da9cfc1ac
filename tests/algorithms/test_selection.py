"""The model selection (lbm_bench.algorithms.selection: select_lbm): counts recovered on clear tables of
every family, by the path and the grid; the same result whatever ``jobs``; sparse tables
never densified; what the selection returns; bad input."""

import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp

from lbm_bench import random_model
from lbm_bench.algorithms import LBMFit, LBMSelection, select_lbm
from lbm_bench.metrics import ari
from tests.algorithms.common import KINDS, OPTIONS

#: Clear tables: 3x2 clusters at a scale where the labels are recovered, 90x60.
SCALES = {"gaussian": 1.5, "poisson": 1.0, "bernoulli": 1.5, "categorical": 1.2}


def _table(kind, g=3, m=2, shape=(90, 60), seed=0):
    model = random_model(kind, g, m, scale=SCALES[kind], rng=seed, **OPTIONS.get(kind, {}))
    return model.sample(*shape, rng=seed + 1)


@pytest.mark.parametrize("search", ["path", "grid"])
@pytest.mark.parametrize("kind", KINDS)
def test_the_counts_of_a_clear_table_are_found(kind, search):
    X, z, w = _table(kind)
    chosen = select_lbm(X, (5, 4), kind=kind, search=search, n_init=4, rng=1)
    assert (chosen.n_row_clusters, chosen.n_col_clusters) == (3, 2)
    assert ari(z, chosen.rows) > 0.9 and ari(w, chosen.cols) > 0.9
    assert chosen.criterion == "exact-icl" and chosen.search == search
    assert chosen.value == np.nanmax(chosen.criterion_table)


@pytest.mark.parametrize("kind", KINDS)
def test_the_counts_of_a_clear_table_with_missing_entries_are_found(kind):
    """20% of the entries missing (a masked array): the criterion and the fits read the observed
    entries only, and the counts and labels are still found."""
    X, z, w = _table(kind, shape=(120, 80))
    hidden = np.random.default_rng(7).random(X.shape) < 0.2
    chosen = select_lbm(np.ma.masked_array(X, hidden), (5, 4), kind=kind, n_init=4, rng=1)
    assert (chosen.n_row_clusters, chosen.n_col_clusters) == (3, 2)
    assert ari(z, chosen.rows) > 0.9 and ari(w, chosen.cols) > 0.9


def test_what_a_selection_holds():
    X, z, w = _table("gaussian")
    X = X + 100.0  # the fit is made centred; the model is given back on the table's scale
    chosen = select_lbm(X, (5, 4), rng=1)
    assert isinstance(chosen, LBMSelection) and isinstance(chosen.fit, LBMFit)
    assert chosen.criterion_table.shape == (5, 4) and np.isnan(chosen.criterion_table).any()  # the path skips cells
    assert chosen.rows.dtype == np.int64 and set(chosen.rows) == {0, 1, 2} and set(chosen.cols) == {0, 1}
    assert chosen.fit.model.block_shape == (3, 2) and chosen.fit.model.means.min() > 90
    assert np.array_equal(chosen.fit.rows, chosen.rows) and chosen.fit.kind == "gaussian" and chosen.fit.method == "cem"
    assert chosen.family is chosen.fit.family and chosen.family.kind == "gaussian"
    assert chosen.fit.criterion in chosen.fit.start_criteria
    grid = select_lbm(X, (5, 4), search="grid", n_init=2, rng=1)
    assert not np.isnan(grid.criterion_table).any() and grid.n_runs == 5 * 4 * 2
    assert chosen.n_runs < grid.n_runs * 5  # the path's runs start from splits and merges


@pytest.mark.parametrize("search", ["path", "grid"])
def test_the_same_seed_gives_the_same_selection_whatever_jobs(search):
    X, _, _ = _table("poisson", 4, 3, shape=(80, 60), seed=5)
    one = select_lbm(X, (5, 5), search=search, n_init=3, jobs=1, rng=7)
    two = select_lbm(X, (5, 5), search=search, n_init=3, jobs=2, rng=7)
    assert np.array_equal(one.rows, two.rows) and np.array_equal(one.cols, two.cols)
    assert np.array_equal(one.criterion_table, two.criterion_table, equal_nan=True)
    assert one.n_runs == two.n_runs


def test_vem_and_the_bic_type_criterion():
    X, z, w = _table("bernoulli")
    chosen = select_lbm(X, (4, 4), method="vem", criterion="bic-icl", rng=2)
    assert (chosen.n_row_clusters, chosen.n_col_clusters) == (3, 2)
    assert chosen.criterion == "bic-icl" and chosen.fit.method == "vem"


def test_a_sparse_table_is_never_densified(monkeypatch):
    model = random_model("bernoulli", 3, 3, scale=2.5, density=0.01, rng=3)
    X, z, w = model.sample(4000, 2000, rng=4)
    assert sp.issparse(X)

    def refuse(*args, **kwargs):
        raise AssertionError("the sparse table was densified")

    for cls in (sp.csr_array, sp.csc_array, sp.coo_array):
        monkeypatch.setattr(cls, "toarray", refuse)
        monkeypatch.setattr(cls, "todense", refuse)
    tracemalloc.start()
    try:
        chosen = select_lbm(X, (5, 5), rng=0)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert (chosen.n_row_clusters, chosen.n_col_clusters) == (3, 3)
    assert ari(z, chosen.rows) > 0.9 and ari(w, chosen.cols) > 0.9
    assert peak < X.shape[0] * X.shape[1] * 8 / 4  # a float64 copy of the table would be 64 MB (we use 8)


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        ({"max_clusters": (0, 3)}, ValueError, r"max_clusters\[0\] must be >= 1"),
        ({"max_clusters": (31, 2)}, ValueError, "exceeds the table's 30 rows and 20 columns"),
        ({"max_clusters": 8}, TypeError, "max_clusters must be a pair of integers"),
        ({"search": "greedy"}, ValueError, "search must be one of"),
        ({"criterion": "aic"}, ValueError, "criterion must be one of"),
        ({"method": "em"}, ValueError, "method must be one of"),
        ({"n_init": 0}, ValueError, "n_init must be >= 1"),
        ({"jobs": 0}, ValueError, "jobs must be >= 1"),
        ({"kind": "gaussian", "criterion": "exact-icl", "X": sp.csr_array(np.eye(30, 20))}, TypeError,
         "does not accept sparse tables"),
    ],
)
def test_bad_input(kwargs, error, message):
    X = kwargs.pop("X", np.random.default_rng(0).integers(0, 2, (30, 20)))
    with pytest.raises(error, match=message):
        select_lbm(X, **{"max_clusters": (3, 3), **kwargs})


@pytest.mark.parametrize("search", ["path", "grid"])
@pytest.mark.parametrize("X, kind", [
    (sp.csr_array((20, 15)), "bernoulli"), (sp.csr_array((20, 15)), "poisson"),
    (sp.csr_array((700, 650)), "poisson"), (np.zeros((700, 650)), "bernoulli"),
    (np.zeros((20, 15)), "gaussian"), (np.full((20, 15), 2.5), "gaussian"),
])
def test_a_table_without_structure_gives_one_block(X, kind, search):
    """An all-zero or constant table, sparse or dense, small or past the dense SVD: one cluster
    per side (the embedding of identical rows is zero; ARPACK failed on it: "starting vector is zero")."""
    chosen = select_lbm(X, (3, 3), kind=kind, search=search, n_init=2, rng=0)
    assert (chosen.n_row_clusters, chosen.n_col_clusters) == (1, 1)
    assert not chosen.rows.any() and not chosen.cols.any()


@pytest.mark.parametrize("X", [np.full((20, 15), np.nan), np.ma.masked_all((20, 15)),
                               sp.csr_array(np.full((5, 4), np.nan))])
def test_a_table_without_observed_entry_is_refused_in_one_line(X):
    from lbm_bench.algorithms import cem, vem

    for fit in (lambda: select_lbm(X, (3, 3), kind="poisson" if sp.issparse(X) else "gaussian", rng=0),
                lambda: cem(X, 2, 2, rng=0), lambda: vem(X, 2, 2, rng=0)):
        with pytest.raises(ValueError, match=r"^X has no observed entry \(all \d+ entries are missing\): there is "
                                             "nothing to cluster$"):
            fit()


def test_real_valued_blocks_on_a_0_1_table_warn():
    """Gaussian blocks on a 0/1 table reward ever purer blocks (variances towards 0): the
    selection warns and names the family that fits; a 0/1 table read as Bernoulli does not."""
    import warnings

    X, _, _ = random_model("bernoulli", 3, 2, scale=2.0, rng=0).sample(60, 40, rng=0)
    with pytest.warns(UserWarning, match=r"only the values 0 and 1: gaussian blocks .* use kind='bernoulli'"):
        select_lbm(X.astype(float), (4, 4), kind="gaussian", n_init=2, rng=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        chosen = select_lbm(X, (4, 4), n_init=2, rng=0)
    assert (chosen.n_row_clusters, chosen.n_col_clusters) == (3, 2)
