"""The latent block model on one exponential-family interface: the formulas every family shares.

Every family is an exponential family per block: an entry ``x`` of block
``(k, l)`` has log-density

    log p(x | k, l) = eta_kl . T(x) - c_ij A_kl + log h(x, c_ij)

with sufficient statistics ``T``, natural parameters ``eta`` (``n_stats``
values per block), log-partition ``A`` and an *exposure* ``c_ij = a_i b_j``
that is one except for the Poisson model with row and column effects
(Govaert and Nadif's contingency model ``x_ij ~ Poisson(mu_i nu_j gamma_kl)``).
The classifier, the Gibbs sampler and the calibrator only use this interface,
so none of them branches on the family:

    log p(z_i = k | w, x_i) = log pi_k + sum_l [eta_kl . S_il - a_i A_kl B_l] + const

with ``S = T(X) @ onehot(w)`` and ``B_l = sum_{j: w_j = l} b_j``.

**Missing entries** come for free to every family: a table may carry an observed
mask (:class:`~lbm_bench.models.data.TableData`), and the likelihood is then the
observed-data likelihood of :mod:`lbm_bench.models.missing` (the family's terms
over the observed entries; with :attr:`LatentBlockModel.missing_probs`, the
block mechanism, also the mask's Bernoulli terms).

**How a family is split.** A family is one module (:mod:`lbm_bench.models.gaussian`,
``poisson``, ``bernoulli``, ``categorical``) declaring one
:class:`~lbm_bench.models.family.Family`, listed in :mod:`lbm_bench.models.registry`.
The family composes, in the manner of statsmodels' GLM families:

- its **model class**, a subclass of :class:`LatentBlockModel` (this module): the
  formulas and nothing else, a model being a family's parameters (proportions and
  block parameters). It defines the exponential-family interface above
  (:attr:`~LatentBlockModel.natural_parameters`, :attr:`~LatentBlockModel.log_partition`,
  :meth:`~LatentBlockModel.sufficient_statistics`, :meth:`~LatentBlockModel.log_base_measure`),
  its table check, how noise becomes a table, its parameters by name and its entry
  means, and the class attributes that say what its statistics are (``n_stats``,
  ``table_dtype``, ``has_effects``, ``can_be_sparse``, ``code_statistics``). The shared
  formulas (sampling, block totals, likelihoods) are written once here;
- its **facets** (:mod:`lbm_bench.models.family`), one per concern, each asked by the
  part of the package that needs it: the storage codec (``family.storage``: parameter
  datasets, header attributes, what a bad stored value is), the presentation
  (``family.presentation``: colours, words), the design options
  (``family.options``: fields, checks, release id tags, the memory guard's count of
  statistics), the designs (``family.designs``: pattern, effects, the model at a
  scale) and the estimation (``family.estimation``: the M-step, ICL priors and
  marginals, whether a table looks like the family's).

A model knows its family (``model.family``, and ``model.kind`` its name).

Tables are generated from *noise* (standard normals for Gaussian blocks,
uniforms otherwise) through :meth:`LatentBlockModel.table_from_noise`, so that
the same noise can be reused with another scale of the parameters (common
random numbers for calibration).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any, ClassVar

import numpy as np

from lbm_bench._validation import (
    check_block_array,
    check_count,
    check_labels,
    check_proportions,
    check_vector,
)
from lbm_bench.models.data import TableData
from lbm_bench.models.observed import EntryFamily
from lbm_bench.models.sparse_noise import SparseNoise

__all__ = ["PROB_CLIP", "PROB_FLOOR", "LatentBlockModel", "positive_vector"]

#: The probabilities of a design's blocks (Bernoulli, categorical) are kept at least this far
#: from 0 (and 1) when the scale is huge.
PROB_FLOOR = 1e-9
#: Estimated block probabilities are at least this (and at most one minus this).
PROB_CLIP = 1e-6

def positive_vector(name: str, values: Any) -> np.ndarray:
    """A 1-D finite float64 vector of positive values (row or column effects)."""
    array = check_vector(name, values)
    if np.any(array <= 0):
        raise ValueError(f"{name} must be positive, got min {float(array.min())}")
    return array


class LatentBlockModel:
    """Common part of the latent block models: the formulas (not instantiated directly).

    A subclass is the model class of one :class:`~lbm_bench.models.family.Family`
    (module docstring). It defines the exponential-family interface
    (:attr:`natural_parameters`, :attr:`log_partition`, :meth:`sufficient_statistics`,
    :meth:`log_base_measure`), :meth:`check_table`, :meth:`table_from_noise` (and
    :meth:`draw_noise` when its noise is not uniforms), :meth:`block_parameters` and
    :meth:`entry_means`, its exposures when it has effects (:meth:`row_weights`,
    :meth:`col_weights`, :meth:`fixed_shape`), and for sparse tables
    :meth:`sparse_statistics` and :meth:`sparse_level`.

    Attributes
    ----------
    family : Family
        The family of the class's models (bound by :class:`~lbm_bench.models.family.Family`);
        :attr:`kind` is its name.
    n_stats : int
        Number of sufficient statistics per entry (an instance may set its own:
        categorical blocks have ``K - 1``).
    table_dtype : numpy.dtype
        dtype of the tables it draws and :meth:`check_table` returns (and files store).
    has_effects : bool
        Whether its models may carry row and column effects (exposures
        ``row_effects`` and ``col_effects``, stored with the parameters).
    can_be_sparse : bool
        Whether its tables can stay sparse (one statistic, the entry itself, and a base
        measure that vanishes at zero): then its options include
        :data:`~lbm_bench.models.family.DENSITY_OPTION`, and it defines
        :meth:`sparse_statistics` and :meth:`sparse_level`.
    code_statistics : bool
        Whether its statistics are the indicators of an integer code,
        ``T_q(x) = [x = q + 1]`` for ``q < n_stats``: the inference engine then keeps the
        codes and counts them (:mod:`lbm_bench.inference.code_sums`) instead of
        ``n_stats`` float tables.

    Examples
    --------
    >>> from lbm_bench import GaussianLBM, get_family
    >>> model = GaussianLBM([0.5, 0.5], [1.0], means=[[0.0], [2.0]], stds=[[1.0], [1.0]])
    >>> isinstance(model, LatentBlockModel), model.family is get_family("gaussian")
    (True, True)
    """

    family: ClassVar[Any]
    n_stats: ClassVar[int] = 1
    table_dtype: ClassVar[np.dtype] = np.dtype(np.float64)
    has_effects: ClassVar[bool] = False
    can_be_sparse: ClassVar[bool] = False
    code_statistics: ClassVar[bool] = False
    #: Whether :meth:`draw_noise` and :meth:`table_from_noise` give sparse tables
    #: (an instance's choice, for the families that ``can_be_sparse``).
    sparse: bool = False
    #: Missing probabilities ``q_kl`` of the blocks when entries go missing by block (not
    #: at random: the mask's terms enter the likelihood), shape (g, m); None when the
    #: table is complete or its entries go missing at random (ignorable). Set with
    #: :meth:`with_missing_probs`.
    missing_probs: np.ndarray | None = None

    def __init__(self, row_proportions: Any, col_proportions: Any) -> None:
        self.row_proportions = check_proportions("row_proportions", row_proportions)
        self.col_proportions = check_proportions("col_proportions", col_proportions)

    @property
    def kind(self) -> str:
        """The name of the model's family (``"poisson"``)."""
        return self.family.kind

    @property
    def n_levels(self) -> int | None:
        """Number of unordered levels (categories) its entries take, or None when entries
        are quantities. Pictures show each cell's most frequent level, with a legend,
        instead of means; algorithms that treat entries as numbers do not apply."""
        return None

    def sparse_level(self) -> float:  # pragma: no cover - overridden by the sparse families
        """Level of :class:`~lbm_bench.models.sparse_noise.SparseNoise` covering this model."""
        raise NotImplementedError

    # -- missing entries (every family) ----------------------------------------------
    def with_missing_probs(self, probs: Any) -> LatentBlockModel:
        """A copy of this model whose entries go missing by block with probabilities ``probs``
        (g, m), in (0, 1); None for a model whose mask is ignorable.

        Examples
        --------
        >>> from lbm_bench import BernoulliLBM
        >>> model = BernoulliLBM([0.5, 0.5], [0.5, 0.5], [[0.9, 0.1], [0.2, 0.7]])
        >>> model.with_missing_probs([[0.1, 0.5], [0.3, 0.2]]).missing_probs.shape
        (2, 2)
        """
        out = copy.copy(self)
        if probs is not None:
            probs = check_block_array("missing_probs", probs, self.block_shape, lower=0.0,
                                      upper=1.0)
        out.missing_probs = probs
        return out

    def check_data(self, X: Any, observed: Any = None, name: str = "X") -> TableData:
        """The table checked for this family, with its missing entries.

        ``X`` may mark its missing entries in any of the conventions of
        :meth:`~lbm_bench.models.data.TableData.incomplete` (NaN, a masked array, explicit
        NaN of a sparse table) or with ``observed`` (booleans or 0/1 of its shape). Returns
        a :class:`~lbm_bench.models.data.TableData` whose table is :meth:`check_table`'s,
        with 0 at the missing entries.
        """
        data = TableData.incomplete(X, observed, name=name)
        return data.with_table(self.check_table(data.table, name))

    # -- shape ---------------------------------------------------------------
    @property
    def n_row_clusters(self) -> int:
        """Number of row clusters ``g``."""
        return int(self.row_proportions.shape[0])

    @property
    def n_col_clusters(self) -> int:
        """Number of column clusters ``m``."""
        return int(self.col_proportions.shape[0])

    @property
    def block_shape(self) -> tuple[int, int]:
        """``(n_row_clusters, n_col_clusters)``."""
        return (self.n_row_clusters, self.n_col_clusters)

    # -- exposures (overridden by the Poisson model with effects) -------------
    def row_weights(self, n_rows: int) -> np.ndarray | None:
        """Row exposures ``a_i`` of shape (n_rows,), or None when all are one."""
        return None

    def col_weights(self, n_cols: int) -> np.ndarray | None:
        """Column exposures ``b_j`` of shape (n_cols,), or None when all are one."""
        return None

    def fixed_shape(self) -> tuple[int, int] | None:
        """The table shape imposed by per-row/column parameters, if any."""
        return None

    # -- exponential-family interface (defined by subclasses) ------------------
    @property
    def natural_parameters(self) -> np.ndarray:  # pragma: no cover - abstract
        """ndarray of shape (n_stats, g, m): natural parameters per block."""
        raise NotImplementedError

    @property
    def log_partition(self) -> np.ndarray:  # pragma: no cover - abstract
        """ndarray of shape (g, m): log-partition per block (for unit exposure)."""
        raise NotImplementedError

    def sufficient_statistics(self, X: np.ndarray) -> np.ndarray:  # pragma: no cover
        """ndarray of shape (n_stats, n_rows, n_cols) of float64 of a dense table."""
        raise NotImplementedError

    def sparse_statistics(self, X: Any) -> list:
        """The statistics of a sparse table as ``n_stats`` float64 CSR arrays (families
        that ``can_be_sparse``: the entries themselves)."""
        raise TypeError(f"{self.kind} tables cannot be sparse")

    def log_base_measure(self, X: Any) -> float:  # pragma: no cover
        """Sum over entries of ``log h(x_ij, c_ij)`` (the label-free part)."""
        raise NotImplementedError

    def check_table(self, X: Any, name: str = "X") -> Any:  # pragma: no cover
        """Validate a data table for this family and return it as an array (or CSR array)."""
        raise NotImplementedError

    def draw_noise(self, n_rows: int, n_cols: int, *, rng: np.random.Generator) -> np.ndarray:
        """Draw the noise of a table: ndarray of shape (n_rows, n_cols) of float64.

        Uniforms on [0, 1) here (inverted by the counts and binary families), or the
        :class:`~lbm_bench.models.sparse_noise.SparseNoise` of a sparse model; the
        Gaussian family draws standard normals.
        """
        if self.sparse:
            return SparseNoise(n_rows, n_cols, self.row_weights(n_rows), self.col_weights(n_cols),
                               rng=rng)
        return rng.random((n_rows, n_cols))

    def table_from_noise(self, noise: np.ndarray, z: np.ndarray,
                         w: np.ndarray) -> Any:  # pragma: no cover
        """Turn noise into a table given the labels (deterministic)."""
        raise NotImplementedError

    def nonempty_blocks(self, z: np.ndarray, w: np.ndarray) -> Iterator[tuple[int, int, tuple]]:
        """Yield ``(k, l, index)`` for each block with rows and columns under the labels
        ``z`` and ``w``; ``table[index]`` is the block (``np.ix_``), for the families that
        draw a block at a time."""
        col_members = [np.flatnonzero(w == l) for l in range(self.n_col_clusters)]
        for k in range(self.n_row_clusters):
            rows = np.flatnonzero(z == k)
            for l, cols in enumerate(col_members):
                if rows.size and cols.size:
                    yield k, l, np.ix_(rows, cols)

    def block_parameters(self) -> dict[str, np.ndarray]:  # pragma: no cover
        """The family's parameters by name, as stored in files."""
        raise NotImplementedError

    def entry_means(self) -> np.ndarray:  # pragma: no cover - abstract
        """ndarray of shape (g, m): expected entry per block (unit exposure)."""
        raise NotImplementedError

    @property
    def mean_statistics(self) -> np.ndarray:  # pragma: no cover - abstract
        """ndarray of shape (n_stats, g, m): the expected sufficient statistics ``E[T(x)]`` of
        an entry of each block at unit exposure (the gradient of the log-partition in the
        natural parameters)."""
        raise NotImplementedError

    def expected_statistics(self) -> np.ndarray:
        """ndarray of shape (n_stats,): the expected sufficient statistics of an entry of the
        table, ``sum_kl pi_k rho_l E_kl[T(x)]`` (the table's expected level; row and column
        effects of mean one leave it unchanged)."""
        return np.einsum("k,skl,l->s", self.row_proportions, self.mean_statistics,
                         self.col_proportions)

    # -- generic methods --------------------------------------------------------
    def _check_shape_args(self, n_rows: Any, n_cols: Any) -> tuple[int, int]:
        n_rows = check_count("n_rows", n_rows)
        n_cols = check_count("n_cols", n_cols)
        fixed = self.fixed_shape()
        if fixed is not None and (n_rows, n_cols) != fixed:
            raise ValueError(
                f"this model's row/column effects fix the table shape to {fixed[0]}x{fixed[1]},"
                f" got n_rows={n_rows}, n_cols={n_cols}"
            )
        return n_rows, n_cols

    def sample_labels(
        self, n_rows: int, n_cols: int, *, rng: np.random.Generator | int | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Draw row and column labels from the proportions.

        Returns
        -------
        z : ndarray of shape (n_rows,) of int64
        w : ndarray of shape (n_cols,) of int64
        """
        rng = np.random.default_rng(rng)
        n_rows, n_cols = self._check_shape_args(n_rows, n_cols)
        z = rng.choice(self.n_row_clusters, size=n_rows, p=self.row_proportions)
        w = rng.choice(self.n_col_clusters, size=n_cols, p=self.col_proportions)
        return z.astype(np.int64), w.astype(np.int64)

    def sample(
        self, n_rows: int, n_cols: int, *, rng: np.random.Generator | int | None = None
    ) -> tuple[Any, np.ndarray, np.ndarray]:
        """Draw a table and its generating labels.

        Parameters
        ----------
        n_rows, n_cols : int
            Table shape.
        rng : None, int or numpy.random.Generator, optional
            Source of randomness.

        Returns
        -------
        X : ndarray of shape (n_rows, n_cols)
            Of the family's :attr:`table_dtype` (a ``scipy.sparse.csr_array`` for a
            sparse model).
        z : ndarray of shape (n_rows,) of int64
            Row labels in ``[0, n_row_clusters)``.
        w : ndarray of shape (n_cols,) of int64
            Column labels in ``[0, n_col_clusters)``.

        Examples
        --------
        >>> from lbm_bench import GaussianLBM
        >>> model = GaussianLBM([0.5, 0.5], [0.5, 0.5], [[0, 1], [1, 0.2]], [[1, 1], [1, 1]])
        >>> X, z, w = model.sample(4, 3, rng=0)
        >>> X.shape, z.shape, w.shape
        ((4, 3), (4,), (3,))
        """
        rng = np.random.default_rng(rng)
        z, w = self.sample_labels(n_rows, n_cols, rng=rng)
        noise = self.draw_noise(len(z), len(w), rng=rng)
        return self.table_from_noise(noise, z, w), z, w

    def _check_labels_for(self, X: Any, z: Any, w: Any) -> tuple[np.ndarray, np.ndarray]:
        z = check_labels("z", z, length=X.shape[0], n_clusters=self.n_row_clusters)
        w = check_labels("w", w, length=X.shape[1], n_clusters=self.n_col_clusters)
        return z, w

    def statistics(self, X: Any) -> list:
        """The sufficient statistics of a checked table: ``n_stats`` float64 tables,
        dense arrays of shape (n_rows, n_cols) or CSR arrays for a sparse table."""
        data = TableData.of(X)
        return self.sparse_statistics(data.table) if data.is_sparse else list(
            self.sufficient_statistics(data.table))

    def block_totals(self, X: Any, z: Any, w: Any,
                     observed: Any = None) -> tuple[np.ndarray, np.ndarray]:
        """Sufficient statistics and exposures summed per block, over the observed entries.

        Parameters
        ----------
        X : array-like of shape (n_rows, n_cols)
            The table; missing entries as in :meth:`check_data`.
        z, w : array-like of shape (n_rows,), (n_cols,)
        observed : array-like of shape (n_rows, n_cols), optional
            The observed mask (1: observed).

        Returns
        -------
        totals : ndarray of shape (n_stats, g, m)
            ``sum_{i in k, j in l} M_ij T(x_ij)``.
        exposure : ndarray of shape (g, m)
            ``sum_{i in k, j in l} M_ij a_i b_j`` (the numbers of observed entries
            without effects).
        """
        data = self.check_data(X, observed)
        totals, exposure, _ = self._observed_totals(data, z, w)
        return totals[: self.n_stats], exposure

    def _observed_totals(self, data: TableData, z: Any,
                         w: Any) -> tuple[np.ndarray, np.ndarray, tuple]:
        """Block sums of the observed-data family's channels
        (:class:`~lbm_bench.models.observed.EntryFamily`),
        the observed exposures, and the family, class masses and class counts."""
        z, w = self._check_labels_for(data.table, z, w)
        family = EntryFamily(self, data.has_missing)
        Z = np.eye(self.n_row_clusters)[z]
        W = np.eye(self.n_col_clusters)[w]
        if data.is_sparse:
            stats = family.sparse_statistics(data)
        else:
            stats = list(family.dense_statistics(data.table, getattr(data, "observed", None)))
        totals = np.stack([Z.T @ np.asarray(statistic @ W) for statistic in stats])
        n, d = data.shape
        a, b = self.row_weights(n), self.col_weights(d)
        row_mass = Z.sum(0) if a is None else a @ Z
        col_mass = W.sum(0) if b is None else b @ W
        mass = np.outer(row_mass, col_mass)
        # the first mask channel holds the missing entries' exposures
        exposure = mass - totals[self.n_stats] if family.incomplete else mass
        counts = np.outer(Z.sum(0), W.sum(0))
        return totals, exposure, (family, mass, counts)

    def log_likelihood(self, X: Any, z: Any, w: Any, observed: Any = None) -> float:
        """Log-likelihood of what is seen given the labels, ``log p(X_obs, M | z, w)`` (the
        observed-data likelihood of :mod:`lbm_bench.models.missing`; ``log p(X | z, w)`` for a
        complete table). For the random mechanism the mask's own probability, the same for
        every labelling, is left out."""
        data = self.check_data(X, observed)
        return self._log_likelihood(data, z, w)

    def _log_likelihood(self, data: TableData, z: Any, w: Any) -> float:
        totals, _, (family, mass, counts) = self._observed_totals(data, z, w)
        value = np.sum(family.natural_parameters * totals) - np.sum(family.log_partition * mass)
        if family.count_partition is not None:
            value -= np.sum(family.count_partition * counts)
        return float(value + family.log_base_measure(data))

    def complete_log_likelihood(self, X: Any, z: Any, w: Any, observed: Any = None) -> float:
        """Complete-data log-likelihood ``log p(X, z, w)`` (of the observed entries and the
        mask for a table with missing entries, see :meth:`log_likelihood`).

        Examples
        --------
        >>> from lbm_bench import BernoulliLBM
        >>> model = BernoulliLBM([0.5, 0.5], [0.5, 0.5], [[0.9, 0.1], [0.2, 0.7]])
        >>> X = [[1, 0], [0, 1]]
        >>> round(model.complete_log_likelihood(X, [0, 1], [0, 1]), 4)
        -3.5631
        """
        data = self.check_data(X, observed)
        z, w = self._check_labels_for(data.table, z, w)
        prior = np.log(self.row_proportions)[z].sum() + np.log(self.col_proportions)[w].sum()
        return float(prior + self._log_likelihood(data, z, w))

    def __repr__(self) -> str:
        g, m = self.block_shape
        return f"{type(self).__name__}(kind={self.kind!r}, clusters={g}x{m})"
