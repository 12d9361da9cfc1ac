"""Random parameter designs for latent block models, with one difficulty knob.

A :class:`ModelDesign` holds everything about a model except its *scale*:
the cluster proportions, a block pattern (where the block means or modes sit)
and the dispersions. :meth:`ModelDesign.model` turns a scale into a model, so
the calibrator can move the scale while every other parameter stays fixed.
Larger scales separate the blocks more: the risk decreases with the scale.

- Gaussian: ``means = scale * pattern``, ``stds = dispersion ** scale``: the
  scale moves the block means apart *and* the block variances away from one
  another, so that at scale 0 every block is N(0, 1) and the risk is that of
  guessing whatever the table size. (With fixed unequal variances, the variances
  alone would identify the classes of a large table, and no scale would make it
  hard: a 400x400 table could not be calibrated to 20%.)
- Poisson: ``rates = base_rate * exp(scale * pattern)`` (the spread of log-rates).
- Bernoulli: ``probs = 1/2 + pattern * tanh(scale * dispersion) / 2`` with a
  +-1 pattern (the binary modes) whose rows and columns are distinct.

**Sparse designs** (``density``, Bernoulli and Poisson): the expected fraction
of non-zero entries is fixed at every scale, and the scale separates the blocks
*relative* to it:

- Bernoulli: ``logit(probs) = c + scale * dispersion * pattern``;
- Poisson: ``log(rates) = c + scale * pattern`` (times the row and column
  effects of the contingency model when present),

where the offset ``c`` (solved at each scale) makes the expected fraction of
non-zero entries under the model, ``sum_kl pi_k rho_l E[P(x_ij > 0)]``, equal to
``density``. At scale 0 every block has the same density and the risk is that
of guessing. Models of a sparse design draw sparse tables
(``scipy.sparse.csr_array``, see :mod:`lbm_bench.models.sparse_noise`).

Row and column propensities are not offered for Bernoulli blocks: with
``logit p_ij = alpha_i + beta_j + theta_kl`` (or ``p_ij = a_i b_j p_kl``) the
zeros' term ``log(1 - p_ij)`` no longer factors into a row part, a column part
and a block part, so the label steps would need every entry of a block (no
closed form for the zeros, O(n_rows n_cols) per step) instead of the block sums
of the non-zeros: the engine would no longer be exact at sparse cost.

Patterns are searched so that every pair of row classes and every pair of
column classes is separated to a similar degree (the paper's "roughly
symmetric" layout) while no non-trivial joint permutation of row and column
classes maps the pattern to itself or close to it.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import optimize, special

from lbm_bench._docstrings import fill_doc
from lbm_bench._validation import check_count, check_kind, check_positive_float, check_probability
from lbm_bench.models.families import BernoulliLBM, GaussianLBM, LatentBlockModel, PoissonLBM, find_symmetry

__all__ = ["ModelDesign", "random_design", "random_model", "resolve_effects"]

#: Probabilities are kept this far from 0 and 1 when the scale is huge.
_PROB_FLOOR = 1e-9
#: Joint class permutations are enumerated for the near-symmetry check up to this many.
_MAX_ENUMERATED = 20_000
#: Minimum distance to any jointly permuted pattern, relative to the class separation.
_MIN_ASYMMETRY = 0.5
#: Poisson effects are summarised by this many equal-count groups (group means) when
#: solving for the density offset...
_EFFECT_GROUPS = 256
#: ... and the products ``a_i b_j`` by this many.
_PRODUCT_GROUPS = 4096
#: Default standard deviation of the log effects (log-normal, normalised to mean one).
EFFECTS_SPREAD = 0.3


@fill_doc
@dataclass(frozen=True)
class ModelDesign:
    """The scale-free part of a latent block model.

    {{kind_attribute}}
    row_proportions : ndarray of shape (g,)
    col_proportions : ndarray of shape (m,)
    pattern : ndarray of shape (g, m)
        Real pattern (Gaussian, Poisson), centred with unit mean class
        separation, or +-1 binary modes (Bernoulli).
    dispersion : ndarray of shape (g, m)
        Block standard deviations at scale 1 (Gaussian; ``dispersion ** scale``
        at other scales), relative deviations from the mode (Bernoulli), ones
        (Poisson).
    base_rate : float
        Geometric mean rate of the Poisson blocks (unused otherwise).
    row_effects, col_effects : ndarray or None
        Poisson row/column effects (contingency model), normalised to mean one.
    density : float or None
        Expected fraction of non-zero entries (Bernoulli, Poisson): a sparse
        design whose models draw ``scipy.sparse.csr_array`` tables. None: the
        dense designs above.
    """

    kind: str
    row_proportions: np.ndarray
    col_proportions: np.ndarray
    pattern: np.ndarray
    dispersion: np.ndarray
    base_rate: float = 1.0
    row_effects: np.ndarray | None = field(default=None)
    col_effects: np.ndarray | None = field(default=None)
    density: float | None = None

    @property
    def _cache(self) -> dict:
        """Per-design memo of the density offsets (not a field: copies start empty)."""
        cache = self.__dict__.get("_memo")
        if cache is None:
            cache = {}
            object.__setattr__(self, "_memo", cache)
        return cache

    @property
    def block_shape(self) -> tuple[int, int]:
        """``(g, m)``."""
        return self.pattern.shape  # type: ignore[return-value]

    def model(self, scale: float) -> LatentBlockModel:
        """The model at a given scale (larger is easier).

        Examples
        --------
        >>> design = random_design("bernoulli", 2, 3, rng=0)
        >>> model = design.model(1.0)
        >>> model.probs.shape
        (2, 3)
        """
        scale = check_positive_float("scale", scale)
        if self.kind == "gaussian":
            return GaussianLBM(
                self.row_proportions, self.col_proportions, scale * self.pattern, self.dispersion**scale
            )
        sparse = self.density is not None
        if self.kind == "poisson":
            if sparse:
                rates = np.exp(self._poisson_offset(scale) + scale * self.pattern)
            else:
                rates = self.base_rate * np.exp(scale * self.pattern)
            return PoissonLBM(
                self.row_proportions, self.col_proportions, rates, self.row_effects, self.col_effects,
                sparse=sparse,
            )
        if sparse:
            logits = self._bernoulli_offset(scale) + scale * self.dispersion * self.pattern
            probs = np.clip(special.expit(logits), _PROB_FLOOR, 1 - _PROB_FLOOR)
            return BernoulliLBM(self.row_proportions, self.col_proportions, probs, sparse=True)
        probs = 0.5 + 0.5 * self.pattern * np.tanh(scale * self.dispersion)
        probs = np.clip(probs, _PROB_FLOOR, 1 - _PROB_FLOOR)
        return BernoulliLBM(self.row_proportions, self.col_proportions, probs)

    @property
    def _block_mass(self) -> np.ndarray:
        return np.outer(self.row_proportions, self.col_proportions)

    def _bernoulli_offset(self, scale: float) -> float:
        """``c`` with ``sum_kl pi_k rho_l expit(c + scale * dispersion_kl * pattern_kl) = density``."""
        spread = scale * self.dispersion * self.pattern
        mass = self._block_mass
        centre = float(special.logit(self.density))
        reach = float(np.abs(spread).max()) + 1.0

        def excess(c: float) -> float:
            return float(np.sum(mass * special.expit(c + spread))) - self.density

        return optimize.brentq(excess, centre - reach, centre + reach, xtol=1e-13, rtol=1e-15)

    def _poisson_offset(self, scale: float) -> float:
        """``c`` with expected non-zero fraction ``sum_kl pi_k rho_l E_ij[1 - exp(-a_i b_j e^(c + scale P_kl))]``
        equal to ``density`` (effects summarised by :data:`_EFFECT_GROUPS` group means each)."""
        key = ("poisson_offset", float(scale))
        if key in self._cache:
            return self._cache[key]
        spread = scale * self.pattern
        mass = self._block_mass
        if "exposures" not in self._cache:
            self._cache["exposures"] = _exposure_groups(self.row_effects, self.col_effects)
        exposure, weight = self._cache["exposures"]
        centre = math.log(-math.log1p(-self.density))
        reach = float(np.abs(spread).max()) + float(np.log(exposure.max() / exposure.min())) + 1.0

        def excess(c: float) -> float:
            rates = np.exp(c + spread)[:, :, None] * exposure
            nonzero = np.sum(-np.expm1(-rates) * weight, axis=2)
            return float(np.sum(mass * nonzero)) - self.density

        offset = optimize.brentq(excess, centre - reach, centre + reach, xtol=1e-13, rtol=1e-15)
        if len(self._cache) < 256:
            self._cache[key] = offset
        return offset

    def to_dict(self) -> dict[str, Any]:
        """Plain-array form, for storage."""
        out: dict[str, Any] = {
            "kind": self.kind,
            "row_proportions": self.row_proportions,
            "col_proportions": self.col_proportions,
            "pattern": self.pattern,
            "dispersion": self.dispersion,
            "base_rate": self.base_rate,
        }
        if self.row_effects is not None:
            out["row_effects"] = self.row_effects
            out["col_effects"] = self.col_effects
        if self.density is not None:
            out["density"] = self.density
        return out


def _effect_groups(effects: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """Means and weights (fractions) of up to :data:`_EFFECT_GROUPS` equal-count groups of sorted effects."""
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
    means = np.array([np.dot(products[p], weights[p]) for p in parts]) / totals
    return means, totals


def resolve_effects(options: dict[str, Any], n_rows: int, n_cols: int) -> dict[str, Any]:
    """Design options with ``effects=True`` replaced by the table shape ``(n_rows, n_cols)``
    (``effects=False`` dropped), as :func:`random_design` expects."""
    effects = options.get("effects")
    if effects is True:
        return {**options, "effects": (n_rows, n_cols)}
    if effects is False:
        return {k: v for k, v in options.items() if k != "effects"}
    return dict(options)


def _pairwise_rms(vectors: np.ndarray) -> np.ndarray:
    """RMS distances between all pairs of rows of ``vectors`` (pairs i < j)."""
    i, j = np.triu_indices(vectors.shape[0], 1)
    return np.sqrt(np.mean((vectors[i] - vectors[j]) ** 2, axis=1))


def _separation_spread(pattern: np.ndarray) -> float:
    """max/min pairwise class distance over rows and columns (1 is perfect)."""
    spreads = []
    for vectors in (pattern, pattern.T):
        if vectors.shape[0] > 1:
            dist = _pairwise_rms(vectors)
            if dist.min() <= 1e-12:
                return math.inf
            spreads.append(dist.max() / dist.min())
    return max(spreads) if spreads else 1.0


def _mean_separation(pattern: np.ndarray) -> float:
    dists = [_pairwise_rms(v) for v in (pattern, pattern.T) if v.shape[0] > 1]
    return float(np.mean(np.concatenate(dists))) if dists else 1.0


def _asymmetry(pattern: np.ndarray) -> float:
    """How far the pattern is from every jointly permuted copy of itself.

    For each non-trivial pair of class permutations ``(sigma, tau)``, the RMS
    difference between the pattern and ``pattern[sigma][:, tau]`` over the
    entries the permutation moves, relative to the mean class separation; the
    minimum over pairs (``inf`` when there are too many pairs to enumerate).
    """
    g, m = pattern.shape
    if math.factorial(g) * math.factorial(m) > _MAX_ENUMERATED:
        return math.inf
    cols = np.array(list(itertools.permutations(range(m))))
    col_fixed = (cols == np.arange(m)).sum(axis=1)
    best = math.inf
    for sigma in itertools.permutations(range(g)):
        row_fixed = int(np.sum(np.array(sigma) == np.arange(g)))
        moved = 1.0 - row_fixed * col_fixed / (g * m)  # fraction of entries moved
        stack = pattern[list(sigma)][:, cols].transpose(1, 0, 2)  # (n_tau, g, m)
        dist = np.sqrt(np.sum((stack - pattern) ** 2, axis=(1, 2)) / (g * m))
        ok = moved > 0
        if ok.any():
            best = min(best, float(np.min(dist[ok] / np.sqrt(moved[ok]))))
    return best / _mean_separation(pattern)


def _real_pattern(g: int, m: int, rng: np.random.Generator, n_steps: int = 400) -> np.ndarray:
    """A centred pattern with near-equal pairwise separations and no near-symmetry,
    by random search then hill climbing under the asymmetry constraint."""
    best, best_score = None, math.inf
    while best is None:
        for _ in range(64):
            candidate = rng.uniform(-1, 1, size=(g, m))
            score = _separation_spread(candidate)
            if score < best_score and _asymmetry(candidate) >= _MIN_ASYMMETRY:
                best, best_score = candidate, score
    step = 0.2
    for _ in range(n_steps):
        candidate = best + step * rng.standard_normal((g, m)) * (rng.random((g, m)) < 0.3)
        score = _separation_spread(candidate)
        if score < best_score and _asymmetry(candidate) >= _MIN_ASYMMETRY:
            best, best_score = candidate, score
    best = best - best.mean()
    return best / _mean_separation(best)


def _binary_pattern(g: int, m: int, rng: np.random.Generator) -> np.ndarray:
    """A +-1 pattern with distinct rows and columns, near-equal Hamming separations."""
    if g > 2**m or m > 2**g:
        raise ValueError(
            f"a binary pattern needs distinct rows and columns: impossible with {g}x{m} clusters"
        )
    best, best_score = None, math.inf
    for _ in range(2000):
        candidate = np.where(rng.random((g, m)) < 0.5, 1.0, -1.0)
        score = _separation_spread(candidate)
        if score < best_score and _asymmetry(candidate) > 0:
            best, best_score = candidate, score
            if score == 1.0:
                break
    if best is None:
        raise ValueError(f"no asymmetric binary pattern found for {g}x{m} clusters")
    return best


def _random_proportions(n: int, equal: bool, rng: np.random.Generator) -> np.ndarray:
    if equal:
        return np.full(n, 1.0 / n)
    while True:
        props = rng.dirichlet(np.full(n, 10.0))
        if props.min() >= 0.5 / n:
            return props


def _random_dispersion(
    shape: tuple[int, int], equal: bool, spread: float, rng: np.random.Generator
) -> np.ndarray:
    if equal:
        return np.ones(shape)
    return rng.uniform(1 - spread, 1 + spread, size=shape)


def random_design(
    kind: str,
    n_row_clusters: int,
    n_col_clusters: int,
    *,
    equal_proportions: bool = False,
    equal_dispersions: bool = False,
    dispersion_spread: float = 0.25,
    base_rate: float = 2.0,
    effects: tuple[int, int] | None = None,
    effects_spread: float = EFFECTS_SPREAD,
    density: float | None = None,
    rng: np.random.Generator | int | None = None,
) -> ModelDesign:
    """Draw the scale-free parameters of a latent block model.

    Parameters
    ----------
    kind : {"gaussian", "poisson", "bernoulli"}
        Family of the blocks.
    n_row_clusters, n_col_clusters : int
        Numbers of row and column clusters (at least 2 each).
    equal_proportions : bool, default=False
        Use equal cluster proportions instead of random ones (Dirichlet(10),
        each at least half the equal share).
    equal_dispersions : bool, default=False
        Use equal dispersions (unit standard deviations, equal deviations from
        the modes) instead of random ones.
    dispersion_spread : float, default=0.25
        Random dispersions are uniform in ``[1 - spread, 1 + spread]``: the
        same order of magnitude across blocks.
    base_rate : float, default=2.0
        Geometric mean of the Poisson rates (dense designs; a sparse design's
        rates follow from its density).
    effects : (n_rows, n_cols) or None
        Poisson only: draw row and column effects (log-normal, mean one) for a
        table of this shape (Govaert and Nadif's contingency model).
        :func:`~lbm_bench.generate_table` also takes ``effects=True`` (the
        table's shape).
    effects_spread : float, default=0.3
        Standard deviation of the log effects before they are normalised to
        mean one (0.3: most effects within a factor 1.8 of one; 1: uneven
        totals as in document-term tables).
    density : float in (0, 1), optional
        Bernoulli and Poisson: the expected fraction of non-zero entries at
        every scale; the design is sparse and its tables are
        ``scipy.sparse.csr_array`` (see the module documentation).
    rng : None, int or numpy.random.Generator
        Source of randomness.

    Returns
    -------
    ModelDesign

    Raises
    ------
    ValueError
        When the cluster numbers admit no asymmetric design.

    Examples
    --------
    >>> design = random_design("gaussian", 3, 3, rng=1)
    >>> design.pattern.shape
    (3, 3)
    >>> find_symmetry(design.model(1.0)) is None
    True
    """
    rng = np.random.default_rng(rng)
    kind = check_kind(kind)
    g = check_count("n_row_clusters", n_row_clusters, minimum=2)
    m = check_count("n_col_clusters", n_col_clusters, minimum=2)
    spread = check_positive_float("dispersion_spread", dispersion_spread, allow_zero=True)
    if spread >= 1:
        raise ValueError(f"dispersion_spread must be < 1, got {spread}")
    base_rate = check_positive_float("base_rate", base_rate)
    if effects is not None and kind != "poisson":
        raise ValueError(f"effects are only defined for the poisson kind, got kind={kind!r}")
    if effects is True:
        raise ValueError("effects=True needs the table shape here: pass effects=(n_rows, n_cols)")
    effects_spread = check_positive_float("effects_spread", effects_spread, allow_zero=True)
    if density is not None:
        if kind == "gaussian":
            raise ValueError("density is defined for the bernoulli and poisson kinds, got kind='gaussian'")
        density = check_probability("density", density)
        if kind == "bernoulli" and density > 0.5:
            raise ValueError(f"density must be <= 0.5 for sparse bernoulli designs, got {density}")
    for _attempt in range(20):
        pattern = _binary_pattern(g, m, rng) if kind == "bernoulli" else _real_pattern(g, m, rng)
        row_props = _random_proportions(g, equal_proportions, rng)
        col_props = _random_proportions(m, equal_proportions, rng)
        dispersion = _random_dispersion(
            (g, m), equal_dispersions or kind == "poisson", spread, rng
        )
        row_effects = col_effects = None
        if effects is not None:
            n_rows = check_count("effects[0]", effects[0])
            n_cols = check_count("effects[1]", effects[1])
            row_effects = rng.lognormal(0.0, effects_spread, n_rows)
            col_effects = rng.lognormal(0.0, effects_spread, n_cols)
            row_effects /= row_effects.mean()
            col_effects /= col_effects.mean()
        design = ModelDesign(
            kind, row_props, col_props, pattern, dispersion, base_rate, row_effects, col_effects,
            density,
        )
        if find_symmetry(design.model(1.0)) is None:
            return design
    raise ValueError(f"could not draw an asymmetric {kind} design with {g}x{m} clusters")


def random_model(
    kind: str,
    n_row_clusters: int,
    n_col_clusters: int,
    *,
    scale: float,
    rng: np.random.Generator | int | None = None,
    **design_options: Any,
) -> LatentBlockModel:
    """Draw a random latent block model at a given scale.

    Shortcut for ``random_design(kind, g, m, rng=rng, **options).model(scale)``.

    Examples
    --------
    >>> model = random_model("poisson", 2, 2, scale=1.0, rng=0)
    >>> model.rates.shape
    (2, 2)
    """
    return random_design(kind, n_row_clusters, n_col_clusters, rng=rng, **design_options).model(scale)
