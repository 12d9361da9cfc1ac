"""The model-selection criteria (lbm_bench.algorithms.criteria): each family's closed-form ICL
against a numerical integral over its parameters on a tiny table, the BIC-type ICL against
the complete log-likelihood of the estimated model, and the block sums of merges."""

import math

import numpy as np
import pytest
from scipy import special, stats

from lbm_bench import BernoulliLBM, CategoricalLBM
from lbm_bench.algorithms.criteria import Criterion, log_dirichlet_labels, resolve_criterion
from lbm_bench.algorithms.em_problem import EMProblem
from lbm_bench.models.family import Estimation, Family
from lbm_bench.models.registry import get_family

ROWS = np.array([0, 0, 1, 1, 1])
COLS = np.array([0, 1, 1, 0])
#: Tiny tables (5x4) of each family, labelled by ROWS and COLS (2x2 clusters).
TABLES = {
    "bernoulli": np.array([[1, 0, 0, 1], [1, 1, 0, 1], [0, 1, 1, 0], [0, 0, 1, 1], [0, 1, 1, 0]], dtype=np.uint8),
    "poisson": np.array([[3, 0, 1, 2], [4, 1, 0, 5], [0, 2, 3, 1], [1, 3, 2, 0], [0, 4, 6, 1]]),
    "categorical": np.array([[0, 2, 2, 0], [1, 2, 1, 0], [2, 0, 0, 2], [2, 1, 0, 2], [1, 0, 0, 2]], dtype=np.uint8),
    "gaussian": np.array([[10.3, 11.9, 12.2, 9.1], [9.6, 12.5, 11.7, 10.2], [13.1, 9.0, 8.7, 12.4],
                          [12.8, 8.1, 9.4, 13.3], [12.2, 9.5, 8.9, 11.6]]),
}


def _nodes(low, high, n=400):
    """Gauss-Legendre nodes and weights of order ``n`` on [low, high]."""
    x, w = special.roots_legendre(n)
    return (high - low) / 2 * x + (low + high) / 2, w * (high - low) / 2


def _log_integral_1d(log_f, low, high):
    x, w = _nodes(low, high)
    return float(special.logsumexp(log_f(x), b=w))


def _log_integral_2d(log_f, first, second):
    """log ∫∫ exp(log_f(a, b)) da db by a product Gauss-Legendre rule (the integrands below are smooth)."""
    (a, wa), (b, wb) = _nodes(*first), _nodes(*second)
    A, B = np.meshgrid(a, b, indexing="ij")
    return float(special.logsumexp(log_f(A, B), b=np.outer(wa, wb)))


def _log_beta_sin(t, a, b):
    """log of Beta(v | a, b) dv / dt at v = sin^2 t (the substitution removes the endpoint singularities)."""
    v = np.sin(t) ** 2
    return stats.beta.logpdf(v, a, b) + np.log(2 * np.sin(t) * np.cos(t))


def _dirichlet_two(counts, a=0.5):
    """log ∫ p^n0 (1-p)^n1 Beta(p | a, a) dp, with p = sin^2 t."""
    n0, n1 = counts
    return _log_integral_1d(lambda t: n0 * np.log(np.sin(t) ** 2) + n1 * np.log(np.cos(t) ** 2)
                            + _log_beta_sin(t, a, a), 0, math.pi / 2)


def _dirichlet_three(counts):
    """log ∫ prod_c p_c^N_c Dirichlet(p | 1/2, 1/2, 1/2) dp by stick-breaking:
    p = (v1, (1 - v1) v2, (1 - v1)(1 - v2)), v1 ~ Beta(1/2, 1), v2 ~ Beta(1/2, 1/2), v = sin^2 t."""
    def log_f(t1, t2):
        v1, v2 = np.sin(t1) ** 2, np.sin(t2) ** 2
        p = [v1, (1 - v1) * v2, (1 - v1) * (1 - v2)]
        return (sum(c * np.log(q) for c, q in zip(counts, p, strict=True))
                + _log_beta_sin(t1, 0.5, 1.0) + _log_beta_sin(t2, 0.5, 0.5))

    return _log_integral_2d(log_f, (0, math.pi / 2), (0, math.pi / 2))


def _block_integral(kind, values, table):
    """log ∫ prod_x p(x | theta) prior(theta) dtheta for the entries ``values`` of one block,
    the priors as documented (docs/benchmark.md), by quadrature with scipy.stats densities."""
    values = np.asarray(values, dtype=np.float64)
    if kind == "bernoulli":  # Beta(1/2, 1/2)
        return _dirichlet_two([values.sum(), values.size - values.sum()])
    if kind == "poisson":  # Gamma(shape 1, rate 1/mean), over log(rate)
        mean = table.mean()
        return _log_integral_1d(lambda s: stats.poisson.logpmf(values[:, None], np.exp(s)).sum(0)
                                + stats.gamma.logpdf(np.exp(s), 1.0, scale=mean) + s, -30, 6)
    if kind == "categorical":  # K = 3, Dirichlet(1/2, 1/2, 1/2)
        return _dirichlet_three(np.bincount(values.astype(int), minlength=3))
    # gaussian: NIG with mu0 = the table's mean, kappa0 = 1, sigma^2 ~ IG(1, the table's variance)
    mu0, beta0 = table.mean(), table.var()

    def log_f(mu, log_var):
        var = np.exp(log_var)
        likelihood = stats.norm.logpdf(values[:, None, None], mu, np.sqrt(var)).sum(0)
        prior = stats.invgamma.logpdf(var, 1.0, scale=beta0) + stats.norm.logpdf(mu, mu0, np.sqrt(var))
        return likelihood + prior + log_var  # d var = var d log_var

    centre = values.mean()
    return _log_integral_2d(log_f, (centre - 30, centre + 30), (-20, 12))


@pytest.mark.parametrize("kind", sorted(TABLES))
def test_the_exact_icl_is_the_numerical_integral(kind):
    """log p(X, z, w) with the proportions and every block's parameters integrated out by
    quadrature equals the closed form, to 1e-6."""
    X = TABLES[kind]
    crit = Criterion(EMProblem(X, get_family(kind)), "exact-icl")
    numeric = _dirichlet_two(np.bincount(ROWS)) + _dirichlet_two(np.bincount(COLS))
    for k in range(2):
        for l in range(2):
            numeric += _block_integral(kind, X[np.ix_(ROWS == k, COLS == l)].ravel(), X.astype(np.float64))
    assert crit(ROWS, COLS) == pytest.approx(numeric, abs=1e-7)


#: Entries of the tiny tables that go missing (at least one observed entry left in each block).
MISSING = np.zeros((5, 4), dtype=bool)
MISSING[[0, 2, 4, 3], [1, 3, 0, 2]] = True


@pytest.mark.parametrize("kind", sorted(TABLES))
def test_with_missing_entries_the_exact_icl_integrates_the_observed_entries(kind):
    """A table with missing entries (a masked array): the closed form equals the quadrature over
    each block's observed entries, the priors set from the observed entries, to 1e-6."""
    from lbm_bench.models.data import TableData

    X = TABLES[kind]
    crit = Criterion(EMProblem(TableData.incomplete(np.ma.masked_array(X, MISSING)), get_family(kind)), "exact-icl")
    seen = X[~MISSING].astype(np.float64)
    numeric = _dirichlet_two(np.bincount(ROWS)) + _dirichlet_two(np.bincount(COLS))
    for k in range(2):
        for l in range(2):
            block = np.ix_(ROWS == k, COLS == l)
            numeric += _block_integral(kind, X[block][~MISSING[block]], seen)
    assert crit(ROWS, COLS) == pytest.approx(numeric, abs=1e-7)


def test_the_dirichlet_term_of_three_clusters_is_the_numerical_integral():
    counts = np.array([2, 0, 3])  # an empty cluster's term is zero
    assert log_dirichlet_labels(counts) == pytest.approx(_dirichlet_three(counts), abs=1e-8)


def test_two_categories_are_the_bernoulli_icl():
    X = TABLES["bernoulli"]
    bernoulli = Criterion(EMProblem(X, get_family("bernoulli")), "exact-icl")
    categorical = Criterion(EMProblem(X, get_family("categorical")), "exact-icl")
    assert categorical(ROWS, COLS) == pytest.approx(bernoulli(ROWS, COLS), rel=1e-12)


def test_the_gaussian_icl_does_not_change_with_the_unit_or_the_origin():
    X = TABLES["gaussian"]
    base = Criterion(EMProblem(X, get_family("gaussian")), "exact-icl")(ROWS, COLS)
    moved = Criterion(EMProblem(3.0 * X - 40.0, get_family("gaussian")), "exact-icl")(ROWS, COLS)
    assert moved == pytest.approx(base - X.size * math.log(3.0), rel=1e-10)  # the density's Jacobian only


@pytest.mark.parametrize("kind", sorted(TABLES))
def test_the_bic_icl_is_the_complete_likelihood_less_its_penalty(kind):
    X = TABLES[kind]
    problem = EMProblem(X, get_family(kind))
    crit = Criterion(problem, "bic-icl")
    n, d = X.shape
    family = get_family(kind)
    counts_r, counts_c = np.bincount(ROWS), np.bincount(COLS)
    totals = problem.block_totals(np.eye(2)[ROWS], np.eye(2)[COLS])
    params = family.estimation.estimate_blocks(totals, np.outer(counts_r, counts_c), problem.var_floor)
    model = problem.restore(family.model(counts_r / n, counts_c / d, **params))
    nu = {"bernoulli": 1, "poisson": 1, "categorical": 2, "gaussian": 2}[kind]
    penalty = math.log(n) / 2 + math.log(d) / 2 + 4 * nu / 2 * math.log(n * d)
    assert crit(ROWS, COLS) == pytest.approx(model.complete_log_likelihood(X, ROWS, COLS) - penalty, rel=1e-10)


def test_a_merge_adds_up_the_block_sums():
    X = TABLES["poisson"]
    crit = Criterion(EMProblem(X, get_family("poisson")), "icl")
    rows, cols = np.array([0, 1, 2, 2, 1]), np.array([1, 0, 2, 2])
    merged = crit.merged(crit.sums(rows, cols), 1, 0, 2)  # column cluster 2 joins 0, 1 stays
    direct = crit.sums(rows, np.array([1, 0, 0, 0]))
    assert np.allclose(merged.totals, direct.totals) and np.array_equal(merged.col_counts, direct.col_counts)
    assert crit.of_sums(merged) == pytest.approx(crit(rows, np.array([1, 0, 0, 0])))


def test_the_icl_of_each_family():
    assert {kind: resolve_criterion(get_family(kind), "icl") for kind in TABLES} == dict.fromkeys(TABLES, "exact-icl")
    assert resolve_criterion(BernoulliLBM.family, "bic-icl") == "bic-icl"
    with pytest.raises(ValueError, match="criterion must be one of"):
        resolve_criterion(CategoricalLBM.family, "aic")


def test_a_family_without_a_closed_form_refuses_the_exact_icl():
    class ClosedLBM(BernoulliLBM):
        pass

    Closed = Family("closed", ClosedLBM, estimation=Estimation)  # the default estimation: no ICL prior

    assert resolve_criterion(Closed, "icl") == "bic-icl"
    with pytest.raises(ValueError, match="closed blocks have no closed-form ICL"):
        resolve_criterion(Closed, "exact-icl")


def test_special_functions_agree_with_the_beta_function():  # guards the Bernoulli closed form's reading
    assert special.betaln(2.5, 3.5) == pytest.approx(math.lgamma(2.5) + math.lgamma(3.5) - math.lgamma(6.0))
