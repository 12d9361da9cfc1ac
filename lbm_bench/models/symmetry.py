"""Exact symmetries of a latent block model: joint class permutations that leave it invariant.

A model with such a symmetry has an exactly multimodal posterior of labels, so
the conditional risk measured against one labelling is meaningless; random
designs are redrawn until they have none (:func:`~lbm_bench.random_design`).
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np

from lbm_bench.models.base import LatentBlockModel

__all__ = ["find_symmetry"]


def find_symmetry(
    model: LatentBlockModel, *, rtol: float = 1e-9, max_candidates: int = 200_000
) -> tuple[np.ndarray, np.ndarray] | None:
    """Find a non-trivial joint permutation of classes that leaves the model invariant.

    A pair ``(sigma, tau)`` of row and column class permutations, not both the
    identity, with ``pi[sigma] = pi``, ``rho[tau] = rho`` and every block
    parameter ``theta[sigma][:, tau] = theta``, makes the posterior of labels
    exactly multimodal: the conditional risk measured against one labelling is
    then meaningless. Rows are only mapped to rows with the same proportion and
    the same multiset of block parameters, which prunes the search to the
    identity for generic parameters. :func:`~lbm_bench.random_design` never returns a
    symmetric design.

    Parameters
    ----------
    model : LatentBlockModel
        The model to search.
    rtol : float, default=1e-9
        Relative tolerance of the comparison of parameters.
    max_candidates : int, default=200_000
        Most pairs of permutations tried before giving up (then ``None``).

    Returns
    -------
    None or (sigma, tau)
        ``None`` when the model has no such symmetry; otherwise the two
        permutations, ndarrays of shape (g,) and (m,).

    Examples
    --------
    >>> from lbm_bench import GaussianLBM
    >>> latin = [[0.0, 1.0, 2.0], [1.0, 2.0, 0.0], [2.0, 0.0, 1.0]]
    >>> model = GaussianLBM([1/3] * 3, [1/3] * 3, latin, [[1.0] * 3] * 3)
    >>> find_symmetry(model) is not None
    True
    """
    params = np.concatenate([model.natural_parameters, model.log_partition[None]])
    scale = max(1.0, float(np.abs(params).max()))
    params = np.round(params / (scale * rtol)).astype(np.int64) if rtol > 0 else params
    row_props, col_props = model.row_proportions, model.col_proportions
    if rtol > 0:  # rtol=0: exact comparisons
        row_props, col_props = (np.round(props / rtol).astype(np.int64)
                                for props in (row_props, col_props))
    g, m = model.block_shape
    signature = [
        (row_props[k], tuple(sorted(map(tuple, params[:, k, :].T.tolist())))) for k in range(g)
    ]
    groups: dict[Any, list[int]] = {}
    for k, sig in enumerate(signature):
        groups.setdefault(sig, []).append(k)
    count = math.prod(math.factorial(len(members)) for members in groups.values())
    if count > max_candidates:
        raise ValueError(
            f"model has {count} candidate row symmetries; too many to check "
            f"(max_candidates={max_candidates})"
        )
    col_keys: dict[Any, int] = {}
    for l in range(m):
        key = tuple(params[:, :, l].ravel().tolist()) + (col_props[l],)
        if key in col_keys:  # two interchangeable column classes
            tau = np.arange(m)
            tau[[col_keys[key], l]] = tau[[l, col_keys[key]]]
            return np.arange(g), tau
        col_keys[key] = l
    members_list = list(groups.values())
    for images in itertools.product(*(itertools.permutations(mem) for mem in members_list)):
        sigma = np.empty(g, dtype=np.int64)
        for members, image in zip(members_list, images, strict=True):
            sigma[members] = image
        tau = np.full(m, -1, dtype=np.int64)
        for l in range(m):
            key = tuple(params[:, sigma, l].ravel().tolist()) + (col_props[l],)
            # column l of the permuted model must equal some column of the model
            target = col_keys.get(key)
            if target is None:
                break
            tau[target] = l
        else:
            if np.any(tau < 0):
                continue
            if np.array_equal(sigma, np.arange(g)) and np.array_equal(tau, np.arange(m)):
                continue
            return sigma, tau
    return None
