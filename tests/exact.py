"""Exact posterior of labels on tiny tables, by enumerating all g^n m^d labelings.

Independent of the package's engine: entry log-densities come from scipy.stats.
"""

from __future__ import annotations

import itertools

import numpy as np
from scipy import stats

from lbm_bench import BernoulliLBM, CategoricalLBM, GaussianLBM, PoissonLBM


def entry_log_densities(model, X) -> np.ndarray:
    """log p(x_ij | k, l) for every entry and block: (n, d, g, m)."""
    X = np.asarray(X, dtype=float)[:, :, None, None]
    if isinstance(model, GaussianLBM):
        return stats.norm.logpdf(X, model.means, model.stds)
    if isinstance(model, PoissonLBM):
        rates = model.rates
        if model.row_effects is not None:
            exposure = np.outer(model.row_effects, model.col_effects)[:, :, None, None]
            return stats.poisson.logpmf(X, exposure * rates)
        return stats.poisson.logpmf(X, rates)
    if isinstance(model, BernoulliLBM):
        return stats.bernoulli.logpmf(X, model.probs)
    if isinstance(model, CategoricalLBM):  # one draw of a multinomial: the category's probability
        one_hot = np.eye(model.categories)[X[:, :, 0, 0].astype(np.int64)][:, :, None, None, :]
        return stats.multinomial.logpmf(one_hot, 1, model.probs)
    raise TypeError(type(model))


def all_labelings(n: int, k: int) -> np.ndarray:
    return np.array(list(itertools.product(range(k), repeat=n)), dtype=np.int64)


def exact_posterior(model, X):
    """Return (Z, W, log_joint) with log_joint[a, b] = log p(X, Z[a], W[b])."""
    n, d = np.shape(X)
    g, m = model.block_shape
    E = entry_log_densities(model, X)
    Z = all_labelings(n, g)
    W = all_labelings(d, m)
    Zoh = np.eye(g)[Z]  # (Nz, n, g)
    Woh = np.eye(m)[W]  # (Nw, d, m)
    log_joint = np.einsum("ijkl,aik,bjl->ab", E, Zoh, Woh, optimize=True)
    log_joint += np.log(model.row_proportions)[Z].sum(1)[:, None]
    log_joint += np.log(model.col_proportions)[W].sum(1)[None, :]
    return Z, W, log_joint


def posterior_summaries(model, X, z_ref, w_ref):
    """Exact row/col marginals, r_item of (z_ref, w_ref), and the MAP labelling."""
    Z, W, log_joint = exact_posterior(model, X)
    post = np.exp(log_joint - log_joint.max())
    post /= post.sum()
    pz, pw = post.sum(1), post.sum(0)
    g, m = model.block_shape
    row_marg = np.einsum("a,aik->ik", pz, np.eye(g)[Z])
    col_marg = np.einsum("b,bjl->jl", pw, np.eye(m)[W])
    lr = np.mean(Z != z_ref, axis=1)
    lc = np.mean(W != w_ref, axis=1)
    loss = lr[:, None] + lc[None, :] - lr[:, None] * lc[None, :]
    risk = float(np.sum(post * loss))
    a, b = np.unravel_index(np.argmax(log_joint), log_joint.shape)
    return {
        "row_marginals": row_marg,
        "col_marginals": col_marg,
        "risk": risk,
        "map": (Z[a], W[b]),
        "max_log_joint": float(log_joint[a, b]),
    }
