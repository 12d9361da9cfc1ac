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

from lbm_bench._validation import check_count, check_kind, check_positive_float
from lbm_bench.models.families import BernoulliLBM, GaussianLBM, LatentBlockModel, PoissonLBM, find_symmetry

__all__ = ["ModelDesign", "random_design", "random_model"]

#: Probabilities are kept this far from 0 and 1 when the scale is huge.
_PROB_FLOOR = 1e-9
#: Joint class permutations are enumerated for the near-symmetry check up to this many.
_MAX_ENUMERATED = 20_000
#: Minimum distance to any jointly permuted pattern, relative to the class separation.
_MIN_ASYMMETRY = 0.5


@dataclass(frozen=True)
class ModelDesign:
    """The scale-free part of a latent block model.

    Attributes
    ----------
    kind : str
        ``"gaussian"``, ``"poisson"`` or ``"bernoulli"``.
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
    """

    kind: str
    row_proportions: np.ndarray
    col_proportions: np.ndarray
    pattern: np.ndarray
    dispersion: np.ndarray
    base_rate: float = 1.0
    row_effects: np.ndarray | None = field(default=None)
    col_effects: np.ndarray | None = field(default=None)

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
        if self.kind == "poisson":
            rates = self.base_rate * np.exp(scale * self.pattern)
            return PoissonLBM(
                self.row_proportions, self.col_proportions, rates, self.row_effects, self.col_effects
            )
        probs = 0.5 + 0.5 * self.pattern * np.tanh(scale * self.dispersion)
        probs = np.clip(probs, _PROB_FLOOR, 1 - _PROB_FLOOR)
        return BernoulliLBM(self.row_proportions, self.col_proportions, probs)

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
        return out


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
        Geometric mean of the Poisson rates.
    effects : (n_rows, n_cols) or None
        Poisson only: draw row and column effects (log-normal, mean one) for a
        table of this shape (Govaert and Nadif's contingency model).
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
            row_effects = rng.lognormal(0.0, 0.3, n_rows)
            col_effects = rng.lognormal(0.0, 0.3, n_cols)
            row_effects /= row_effects.mean()
            col_effects /= col_effects.mean()
        design = ModelDesign(
            kind, row_props, col_props, pattern, dispersion, base_rate, row_effects, col_effects
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
