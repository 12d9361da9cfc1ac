"""The observed-data family: the likelihood of a table with missing entries, as the engine sums it.

How entries go missing (the mechanisms, the masks) is :mod:`lbm_bench.models.missing`.

**The observed-data likelihood.** With ``(k, l) = (z_i, w_j)``, exposures
``c_ij = a_i b_j`` and the exponential-family form of
:mod:`lbm_bench.models.base`::

    log p(X_obs, M | z, w) = sum_ij M_ij [eta_kl . T(x_ij) - c_ij A_kl + log h(x_ij, c_ij)]
                           + sum_ij [(1 - M_ij) logit(q_kl) + log(1 - q_kl)]

where the second line is present for the block mechanism only (for the random
one it is ``log p(M)``, the same for every labelling). So the row step is::

    log p(z_i = k | w, X_obs, M) = log pi_k + sum_l [eta_kl . S_il - a_i A_kl B_il
                                   + logit(q_kl) R_il + log(1 - q_kl) |w = l|] + const

with ``S_il = sum_{j: w_j = l} M_ij T(x_ij)``, ``B_il = sum_{j: w_j = l} M_ij b_j``
(the exposure of the row's *observed* entries of class ``l``, which now depends on
the row) and ``R_il`` its missing entries there. :class:`EntryFamily` writes this
as the engine's sums: the family's statistics zeroed at missing entries, plus one
statistic channel for the missing entries' exposures ``(1 - M_ij) c_ij`` with
natural parameter ``A_kl`` (it cancels the class-mass penalty ``c_ij A_kl`` of the
entries that are not seen), plus, for the block mechanism, the missing indicator
with natural parameter ``logit(q_kl)`` and a class-count penalty ``-log(1 - q_kl)``
(without row and column effects the two missing channels are one, with natural
parameter ``A_kl + logit(q_kl)``). Missing entries are stored as 0 and never enter
the family's statistics. A row with no observed entry has ``S_i = B_i = 0``: under
the random mechanism its label posterior given the columns is the prior.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import sparse as sp
from scipy import special

import lbm_bench._portable as portable
from lbm_bench.models.data import TableData

__all__ = ["EntryFamily"]


class EntryFamily:
    """The per-entry exponential family of a table with missing entries (module documentation).

    Parameters
    ----------
    model : LatentBlockModel
        With its ``missing_probs`` for the block mechanism (None otherwise).
    incomplete : bool
        Whether the tables have a mask: then the missing channels are added. A complete
        table of a model without ``missing_probs`` gives the family's own form.

    Attributes
    ----------
    n_stats : int
        Statistic channels: the family's ``n_stats``, plus one for the missing
        entries' exposures, plus one for the block mechanism with row and column effects.
    natural_parameters : ndarray of shape (n_stats, g, m)
    log_partition : ndarray of shape (g, m)
        Times the exposures ``c_ij``, over all entries (class masses).
    count_partition : ndarray of shape (g, m) or None
        ``-log(1 - q_kl)`` of the block mechanism, over all entries at unit exposure
        (class counts); None otherwise.
    """

    def __init__(self, model: Any, incomplete: bool) -> None:
        self.model = model
        eta = model.natural_parameters
        self.log_partition = model.log_partition
        q = getattr(model, "missing_probs", None)
        self.incomplete = bool(incomplete) or q is not None
        self.weighted = model.row_weights(1) is not None or model.col_weights(1) is not None
        self.count_partition = None if q is None else -portable.log1p(-q)
        channels = [eta]
        self._mask_channels = ()
        if self.incomplete:
            if q is None:
                channels.append(self.log_partition[None])
                self._mask_channels = ("exposure",)
            elif not self.weighted:
                channels.append((self.log_partition + special.logit(q))[None])
                self._mask_channels = ("exposure",)
            else:
                channels += [self.log_partition[None], special.logit(q)[None]]
                self._mask_channels = ("exposure", "indicator")
        self.natural_parameters = np.concatenate(channels) if len(channels) > 1 else eta
        self.n_stats = int(self.natural_parameters.shape[0])

    def dense_statistics(self, X: np.ndarray, observed: np.ndarray | None) -> np.ndarray:
        """Statistics of a dense table (0 at missing entries) with its mask: (n_stats, n, d)."""
        if not self.incomplete:
            return self.model.sufficient_statistics(X)
        out = np.empty((X.shape[0], self.n_stats, X.shape[1]))
        self.fill_dense(X, observed, out)
        return out.transpose(1, 0, 2)

    def fill_dense(self, X: np.ndarray, observed: np.ndarray | None, out: np.ndarray) -> None:
        """Write the statistics of a dense table with its mask into ``out`` of shape
        (n, n_stats, d) (the engine's row layout), without another table-sized temporary
        than the family's statistics. The family's statistics are zeroed at missing
        entries only when ``T(0)`` is not 0 (the missing entries hold 0)."""
        n, d = X.shape
        stats = self.model.sufficient_statistics(X)
        p = stats.shape[0]
        out[:, :p, :] = stats.transpose(1, 0, 2)
        del stats
        if observed is None:
            out[:, p:, :] = 0.0
            return
        if self._zero_has_statistics():
            out[:, :p, :] *= observed[:, None, :]
        for offset, channel in enumerate(self._mask_channels):
            target = out[:, p + offset, :]
            np.subtract(1.0, observed, out=target)  # the missing indicator
            if channel == "exposure" and self.weighted:
                target *= self._exposure(n, d)

    def _zero_has_statistics(self) -> bool:
        """Whether ``T(0)`` is not 0 (then the statistics of missing entries must be zeroed)."""
        zero = np.zeros((1, 1), dtype=self.model.table_dtype)
        return bool(np.any(self.model.sufficient_statistics(zero)))

    def sparse_statistics(self, data: TableData) -> list:
        """Statistics of a sparse table with its missing entries: ``n_stats`` CSR arrays."""
        stats = self.model.sparse_statistics(data.table)
        if not self.incomplete:
            return stats
        missing = data.missing_indicator(np.float64)
        for channel in self._mask_channels:
            if channel == "exposure" and self.weighted:
                rows = np.repeat(np.arange(missing.shape[0]), np.diff(missing.indptr))
                a = self.model.row_weights(missing.shape[0])
                b = self.model.col_weights(missing.shape[1])
                values = np.ones(missing.nnz)
                if a is not None:
                    values = values * a[rows]
                if b is not None:
                    values = values * b[missing.indices]
                stats.append(
                    sp.csr_array((values, missing.indices, missing.indptr), shape=missing.shape))
            else:
                stats.append(missing)
        return stats

    def _exposure(self, n: int, d: int) -> np.ndarray:
        a = self.model.row_weights(n)
        b = self.model.col_weights(d)
        return np.outer(np.ones(n) if a is None else a, np.ones(d) if b is None else b)

    def log_base_measure(self, data: TableData) -> float:
        """``sum_ij M_ij log h(x_ij, c_ij)``: the label-free term of the observed entries.

        The family's base measure of the table (0 at missing entries) less that of its
        missing zeros (``log h(0, c)`` does not depend on the exposure for the families:
        0, or the Gaussian ``-log(2 pi) / 2``)."""
        value = self.model.log_base_measure(data.table)
        if data.has_missing and data.n_missing:
            zero = np.zeros((1, 1), dtype=self.model.table_dtype)
            value -= data.n_missing * self.model.family.estimation.placeholder().log_base_measure(
                zero)
        return float(value)
