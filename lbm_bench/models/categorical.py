"""Categorical blocks: tables of unordered category codes, ``x_ij ~ Categorical(probs_kl)``.

An entry is one of ``K`` categories (``2 <= K <= 255``), stored as the ``uint8``
code ``0 .. K-1``; each block ``(k, l)`` has its probability vector ``probs_kl``
over the categories. Survey answers, votes, genotypes and ratings seen as
unordered classes are tables of this kind (blockcluster's categorical model).

Exponential-family form, category 0 the reference: ``T_c(x) = [x = c]`` for
``c = 1 .. K-1``, ``eta_c = log(p_c / p_0)``, ``A = -log p_0``, ``log h(x) = 0``.
With ``K = 2`` this is the Bernoulli family (``T(x) = x``, ``eta = logit p_1``,
``A = -log(1 - p_1)``), and a table drawn from the same uniforms is the same table:
``x_ij = #{c >= 1 : u_ij < P(x >= c)}`` is ``[u_ij < p_1]`` for two categories.
The statistics are the indicators of a code (``code_statistics``): the inference
engine keeps the codes and counts them per class and category
(:mod:`lbm_bench.inference.code_sums`), so a sweep costs about what a binary
table's does, not ``K - 1`` times as much.

**Design at a scale**: each block has a dominant category ``c_kl`` (the pattern,
stored one-hot of shape (g, m, K)) and

    probs_kl[c]  proportional to  exp(2 * scale * dispersion_kl * [c = c_kl]),

so the dominant category has probability ``e^(2 s d) / (e^(2 s d) + K - 1)`` and the
others share the rest equally. At scale 0 every block is uniform over the
categories (chance); as the scale grows every dominant share rises to one, moving
the blocks apart monotonically, until the table is trivially separable. With
``K = 2`` this is the Bernoulli design ``1/2 +- tanh(scale * dispersion) / 2``.
The dominant categories are drawn so that any two row classes differ on some
column class and any two column classes on some row class (distinct rows and
columns, hence ``g <= K^m`` and ``m <= K^g``), with near-equal Hamming separations,
as many categories in use as the blocks allow, and no joint permutation of row and
column classes mapping the pattern to itself.

Option ``categories`` (required): ``K``. Tables cannot be sparse; there are no row
or column effects.

**Estimates** (EM baselines): block frequencies of the categories, clipped to at
least ``1e-6`` and renormalised; ``K`` is one more than the largest code of the
table fitted.

**Exact ICL** (model selection): each block's probability vector has the Jeffreys prior
Dirichlet(1/2, ..., 1/2), so a block with category counts ``N_c`` (``n`` entries)
integrates to ``Gamma(K/2) prod_c Gamma(N_c + 1/2) / (Gamma(1/2)^K Gamma(n + K/2))``
(blockcluster's categorical ICL).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import special

import lbm_bench._portable as portable
from lbm_bench._docstrings import fill_doc
from lbm_bench._records import optional, setting
from lbm_bench._validation import describe_value
from lbm_bench.models.base import PROB_CLIP, PROB_FLOOR, LatentBlockModel
from lbm_bench.models.checks import refuse_sparse
from lbm_bench.models.family import Designs, Estimation, Family, Options, Presentation, StorageCodec
from lbm_bench.models.symmetry import find_symmetry

__all__ = [
    "CATEGORICAL", "CATEGORIES_OPTION", "CategoricalLBM", "ICL_DIRICHLET", "MAX_CATEGORIES",
    "category_codes", "check_categories", "dominant_categories"
]

#: Most categories a table can have (codes are stored as uint8).
MAX_CATEGORIES = 255
#: Every parameter of the Dirichlet prior of a block's probabilities in the exact ICL (Jeffreys).
ICL_DIRICHLET = 0.5
#: Tolerance on the sum of a block's probabilities.
_SUM_TOLERANCE = 1e-8
#: Random code patterns tried by the pattern search.
_PATTERN_ATTEMPTS = 2000


def check_categories(name: str, value: Any) -> int:
    """Check of a number of categories: an integer in [2, :data:`MAX_CATEGORIES`]."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        if isinstance(value, (float, np.floating)) and float(value).is_integer():
            value = int(value)
        else:
            raise TypeError(f"{name} must be an integer, got {describe_value(value)}")
    value = int(value)
    if not 2 <= value <= MAX_CATEGORIES:
        raise ValueError(f"{name} must be between 2 and {MAX_CATEGORIES}, got {value}")
    return value


#: The design option of the family: the number of categories K.
CATEGORIES_OPTION = setting(
    None, optional(check_categories), "--categories",
    f"categorical: number of categories K, 2 to {MAX_CATEGORIES} (required for that kind)",
    parse=int,
)


def _check_probs(probs: Any, shape: tuple[int, int]) -> np.ndarray:
    """A finite float64 (g, m, K) array of positive probabilities summing to one per block."""
    try:
        array = np.asarray(probs, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"probs must be an array of numbers, got {describe_value(probs)}") from exc
    if array.ndim != 3 or array.shape[:2] != shape:
        raise ValueError(f"probs must have shape {shape + ('K',)}, got shape {array.shape}")
    if not 2 <= array.shape[2] <= MAX_CATEGORIES:
        raise ValueError(f"probs must have between 2 and {MAX_CATEGORIES} categories, got "
                         f"{array.shape[2]}")
    if not np.all(np.isfinite(array)):
        raise ValueError("probs must be finite")
    if np.any(array <= 0):
        raise ValueError(f"probs must be > 0, got min {array.min()!r}")
    sums = array.sum(axis=2)
    worst = float(np.abs(sums - 1.0).max())
    if worst > _SUM_TOLERANCE:
        raise ValueError("probs must sum to 1 over the categories of each block, got a sum off by "
                         f"{worst:.3g}")
    return array


@fill_doc
class CategoricalLBM(LatentBlockModel):
    """Latent block model for category codes, ``x_ij ~ Categorical(probs_kl)``.

    {{proportions}}
    probs : array-like of shape (g, m, K)
        Block probability vectors over the ``K`` categories (``2 <= K <= 255``):
        positive, summing to one over the last axis (within 1e-8; kept as given).

    Examples
    --------
    >>> model = CategoricalLBM([0.5, 0.5], [1.0], [[[0.7, 0.2, 0.1]], [[0.1, 0.1, 0.8]]])
    >>> model.categories, model.n_stats
    (3, 2)
    >>> X, z, w = model.sample(4, 3, rng=0)
    >>> X.dtype, int(X.max()) < 3
    (dtype('uint8'), True)
    """

    table_dtype = np.dtype(np.uint8)
    code_statistics = True

    def __init__(self, row_proportions: Any, col_proportions: Any, probs: Any) -> None:
        super().__init__(row_proportions, col_proportions)
        self.probs = _check_probs(probs, self.block_shape)
        self.categories = int(self.probs.shape[2])
        self.n_stats = self.categories - 1

    @property
    def n_levels(self) -> int:
        return self.categories

    # -- exponential-family interface ------------------------------------------------
    @property
    def natural_parameters(self) -> np.ndarray:
        log_probs = portable.log(self.probs)
        return np.moveaxis(log_probs[:, :, 1:] - log_probs[:, :, :1], 2, 0)

    @property
    def log_partition(self) -> np.ndarray:
        return -portable.log(self.probs[:, :, 0])

    def sufficient_statistics(self, X: np.ndarray) -> np.ndarray:
        X = np.asarray(X)
        out = np.empty((self.n_stats,) + X.shape)
        for c in range(1, self.categories):
            np.equal(X, c, out=out[c - 1], casting="unsafe")
        return out

    def log_base_measure(self, X: Any) -> float:
        return 0.0

    def check_table(self, X: Any, name: str = "X") -> np.ndarray:
        return category_codes(X, name, self.categories)

    def table_from_noise(self, noise: np.ndarray, z: np.ndarray, w: np.ndarray) -> np.ndarray:
        # P(x >= c) for c = K-1, ..., 1 (increasing); x = #{c >= 1 : u < P(x >= c)}
        tails = np.cumsum(self.probs[:, :, ::-1], axis=2)[:, :, : self.categories - 1]
        table = np.empty(noise.shape, dtype=np.uint8)
        top = self.categories - 1
        for k, l, block in self.nonempty_blocks(z, w):
            table[block] = top - np.searchsorted(tails[k, l], noise[block], side="right")
        return table

    def block_parameters(self) -> dict[str, np.ndarray]:
        return {"probs": self.probs}

    def entry_means(self) -> np.ndarray:
        """The mean code of each block (codes are unordered: a summary only)."""
        return self.probs @ np.arange(self.categories, dtype=np.float64)

    @property
    def mean_statistics(self) -> np.ndarray:
        return np.moveaxis(self.probs[:, :, 1:], 2, 0).copy()


def category_codes(X: Any, name: str, categories: int) -> np.ndarray:
    """A dense 2-D uint8 array of codes ``0 .. categories - 1``; one-line errors otherwise."""
    refuse_sparse(X, "a categorical model", reason=f"{name} is a scipy.sparse table",
                  remedy=f"densify it with {name}.toarray()")
    array = np.asarray(X)
    if array.dtype.kind == "b":
        array = array.astype(np.uint8)
    if array.dtype.kind not in "iuf":
        raise TypeError(f"{name} must hold category codes (integers), got dtype {array.dtype}")
    if array.ndim != 2 or array.size == 0:
        raise ValueError(f"{name} must be a non-empty 2-D array, got shape {array.shape}")
    if array.dtype.kind == "f" and (not np.all(np.isfinite(array)) or
                                    np.any(array != np.round(array))):
        raise ValueError(f"{name} must hold category codes (integers), got non-integer values")
    low, high = array.min(), array.max()
    if low < 0:
        raise ValueError(f"{name} must hold category codes 0..{categories - 1}, got a negative "
                         f"code {int(low)}")
    if high >= categories:
        raise ValueError(
            f"{name} must hold category codes 0..{categories - 1} ({categories} categories), got "
            f"code {int(high)}"
        )
    return array.astype(np.uint8, copy=False)


class CategoricalStorage(StorageCodec):
    parameter_names = ("probs",)
    block_extents = ("@categories",)
    header_attributes = {
        "categories": ("int", "number of categories K: the entries are the codes 0..K-1"),
    }

    def header_values(self, model: CategoricalLBM) -> dict[str, Any]:
        return {"categories": model.categories}

    def header_problem(self, header: dict[str, Any]) -> str | None:
        value = header["categories"]
        if not 2 <= value <= MAX_CATEGORIES:
            return f"attribute @categories must be between 2 and {MAX_CATEGORIES}, got {value}"
        return None

    def value_problem(self, values: np.ndarray, **header: Any) -> str | None:
        top = int(values.max())
        if top >= header["categories"]:
            last = header["categories"] - 1
            return f"holds code {top}, outside 0..{last} (@categories is {header['categories']})"
        return None


class CategoricalPresentation(Presentation):
    entries = "category codes"
    block_description = "categorical blocks (a probability vector over the K categories per block)"
    colormap = "tab10"
    boundary_color = "black"


class CategoricalOptions(Options):
    fields = {"categories": CATEGORIES_OPTION}

    def check(self, options: dict[str, Any]) -> dict[str, Any]:
        out = super().check(options)
        if out["categories"] is None:
            raise ValueError(
                "categorical tables need categories, the number of categories K (2 to "
                f"{MAX_CATEGORIES}), e.g. categories=5"
            )
        return out

    def count_statistics(self, options: dict[str, Any]) -> int:
        return int(options["categories"]) - 1

    def id_tag(self, options: dict[str, Any]) -> str:
        return f"-k{int(options['categories'])}"


class CategoricalDesigns(Designs):
    def check_clusters(self, n_row_clusters: int, n_col_clusters: int,
                       options: dict[str, Any] | None = None) -> None:
        g, m = n_row_clusters, n_col_clusters
        K = (options or {}).get("categories") or MAX_CATEGORIES
        if g > K**m or m > K**g:
            raise ValueError(
                "categorical blocks need distinct dominant categories for every row and column "
                f"class: impossible with {g}x{m} clusters and {K} categories"
            )

    def draw_pattern(self, n_row_clusters: int, n_col_clusters: int, rng: np.random.Generator,
                     options: dict[str, Any]) -> np.ndarray:
        K = check_categories("categories", (options or {}).get("categories"))
        self.check_clusters(n_row_clusters, n_col_clusters, {"categories": K})
        codes = dominant_categories(n_row_clusters, n_col_clusters, K, rng)
        return np.eye(K)[codes]

    def model_at_scale(self, design: Any, scale: float) -> CategoricalLBM:
        logits = 2.0 * scale * design.dispersion[:, :, None] * design.pattern
        logits -= logits.max(axis=2, keepdims=True)
        probs = portable.exp(logits)
        probs /= probs.sum(axis=2, keepdims=True)
        if probs.min() < PROB_FLOOR:
            probs = np.maximum(probs, PROB_FLOOR)
            probs /= probs.sum(axis=2, keepdims=True)
        return CategoricalLBM(design.row_proportions, design.col_proportions, probs)

    def options_of(self, design: Any) -> dict[str, Any]:
        return {"categories": int(design.pattern.shape[2])}

    def model_from_natural(self, design: Any, natural: np.ndarray) -> CategoricalLBM:
        # category 0: the reference
        logits = np.concatenate([np.zeros((1,) + natural.shape[1:]), natural])
        logits -= logits.max(axis=0, keepdims=True)
        probs = np.moveaxis(portable.exp(logits), 0, 2)
        probs /= probs.sum(axis=2, keepdims=True)
        if probs.min() < PROB_FLOOR:
            probs = np.maximum(probs, PROB_FLOOR)
            probs /= probs.sum(axis=2, keepdims=True)
        return CategoricalLBM(design.row_proportions, design.col_proportions, probs)


class CategoricalEstimation(Estimation):
    default_icl = "exact-icl"
    icl_prior = "Dirichlet(1/2, ..., 1/2) on each block's probabilities"

    def estimate_blocks(self, totals: np.ndarray, exposure: np.ndarray, var_floor: float,
                        prior_var: float = 0.0) -> dict[str, np.ndarray]:
        others = np.moveaxis(totals, 0, -1) / exposure[:, :, None]  # (g, m, K - 1)
        probs = np.concatenate([1.0 - others.sum(axis=2, keepdims=True), others], axis=2)
        probs = np.maximum(probs, PROB_CLIP)
        return {"probs": probs / probs.sum(axis=2, keepdims=True)}

    def placeholder(self, table: Any = None) -> CategoricalLBM:
        K = 2
        if table is not None:
            codes = category_codes(table, "X", MAX_CATEGORIES)
            K = max(2, int(codes.max()) + 1)
        return CategoricalLBM([1.0], [1.0], np.full((1, 1, K), 1.0 / K))

    def conjugate_prior(self, totals: np.ndarray, size: float) -> dict[str, float]:
        return {"concentration": ICL_DIRICHLET}

    def log_marginal_blocks(self, totals: np.ndarray, exposure: np.ndarray,
                            prior: dict[str, float]) -> np.ndarray:
        beta, K = prior["concentration"], totals.shape[0] + 1
        first = exposure - totals.sum(axis=0)  # the reference category's count
        counts = special.gammaln(first + beta) + special.gammaln(totals + beta).sum(axis=0)
        return (special.gammaln(K * beta) - K * special.gammaln(beta) + counts
                - special.gammaln(exposure + K * beta))


#: The categorical family: :class:`CategoricalLBM` and its facets.
CATEGORICAL = Family(
    "categorical", CategoricalLBM, storage=CategoricalStorage, presentation=CategoricalPresentation,
    options=CategoricalOptions, designs=CategoricalDesigns, estimation=CategoricalEstimation,
)


def _hamming_spread(codes: np.ndarray) -> float:
    """max/min share of differing codes between pairs of rows and of columns (inf: two equal)."""
    spreads = []
    for vectors in (codes, codes.T):
        if vectors.shape[0] > 1:
            i, j = np.triu_indices(vectors.shape[0], 1)
            share = np.mean(vectors[i] != vectors[j], axis=1)
            if share.min() == 0:
                return math.inf
            spreads.append(share.max() / share.min())
    return max(spreads) if spreads else 1.0


def _symmetric(codes: np.ndarray, K: int) -> bool:
    """Whether a joint permutation of row and column classes maps the codes to themselves."""
    g, m = codes.shape
    probs = np.where(np.eye(K, dtype=bool)[codes], 0.75, 0.25 / (K - 1))
    model = CategoricalLBM(np.full(g, 1.0 / g), np.full(m, 1.0 / m),
                           probs / probs.sum(axis=2, keepdims=True))
    return find_symmetry(model) is not None


def dominant_categories(
    n_row_clusters: int, n_col_clusters: int, categories: int, rng: np.random.Generator
) -> np.ndarray:
    """The dominant category of each block of a random design: (g, m) codes ``< categories``.

    Distinct rows and columns (every two classes differ on some class of the other
    side), near-equal Hamming separations, as many categories in use as the
    ``g m`` blocks allow, and no joint permutation of classes leaving the codes
    unchanged; the best of up to 2,000 random draws.
    """
    g, m, K = n_row_clusters, n_col_clusters, categories
    wanted = min(K, g * m)
    best, best_score = None, (math.inf, 0)
    for _ in range(_PATTERN_ATTEMPTS):
        codes = rng.integers(0, K, size=(g, m))
        score = (_hamming_spread(codes), -len(np.unique(codes)))
        if score < best_score and math.isfinite(score[0]) and not _symmetric(codes, K):
            best, best_score = codes, score
            if score == (1.0, -wanted):
                break
    if best is None:
        raise ValueError(f"no asymmetric pattern of dominant categories found for {g}x{m} clusters "
                         f"and {K} categories")
    return best
