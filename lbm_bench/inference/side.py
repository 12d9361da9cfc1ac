"""The part of a conditional label step shared by the dense and sparse storages.

A *side* is one of the two conditional steps of the engine: the row step
(``log p(z_i = k | w, x_i)``, which needs the block sums ``T(X) @ onehot(w)``) or
the column step (the same on the transposed table). This module holds what
does not depend on how the table is stored: the model's part of the step and
the logits computed from block sums (:class:`Side`), and the small label
helpers shared by the engine and the storages (one-hot indicators, class
masses, inverse-CDF sampling). The block sums themselves are the storage's:
:mod:`lbm_bench.inference.dense_sums` and :mod:`lbm_bench.inference.sparse_sums`.
"""

from __future__ import annotations

import numpy as np

from lbm_bench._dtypes import smallest_uint

__all__ = ["Side", "class_mass", "onehot_t", "sample_categorical", "sample_class_major"]


def onehot_t(labels: np.ndarray, n_classes: int) -> np.ndarray:
    """(B, C, n) labels -> (B, C, n_classes, n) float64 indicators ``labels[b, c, i] == k``."""
    out = np.empty(labels.shape[:-1] + (n_classes, labels.shape[-1]))
    classes = np.arange(n_classes, dtype=labels.dtype if labels.dtype.kind in "iu" else None)
    np.equal(labels[..., None, :], classes[:, None], out=out, casting="unsafe")
    return out


def class_mass(labels: np.ndarray, n_classes: int, weights: np.ndarray | None) -> np.ndarray:
    """(B, C, n) labels -> (B, C, n_classes) counts (or sums of weights) per class."""
    B, C, n = labels.shape
    flat = (np.arange(B * C)[:, None] * n_classes + labels.reshape(B * C, n)).ravel()
    w = None if weights is None else np.broadcast_to(weights, (B * C, n)).ravel()
    mass = np.bincount(flat, weights=w, minlength=B * C * n_classes)
    return mass.reshape(B, C, n_classes).astype(np.float64)


def sample_class_major(logits: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Inverse-CDF draws from class-major logits (..., k, n); ``u`` (..., n) uniforms.

    Overwrites ``logits``. Elementwise the same arithmetic as
    :func:`sample_categorical` (max shift, exp, running sum, ``u * total``,
    count of CDF values ``<= u * total``), so both give the same labels.
    Returns the smallest unsigned dtype.
    """
    k = logits.shape[-2]
    logits -= logits.max(axis=-2, keepdims=True)
    np.exp(logits, out=logits)
    for r in range(1, k):  # np.cumsum along a middle axis is ~10x slower
        logits[..., r, :] += logits[..., r - 1, :]
    threshold = u * logits[..., k - 1, :]
    # cdf is non-decreasing, so counting the first k - 1 entries is min(count, k - 1)
    return (logits[..., : k - 1, :] <= threshold[..., None, :]).sum(axis=-2, dtype=smallest_uint(k))


def sample_categorical(logits: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Draw one label per row of unnormalised log-probabilities ``logits`` (..., k).

    Inverse-CDF sampling with one uniform per draw, so the draws are a fixed
    function of the uniforms (the same random stream gives the same labels).
    Returns int64 labels.
    """
    class_major = np.array(np.moveaxis(logits, -1, -2), dtype=np.float64, order="C")
    u = rng.random(logits.shape[:-1])
    return sample_class_major(class_major, u).astype(np.int64)


class Side:
    """Everything one conditional step (rows or columns) needs, class-major: the model's
    part here, the statistics and their block sums in the storage's subclass
    (:class:`~lbm_bench.inference.dense_sums.DenseSide`,
    :class:`~lbm_bench.inference.sparse_sums.SparseSide`).

    A subclass defines ``n_tables``, ``n_own``, ``n_other``, ``n_stats``, and
    ``full_work``, ``always_full``, ``full_sums`` and ``index_update``; ``exact_sums``
    says whether its block sums are exact (integer statistics by every route), so
    that they never need a periodic recomputation.
    """

    exact_sums = False

    def set_model(
        self,
        eta: np.ndarray,
        log_partition: np.ndarray,
        log_prior: np.ndarray,
        own_weights: np.ndarray | None,
        other_weights: np.ndarray | None,
        count_partition: np.ndarray | None = None,
    ) -> None:
        """The model's part of the step (dense and sparse): eta (p, k, o), log_partition (k, o),
        and the block mechanism's ``-log(1 - q)`` (k, o) over class counts, or None
        (:class:`~lbm_bench.models.observed.EntryFamily`)."""
        p, k, o = eta.shape
        self.n_classes, self.n_other_classes = k, o
        self.eta = np.ascontiguousarray(eta.transpose(1, 2, 0).reshape(k, o * p))  # [k, (o, p)]
        self.log_partition_t = np.ascontiguousarray(log_partition.T)  # (o, k)
        self.count_partition_t = None if count_partition is None else np.ascontiguousarray(
            count_partition.T)
        self.log_prior = log_prior[:, None]
        self.own_weights = own_weights
        self.other_weights = other_weights

    def logits(self, sums: np.ndarray, other: np.ndarray) -> np.ndarray:
        """Class-major logits (B, C, k, n_own) from block sums and the other side's labels."""
        B, C, o, p, n = sums.shape
        products = np.matmul(self.eta, sums.reshape(B * C, o * p, n))
        return self.add_model_terms(products.reshape(B, C, self.n_classes, n), other)

    def add_model_terms(self, logits: np.ndarray, other: np.ndarray) -> np.ndarray:
        """:meth:`logits` from the products ``eta @ sums`` (B, C, k, n_own), overwritten: the
        log-partitions over the other side's class masses subtracted, the log-prior added."""
        o = self.n_other_classes
        mass = class_mass(other, o, self.other_weights)
        penalty = mass @ self.log_partition_t  # (B, C, k)
        # the block mechanism's -log(1 - q) over class counts
        if self.count_partition_t is not None:
            counts = mass if self.other_weights is None else class_mass(other, o, None)
            count_penalty = counts @ self.count_partition_t
        if self.own_weights is None:
            if self.count_partition_t is not None:
                penalty += count_penalty
            logits -= penalty[..., None]
        else:
            logits -= self.own_weights * penalty[..., None]
            if self.count_partition_t is not None:
                logits -= count_penalty[..., None]
        logits += self.log_prior
        return logits
