"""Brute-force references shared by the metrics tests."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np


def comb2(x: int) -> int:
    return x * (x - 1) // 2


def exact_ari_from_table(table: np.ndarray) -> Fraction:
    """ARI from its textbook formula, with Fractions and plain Python loops."""
    cells = [int(x) for x in table.ravel()]
    n = sum(cells)
    t = sum(comb2(x) for x in cells)
    p = sum(comb2(int(x)) for x in table.sum(axis=1))
    q = sum(comb2(int(x)) for x in table.sum(axis=0))
    expected = Fraction(p * q, comb2(n))
    return (t - expected) / (Fraction(p + q, 2) - expected)


def item_labels(z, w) -> np.ndarray:
    """Block label of every cell (i, j), as in the definition of the CARI."""
    z, w = np.asarray(z), np.asarray(w)
    return (z[:, None] * (w.max() + 1) + w[None, :]).ravel()


def random_labels(rng: np.random.Generator, n: int, k: int, offset: int = 0) -> np.ndarray:
    return rng.integers(0, k, n) * 3 + offset  # sparse values, shifted


def injections(k_ref: int, k_pred: int) -> list[np.ndarray]:
    """Every one-to-one map predicted -> reference (-1 = unmatched), maximal ones."""
    maps = set()
    for perm in itertools.permutations(range(max(k_ref, k_pred))):
        maps.add(tuple(p if p < k_ref else -1 for p in perm[:k_pred]))
    return [np.array(m) for m in maps]


def brute_item_loss(z, w, zp, wp) -> float:
    """Lomet's CE by enumerating every pair of matchings."""
    z, w, zp, wp = map(np.asarray, (z, w, zp, wp))
    best = 1.0
    for rmap in injections(z.max() + 1, zp.max() + 1):
        row_ok = z == rmap[zp]
        for cmap in injections(w.max() + 1, wp.max() + 1):
            col_ok = w == cmap[wp]
            best = min(best, 1 - np.outer(row_ok, col_ok).mean())
    return best


def brute_conditional_risk(Z, W, zp, wp) -> float:
    best = 2.0
    for rmap in injections(Z.max() + 1, zp.max() + 1):
        lr = (Z != rmap[zp]).mean(axis=1)
        for cmap in injections(W.max() + 1, wp.max() + 1):
            lc = (W != cmap[wp]).mean(axis=1)
            best = min(best, float((lr + lc - lr * lc).mean()))
    return best


def gibbs_like(rng, truth: np.ndarray, k: int, n_sets: int, flip: float) -> np.ndarray:
    """Label sets around ``truth`` in the same label space (no label switching)."""
    sets = np.tile(truth, (n_sets, 1))
    mask = rng.random(sets.shape) < flip
    sets[mask] = rng.integers(0, k, int(mask.sum()))
    return sets
