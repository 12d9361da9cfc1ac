"""What every family's own test file checks of its formulas, against scipy.stats (tests/exact.py):
the exponential-family form of each entry's log-density, and the complete log-likelihood."""

import numpy as np

from tests.exact import entry_log_densities


def check_exponential_family_form(model, X):
    """``eta_kl . T(x) - A_kl + log h(x)`` is scipy's log-density of ``x`` in block (k, l), every entry and
    block (a model without row and column effects: theirs enter through the complete log-likelihood)."""
    reference = entry_log_densities(model, X)  # (n, d, g, m)
    stats = model.sufficient_statistics(X)  # (p, n, d)
    eta, A = model.natural_parameters, model.log_partition
    base = np.array([[model.log_base_measure(np.asarray(X)[i:i + 1, j:j + 1]) for j in range(X.shape[1])]
                     for i in range(X.shape[0])])
    ours = np.einsum("pij,pkl->ijkl", stats, eta) - A + base[:, :, None, None]
    np.testing.assert_allclose(ours, reference, rtol=1e-10, atol=1e-10)


def check_complete_log_likelihood(model, X, z, w):
    """``log p(X, z, w)`` is the sum of the labels' log-proportions and the entries' scipy log-densities."""
    reference = (np.log(model.row_proportions)[z].sum() + np.log(model.col_proportions)[w].sum()
                 + entry_log_densities(model, X)[np.arange(len(z))[:, None], np.arange(len(w)), z[:, None], w].sum())
    assert np.isclose(model.complete_log_likelihood(X, z, w), reference, rtol=1e-12, atol=1e-9)
