"""Model-selection criteria of the latent block model: the ICL of a labelling, from its block sums.

The integrated complete likelihood of a labelling ``(z, w)`` with ``g`` row and ``m``
column clusters is ``log p(X, z, w | g, m)``, the parameters integrated out under a
prior. Two forms are offered:

``"exact-icl"``
    The closed form under conjugate priors (Biernacki, Celeux and Govaert's exact ICL,
    as blockcluster and bikm1 code it for binary, categorical and count blocks):
    Dirichlet(1/2, ..., 1/2) on the row and on the column proportions,

        log p(z) = log Gamma(g/2) - g log Gamma(1/2) + sum_k log Gamma(n_k + 1/2) - log Gamma(n +
        g/2),

    and the same for ``w``, plus each block's integrated likelihood under the family's
    conjugate prior (declared by the family's estimation facet: ``conjugate_prior`` and
    ``log_marginal_blocks``), plus the label-free base measure of the entries.
``"bic-icl"``
    The BIC-type approximation (Biernacki et al., 2000; sparsebm's ``get_ICL``): the
    complete log-likelihood at the maximum-likelihood parameters given the labels, minus
    ``(g - 1)/2 log n + (m - 1)/2 log d + g m nu/2 log(n d)`` with ``nu`` the free
    parameters of a block (``n_stats``: 1 for Bernoulli and Poisson blocks, 2 for
    Gaussian, ``K - 1`` for categorical).

``"icl"`` is the family's choice (``default_icl``: the exact form where it recovers the
numbers of clusters at least as well, see docs/benchmark.md). Every form depends on
the labels only through the cluster sizes and the block sums of the sufficient
statistics, so it costs one pass over the table (none for a merge of two clusters:
the block sums add up), sparse tables included.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special

from lbm_bench._validation import check_choice
from lbm_bench.algorithms.em_problem import MIN_MASS, EMProblem, row_totals
from lbm_bench.algorithms.kmeans import onehot
from lbm_bench.models.family import Family

__all__ = [
    "ICL_CRITERIA", "MOVE_CHUNK", "PROPORTION_PRIOR", "Criterion", "LabelSums",
    "log_dirichlet_labels", "resolve_criterion"
]

#: The criteria :func:`~lbm_bench.algorithms.select_lbm` accepts.
ICL_CRITERIA = ("icl", "exact-icl", "bic-icl")
#: Every parameter of the Dirichlet prior of the row and of the column proportions (exact ICL).
PROPORTION_PRIOR = 0.5
#: Blocks whose terms :meth:`Criterion.move_gains` computes at once (items x clusters x the
#: other side's clusters): the memory of a move's gains stays bounded on a tall table.
MOVE_CHUNK = 1 << 18


def resolve_criterion(family: Family, criterion: str) -> str:
    """The form of ``criterion`` for a family: ``"icl"`` becomes its estimation facet's
    ``default_icl``; ``"exact-icl"`` needs a closed form (``icl_prior``)."""
    check_choice("criterion", criterion, ICL_CRITERIA)
    form = family.estimation.default_icl if criterion == "icl" else criterion
    if form == "exact-icl" and not family.estimation.icl_prior:
        raise ValueError(f"criterion 'exact-icl': {family.kind} blocks have no closed-form ICL; "
                         "use 'bic-icl'")
    return form


def log_dirichlet_labels(counts: np.ndarray, concentration: float = PROPORTION_PRIOR) -> float:
    """``log p(labels)`` of a labelling with cluster sizes ``counts`` (k,), the proportions
    integrated out under Dirichlet(``concentration``, ...)."""
    counts = np.asarray(counts, dtype=np.float64)
    k = counts.size
    return float(
        special.gammaln(k * concentration) - k * special.gammaln(concentration) +
        special.gammaln(counts + concentration).sum() -
        special.gammaln(counts.sum() + k * concentration))


@dataclass(frozen=True)
class LabelSums:
    """What every criterion reads of a labelling: the block sums of the sufficient statistics
    ``totals`` (n_stats, g, m) and the cluster sizes ``row_counts`` (g,) and ``col_counts`` (m,)."""

    totals: np.ndarray
    row_counts: np.ndarray
    col_counts: np.ndarray


class Criterion:
    """The criterion of labellings of one prepared table (:class:`EMProblem`).

    Parameters
    ----------
    problem : EMProblem
        The table (a Gaussian table centred: the criterion is shift-invariant, its prior
        being centred on the table's mean).
    criterion : {"icl", "exact-icl", "bic-icl"}

    Examples
    --------
    >>> from lbm_bench import random_model
    >>> model = random_model("bernoulli", 2, 2, scale=3.0, rng=0)
    >>> X, z, w = model.sample(40, 30, rng=1)
    >>> icl = Criterion(EMProblem(X, model.family), "icl")
    >>> icl.form, bool(icl(z, w) > icl(z * 0, w * 0))
    ('exact-icl', True)
    """

    def __init__(self, problem: EMProblem, criterion: str = "icl") -> None:
        self.problem = problem
        self.family = problem.family
        self.estimation = self.family.estimation
        self.form = resolve_criterion(self.family, criterion)
        n, d = problem.X.shape
        self.shape = (int(n), int(d))
        whole = problem.block_totals(np.ones((n, 1)), np.ones((d, 1)))[:, 0, 0]
        # statistics per entry; with missing entries the observed counts follow
        self.n_stats = problem.p
        seen = float(whole[self.n_stats]) if problem.masked else float(n) * d
        self.prior = self.estimation.conjugate_prior(whole[:self.n_stats],
                                                     seen) if self.form == "exact-icl" else None
        self.n_free = self.n_stats  # free parameters of a block (BIC-type form)

    def sums(self, rows: np.ndarray, cols: np.ndarray) -> LabelSums:
        """Block sums of a labelling whose clusters are ``0 .. g-1`` and ``0 .. m-1``, all used."""
        g, m = int(rows.max()) + 1, int(cols.max()) + 1
        Z, W = onehot(rows, g), onehot(cols, m)
        return LabelSums(row_totals(Z, self.problem.row_sums(W)), Z.sum(0), W.sum(0))

    def __call__(self, rows: np.ndarray, cols: np.ndarray) -> float:
        """The criterion of ``(rows, cols)`` (labels ``0 .. g-1`` and ``0 .. m-1``, all used)."""
        return self.of_sums(self.sums(rows, cols))

    def of_sums(self, sums: LabelSums) -> float:
        """The criterion from block sums (see :meth:`sums`)."""
        totals, exposure = self._blocks(sums)
        if self.form == "exact-icl":
            blocks = self.estimation.log_marginal_blocks(totals, exposure, self.prior)
            value = log_dirichlet_labels(sums.row_counts) + log_dirichlet_labels(
                sums.col_counts) + blocks.sum()
        else:
            value = self._complete_log_likelihood(sums, totals,
                                                  exposure) - self._penalty(*exposure.shape)
        return float(value + self.problem.base_measure)

    def _blocks(self, sums: LabelSums) -> tuple[np.ndarray, np.ndarray]:
        """The block sums of the statistics (n_stats, g, m) and the block sizes (g, m): the
        blocks' observed counts when the table has missing entries (the problem's last channel)."""
        if self.problem.masked:
            return sums.totals[: self.n_stats], sums.totals[self.n_stats]
        return sums.totals, np.outer(sums.row_counts, sums.col_counts)

    def _complete_log_likelihood(self, sums: LabelSums, totals: np.ndarray,
                                 exposure: np.ndarray) -> float:
        """``max_theta log p(X, z, w; theta)`` less the base measure: the M-step's estimates."""
        n, d = self.shape
        params = self.estimation.estimate_blocks(totals, np.maximum(exposure, MIN_MASS),
                                                 self.problem.var_floor)
        model = self.family.model(sums.row_counts / n, sums.col_counts / d, **params)
        value = np.sum(model.natural_parameters * totals) - np.sum(model.log_partition * exposure)
        labels = sums.row_counts @ np.log(sums.row_counts / n) + sums.col_counts @ np.log(
            sums.col_counts / d)
        return float(value + labels)

    def _penalty(self, g: int, m: int) -> float:
        n, d = self.shape
        return (g - 1) / 2 * math.log(n) + (
            m - 1) / 2 * math.log(d) + g * m * self.n_free / 2 * math.log(n * d)

    def move_gains(
        self,
        items: np.ndarray,
        labels: np.ndarray,
        k: int,
        other_counts: np.ndarray,
        only: int | None = None,
        totals: np.ndarray | None = None,
    ) -> np.ndarray:
        """The exact ICL's change when one item of a side moves to another of its clusters.

        Parameters
        ----------
        items : ndarray of shape (p, n_items, h)
            The items' sums of the statistics over the other side's ``h`` clusters
            (:meth:`EMProblem.row_sums` of the column assignments for the rows,
            :meth:`EMProblem.col_sums` of the row assignments for the columns; with
            missing entries, the observed counts last).
        labels : ndarray of shape (n_items,) of int
            The side's labels ``0 .. k - 1``, every cluster used.
        k : int
            The side's number of clusters.
        other_counts : ndarray of shape (h,)
            The other side's cluster sizes.
        only : int, optional
            One item: its gains alone.
        totals : ndarray of shape (p, k, h), optional
            The block sums of ``items`` by ``labels`` (``Z^T items``), when the caller
            keeps them up to date; computed when None.

        Returns
        -------
        ndarray of shape (n_items, k), or (k,) with ``only``
            The criterion after the move minus before: 0 at the item's own cluster,
            ``-inf`` where the move would empty its cluster. Each block's term is the
            family's (``log_marginal_blocks``), computed for every item and cluster at once.
        """
        if self.form != "exact-icl":
            raise ValueError(f"move gains are computed for the exact ICL, not {self.form!r}")
        p = self.n_stats
        counts = np.bincount(labels, minlength=k).astype(np.float64)
        if totals is None:
            totals = row_totals(onehot(labels, k), items)  # (P, k, h)
        if self.problem.masked:
            stats, exposure = items[:p], items[p]
            block_stats, block_exposure = totals[:p], totals[p]
        else:
            stats, exposure = items, np.broadcast_to(other_counts, items.shape[1:])
            block_stats, block_exposure = totals, np.outer(counts, other_counts)
        chosen = np.arange(labels.size) if only is None else np.array([only])
        stats, exposure, own = stats[:, chosen], exposure[chosen], labels[chosen]

        def terms(block_totals: np.ndarray, block_sizes: np.ndarray) -> np.ndarray:
            return self.estimation.log_marginal_blocks(block_totals, block_sizes,
                                                       self.prior).sum(axis=-1)

        now = terms(block_stats, block_exposure)  # (k,)
        step = max(1, MOVE_CHUNK // block_exposure.size)  # items at a time: (p, step, k, h) values
        joined = np.concatenate([terms(block_stats[:, None] + stats[:, i:i + step, None],
                                       block_exposure[None] + exposure[i:i + step, None])
                                 for i in range(0, own.size, step)])  # (., k)
        left = terms(block_stats[:, own] - stats, block_exposure[own] - exposure)  # (.,)
        sizes = special.gammaln(counts + PROPORTION_PRIOR)
        gains = (joined - now + (left - now[own])[:, None]
                 + special.gammaln(counts + 1 + PROPORTION_PRIOR) - sizes
                 + (special.gammaln(counts[own] - 1 + PROPORTION_PRIOR) - sizes[own])[:, None])
        gains[np.arange(own.size), own] = 0.0
        gains[counts[own] <= 1] = -np.inf
        gains[counts[own] <= 1, own[counts[own] <= 1]] = 0.0
        return gains[0] if only is not None else gains

    def merged(self, sums: LabelSums, side: int, a: int, b: int) -> LabelSums:
        """The block sums after merging clusters ``a < b`` of the rows (``side`` 0) or the
        columns (1): cluster ``b`` joins ``a``, the clusters after ``b`` move down by one."""
        totals = sums.totals.copy()
        counts = (sums.row_counts if side == 0 else sums.col_counts).copy()
        axis = 1 + side
        index = [slice(None)] * 3
        index[axis] = a
        other = [slice(None)] * 3
        other[axis] = b
        totals[tuple(index)] += totals[tuple(other)]
        counts[a] += counts[b]
        totals, counts = np.delete(totals, b, axis=axis), np.delete(counts, b)
        if side == 0:
            return LabelSums(totals, counts, sums.col_counts)
        return LabelSums(totals, sums.row_counts, counts)
