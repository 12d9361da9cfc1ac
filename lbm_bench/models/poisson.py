"""Poisson blocks: tables of counts, ``x_ij ~ Poisson(mu_i nu_j rates_kl)``.

Exponential-family form: ``T(x) = x``, ``eta = log rate``, ``A = rate`` times the
exposure ``c_ij = mu_i nu_j`` (one without row and column effects),
``log h(x) = -log x! + x log(mu_i nu_j)``. With effects the model is Govaert and
Nadif's contingency-table model and fixes the table shape.

**Design at a scale**: ``rates = base_rate * exp(scale * pattern)`` (the spread of
log-rates around the geometric mean ``base_rate``), a real pattern, no dispersions.
Options: ``base_rate``; ``effects`` (row and column effects, log-normal with
standard deviation ``effects_spread`` and mean one, drawn for the table's shape);
``density`` (a **sparse design**: ``log(rates) = c + scale * pattern`` times the
effects, the offset ``c`` solved at each scale so that the expected fraction of
non-zero entries, ``sum_kl pi_k rho_l E_ij[1 - exp(-a_i b_j rate_kl)]``, equals
``density``; the models draw ``scipy.sparse.csr_array`` tables from
:class:`~lbm_bench.models.sparse_noise.SparseNoise`).

**Sparse tables** need nothing special for the zeros: in the exponential-family
form a zero contributes ``-c_ij A_kl`` (``-rate``), which the exposure term
already counts, and ``log h(0) = 0``.

**Estimates** (EM baselines, no effects): block rates, floored at ``1e-10``.

**Exact ICL** (model selection, no effects): each block's rate has the prior
Gamma(shape 1, rate 1 / mean), an exponential distribution whose mean is the table's
mean count (bikm1's Poisson ICL with the prior scaled to the table, so that the
criterion does not depend on the unit of the counts' rate); a block of ``n`` entries
summing to ``s`` integrates to ``b^a Gamma(a + s) / (Gamma(a) (b + n)^(a + s))``
times its entries' ``1 / x!``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import optimize, special, stats

import lbm_bench._portable as portable
from lbm_bench._docstrings import fill_doc
from lbm_bench._records import flag, non_negative, positive, setting
from lbm_bench._validation import check_block_array, check_count
from lbm_bench.models.base import LatentBlockModel, positive_vector
from lbm_bench.models.checks import integer_table
from lbm_bench.models.data import TableData
from lbm_bench.models.family import (
    DENSITY_OPTION,
    Designs,
    Estimation,
    Family,
    Options,
    Presentation,
    StorageCodec,
)
from lbm_bench.models.patterns import real_pattern
from lbm_bench.models.sparse_noise import poisson_from_survival, sparse_table_from_noise

__all__ = ["EFFECTS_SPREAD", "ICL_RATE_SHAPE", "MARGIN_KNEE", "POISSON", "PoissonLBM", "RATE_FLOOR"]

#: The knee of a fitted Poisson design's path (:mod:`lbm_bench.models.block_path`).
MARGIN_KNEE = 0.5
#: Default standard deviation of the log effects (log-normal, normalised to mean one).
EFFECTS_SPREAD = 0.3
#: Estimated block rates are floored at this value.
RATE_FLOOR = 1e-10
#: Iterations of the alternating fit of row and column effects at fixed labels (``fit_effects``)...
EFFECT_ITERATIONS = 30
#: ... and the floor of a fitted effect (a row or column of zeros has none).
EFFECT_FLOOR = 1e-3
#: Shape of the Gamma prior of a block's rate in the exact ICL (its mean is the table's mean).
ICL_RATE_SHAPE = 1.0
#: Poisson effects are summarised by this many equal-count groups (group means) when
#: solving for the density offset...
_EFFECT_GROUPS = 256
#: ... and the products ``a_i b_j`` by this many.
_PRODUCT_GROUPS = 4096


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
    sparse : bool, default=False
        Draw sparse tables (``scipy.sparse.csr_array``).

    Examples
    --------
    >>> counts = PoissonLBM([0.5, 0.5], [0.5, 0.5], [[1.0, 4.0], [3.0, 0.5]])
    >>> counts.sample(3, 5, rng=1)[0].dtype
    dtype('int64')
    """

    n_stats = 1
    table_dtype = np.dtype(np.int64)
    has_effects = True
    can_be_sparse = True

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
        self.row_effects = None if row_effects is None else positive_vector(
            "row_effects", row_effects)
        self.col_effects = None if col_effects is None else positive_vector(
            "col_effects", col_effects)

    # -- exposures ---------------------------------------------------------------------
    def fixed_shape(self) -> tuple[int, int] | None:
        if self.row_effects is None:
            return None
        return (self.row_effects.shape[0], self.col_effects.shape[0])

    def row_weights(self, n_rows: int) -> np.ndarray | None:
        return self.row_effects

    def col_weights(self, n_cols: int) -> np.ndarray | None:
        return self.col_effects

    # -- exponential-family interface ------------------------------------------------
    @property
    def natural_parameters(self) -> np.ndarray:
        return portable.log(self.rates)[None]

    @property
    def log_partition(self) -> np.ndarray:
        return self.rates.copy()

    def sufficient_statistics(self, X: np.ndarray) -> np.ndarray:
        return np.asarray(X, dtype=np.float64)[None]

    def sparse_statistics(self, X: Any) -> list:
        return [TableData.of(X).to_csr(np.float64)]

    def log_base_measure(self, X: Any) -> float:
        data = TableData.of(X)  # log h(0) = 0: a sparse table's non-zeros are enough
        value = -special.gammaln(np.asarray(data.stored_values(), dtype=np.float64) + 1.0).sum()
        if self.row_effects is not None:
            value += (data.row_totals() @ np.log(self.row_effects)) + (
                data.col_totals() @ np.log(self.col_effects))
        return float(value)

    def sparse_level(self) -> float:
        return float(self.rates.max())

    def check_table(self, X: Any, name: str = "X") -> Any:
        array = integer_table(X, name, np.int64)
        fixed = self.fixed_shape()
        if fixed is not None and array.shape != fixed:
            raise ValueError(f"{name} must have shape {fixed} (the effects' lengths), got "
                             f"{array.shape}")
        return array

    def table_from_noise(self, noise: Any, z: np.ndarray, w: np.ndarray) -> Any:
        if self.sparse:
            def entries(uniforms, rows, cols):
                rates = self.rates[z[rows], w[cols]]
                if self.row_effects is not None:
                    rates = rates * self.row_effects[rows] * self.col_effects[cols]
                return poisson_from_survival(uniforms, rates)

            return sparse_table_from_noise(noise, self.sparse_level(), entries, np.int64)
        if self.row_effects is not None:
            mean = np.outer(self.row_effects, self.col_effects) * self.rates[np.ix_(z, w)]
            return stats.poisson.ppf(noise, mean).astype(np.int64)
        key = self.rates.tobytes()  # tabulate once per model (calibration draws many tables)
        if getattr(self, "_cdf_key", None) != key:
            tables = poisson_cdf_tables(self.rates.ravel())
            m = self.rates.shape[1]
            self._cdf_tables = [tables[k * m:(k + 1) * m] for k in range(self.rates.shape[0])]
            self._cdf_key = key
        table = np.empty(noise.shape, dtype=np.int64)
        for k, l, block in self.nonempty_blocks(z, w):
            table[block] = poisson_inverse_cdf(noise[block], self.rates[k, l],
                                               self._cdf_tables[k][l])
        return table

    def block_parameters(self) -> dict[str, np.ndarray]:
        params = {"rates": self.rates}  # (sparse is a storage choice, not a parameter)
        if self.row_effects is not None:
            params["row_effects"] = self.row_effects
            params["col_effects"] = self.col_effects
        return params

    def entry_means(self) -> np.ndarray:
        return self.rates.copy()

    @property
    def mean_statistics(self) -> np.ndarray:
        return self.rates[None].copy()


class PoissonStorage(StorageCodec):
    parameter_names = ("rates",)

    def value_problem(self, values: np.ndarray, **header: Any) -> str | None:
        return f"holds a negative count ({int(values.min())})" if values.min() < 0 else None


class PoissonPresentation(Presentation):
    entries = "counts"
    block_description = "Poisson blocks (one rate per block)"


class PoissonOptions(Options):
    fields = {
        "base_rate": setting(2.0, positive, "--base-rate", "Poisson: geometric mean of the block "
                                                           "rates"),
        "density": DENSITY_OPTION,
        "effects": setting(False, flag, "--effects", "poisson: row and column effects (contingency "
                                                     "model)"),
        "effects_spread": setting(
            EFFECTS_SPREAD, non_negative, "--effects-spread", "poisson: standard deviation of the "
                                                              "log effects"
        ),
    }

    def check(self, options: dict[str, Any]) -> dict[str, Any]:
        options = dict(options)
        effects = options.get("effects")
        if effects is True:
            raise ValueError("effects=True needs the table shape here: pass effects=(n_rows, "
                             "n_cols)")
        if effects is False:
            options.pop("effects")
        shape = options.pop("effects", None)
        out = super().check(options)
        if shape is not None:
            shape = (check_count("effects[0]", shape[0]), check_count("effects[1]", shape[1]))
        out["effects"] = shape
        return out

    def resolve(self, options: dict[str, Any], n_rows: int, n_cols: int) -> dict[str, Any]:
        effects = options.get("effects")
        if effects is True:
            return {**options, "effects": (n_rows, n_cols)}
        if effects is False:
            return {k: v for k, v in options.items() if k != "effects"}
        return dict(options)


class PoissonDesigns(Designs):
    uses_dispersion = False
    #: A fitted design keeps its classes' totals down to half its scale (its degrees: row and
    #: column sums of counts are mostly the classes' margins), only their interaction moving.
    path_knee = MARGIN_KNEE

    def draw_pattern(self, n_row_clusters: int, n_col_clusters: int, rng: np.random.Generator,
                     options: dict[str, Any]) -> np.ndarray:
        return real_pattern(n_row_clusters, n_col_clusters, rng)

    def draw_effects(
        self, options: dict[str, Any], rng: np.random.Generator
    ) -> tuple[np.ndarray | None, np.ndarray | None]:
        if options.get("effects") is None:
            return None, None
        n_rows, n_cols = options["effects"]
        row_effects = rng.lognormal(0.0, options["effects_spread"], n_rows)
        col_effects = rng.lognormal(0.0, options["effects_spread"], n_cols)
        return row_effects / row_effects.mean(), col_effects / col_effects.mean()

    def model_at_scale(self, design: Any, scale: float) -> PoissonLBM:
        sparse = design.density is not None
        if sparse:
            rates = portable.exp(_density_offset(design, scale) + scale * design.pattern)
        else:
            rates = design.base_rate * portable.exp(scale * design.pattern)
        return PoissonLBM(design.row_proportions, design.col_proportions, rates, design.row_effects,
                          design.col_effects, sparse=sparse,
                          )

    def model_from_natural(self, design: Any, natural: np.ndarray) -> PoissonLBM:
        rates = np.maximum(portable.exp(natural[0]), RATE_FLOOR)
        return PoissonLBM(design.row_proportions, design.col_proportions, rates, design.row_effects,
                          design.col_effects, sparse=design.density is not None,
                          )


class PoissonEstimation(Estimation):
    inference_order = 1
    default_icl = "exact-icl"
    icl_prior = "Gamma(shape 1, rate 1/mean) on each block's rate, mean: the table's mean count"

    def describes(self, dtype_kind: str, low: float | None, high: float | None) -> bool:
        return dtype_kind in "biu" and low >= 0

    def estimate_blocks(self, totals: np.ndarray, exposure: np.ndarray, var_floor: float,
                        prior_var: float = 0.0) -> dict[str, np.ndarray]:
        return {"rates": np.maximum(totals[0] / exposure, RATE_FLOOR)}

    def fit_effects(self, data: Any, z: np.ndarray, w: np.ndarray, model: Any) -> PoissonLBM:
        # Govaert and Nadif's contingency model at fixed labels: alternate the row effects, the
        # column effects (each normalised to mean one) and the block rates, over observed entries
        z, w = np.asarray(z), np.asarray(w)
        g, m = model.block_shape
        n_rows, n_cols = data.shape
        missing = data.missing_indicator() if data.has_missing else None
        row_sums, col_sums = data.row_totals(), data.col_totals()
        rates = np.array(model.rates, dtype=np.float64)
        mu, nu = np.ones(n_rows), np.ones(n_cols)
        col_onehot, row_onehot = np.eye(m)[w], np.eye(g)[z]
        for _ in range(EFFECT_ITERATIONS):
            # expected row sums: sum_j M_ij nu_j rate[z_i, w_j]
            per_class = nu @ col_onehot if missing is None else nu @ col_onehot - missing @ (
                nu[:, None] * col_onehot)
            per_class = np.broadcast_to(per_class, (n_rows, m))
            mu = row_sums / np.maximum(np.sum(rates[z] * per_class, axis=1), 1e-300)
            mu = np.maximum(mu, EFFECT_FLOOR)
            mu /= mu.mean()
            per_class = mu @ row_onehot if missing is None else mu @ row_onehot - missing.T @ (
                mu[:, None] * row_onehot)
            per_class = np.broadcast_to(per_class, (n_cols, g))
            nu = col_sums / np.maximum(np.sum(rates.T[w] * per_class, axis=1), 1e-300)
            nu = np.maximum(nu, EFFECT_FLOOR)
            nu /= nu.mean()
            fitted = PoissonLBM(model.row_proportions, model.col_proportions, rates, mu, nu)
            totals, exposure = fitted.block_totals(data, z, w)
            rates = np.maximum(totals[0] / np.maximum(exposure, 1e-300), RATE_FLOOR)
        # the same means with effects of mean one within each class: the rates carry every
        # difference between classes (what a fitted design's scale moves), the effects only the
        # heterogeneity within a class
        row_means = np.bincount(z, weights=mu, minlength=g) / np.maximum(
            np.bincount(z, minlength=g), 1)
        col_means = np.bincount(w, weights=nu, minlength=m) / np.maximum(
            np.bincount(w, minlength=m), 1)
        row_means, col_means = np.where(row_means > 0, row_means,
                                        1.0), np.where(col_means > 0, col_means, 1.0)
        rates = np.maximum(rates * np.outer(row_means, col_means), RATE_FLOOR)
        return PoissonLBM(model.row_proportions, model.col_proportions, rates, mu / row_means[z],
                          nu / col_means[w])

    def placeholder(self, table: Any = None) -> PoissonLBM:
        return PoissonLBM([1.0], [1.0], [[1.0]])

    def conjugate_prior(self, totals: np.ndarray, size: float) -> dict[str, float]:
        mean = max(float(totals[0]), 1.0) / size  # a table of zeros: as if it held one count
        return {"shape": ICL_RATE_SHAPE, "rate": ICL_RATE_SHAPE / mean}

    def log_marginal_blocks(self, totals: np.ndarray, exposure: np.ndarray,
                            prior: dict[str, float]) -> np.ndarray:
        a, b, s = prior["shape"], prior["rate"], totals[0]
        return a * math.log(b) - special.gammaln(a) + special.gammaln(
            a + s) - (a + s) * np.log(b + exposure)


#: The Poisson family: :class:`PoissonLBM` and its facets.
POISSON = Family("poisson", PoissonLBM, storage=PoissonStorage, presentation=PoissonPresentation,
                 options=PoissonOptions, designs=PoissonDesigns, estimation=PoissonEstimation,
                 )


def poisson_cdf_table(rate: float) -> np.ndarray:
    """CDF of Poisson(rate) at 0, 1, ..., far enough into the tail (mass beyond < 1e-30)."""
    return poisson_cdf_tables(np.array([rate], dtype=np.float64))[0]


def poisson_cdf_tables(rates: np.ndarray) -> list[np.ndarray]:
    """:func:`poisson_cdf_table` of every rate of ``rates`` (1-D), in one call of the CDF's
    kernel (``scipy.special.pdtr``, what ``scipy.stats.poisson.cdf`` calls entry by entry:
    the same values; a model's tables at once cost a tenth of one call per rate).

    Examples
    --------
    >>> [table.size for table in poisson_cdf_tables(np.array([0.5, 4.0]))]
    [49, 69]
    """
    rates = np.asarray(rates, dtype=np.float64)
    uppers = np.array([int(rate + 12 * math.sqrt(rate) + 40) for rate in rates.tolist()],
                      dtype=np.int64)
    if rates.size == 0:
        return []
    counts = np.concatenate([np.arange(upper + 1, dtype=np.float64) for upper in uppers.tolist()])
    flat = special.pdtr(counts, np.repeat(rates, uppers + 1))
    return np.split(flat, np.cumsum(uppers + 1)[:-1])


def poisson_inverse_cdf(uniforms: np.ndarray, rate: float,
                        cdf: np.ndarray | None = None) -> np.ndarray:
    """Exact inverse CDF of Poisson(rate) by search in its tabulated CDF
    (``cdf``: :func:`poisson_cdf_table` of ``rate``, computed when omitted)."""
    if cdf is None:
        cdf = poisson_cdf_table(rate)
    upper = cdf.size - 1
    counts = np.searchsorted(cdf, uniforms, side="right")
    beyond = counts > upper  # a uniform above the tabulated mass (probability < 1e-30)
    if np.any(beyond):
        counts[beyond] = stats.poisson.ppf(uniforms[beyond], rate).astype(np.int64)
    return counts


def _density_offset(design: Any, scale: float) -> float:
    """``c`` with expected non-zero fraction ``sum_kl pi_k rho_l E_ij[1 - exp(-a_i b_j e^(c + scale
    P_kl))]``
    equal to ``density`` (effects summarised by :data:`_EFFECT_GROUPS` group means each)."""
    cache = design.memo
    key = ("poisson_offset", float(scale))
    if key in cache:
        return cache[key]
    spread = scale * design.pattern
    mass = np.outer(design.row_proportions, design.col_proportions)
    if "exposures" not in cache:
        cache["exposures"] = _exposure_groups(design.row_effects, design.col_effects)
    exposure, weight = cache["exposures"]
    centre = math.log(-math.log1p(-design.density))
    reach = float(np.abs(spread).max()) + math.log(exposure.max() / exposure.min()) + 1.0

    def excess(c: float) -> float:
        rates = portable.exp(c + spread)[:, :, None] * exposure
        nonzero = np.sum(-portable.expm1(-rates) * weight, axis=2)
        return float(np.sum(mass * nonzero)) - design.density

    offset = optimize.brentq(excess, centre - reach, centre + reach, xtol=1e-13, rtol=1e-15)
    if len(cache) < 256:
        cache[key] = offset
    return offset


def _effect_groups(effects: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """Means and weights (fractions) of up to :data:`_EFFECT_GROUPS` equal-count groups of sorted
    effects."""
    if effects is None:
        return np.ones(1), np.ones(1)
    groups = np.array_split(np.sort(effects), min(_EFFECT_GROUPS, effects.size))
    return np.array([g.mean() for g in groups]), np.array([g.size for g in groups]) / effects.size


def _exposure_groups(row_effects, col_effects) -> tuple[np.ndarray, np.ndarray]:
    """The distribution of the exposures ``a_i b_j`` over entries, as weighted group means:
    effects in :data:`_EFFECT_GROUPS` groups each, their products sorted and grouped again
    into :data:`_PRODUCT_GROUPS` groups (weights sum to one)."""
    a, a_weight = _effect_groups(row_effects)
    b, b_weight = _effect_groups(col_effects)
    products, weights = np.outer(a, b).ravel(), np.outer(a_weight, b_weight).ravel()
    order = np.argsort(products)
    products, weights = products[order], weights[order]
    parts = np.array_split(np.arange(products.size), min(_PRODUCT_GROUPS, products.size))
    totals = np.array([weights[p].sum() for p in parts])
    means = np.array([(products[p] * weights[p]).sum() for p in parts]) / totals
    return means, totals
