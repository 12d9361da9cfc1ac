"""Gaussian blocks: tables of reals, ``x_ij ~ N(means_kl, stds_kl^2)``.

Exponential-family form: ``T(x) = (x, x^2)``, ``eta = (mu / sigma^2, -1 / (2 sigma^2))``,
``A = mu^2 / (2 sigma^2) + log sigma``, ``log h(x) = -log(2 pi) / 2``.

**Design at a scale**: ``means = scale * pattern``, ``stds = dispersion ** scale``
(a real pattern, centred with unit mean class separation, and dispersions of the
same order of magnitude). The scale moves the block means apart *and* the block
variances away from one another, so that at scale 0 every block is N(0, 1) and the
risk is that of guessing whatever the table size. (With fixed unequal variances,
the variances alone would identify the classes of a large table, and no scale
would make it hard: a 400x400 table could not be calibrated to 20%.)

**Estimates** (EM baselines): block means, and variances ``(sum (x - mean)^2 + v) / (n + 1)``:
the block's own, shrunk by one pseudo-entry at the table's variance ``v`` (``prior_var``), so
that a block of one or two observed entries is not fitted exactly (a singleton cluster of
a table with many missing entries had blocks of one entry each, at the variance floor, and
outscored every real partition), then floored at ``var_floor``; tables are fitted centred.

**Exact ICL** (model selection): each block's mean and variance have the
Normal-inverse-gamma prior ``sigma^2 ~ IG(alpha0, beta0)``, ``mu | sigma^2 ~
N(mu0, sigma^2 / kappa0)``, scaled to the table (``mu0`` its mean, ``beta0`` a fraction
of its variance, see :data:`ICL_MEAN_WEIGHT`, :data:`ICL_VARIANCE_SHAPE`, :data:`ICL_SCALE`), so
that the criterion does not change with the unit of the values; a block of ``n``
entries of mean ``xbar`` and sum of squared deviations ``S`` integrates to

    (2 pi)^(-n/2) sqrt(kappa0 / kappa_n) beta0^alpha0 Gamma(alpha_n) / (beta_n^alpha_n
    Gamma(alpha0))

with ``kappa_n = kappa0 + n``, ``alpha_n = alpha0 + n/2`` and
``beta_n = beta0 + S/2 + kappa0 n (xbar - mu0)^2 / (2 kappa_n)``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import special

import lbm_bench._portable as portable
from lbm_bench._docstrings import fill_doc
from lbm_bench._validation import check_block_array
from lbm_bench.models.base import LatentBlockModel
from lbm_bench.models.checks import real_table, refuse_sparse
from lbm_bench.models.family import Designs, Estimation, Family, Presentation, StorageCodec
from lbm_bench.models.patterns import real_pattern

#: A fitted design's block precisions are floored at this fraction of the largest one.
PATH_PRECISION_FLOOR = 1e-8

__all__ = ["GAUSSIAN", "GaussianLBM", "ICL_MEAN_WEIGHT", "ICL_SCALE", "ICL_VARIANCE_SHAPE"]

#: ``kappa0`` of the exact ICL's Normal-inverse-gamma prior: the prior of a block's mean
#: weighs as this many entries (one: a unit-information prior).
ICL_MEAN_WEIGHT = 1.0
#: ``alpha0`` of the prior of a block's variance.
ICL_VARIANCE_SHAPE = 1.0
#: ``beta0`` of the prior of a block's variance, as a fraction of the table's variance.
ICL_SCALE = 1.0


@fill_doc
class GaussianLBM(LatentBlockModel):
    """Latent block model with Gaussian blocks ``x_ij ~ N(means_kl, stds_kl^2)``.

    {{proportions}}
    means : array-like of shape (g, m)
        Block means.
    stds : array-like of shape (g, m)
        Block standard deviations, positive.

    Examples
    --------
    >>> model = GaussianLBM(row_proportions=[0.5, 0.5], col_proportions=[0.4, 0.6],
    ...                     means=[[0.0, 1.0], [1.0, -0.5]], stds=[[1.0, 1.0], [1.0, 1.0]])
    >>> model, model.block_shape
    (GaussianLBM(kind='gaussian', clusters=2x2), (2, 2))
    >>> X, z, w = model.sample(6, 4, rng=0)          # a table and its generating labels
    >>> X.shape, X.dtype, z.shape, w.shape
    ((6, 4), dtype('float64'), (6,), (4,))
    >>> bool(np.isfinite(model.complete_log_likelihood(X, z, w)))   # log p(X, z, w)
    True
    """

    n_stats = 2
    table_dtype = np.dtype(np.float64)

    def __init__(self, row_proportions: Any, col_proportions: Any, means: Any, stds: Any) -> None:
        super().__init__(row_proportions, col_proportions)
        self.means = check_block_array("means", means, self.block_shape)
        self.stds = check_block_array("stds", stds, self.block_shape, lower=0.0)

    # -- exponential-family interface ------------------------------------------------
    @property
    def natural_parameters(self) -> np.ndarray:
        precision = 1.0 / self.stds**2
        return np.stack([self.means * precision, -0.5 * precision])

    @property
    def log_partition(self) -> np.ndarray:
        return 0.5 * self.means**2 / self.stds**2 + portable.log(self.stds)

    def sufficient_statistics(self, X: np.ndarray) -> np.ndarray:
        X = np.asarray(X, dtype=np.float64)
        return np.stack([X, X * X])

    def log_base_measure(self, X: Any) -> float:
        return -0.5 * math.log(2 * math.pi) * X.size

    def check_table(self, X: Any, name: str = "X") -> np.ndarray:
        refuse_sparse(X, f"a {self.kind} model", reason=f"{name} is a scipy.sparse table",
                      remedy=f"densify it with {name}.toarray()")
        return real_table(X, name)

    def draw_noise(self, n_rows: int, n_cols: int, *, rng: np.random.Generator) -> np.ndarray:
        return rng.standard_normal((n_rows, n_cols))

    def table_from_noise(self, noise: np.ndarray, z: np.ndarray, w: np.ndarray) -> np.ndarray:
        return self.means[np.ix_(z, w)] + self.stds[np.ix_(z, w)] * noise

    def block_parameters(self) -> dict[str, np.ndarray]:
        return {"means": self.means, "stds": self.stds}

    def entry_means(self) -> np.ndarray:
        return self.means.copy()

    @property
    def mean_statistics(self) -> np.ndarray:
        return np.stack([self.means, self.means**2 + self.stds**2])


class GaussianStorage(StorageCodec):
    parameter_names = ("means", "stds")

    def value_problem(self, values: np.ndarray, **header: Any) -> str | None:
        return None if np.all(np.isfinite(values)) else "holds non-finite values"


class GaussianPresentation(Presentation):
    entries = "reals"
    block_description = "Gaussian blocks (a mean and a standard deviation per block)"
    colormap = "RdBu_r"
    boundary_color = "black"


class GaussianDesigns(Designs):
    def draw_pattern(self, n_row_clusters: int, n_col_clusters: int, rng: np.random.Generator,
                     options: dict[str, Any]) -> np.ndarray:
        return real_pattern(n_row_clusters, n_col_clusters, rng)

    def model_at_scale(self, design: Any, scale: float) -> GaussianLBM:
        return GaussianLBM(design.row_proportions, design.col_proportions, scale * design.pattern,
                           portable.power(design.dispersion, scale))

    def model_from_natural(self, design: Any, natural: np.ndarray) -> GaussianLBM:
        # the precision -2 eta_2 floored: far past scale 1 a block less precise than the table's
        # overall level would leave the domain
        precision = -2.0 * natural[1]
        precision = np.maximum(precision, PATH_PRECISION_FLOOR * float(precision.max()))
        return GaussianLBM(design.row_proportions, design.col_proportions, natural[0] / precision,
                           1.0 / np.sqrt(precision))


class GaussianEstimation(Estimation):
    fit_centred = True
    inference_order = 2
    default_icl = "exact-icl"
    icl_prior = ("Normal-inverse-gamma: variance IG(1, the table's variance), "
                 "mean N(the table's mean, variance)")

    def describes(self, dtype_kind: str, low: float | None, high: float | None) -> bool:
        return True  # reals: any table the families before it do not describe

    def estimate_blocks(self, totals: np.ndarray, exposure: np.ndarray, var_floor: float,
                        prior_var: float = 0.0) -> dict[str, np.ndarray]:
        mean = totals[0] / exposure
        if prior_var <= 0:
            return {
                "means": mean, "stds": np.sqrt(np.maximum(totals[1] / exposure - mean**2,
                                                          var_floor))
            }
        squares = np.maximum(totals[1] - exposure * mean**2, 0.0)  # sum of squared deviations
        return {
            "means": mean,
            "stds": np.sqrt(np.maximum((squares + prior_var) / (exposure + 1.0), var_floor))
        }

    def placeholder(self, table: Any = None) -> GaussianLBM:
        return GaussianLBM([1.0], [1.0], [[0.0]], [[1.0]])

    def conjugate_prior(self, totals: np.ndarray, size: float) -> dict[str, float]:
        mean = float(totals[0]) / size
        variance = max(float(totals[1]) / size - mean * mean, 1e-12)
        return {"mean": mean, "kappa": ICL_MEAN_WEIGHT, "alpha": ICL_VARIANCE_SHAPE,
                "beta": ICL_SCALE * variance}

    def log_marginal_blocks(self, totals: np.ndarray, exposure: np.ndarray,
                            prior: dict[str, float]) -> np.ndarray:
        n, first, second = exposure, totals[0], totals[1]
        mu0, kappa0, alpha0, beta0 = prior["mean"], prior["kappa"], prior["alpha"], prior["beta"]
        filled = n > 0
        safe = np.where(filled, n, 1.0)
        squares = np.where(filled, np.maximum(second - first**2 / safe, 0.0), 0.0)  # S
        shift = np.where(filled, (first - n * mu0) ** 2 / safe, 0.0)  # n (xbar - mu0)^2
        kappa_n, alpha_n = kappa0 + n, alpha0 + n / 2
        beta_n = beta0 + squares / 2 + kappa0 * shift / (2 * kappa_n)
        return (0.5 * np.log(kappa0 / kappa_n) + alpha0 * math.log(beta0) - alpha_n * np.log(beta_n)
                + special.gammaln(alpha_n) - special.gammaln(alpha0))


#: The Gaussian family: :class:`GaussianLBM` and its facets.
GAUSSIAN = Family(
    "gaussian", GaussianLBM, storage=GaussianStorage, presentation=GaussianPresentation,
    designs=GaussianDesigns, estimation=GaussianEstimation,
)
