"""Monte Carlo diagnostics of a quantity averaged over label sets drawn in chains.

One estimator of the Monte Carlo standard error (MCSE) for every report of the
package: the certified risks of a table (:meth:`~lbm_bench.GibbsSamples.risk`,
the floor), the conditional risk of a labelling (:func:`~lbm_bench.metrics.conditional_risk`)
and the excess risks of :func:`~lbm_bench.evaluate` all call :func:`chain_diagnostics`.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["MIN_SETS_PER_CHAIN", "chain_diagnostics"]

#: Fewest values (label sets) per chain for which :func:`chain_diagnostics` gives an MCSE:
#: three batches of three, the fewest from which batch means say anything about the
#: chain's autocorrelation. A chain of one set has no spread at all (its MCSE was 0, a
#: certainty it does not have); below this length the MCSE is NaN, and generation refuses
#: fewer sets (``n_samples >= MIN_SETS_PER_CHAIN * n_chains``).
MIN_SETS_PER_CHAIN = 10


def _split(values: np.ndarray, lengths: np.ndarray) -> list[np.ndarray]:
    return np.split(values, np.cumsum(lengths)[:-1])


def chain_diagnostics(values: np.ndarray, chain_lengths: np.ndarray) -> tuple[float, float]:
    """Monte Carlo standard error of the mean of ``values`` and split R-hat.

    The MCSE uses non-overlapping batch means within each chain (batch size
    ``floor(sqrt(L))`` for a chain of length ``L``), pooled over independent
    chains: ``MCSE^2 = sum_c L_c * b_c * var(batch means_c) / N^2``. R-hat is
    the split-chain potential scale reduction of Gelman et al. (2013).

    Parameters
    ----------
    values : ndarray of shape (n_samples,)
        A scalar summary per label set, chain-major.
    chain_lengths : ndarray of shape (n_chains,)

    Returns
    -------
    mcse : float
        NaN when a chain holds fewer than :data:`MIN_SETS_PER_CHAIN` values (its
        autocorrelation, so the uncertainty, cannot be estimated).
    rhat : float
        NaN when fewer than two half-chains of two values or more exist.

    Examples
    --------
    >>> mcse, rhat = chain_diagnostics(np.full(100, 0.25), np.array([50, 50]))
    >>> mcse, rhat
    (0.0, 1.0)
    >>> draws = np.random.default_rng(0).random(4000)
    >>> mcse, rhat = chain_diagnostics(draws, np.array([2000, 2000]))
    >>> round(mcse, 4), round(rhat, 2)   # about sqrt(1/12 / 4000) = 0.0046 for independent draws
    (0.0046, 1.0)
    >>> # chains of one set
    >>> chain_diagnostics(np.random.default_rng(0).random(8), np.ones(8, dtype=int))[0]
    nan
    """
    chains = [c for c in _split(np.asarray(values, dtype=np.float64), chain_lengths) if c.size]
    total = sum(c.size for c in chains)
    if total < 2:
        return math.nan, math.nan
    mcse = _batch_means_mcse(chains, total)
    halves = []
    for chain in chains:
        half = chain.size // 2
        if half >= 2:
            halves += [chain[:half], chain[half : 2 * half]]
    if len(halves) < 2:
        return mcse, math.nan
    length = min(h.size for h in halves)
    stack = np.stack([h[:length] for h in halves])
    within = stack.var(axis=1, ddof=1).mean()
    between = length * stack.mean(axis=1).var(ddof=1)
    if within == 0:
        return mcse, 1.0 if between == 0 else math.inf
    var_plus = (length - 1) / length * within + between / length
    return mcse, float(math.sqrt(var_plus / within))


def _batch_means_mcse(chains: list[np.ndarray], total: int) -> float:
    """Pooled batch means (batches of ``floor(sqrt(L))`` values in a chain of ``L``); NaN
    when a chain is shorter than :data:`MIN_SETS_PER_CHAIN`."""
    if min(chain.size for chain in chains) < MIN_SETS_PER_CHAIN:
        return math.nan
    acc = 0.0
    for chain in chains:
        size = int(math.isqrt(chain.size))
        n_batches = chain.size // size
        means = chain[: n_batches * size].reshape(n_batches, size).mean(axis=1)
        acc += chain.size * size * means.var(ddof=1)
    return math.sqrt(acc) / total
