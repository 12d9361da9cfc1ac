"""Batched conditional label steps shared by the MAP classifier and the Gibbs sampler.

The engine works on a stack of ``B`` tables drawn from one model and ``C``
label configurations per table (starts of the MAP, or Gibbs chains). For the
row step, the block sums ``S_p = T_p(X) @ onehot(w)`` of every configuration
come out of one matrix product per sufficient statistic; the column step is
the same computation on the transposed table. Nothing here depends on the
family beyond the exponential-family interface of :mod:`lbm_bench.models`.

Shapes: ``z`` is (B, C, n_rows), ``w`` is (B, C, n_cols), logits are
(B, C, n_rows, g) or (B, C, n_cols, m).
"""

from __future__ import annotations

import numpy as np

from .models import LatentBlockModel

__all__ = ["Sweeper", "sample_categorical", "smallest_uint"]


def smallest_uint(n_values: int) -> np.dtype:
    """Smallest unsigned integer dtype holding ``0 .. n_values - 1``."""
    for dtype in (np.uint8, np.uint16, np.uint32):
        if n_values - 1 <= np.iinfo(dtype).max:
            return np.dtype(dtype)
    return np.dtype(np.uint64)


def _onehot_flat(labels: np.ndarray, n_classes: int) -> np.ndarray:
    """(B, C, n) labels -> (B, n, C * n_classes) float64 one-hot, chain-major columns."""
    B, C, n = labels.shape
    out = np.zeros((B, n, C, n_classes))
    b_idx, c_idx, i_idx = np.indices((B, C, n), sparse=True)
    out[b_idx, i_idx, c_idx, labels] = 1.0
    return out.reshape(B, n, C * n_classes)


def _class_mass(labels: np.ndarray, n_classes: int, weights: np.ndarray | None) -> np.ndarray:
    """(B, C, n) labels -> (B, C, n_classes) counts (or sums of weights) per class."""
    B, C, n = labels.shape
    flat = (np.arange(B * C)[:, None] * n_classes + labels.reshape(B * C, n)).ravel()
    w = None if weights is None else np.broadcast_to(weights, (B * C, n)).ravel()
    mass = np.bincount(flat, weights=w, minlength=B * C * n_classes)
    return mass.reshape(B, C, n_classes).astype(np.float64)


class Sweeper:
    """Precomputed statistics of ``B`` tables for conditional label steps.

    Parameters
    ----------
    model : LatentBlockModel
        The model with its true parameters.
    tables : ndarray of shape (B, n_rows, n_cols)
        Tables, already validated for the model's family.
    """

    def __init__(self, model: LatentBlockModel, tables: np.ndarray) -> None:
        B, n, d = tables.shape
        self.model = model
        self.n_rows, self.n_cols = n, d
        self.g, self.m = model.block_shape
        stats = np.stack([model.sufficient_statistics(t) for t in tables])  # (B, p, n, d)
        self.stats = stats
        self.stats_t = np.ascontiguousarray(stats.swapaxes(-1, -2))  # (B, p, d, n)
        self.eta = model.natural_parameters  # (p, g, m)
        self.log_partition = model.log_partition  # (g, m)
        self.log_row_prior = np.log(model.row_proportions)
        self.log_col_prior = np.log(model.col_proportions)
        self.row_weights = model.row_weights(n)
        self.col_weights = model.col_weights(d)
        self.base_measure = np.array([model.log_base_measure(t) for t in tables])

    @property
    def n_tables(self) -> int:
        return self.stats.shape[0]

    def _block_sums(self, stats: np.ndarray, other: np.ndarray, n_other: int) -> np.ndarray:
        """(B, p, n, d) stats and (B, C, d) labels -> (B, p, n, C, n_other) block sums."""
        B, C, _ = other.shape
        onehot = _onehot_flat(other, n_other)  # (B, d, C*k)
        sums = np.stack([stats[:, p] @ onehot for p in range(stats.shape[1])], axis=1)
        return sums.reshape(B, stats.shape[1], stats.shape[2], C, n_other)

    def _logits(self, sums, eta, log_partition, log_prior, mass, own_weights) -> np.ndarray:
        # sums (B, p, n, C, o); eta (p, k, o); mass (B, C, o)
        logits = np.einsum("bpnco,pko->bcnk", sums, eta, optimize=True)
        penalty = mass @ log_partition.T  # (B, C, k)
        if own_weights is None:
            logits -= penalty[:, :, None, :]
        else:
            logits -= own_weights[None, None, :, None] * penalty[:, :, None, :]
        logits += log_prior
        return logits

    def row_logits(self, w: np.ndarray) -> np.ndarray:
        """Unnormalised ``log p(z_i = k | w, x_i)``: (B, C, n_rows, g) from w of (B, C, n_cols)."""
        sums = self._block_sums(self.stats, w, self.m)
        mass = _class_mass(w, self.m, self.col_weights)
        return self._logits(
            sums, self.eta, self.log_partition, self.log_row_prior, mass, self.row_weights
        )

    def col_logits(self, z: np.ndarray) -> np.ndarray:
        """Unnormalised ``log p(w_j = l | z, x^j)``: (B, C, n_cols, m) from z of (B, C, n_rows)."""
        sums = self._block_sums(self.stats_t, z, self.g)
        mass = _class_mass(z, self.g, self.row_weights)
        return self._logits(
            sums,
            self.eta.swapaxes(1, 2),
            self.log_partition.T,
            self.log_col_prior,
            mass,
            self.col_weights,
        )

    def complete_log_likelihood(self, z: np.ndarray, w: np.ndarray) -> np.ndarray:
        """``log p(X_b, z_bc, w_bc)`` for every table and configuration: (B, C)."""
        sums = self._block_sums(self.stats, w, self.m)  # (B, p, n, C, m)
        onehot_z = np.zeros(z.shape + (self.g,))
        np.put_along_axis(onehot_z, z[..., None], 1.0, axis=-1)
        totals = np.einsum("bcnk,bpncl->bcpkl", onehot_z, sums, optimize=True)
        row_mass = _class_mass(z, self.g, self.row_weights)
        col_mass = _class_mass(w, self.m, self.col_weights)
        exposure = row_mass[..., :, None] * col_mass[..., None, :]
        value = np.einsum("bcpkl,pkl->bc", totals, self.eta)
        value -= np.einsum("bckl,kl->bc", exposure, self.log_partition)
        value += self.log_row_prior[z].sum(-1) + self.log_col_prior[w].sum(-1)
        return value + self.base_measure[:, None]


def sample_categorical(logits: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Draw one label per row of unnormalised log-probabilities ``logits`` (..., k).

    Inverse-CDF sampling with one uniform per draw, so the draws are a fixed
    function of the uniforms (the same random stream gives the same labels).
    """
    shifted = logits - logits.max(axis=-1, keepdims=True)
    cdf = np.cumsum(np.exp(shifted), axis=-1)
    u = rng.random(logits.shape[:-1])[..., None] * cdf[..., -1:]
    labels = (cdf <= u).sum(axis=-1)
    return np.minimum(labels, logits.shape[-1] - 1)
