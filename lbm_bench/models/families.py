"""Latent block models for tables of reals, counts and binaries.

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

Tables are generated from *noise* (standard normals for Gaussian blocks,
uniforms otherwise) through :meth:`LatentBlockModel.table_from_noise`, so that
the same noise can be reused with another scale of the parameters (common
random numbers for calibration).

**Sparse tables.** Bernoulli and Poisson models built with ``sparse=True``
draw :class:`~lbm_bench.models.sparse_noise.SparseNoise` (only the uniforms
that can give a non-zero entry) and turn it into a ``scipy.sparse.csr_array``;
every method that takes a table accepts a scipy.sparse table for these
families. The log-likelihood needs nothing special for the zeros: in the
exponential-family form a zero contributes ``-c_ij A_kl`` (``log(1 - p)`` for
binaries, ``-rate`` for counts), which the ``exposure`` term already counts.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
from scipy import sparse as sp
from scipy import special, stats

from lbm_bench._docstrings import fill_doc
from lbm_bench._validation import (
    check_block_array,
    check_count,
    check_labels,
    check_proportions,
    check_vector,
)
from lbm_bench.models.sparse_noise import SparseNoise, poisson_from_survival

__all__ = [
    "LatentBlockModel",
    "GaussianLBM",
    "PoissonLBM",
    "BernoulliLBM",
    "find_symmetry",
    "model_from_parameters",
    "is_sparse_table",
]


def is_sparse_table(X: Any) -> bool:
    """Whether ``X`` is a scipy.sparse matrix or array."""
    return sp.issparse(X)



class LatentBlockModel:
    """Common part of the latent block models (not instantiated directly).

    Subclasses define :attr:`kind`, :attr:`n_stats`, :attr:`natural_parameters`,
    :attr:`log_partition`, :meth:`sufficient_statistics`,
    :meth:`log_base_measure`, :meth:`check_table`, :meth:`draw_noise`,
    :meth:`table_from_noise` and :meth:`block_parameters`.
    """

    kind: str = ""
    n_stats: int = 1
    table_dtype: type = np.float64
    #: Whether :meth:`draw_noise` and :meth:`table_from_noise` give sparse tables.
    sparse: bool = False

    def __init__(self, row_proportions: Any, col_proportions: Any) -> None:
        self.row_proportions = check_proportions("row_proportions", row_proportions)
        self.col_proportions = check_proportions("col_proportions", col_proportions)

    def sparse_level(self) -> float:  # pragma: no cover - overridden by the sparse families
        """Level of :class:`~lbm_bench.models.sparse_noise.SparseNoise` covering this model."""
        raise NotImplementedError

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
        """ndarray of shape (n_stats, n_rows, n_cols) of float64 (dense, also for a
        sparse table: for small tables only; the engine never calls it on sparse ones)."""
        raise NotImplementedError

    def log_base_measure(self, X: np.ndarray) -> float:  # pragma: no cover
        """Sum over entries of ``log h(x_ij, c_ij)`` (the label-free part)."""
        raise NotImplementedError

    def check_table(self, X: Any, name: str = "X") -> np.ndarray:  # pragma: no cover
        """Validate a data table for this family and return it as an array."""
        raise NotImplementedError

    def draw_noise(self, n_rows: int, n_cols: int, *, rng: np.random.Generator) -> np.ndarray:
        """Draw the noise of a table: ndarray of shape (n_rows, n_cols) of float64.

        Uniforms on [0, 1) here (inverted by the counts and binary families), or the
        :class:`~lbm_bench.models.sparse_noise.SparseNoise` of a sparse model; the
        Gaussian family draws standard normals.
        """
        if self.sparse:
            return SparseNoise(n_rows, n_cols, self.row_weights(n_rows), self.col_weights(n_cols), rng=rng)
        return rng.random((n_rows, n_cols))

    def table_from_noise(
        self, noise: np.ndarray, z: np.ndarray, w: np.ndarray
    ) -> np.ndarray:  # pragma: no cover
        """Turn noise into a table given the labels (deterministic)."""
        raise NotImplementedError

    def block_parameters(self) -> dict[str, np.ndarray]:  # pragma: no cover
        """The family's parameters by name, as stored in files."""
        raise NotImplementedError

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
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
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
            float64 for Gaussian blocks, int64 counts for Poisson, uint8 for Bernoulli.
        z : ndarray of shape (n_rows,) of int64
            Row labels in ``[0, n_row_clusters)``.
        w : ndarray of shape (n_cols,) of int64
            Column labels in ``[0, n_col_clusters)``.

        Examples
        --------
        >>> model = GaussianLBM([0.5, 0.5], [0.5, 0.5], [[0, 1], [1, 0.2]], [[1, 1], [1, 1]])
        >>> X, z, w = model.sample(4, 3, rng=0)
        >>> X.shape, z.shape, w.shape
        ((4, 3), (4,), (3,))
        """
        rng = np.random.default_rng(rng)
        z, w = self.sample_labels(n_rows, n_cols, rng=rng)
        noise = self.draw_noise(len(z), len(w), rng=rng)
        return self.table_from_noise(noise, z, w), z, w

    def _check_labels_for(self, X: np.ndarray, z: Any, w: Any) -> tuple[np.ndarray, np.ndarray]:
        z = check_labels("z", z, length=X.shape[0], n_clusters=self.n_row_clusters)
        w = check_labels("w", w, length=X.shape[1], n_clusters=self.n_col_clusters)
        return z, w

    def block_totals(self, X: Any, z: Any, w: Any) -> tuple[np.ndarray, np.ndarray]:
        """Sufficient statistics and exposures summed per block.

        Returns
        -------
        totals : ndarray of shape (n_stats, g, m)
            ``sum_{i in k, j in l} T(x_ij)``.
        exposure : ndarray of shape (g, m)
            ``sum_{i in k, j in l} a_i b_j`` (the block sizes without effects).
        """
        X = self.check_table(X)
        z, w = self._check_labels_for(X, z, w)
        Z = np.eye(self.n_row_clusters)[z]
        W = np.eye(self.n_col_clusters)[w]
        if is_sparse_table(X):  # one statistic, the entry itself
            totals = (Z.T @ (X.astype(np.float64) @ W))[None]
        else:
            T = self.sufficient_statistics(X)
            totals = np.einsum("ik,pij,jl->pkl", Z, T, W, optimize=True)
        a = self.row_weights(X.shape[0])
        b = self.col_weights(X.shape[1])
        row_mass = Z.sum(0) if a is None else a @ Z
        col_mass = W.sum(0) if b is None else b @ W
        return totals, np.outer(row_mass, col_mass)

    def log_likelihood(self, X: Any, z: Any, w: Any) -> float:
        """Conditional log-likelihood ``log p(X | z, w)``."""
        X = self.check_table(X)
        totals, exposure = self.block_totals(X, z, w)
        value = np.sum(self.natural_parameters * totals) - np.sum(self.log_partition * exposure)
        return float(value + self.log_base_measure(X))

    def complete_log_likelihood(self, X: Any, z: Any, w: Any) -> float:
        """Complete-data log-likelihood ``log p(X, z, w)``.

        Examples
        --------
        >>> model = BernoulliLBM([0.5, 0.5], [0.5, 0.5], [[0.9, 0.1], [0.2, 0.7]])
        >>> X = [[1, 0], [0, 1]]
        >>> round(model.complete_log_likelihood(X, [0, 1], [0, 1]), 4)
        -3.5631
        """
        X = self.check_table(X)
        z, w = self._check_labels_for(X, z, w)
        prior = np.log(self.row_proportions)[z].sum() + np.log(self.col_proportions)[w].sum()
        return float(prior + self.log_likelihood(X, z, w))

    def entry_means(self) -> np.ndarray:  # pragma: no cover - abstract
        """ndarray of shape (g, m): expected entry per block (unit exposure)."""
        raise NotImplementedError

    def __repr__(self) -> str:
        g, m = self.block_shape
        return f"{type(self).__name__}(kind={self.kind!r}, clusters={g}x{m})"


def _real_table(X: Any, name: str) -> np.ndarray:
    try:
        array = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be a 2-D array of numbers") from exc
    if array.ndim != 2 or array.size == 0:
        raise ValueError(f"{name} must be a non-empty 2-D array, got shape {array.shape}")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} must be finite")
    return array


def _integer_table(X: Any, name: str) -> np.ndarray:
    array = np.asarray(X)
    if array.dtype.kind == "b":
        array = array.astype(np.int64)
    if array.dtype.kind == "f":
        real = _real_table(array, name)
        if np.any(real != np.round(real)):
            raise ValueError(f"{name} must hold integers, got non-integer values")
        array = real.astype(np.int64)
    if array.dtype.kind not in "iu":
        raise TypeError(f"{name} must hold integers, got dtype {array.dtype}")
    if array.ndim != 2 or array.size == 0:
        raise ValueError(f"{name} must be a non-empty 2-D array, got shape {array.shape}")
    if array.min() < 0:
        raise ValueError(f"{name} must be non-negative, got min {int(array.min())}")
    return array


def _sparse_integer_table(X: Any, name: str, dtype: type, max_value: int | None = None) -> sp.csr_array:
    """A scipy.sparse table as a canonical ``csr_array`` of non-negative integers of ``dtype``,
    at most ``max_value`` (no copy when it already is one)."""
    if X.ndim != 2 or X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"{name} must be a non-empty 2-D table, got shape {X.shape}")
    table = X if isinstance(X, sp.csr_array) else sp.csr_array(X)
    if not table.has_canonical_format:
        table = table.copy()
        table.sum_duplicates()
    data = table.data
    if data.dtype.kind == "b":
        data = data.astype(np.int64)
    if data.dtype.kind == "f":
        if not np.all(np.isfinite(data)) or np.any(data != np.round(data)):
            raise ValueError(f"{name} must hold finite integers, got non-integer values")
    elif data.dtype.kind not in "iu":
        raise TypeError(f"{name} must hold integers, got dtype {data.dtype}")
    if data.size and data.min() < 0:
        raise ValueError(f"{name} must be non-negative, got min {data.min()}")
    if max_value is not None and data.size and data.max() > max_value:
        raise ValueError(f"{name} must hold 0/1 values, got max {int(data.max())}")
    if table.data.dtype != dtype or not np.all(data):
        table = sp.csr_array(
            (data.astype(dtype), table.indices.copy(), table.indptr.copy()), shape=table.shape
        )
        table.eliminate_zeros()
    return table


def _dense_statistic(X: Any) -> np.ndarray:
    """The entries as a (1, n_rows, n_cols) float64 statistic (a sparse table is densified)."""
    if is_sparse_table(X):
        return X.toarray().astype(np.float64)[None]
    return np.asarray(X, dtype=np.float64)[None]


def _sparse_table_from_entries(
    positions: np.ndarray, values: np.ndarray, shape: tuple[int, int], dtype: type
) -> sp.csr_array:
    """CSR table from increasing linear indices ``i * n_cols + j`` and their non-zero values."""
    n_rows, n_cols = shape
    rows, cols = np.divmod(positions, n_cols)
    indptr = np.zeros(n_rows + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n_rows), out=indptr[1:])
    index_dtype = np.int32 if max(n_cols, positions.size) < 2**31 else np.int64
    table = sp.csr_array(
        (values.astype(dtype), cols.astype(index_dtype), indptr.astype(index_dtype)), shape=shape
    )
    table.has_canonical_format = True  # sorted, unique
    return table


def _sparse_entries(
    model: LatentBlockModel, noise: Any
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The candidate entries of a sparse model's noise: linear positions, uniforms, rows, columns."""
    if not isinstance(noise, SparseNoise):
        raise TypeError(f"a sparse model needs SparseNoise (from draw_noise), got {type(noise).__name__}")
    positions, uniforms = noise.entries(model.sparse_level())
    rows, cols = np.divmod(positions, noise.shape[1])
    return positions, uniforms, rows, cols


@fill_doc
class GaussianLBM(LatentBlockModel):
    """Latent block model with Gaussian blocks ``x_ij ~ N(means_kl, stds_kl^2)``.

    {{proportions}}
    means : array-like of shape (g, m)
        Block means.
    stds : array-like of shape (g, m)
        Block standard deviations, positive.
    """

    kind = "gaussian"
    n_stats = 2
    table_dtype = np.float64

    def __init__(self, row_proportions: Any, col_proportions: Any, means: Any, stds: Any) -> None:
        super().__init__(row_proportions, col_proportions)
        self.means = check_block_array("means", means, self.block_shape)
        self.stds = check_block_array("stds", stds, self.block_shape, lower=0.0)

    @property
    def natural_parameters(self) -> np.ndarray:
        precision = 1.0 / self.stds**2
        return np.stack([self.means * precision, -0.5 * precision])

    @property
    def log_partition(self) -> np.ndarray:
        return 0.5 * self.means**2 / self.stds**2 + np.log(self.stds)

    def sufficient_statistics(self, X: np.ndarray) -> np.ndarray:
        X = np.asarray(X, dtype=np.float64)
        return np.stack([X, X * X])

    def log_base_measure(self, X: np.ndarray) -> float:
        return -0.5 * math.log(2 * math.pi) * X.size

    def check_table(self, X: Any, name: str = "X") -> np.ndarray:
        if is_sparse_table(X):
            raise TypeError(
                f"{name} is a scipy.sparse table: sparse tables are supported for the bernoulli and"
                " poisson kinds only (densify it with X.toarray() for a gaussian model)"
            )
        return _real_table(X, name)

    def draw_noise(self, n_rows: int, n_cols: int, *, rng: np.random.Generator) -> np.ndarray:
        return rng.standard_normal((n_rows, n_cols))

    def table_from_noise(self, noise: np.ndarray, z: np.ndarray, w: np.ndarray) -> np.ndarray:
        return self.means[np.ix_(z, w)] + self.stds[np.ix_(z, w)] * noise

    def block_parameters(self) -> dict[str, np.ndarray]:
        return {"means": self.means, "stds": self.stds}

    def entry_means(self) -> np.ndarray:
        return self.means.copy()


@fill_doc
class PoissonLBM(LatentBlockModel):
    """Latent block model for counts, ``x_ij ~ Poisson(mu_i nu_j rates_kl)``.

    {{proportions}}
    rates : array-like of shape (g, m)
        Block rates ``gamma_kl`` (positive).
    row_effects : array-like of shape (n_rows,), optional
        Row effects ``mu_i`` (positive). With effects, the model is Govaert and
        Nadif's contingency-table model and fixes the table shape.
    col_effects : array-like of shape (n_cols,), optional
        Column effects ``nu_j`` (positive); given together with ``row_effects``.
    """

    kind = "poisson"
    n_stats = 1
    table_dtype = np.int64

    def __init__(
        self,
        row_proportions: Any,
        col_proportions: Any,
        rates: Any,
        row_effects: Any = None,
        col_effects: Any = None,
        *,
        sparse: bool = False,
    ) -> None:
        super().__init__(row_proportions, col_proportions)
        self.sparse = bool(sparse)
        self.rates = check_block_array("rates", rates, self.block_shape, lower=0.0)
        if (row_effects is None) != (col_effects is None):
            raise ValueError("row_effects and col_effects must be given together (or neither)")
        self.row_effects = None if row_effects is None else _positive_vector("row_effects", row_effects)
        self.col_effects = None if col_effects is None else _positive_vector("col_effects", col_effects)

    def fixed_shape(self) -> tuple[int, int] | None:
        if self.row_effects is None:
            return None
        return (self.row_effects.shape[0], self.col_effects.shape[0])

    def row_weights(self, n_rows: int) -> np.ndarray | None:
        return self.row_effects

    def col_weights(self, n_cols: int) -> np.ndarray | None:
        return self.col_effects

    @property
    def natural_parameters(self) -> np.ndarray:
        return np.log(self.rates)[None]

    @property
    def log_partition(self) -> np.ndarray:
        return self.rates.copy()

    def sufficient_statistics(self, X: np.ndarray) -> np.ndarray:
        return _dense_statistic(X)

    def log_base_measure(self, X: np.ndarray) -> float:
        if is_sparse_table(X):  # log h(0) = 0: the non-zeros only
            value = -special.gammaln(X.data.astype(np.float64) + 1.0).sum()
        else:
            X = np.asarray(X, dtype=np.float64)
            value = -special.gammaln(X + 1.0).sum()
        if self.row_effects is not None:
            row_totals = np.asarray(X.sum(axis=1), dtype=np.float64)
            col_totals = np.asarray(X.sum(axis=0), dtype=np.float64)
            value += (row_totals @ np.log(self.row_effects)) + (col_totals @ np.log(self.col_effects))
        return float(value)

    def sparse_level(self) -> float:
        return float(self.rates.max())

    def check_table(self, X: Any, name: str = "X") -> np.ndarray:
        if is_sparse_table(X):
            array = _sparse_integer_table(X, name, np.int64)
        else:
            array = _integer_table(X, name)
        fixed = self.fixed_shape()
        if fixed is not None and array.shape != fixed:
            raise ValueError(f"{name} must have shape {fixed} (the effects' lengths), got {array.shape}")
        return array

    def table_from_noise(self, noise: np.ndarray, z: np.ndarray, w: np.ndarray) -> np.ndarray:
        if self.sparse:
            positions, uniforms, rows, cols = _sparse_entries(self, noise)
            rates = self.rates[z[rows], w[cols]]
            if self.row_effects is not None:
                rates = rates * self.row_effects[rows] * self.col_effects[cols]
            counts = poisson_from_survival(uniforms, rates)
            keep = counts > 0
            return _sparse_table_from_entries(positions[keep], counts[keep], noise.shape, np.int64)
        if self.row_effects is not None:
            mean = np.outer(self.row_effects, self.col_effects) * self.rates[np.ix_(z, w)]
            return stats.poisson.ppf(noise, mean).astype(np.int64)
        key = self.rates.tobytes()  # tabulate once per model (calibration draws many tables)
        if getattr(self, "_cdf_key", None) != key:
            self._cdf_tables = [[_poisson_cdf_table(rate) for rate in row] for row in self.rates]
            self._cdf_key = key
        table = np.empty(noise.shape, dtype=np.int64)
        for k in range(self.n_row_clusters):
            rows = np.flatnonzero(z == k)
            for l in range(self.n_col_clusters):
                cols = np.flatnonzero(w == l)
                if rows.size and cols.size:
                    block = np.ix_(rows, cols)
                    table[block] = _poisson_inverse_cdf(noise[block], self.rates[k, l], self._cdf_tables[k][l])
        return table

    def block_parameters(self) -> dict[str, np.ndarray]:
        params = {"rates": self.rates}  # (sparse is a storage choice, not a parameter)
        if self.row_effects is not None:
            params["row_effects"] = self.row_effects
            params["col_effects"] = self.col_effects
        return params

    def entry_means(self) -> np.ndarray:
        return self.rates.copy()


def _positive_vector(name: str, values: Any) -> np.ndarray:
    array = check_vector(name, values)
    if np.any(array <= 0):
        raise ValueError(f"{name} must be positive, got min {array.min()!r}")
    return array


def _poisson_cdf_table(rate: float) -> np.ndarray:
    """CDF of Poisson(rate) at 0, 1, ..., far enough into the tail (mass beyond < 1e-30)."""
    upper = int(rate + 12 * math.sqrt(rate) + 40)
    return stats.poisson.cdf(np.arange(upper + 1), rate)


def _poisson_inverse_cdf(uniforms: np.ndarray, rate: float, cdf: np.ndarray | None = None) -> np.ndarray:
    """Exact inverse CDF of Poisson(rate) by search in its tabulated CDF
    (``cdf``: :func:`_poisson_cdf_table` of ``rate``, computed when omitted)."""
    if cdf is None:
        cdf = _poisson_cdf_table(rate)
    upper = cdf.size - 1
    counts = np.searchsorted(cdf, uniforms, side="right")
    beyond = counts > upper  # a uniform above the tabulated mass (probability < 1e-30)
    if np.any(beyond):
        counts[beyond] = stats.poisson.ppf(uniforms[beyond], rate).astype(np.int64)
    return counts


@fill_doc
class BernoulliLBM(LatentBlockModel):
    """Latent block model for binary tables, ``x_ij ~ Bernoulli(probs_kl)``.

    {{proportions}}
    probs : array-like of shape (g, m)
        Block probabilities of a one, in the open interval (0, 1).
    """

    kind = "bernoulli"
    n_stats = 1
    table_dtype = np.uint8

    def __init__(
        self, row_proportions: Any, col_proportions: Any, probs: Any, *, sparse: bool = False
    ) -> None:
        super().__init__(row_proportions, col_proportions)
        self.sparse = bool(sparse)
        self.probs = check_block_array("probs", probs, self.block_shape, lower=0.0, upper=1.0)

    @property
    def natural_parameters(self) -> np.ndarray:
        return special.logit(self.probs)[None]

    @property
    def log_partition(self) -> np.ndarray:
        return -np.log1p(-self.probs)

    def sufficient_statistics(self, X: np.ndarray) -> np.ndarray:
        return _dense_statistic(X)

    def log_base_measure(self, X: np.ndarray) -> float:
        return 0.0

    def sparse_level(self) -> float:
        return float(-np.log1p(-self.probs.max()))

    def check_table(self, X: Any, name: str = "X") -> np.ndarray:
        if is_sparse_table(X):
            return _sparse_integer_table(X, name, np.uint8, max_value=1)
        array = _integer_table(X, name)
        if array.max() > 1:
            raise ValueError(f"{name} must hold 0/1 values, got max {int(array.max())}")
        return array

    def table_from_noise(self, noise: np.ndarray, z: np.ndarray, w: np.ndarray) -> np.ndarray:
        if self.sparse:
            positions, uniforms, rows, cols = _sparse_entries(self, noise)
            keep = uniforms < self.probs[z[rows], w[cols]]
            return _sparse_table_from_entries(positions[keep], np.ones(int(keep.sum())), noise.shape, np.uint8)
        return (noise < self.probs[np.ix_(z, w)]).astype(np.uint8)

    def block_parameters(self) -> dict[str, np.ndarray]:
        return {"probs": self.probs}

    def entry_means(self) -> np.ndarray:
        return self.probs.copy()


_FAMILIES = {"gaussian": GaussianLBM, "poisson": PoissonLBM, "bernoulli": BernoulliLBM}


def model_from_parameters(
    kind: str, row_proportions: Any, col_proportions: Any, **block_parameters: Any
) -> LatentBlockModel:
    """Build a model of family ``kind`` from its parameters (as stored in files).

    Examples
    --------
    >>> model_from_parameters("bernoulli", [0.5, 0.5], [1.0], probs=[[0.2], [0.8]])
    BernoulliLBM(kind='bernoulli', clusters=2x1)
    """
    from lbm_bench._validation import check_kind

    family = _FAMILIES[check_kind(kind)]
    return family(row_proportions, col_proportions, **block_parameters)


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
    identity for generic parameters.

    Returns
    -------
    None or (sigma, tau)
        ``None`` when the model has no such symmetry; otherwise the two
        permutations, ndarrays of shape (g,) and (m,).

    Examples
    --------
    >>> latin = [[0.0, 1.0, 2.0], [1.0, 2.0, 0.0], [2.0, 0.0, 1.0]]
    >>> model = GaussianLBM([1/3] * 3, [1/3] * 3, latin, [[1.0] * 3] * 3)
    >>> find_symmetry(model) is not None
    True
    """
    params = np.concatenate([model.natural_parameters, model.log_partition[None]])
    scale = max(1.0, float(np.abs(params).max()))
    params = np.round(params / (scale * rtol)).astype(np.int64) if rtol > 0 else params
    row_props = np.round(model.row_proportions / rtol).astype(np.int64)
    col_props = np.round(model.col_proportions / rtol).astype(np.int64)
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
            f"model has {count} candidate row symmetries; too many to check (max_candidates={max_candidates})"
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
