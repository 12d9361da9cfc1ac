"""Exact posterior of labels on tiny tables, by enumerating all g^n m^d labelings.

Independent of the package's engine: entry log-densities come from scipy.stats.
With an observed mask, the missing entries contribute nothing, except, when the
model has block missing probabilities ``q_kl`` (missing not at random), the
mask's own Bernoulli log-probabilities ``log q_kl`` (missing) or ``log(1 - q_kl)``
(observed): the observed-data likelihood, written directly.
"""

from __future__ import annotations

import itertools

import numpy as np
from scipy import stats

from lbm_bench import BernoulliLBM, CategoricalLBM, GaussianLBM, PoissonLBM


def entry_log_densities(model, X, observed=None) -> np.ndarray:
    """log p(x_ij, m_ij | k, l) for every entry and block: (n, d, g, m); with ``observed``,
    the density of an observed entry times its mask, plus the mask's log-probability
    under the model's block missing probabilities (when it has them)."""
    X = np.where(np.isnan(np.asarray(X, dtype=float)), 0.0, np.asarray(X, dtype=float))
    dens = _complete_log_densities(model, X)
    if observed is None:
        return dens
    M = np.asarray(observed, dtype=float)[:, :, None, None]
    dens = dens * M
    q = getattr(model, "missing_probs", None)
    if q is not None:
        dens = dens + M * np.log1p(-q) + (1 - M) * np.log(q)
    return dens


def _complete_log_densities(model, X) -> np.ndarray:
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


def exact_posterior(model, X, observed=None):
    """Return (Z, W, log_joint) with log_joint[a, b] = log p(X, Z[a], W[b]) (of the observed
    entries and the mask, given ``observed``)."""
    n, d = np.shape(X)
    g, m = model.block_shape
    E = entry_log_densities(model, X, observed)
    Z = all_labelings(n, g)
    W = all_labelings(d, m)
    Zoh = np.eye(g)[Z]  # (Nz, n, g)
    Woh = np.eye(m)[W]  # (Nw, d, m)
    log_joint = np.einsum("ijkl,aik,bjl->ab", E, Zoh, Woh, optimize=True)
    log_joint += np.log(model.row_proportions)[Z].sum(1)[:, None]
    log_joint += np.log(model.col_proportions)[W].sum(1)[None, :]
    return Z, W, log_joint


def posterior_summaries(model, X, z_ref, w_ref, observed=None):
    """Exact row/col marginals, r_item of (z_ref, w_ref), and the MAP labelling."""
    Z, W, log_joint = exact_posterior(model, X, observed)
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


def naive_gibbs(model, X, observed, *, starts, n_sweeps, burn_in, rng):
    """A plain blockwise Gibbs sampler of ``p(z, w | X_obs, M)``, independent of the package's
    engine: every row step sums the scipy entry log-densities of :func:`entry_log_densities`
    (observed entries only, and the mask's terms by block) over the entries of each row, one
    chain per start. Returns (rows, cols, chain_lengths): label sets chain-major."""
    E = entry_log_densities(model, X, observed)  # (n, d, g, m)
    n, d, g, m = E.shape
    log_pi, log_rho = np.log(model.row_proportions), np.log(model.col_proportions)
    by_col = E.transpose(1, 3, 0, 2)  # (d, m, n, g)
    by_row = E.transpose(0, 2, 1, 3)  # (n, g, d, m)
    z = np.stack([np.asarray(s[0]) for s in starts])
    w = np.stack([np.asarray(s[1]) for s in starts])
    rows, cols = [], []

    def draw(logits):
        logits = logits - logits.max(-1, keepdims=True)
        p = np.exp(logits)
        p /= p.sum(-1, keepdims=True)
        u = rng.random(p.shape[:-1] + (1,))
        return np.minimum((np.cumsum(p, -1) < u).sum(-1), p.shape[-1] - 1)

    for sweep in range(burn_in + n_sweeps):
        z = draw(by_col[np.arange(d)[None, :], w].sum(1) + log_pi)  # (C, n)
        w = draw(by_row[np.arange(n)[None, :], z].sum(1) + log_rho)  # (C, d)
        if sweep >= burn_in:
            rows.append(z.copy())
            cols.append(w.copy())
    rows = np.stack(rows, axis=1).reshape(-1, n).astype(np.uint8)  # chain-major
    cols = np.stack(cols, axis=1).reshape(-1, d).astype(np.uint8)
    return rows, cols, np.full(len(starts), n_sweeps)
