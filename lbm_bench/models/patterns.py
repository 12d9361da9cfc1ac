"""Block patterns of random designs: roughly symmetric separations, no symmetry.

Patterns are searched so that every pair of row classes and every pair of
column classes is separated to a similar degree (the paper's "roughly
symmetric" layout) while no non-trivial joint permutation of row and column
classes maps the pattern to itself or close to it. A family's
:meth:`~lbm_bench.models.family.Designs.draw_pattern` picks one of them:
a real pattern (block means or log-rates) or a +-1 binary one (modes).
"""

from __future__ import annotations

import functools
import itertools
import math

import numpy as np

__all__ = ["binary_pattern", "real_pattern"]

#: Joint class permutations are enumerated for the near-symmetry check up to this many.
_MAX_ENUMERATED = 20_000
#: Minimum distance to any jointly permuted pattern, relative to the class separation.
_MIN_ASYMMETRY = 0.5


@functools.lru_cache(maxsize=64)
def _pairs(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Indices (i, j) of the pairs i < j of ``n`` classes (read-only, cached: the pattern
    searches ask for them some 10^5 times per release)."""
    i, j = np.triu_indices(n, 1)
    i.flags.writeable = j.flags.writeable = False
    return i, j


def _pairwise_rms(vectors: np.ndarray) -> np.ndarray:
    """RMS distances between all pairs of rows of ``vectors`` (pairs i < j)."""
    i, j = _pairs(vectors.shape[0])
    squares = (vectors[i] - vectors[j]) ** 2
    return np.sqrt(np.add.reduce(squares, axis=1) / squares.shape[1])  # np.mean's sum and division


def _separation_spread(pattern: np.ndarray) -> float:
    """max/min pairwise class distance over rows and columns (1 is perfect)."""
    spreads = []
    for vectors in (pattern, pattern.T):
        if vectors.shape[0] > 1:
            dist = _pairwise_rms(vectors)
            if dist.min() <= 1e-12:
                return math.inf
            spreads.append(dist.max() / dist.min())
    return max(spreads) if spreads else 1.0


def _mean_separation(pattern: np.ndarray) -> float:
    dists = [_pairwise_rms(v) for v in (pattern, pattern.T) if v.shape[0] > 1]
    return float(np.mean(np.concatenate(dists))) if dists else 1.0


def _asymmetry(pattern: np.ndarray) -> float:
    """How far the pattern is from every jointly permuted copy of itself.

    For each non-trivial pair of class permutations ``(sigma, tau)``, the RMS
    difference between the pattern and ``pattern[sigma][:, tau]`` over the
    entries the permutation moves, relative to the mean class separation; the
    minimum over pairs (``inf`` when there are too many pairs to enumerate).
    """
    g, m = pattern.shape
    if math.factorial(g) * math.factorial(m) > _MAX_ENUMERATED:
        return math.inf
    cols = np.array(list(itertools.permutations(range(m))))
    col_fixed = (cols == np.arange(m)).sum(axis=1)
    best = math.inf
    for sigma in itertools.permutations(range(g)):
        row_fixed = int(np.sum(np.array(sigma) == np.arange(g)))
        moved = 1.0 - row_fixed * col_fixed / (g * m)  # fraction of entries moved
        stack = pattern[list(sigma)][:, cols].transpose(1, 0, 2)  # (n_tau, g, m)
        dist = np.sqrt(np.sum((stack - pattern) ** 2, axis=(1, 2)) / (g * m))
        ok = moved > 0
        if ok.any():
            best = min(best, float(np.min(dist[ok] / np.sqrt(moved[ok]))))
    return best / _mean_separation(pattern)


def real_pattern(g: int, m: int, rng: np.random.Generator, n_steps: int = 400) -> np.ndarray:
    """A centred pattern with near-equal pairwise separations and no near-symmetry,
    by random search then hill climbing under the asymmetry constraint."""
    best, best_score = None, math.inf
    while best is None:
        for _ in range(64):
            candidate = rng.uniform(-1, 1, size=(g, m))
            score = _separation_spread(candidate)
            if score < best_score and _asymmetry(candidate) >= _MIN_ASYMMETRY:
                best, best_score = candidate, score
    step = 0.2
    for _ in range(n_steps):
        candidate = best + step * rng.standard_normal((g, m)) * (rng.random((g, m)) < 0.3)
        score = _separation_spread(candidate)
        if score < best_score and _asymmetry(candidate) >= _MIN_ASYMMETRY:
            best, best_score = candidate, score
    best = best - best.mean()
    return best / _mean_separation(best)


def binary_pattern(g: int, m: int, rng: np.random.Generator) -> np.ndarray:
    """A +-1 pattern with distinct rows and columns, near-equal Hamming separations."""
    if g > 2**m or m > 2**g:
        raise ValueError(
            f"a binary pattern needs distinct rows and columns: impossible with {g}x{m} clusters"
        )
    best, best_score = None, math.inf
    for _ in range(2000):
        candidate = np.where(rng.random((g, m)) < 0.5, 1.0, -1.0)
        score = _separation_spread(candidate)
        if score < best_score and _asymmetry(candidate) > 0:
            best, best_score = candidate, score
            if score == 1.0:
                break
    if best is None:
        raise ValueError(f"no asymmetric binary pattern found for {g}x{m} clusters")
    return best
