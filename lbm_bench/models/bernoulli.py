"""Bernoulli blocks: binary tables, ``x_ij ~ Bernoulli(probs_kl)``.

Exponential-family form: ``T(x) = x``, ``eta = logit(p)``, ``A = -log(1 - p)``,
``log h(x) = 0``.

**Design at a scale**: ``probs = 1/2 + pattern * tanh(scale * dispersion) / 2`` with a
+-1 pattern (the binary modes) whose rows and columns are distinct, so a design needs
``g <= 2^m`` and ``m <= 2^g``. Option ``density`` (a **sparse design**):
``logit(probs) = c + scale * dispersion * pattern``, the offset ``c`` solved at each
scale so that the expected fraction of ones, ``sum_kl pi_k rho_l p_kl``, equals
``density`` (at most 1/2); its models draw ``scipy.sparse.csr_array`` tables.

Row and column propensities are not offered for Bernoulli blocks: with
``logit p_ij = alpha_i + beta_j + theta_kl`` (or ``p_ij = a_i b_j p_kl``) the
zeros' term ``log(1 - p_ij)`` no longer factors into a row part, a column part
and a block part, so the label steps would need every entry of a block (no
closed form for the zeros, O(n_rows n_cols) per step) instead of the block sums
of the non-zeros: the engine would no longer be exact at sparse cost.

**Estimates** (EM baselines): block frequencies of ones, clipped to [1e-6, 1 - 1e-6].

**Exact ICL** (model selection): each block's probability has the Jeffreys prior
Beta(1/2, 1/2), so a block of ``n`` entries with ``s`` ones integrates to
``B(s + 1/2, n - s + 1/2) / B(1/2, 1/2)`` (blockcluster's and bikm1's binary ICL).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import optimize, special

import lbm_bench._portable as portable
from lbm_bench._docstrings import fill_doc
from lbm_bench._validation import check_block_array
from lbm_bench.models.base import PROB_CLIP, PROB_FLOOR, LatentBlockModel
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
from lbm_bench.models.patterns import binary_pattern
from lbm_bench.models.sparse_noise import sparse_table_from_noise

__all__ = ["BERNOULLI", "BernoulliLBM", "ICL_BETA"]

#: Both parameters of the Beta prior of a block's probability in the exact ICL (Jeffreys).
ICL_BETA = 0.5


@fill_doc
class BernoulliLBM(LatentBlockModel):
    """Latent block model for binary tables, ``x_ij ~ Bernoulli(probs_kl)``.

    {{proportions}}
    probs : array-like of shape (g, m)
        Block probabilities of a one, in the open interval (0, 1).
    sparse : bool, default=False
        Draw sparse tables (``scipy.sparse.csr_array``).

    Examples
    --------
    >>> binary = BernoulliLBM([0.5, 0.5], [0.5, 0.5], [[0.9, 0.1], [0.2, 0.7]])
    >>> binary.sample(3, 5, rng=1)[0].dtype
    dtype('uint8')
    """

    n_stats = 1
    table_dtype = np.dtype(np.uint8)
    can_be_sparse = True

    def __init__(
        self, row_proportions: Any, col_proportions: Any, probs: Any, *, sparse: bool = False
    ) -> None:
        super().__init__(row_proportions, col_proportions)
        self.sparse = bool(sparse)
        self.probs = check_block_array("probs", probs, self.block_shape, lower=0.0, upper=1.0)

    # -- exponential-family interface ------------------------------------------------
    @property
    def natural_parameters(self) -> np.ndarray:
        return special.logit(self.probs)[None]

    @property
    def log_partition(self) -> np.ndarray:
        return -portable.log1p(-self.probs)

    def sufficient_statistics(self, X: np.ndarray) -> np.ndarray:
        return np.asarray(X, dtype=np.float64)[None]

    def sparse_statistics(self, X: Any) -> list:
        return [TableData.of(X).to_csr(np.float64)]

    def log_base_measure(self, X: Any) -> float:
        return 0.0

    def sparse_level(self) -> float:
        return float(-portable.log1p(-self.probs.max()))

    def check_table(self, X: Any, name: str = "X") -> Any:
        return integer_table(X, name, np.uint8, max_value=1)

    def table_from_noise(self, noise: Any, z: np.ndarray, w: np.ndarray) -> Any:
        if self.sparse:
            def entries(uniforms, rows, cols):
                return (uniforms < self.probs[z[rows], w[cols]]).astype(np.uint8)

            return sparse_table_from_noise(noise, self.sparse_level(), entries, np.uint8)
        return (noise < self.probs[np.ix_(z, w)]).astype(np.uint8)

    def block_parameters(self) -> dict[str, np.ndarray]:
        return {"probs": self.probs}

    def entry_means(self) -> np.ndarray:
        return self.probs.copy()

    @property
    def mean_statistics(self) -> np.ndarray:
        return self.probs[None].copy()


class BernoulliStorage(StorageCodec):
    parameter_names = ("probs",)

    def value_problem(self, values: np.ndarray, **header: Any) -> str | None:
        return f"holds a value other than 0/1 ({int(values.max())})" if values.max() > 1 else None


class BernoulliPresentation(Presentation):
    entries = "binaries"
    block_description = "Bernoulli blocks (one probability per block)"
    colormap = "Greys"
    boundary_color = "tab:orange"
    missing_color = "#e3c98f"  # sand: grey would read as a block of mixed zeros and ones
    missing_color_name = "sand"


class BernoulliOptions(Options):
    fields = {"density": DENSITY_OPTION}

    def check(self, options: dict[str, Any]) -> dict[str, Any]:
        out = super().check(options)
        if out["density"] is not None and out["density"] > 0.5:
            raise ValueError("density must be <= 0.5 for sparse bernoulli designs, got "
                             f"{out['density']}")
        return out


class BernoulliDesigns(Designs):
    #: A fitted design keeps its classes' margins (their densities: the degrees of a binary table)
    #: down to half its scale, as Poisson's, only their interaction moving: on the straight line a
    #: dense source's row means narrowed beyond the spread between two generated tables at 5-20%
    #: (scripts/checks/degree_spread.py, docs/design-files.md).
    path_knee = 0.5

    def check_clusters(self, n_row_clusters: int, n_col_clusters: int,
                       options: dict[str, Any] | None = None) -> None:
        g, m = n_row_clusters, n_col_clusters
        if g > 2**m or m > 2**g:
            raise ValueError(
                f"bernoulli blocks need distinct binary modes: impossible with {g}x{m} clusters"
            )

    def draw_pattern(self, n_row_clusters: int, n_col_clusters: int, rng: np.random.Generator,
                     options: dict[str, Any]) -> np.ndarray:
        return binary_pattern(n_row_clusters, n_col_clusters, rng)

    def model_at_scale(self, design: Any, scale: float) -> BernoulliLBM:
        if design.density is not None:
            logits = _density_offset(design, scale) + scale * design.dispersion * design.pattern
            probs = np.clip(special.expit(logits), PROB_FLOOR, 1 - PROB_FLOOR)
            return BernoulliLBM(design.row_proportions, design.col_proportions, probs, sparse=True)
        probs = 0.5 + 0.5 * design.pattern * portable.tanh(scale * design.dispersion)
        probs = np.clip(probs, PROB_FLOOR, 1 - PROB_FLOOR)
        return BernoulliLBM(design.row_proportions, design.col_proportions, probs)

    def model_from_natural(self, design: Any, natural: np.ndarray) -> BernoulliLBM:
        probs = np.clip(special.expit(natural[0]), PROB_FLOOR, 1 - PROB_FLOOR)
        return BernoulliLBM(design.row_proportions, design.col_proportions, probs,
                            sparse=design.density is not None)


class BernoulliEstimation(Estimation):
    inference_order = 0
    default_icl = "exact-icl"
    icl_prior = "Beta(1/2, 1/2) on each block's probability"

    def describes(self, dtype_kind: str, low: float | None, high: float | None) -> bool:
        return dtype_kind in "biu" and low >= 0 and high <= 1

    def estimate_blocks(self, totals: np.ndarray, exposure: np.ndarray, var_floor: float,
                        prior_var: float = 0.0) -> dict[str, np.ndarray]:
        return {"probs": np.clip(totals[0] / exposure, PROB_CLIP, 1.0 - PROB_CLIP)}

    def placeholder(self, table: Any = None) -> BernoulliLBM:
        return BernoulliLBM([1.0], [1.0], [[0.5]])

    def conjugate_prior(self, totals: np.ndarray, size: float) -> dict[str, float]:
        return {"a": ICL_BETA, "b": ICL_BETA}

    def log_marginal_blocks(self, totals: np.ndarray, exposure: np.ndarray,
                            prior: dict[str, float]) -> np.ndarray:
        ones, a, b = totals[0], prior["a"], prior["b"]
        return special.betaln(ones + a, exposure - ones + b) - special.betaln(a, b)


#: The Bernoulli family: :class:`BernoulliLBM` and its facets.
BERNOULLI = Family(
    "bernoulli", BernoulliLBM, storage=BernoulliStorage, presentation=BernoulliPresentation,
    options=BernoulliOptions, designs=BernoulliDesigns, estimation=BernoulliEstimation,
)


def _density_offset(design: Any, scale: float) -> float:
    """``c`` with ``sum_kl pi_k rho_l expit(c + scale * dispersion_kl * pattern_kl) = density``."""
    spread = scale * design.dispersion * design.pattern
    mass = np.outer(design.row_proportions, design.col_proportions)
    centre = float(special.logit(design.density))
    reach = float(np.abs(spread).max()) + 1.0

    def excess(c: float) -> float:
        return float(np.sum(mass * special.expit(c + spread))) - design.density

    return optimize.brentq(excess, centre - reach, centre + reach, xtol=1e-13, rtol=1e-15)
