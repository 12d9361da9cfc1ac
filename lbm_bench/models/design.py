"""Random parameter designs for latent block models, with one difficulty knob.

A :class:`ModelDesign` holds everything about a model except its *scale*:
the cluster proportions, a block pattern (where the block means or modes sit)
and the dispersions, plus the family's own design values (a base rate, row and
column effects, a density). :meth:`ModelDesign.model` turns a scale into a
model, so the calibrator can move the scale while every other parameter stays
fixed. Larger scales separate the blocks more: the risk decreases with the scale.

How a scale becomes parameters is the family's (its designs facet,
:meth:`~lbm_bench.models.family.Designs.model_at_scale`, documented in its module:
:mod:`lbm_bench.models.gaussian`, :mod:`~lbm_bench.models.poisson`,
:mod:`~lbm_bench.models.bernoulli`, :mod:`~lbm_bench.models.categorical`); :func:`random_design`
draws the shared part (pattern from the family, proportions, dispersions) and asks the family
for its options and effects. Which design options a family keeps, refusing another family's,
is decided once, by :func:`check_family_options` (for designs and requests alike). How entries
go missing (:mod:`lbm_bench.models.missing`) is part of the design too, the same for every
family: :attr:`ModelDesign.missing`, whose block missing probabilities move with the scale.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from lbm_bench._docstrings import fill_doc
from lbm_bench._records import flag, setting, spread
from lbm_bench._validation import check_count, check_positive_float
from lbm_bench.models.base import LatentBlockModel
from lbm_bench.models.block_path import BlockPath
from lbm_bench.models.family import Family
from lbm_bench.models.missing import (
    DEFAULT_SPREAD,
    MISSING_OPTION_FIELDS,
    MissingDesign,
    draw_missing_pattern,
    expand_missing,
)
from lbm_bench.models.registry import FAMILIES, as_family
from lbm_bench.models.symmetry import find_symmetry

__all__ = [
    "SHARED_OPTION_FIELDS",
    "ModelDesign",
    "check_family_options",
    "check_missing_together",
    "design_option_fields",
    "random_design",
    "random_model",
]

#: The base rate recorded by the designs of families that have none (files store
#: ``params/design@base_rate`` for every kind; only Poisson blocks use it).
_UNUSED_BASE_RATE = 2.0

#: Design options every family accepts (the families declare their own in their options facet,
#: ``fields``).
SHARED_OPTION_FIELDS = {
    "equal_proportions": setting(False, flag, "--equal-proportions", "equal cluster proportions"),
    "equal_dispersions": setting(False, flag, "--equal-dispersions", "equal dispersions"),
    "dispersion_spread": setting(0.25, spread, "--dispersion-spread", "spread of the dispersions, "
                                                                      "in [0, 1)"),
    **MISSING_OPTION_FIELDS,
}


def design_option_fields() -> dict[str, Any]:
    """Every design option: the shared ones, then each registered family's, once each
    (an option shared by families, such as ``density``, is one declaration)."""
    fields = dict(SHARED_OPTION_FIELDS)
    for family in FAMILIES:
        for name, f in family.options.fields.items():
            if name in fields and fields[name] is not f:
                raise RuntimeError(
                    f"design option {name!r} is declared twice, differently")  # pragma: no cover
            fields[name] = f
    return fields


@fill_doc
@dataclass(frozen=True)
class ModelDesign:
    """The scale-free part of a latent block model.

    {{kind_attribute}}
    family : Family
        The design's family (given by name or as the object: a name is turned into it on
        construction); ``kind`` is its name.
    row_proportions : ndarray of shape (g,)
    col_proportions : ndarray of shape (m,)
    pattern : ndarray of shape (g, m), or (g, m) + the storage codec's ``block_extents``
        Real pattern (Gaussian, Poisson), centred with unit mean class
        separation, +-1 binary modes (Bernoulli), or the one-hot dominant
        categories of shape (g, m, K) (categorical).
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
        dense designs.
    missing : MissingDesign or None
        How the tables' entries go missing (:mod:`lbm_bench.models.missing`); None:
        complete tables.
    path : BlockPath or None
        A design fitted to a table (:func:`lbm_bench.fit_design`): the natural parameters its
        scale moves along (:mod:`lbm_bench.models.block_path`; scale 1 is the fitted model),
        and ``pattern`` holds the fitted blocks' first parameter, ``dispersion`` ones. None:
        a random design, whose family turns a scale into a model.
    digest : str or None
        SHA-256 of the design file it was read from (:mod:`lbm_bench.models.design_file`).

    Examples
    --------
    >>> design = random_design("gaussian", 3, 2, rng=0)
    >>> bool(np.allclose(design.model(2.0).means, 4 * design.model(0.5).means)), design.block_shape
    (True, (3, 2))
    """

    family: Family
    row_proportions: np.ndarray
    col_proportions: np.ndarray
    pattern: np.ndarray
    dispersion: np.ndarray
    base_rate: float = 1.0
    row_effects: np.ndarray | None = field(default=None)
    col_effects: np.ndarray | None = field(default=None)
    density: float | None = None
    missing: MissingDesign | None = None
    path: BlockPath | None = field(default=None, compare=False, repr=False)
    digest: str | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "family", as_family(self.family))
        if self.path is not None and self.path.block_shape != self.block_shape:
            raise ValueError(f"the path's blocks {self.path.block_shape} are not the design's "
                             f"{self.block_shape}")

    @property
    def memo(self) -> dict:
        """Per-design memo of the family's derived values, e.g. density offsets (not a
        field: copies start empty)."""
        cache = self.__dict__.get("_memo")
        if cache is None:
            cache = {}
            object.__setattr__(self, "_memo", cache)
        return cache

    @property
    def kind(self) -> str:
        """The name of the design's family."""
        return self.family.kind

    @property
    def block_shape(self) -> tuple[int, int]:
        """``(g, m)``."""
        return self.pattern.shape[:2]  # type: ignore[return-value]

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
        if self.path is not None:
            model = self.family.designs.model_on_path(self, scale)
        else:
            model = self.family.designs.model_at_scale(self, scale)
        if self.missing is not None and self.missing.informative:
            model = model.with_missing_probs(self.missing_probs(scale))
        return model

    def missing_probs(self, scale: float) -> np.ndarray | None:
        """Missing probabilities of the blocks at ``scale`` (g, m): the rate everywhere when
        entries go missing at random, the block mechanism's otherwise; None for complete tables."""
        if self.missing is None:
            return None
        return self.missing.block_probs(self.row_proportions, self.col_proportions, scale)

    def at_shape(self, n_rows: int, n_cols: int, *,
                 rng: np.random.Generator | int | None = None) -> ModelDesign:
        """The design for tables of another shape: the same proportions and blocks, and row and
        column effects (when it has some of other lengths) drawn with replacement from its own,
        normalised to mean one (the same design when the lengths already match).

        Examples
        --------
        >>> design = random_design("poisson", 2, 2, effects=(30, 20), rng=0)
        >>> design.at_shape(60, 10, rng=1).row_effects.shape
        (60,)
        """
        if self.row_effects is None or (len(self.row_effects), len(
                self.col_effects)) == (n_rows, n_cols):
            return self
        rng = np.random.default_rng(rng)
        rows = rng.choice(self.row_effects, size=check_count("n_rows", n_rows), replace=True)
        cols = rng.choice(self.col_effects, size=check_count("n_cols", n_cols), replace=True)
        return replace(self, row_effects=rows / rows.mean(), col_effects=cols / cols.mean())

    def without_effects(self) -> ModelDesign:
        """The same design without row and column effects (blocks at unit exposure)."""
        return replace(self, row_effects=None, col_effects=None)

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
        if self.path is not None:
            out["path_natural"] = self.path.natural
            out["path_centre"] = self.path.centre
            if self.path.knee is not None:
                out["path_knee"] = self.path.knee
        return out


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
    kind: Family | str,
    n_row_clusters: int,
    n_col_clusters: int,
    *,
    equal_proportions: bool = False,
    equal_dispersions: bool = False,
    dispersion_spread: float = 0.25,
    missing: float | Mapping[str, Any] = 0.0,
    missing_mechanism: str = "random",
    missing_spread: float = DEFAULT_SPREAD,
    rng: np.random.Generator | int | None = None,
    **family_options: Any,
) -> ModelDesign:
    """Draw the scale-free parameters of a latent block model.

    Parameters
    ----------
    kind : Family or str
        Family of the blocks, or its name among :func:`~lbm_bench.models.registry.family_names`
        (``"gaussian"``, ``"poisson"``, ``"bernoulli"``, ``"categorical"``).
    n_row_clusters, n_col_clusters : int
        Numbers of row and column clusters (at least 2 each).
    equal_proportions : bool, default=False
        Use equal cluster proportions instead of random ones (Dirichlet(10), each at least
        half the equal share).
    equal_dispersions : bool, default=False
        Use equal dispersions (unit standard deviations, equal deviations from the modes).
    dispersion_spread : float, default=0.25
        Random dispersions are uniform in ``[1 - spread, 1 + spread]``: the same order of
        magnitude across blocks.
    missing : float or mapping, default=0.0
        Expected fraction of missing entries, in [0, 1) (0: complete tables), or
        ``{"rate": r, "mechanism": "block", "spread": s}``.
    missing_mechanism : {"random", "block"}, default="random"
        Entries missing completely at random, or by block (not at random); see
        :mod:`lbm_bench.models.missing`. The block mechanism's pattern is drawn
        after everything else, so the other parameters do not depend on it.
    missing_spread : float, default=0.5
        The block mechanism's spread of missing logits at scale 1.
    rng : None, int or numpy.random.Generator
        Source of randomness.
    **family_options
        The family's own options (``family.options.fields``), refused for another family:

        - ``base_rate`` (Poisson, default 2.0): geometric mean of the rates (dense designs;
          a sparse design's rates follow from its density);
        - ``effects`` (Poisson): ``(n_rows, n_cols)`` to draw row and column effects
          (log-normal, mean one) for a table of this shape (Govaert and Nadif's
          contingency model); :func:`~lbm_bench.generate_table` also takes
          ``effects=True`` (the table's shape);
        - ``effects_spread`` (Poisson, default 0.3): standard deviation of the log
          effects before they are normalised to mean one (0.3: most effects within a
          factor 1.8 of one; 1: uneven totals as in document-term tables);
        - ``density`` (Bernoulli, Poisson): the expected fraction of non-zero entries
          at every scale, in (0, 1); the design is sparse and its tables are
          ``scipy.sparse.csr_array`` (see the family's module);
        - ``categories`` (categorical, required): the number of categories ``K``,
          2 to 255.

    Returns
    -------
    ModelDesign

    Raises
    ------
    ValueError
        When the cluster numbers admit no asymmetric design, or an option does not
        apply to the family.

    Examples
    --------
    >>> design = random_design("gaussian", 3, 3, rng=1)
    >>> design.pattern.shape
    (3, 3)
    >>> find_symmetry(design.model(1.0)) is None
    True
    """
    rng = np.random.default_rng(rng)
    family = as_family(kind)
    g = check_count("n_row_clusters", n_row_clusters, minimum=2)
    m = check_count("n_col_clusters", n_col_clusters, minimum=2)
    spread_value = SHARED_OPTION_FIELDS["dispersion_spread"].metadata["check"]("dispersion_spread",
                                                                               dispersion_spread)
    missing_options = _missing_options(missing, missing_mechanism, missing_spread)
    unknown = sorted(set(family_options) - set(design_option_fields()))
    if unknown:
        raise TypeError(f"random_design() got an unexpected keyword argument {unknown[0]!r}")
    options = check_family_options(family, family_options)
    check_missing_together({**missing_options, "density": options.get("density")})
    family.designs.check_clusters(g, m, options)
    values = {name: options[name] for name in ("base_rate", "density") if name in options}
    values.setdefault("base_rate", _UNUSED_BASE_RATE)
    uses_dispersion = family.designs.uses_dispersion
    for _attempt in range(20):
        pattern = family.designs.draw_pattern(g, m, rng, options)
        row_props = _random_proportions(g, equal_proportions, rng)
        col_props = _random_proportions(m, equal_proportions, rng)
        dispersion = _random_dispersion((g, m), equal_dispersions or not uses_dispersion,
                                        spread_value, rng)
        row_effects, col_effects = family.designs.draw_effects(options, rng)
        design = ModelDesign(
            family, row_props, col_props, pattern, dispersion, row_effects=row_effects,
            col_effects=col_effects, **values,
        )
        if find_symmetry(design.model(1.0)) is None:
            return _with_missing(design, missing_options, rng)
    raise ValueError(f"could not draw an asymmetric {family.kind} design with {g}x{m} clusters")


def check_family_options(
    family: Family, options: Mapping[str, Any], shape: tuple[int, int] | None = None
) -> dict[str, Any]:
    """The family's own design options among ``options``, checked, with their defaults: the
    one check of a family's options (:func:`random_design`, the request, the memory guard).

    Parameters
    ----------
    family : Family
    options : mapping of str to value
        Design options: the family's own, and possibly shared ones (ignored here) and other
        families' (refused unless they hold their default, None or False).
    shape : (int, int), optional
        The table's shape, for the options that depend on it (Poisson ``effects=True``
        becomes the shape: :meth:`~lbm_bench.models.family.Options.resolve`).

    Raises
    ------
    ValueError
        For another family's option set (naming the families it belongs to), or a bad own one.

    Examples
    --------
    >>> from lbm_bench.models.registry import get_family
    >>> check_family_options(get_family("poisson"), {"base_rate": 3.0, "missing": 0.1})["base_rate"]
    3.0
    >>> check_family_options(get_family("gaussian"), {"density": 0.1})
    Traceback (most recent call last):
    ...
    ValueError: density is defined for the poisson and bernoulli kinds, got kind='gaussian'
    """
    own = {}
    for name, value in options.items():
        if name in family.options.fields:
            own[name] = value
            continue
        owners = [other for other in FAMILIES if name in other.options.fields]
        if owners and value is not None and value is not False and value != owners[
                0].options.fields[name].default:
            kinds = " and ".join(other.kind
                                 for other in owners) + (" kinds" if len(owners) > 1 else " kind")
            raise ValueError(f"{name} is defined for the {kinds}, got kind={family.kind!r}")
    if shape is not None:
        own = family.options.resolve(own, *shape)
    return family.options.check(own)


def _missing_options(missing: Any, mechanism: Any, spread_value: Any) -> dict[str, Any]:
    """The checked missing options (a mapping ``missing`` expanded); ValueError naming a bad one."""
    options = {"missing_mechanism": mechanism, "missing_spread": spread_value}
    options.update(expand_missing({"missing": missing}))  # a mapping's keys win
    options = {name: f.metadata["check"](name, options.get(name, f.default))
               for name, f in MISSING_OPTION_FIELDS.items()}
    check_missing_together(options)
    return options


def check_missing_together(options: Mapping[str, Any], given: Iterable[str] = ()) -> None:
    """Refuse a missing mechanism or spread that does nothing: given without a missing rate, or
    a spread with the random mechanism (entries missing completely at random have none); and a
    sparse table (``density``) with more missing entries than non-zero ones (ValueError, one line).

    ``given`` names the options set explicitly (a flag, a spec key, a keyword), so that one set
    to its default value is refused too (``--missing 0 --missing-mechanism random``).
    """
    given = set(given)
    defaults = {name: f.default for name, f in MISSING_OPTION_FIELDS.items()}
    rate = options.get("missing", 0.0)
    if rate == 0.0:
        for name in ("missing_mechanism", "missing_spread"):
            if name in given or options.get(name, defaults[name]) != defaults[name]:
                raise ValueError(f"{name} is set but missing is 0 (a complete table): give "
                                 "missing, the rate")
    elif options.get("missing_mechanism", defaults["missing_mechanism"]) != "block" and (
            "missing_spread" in given or options.get("missing_spread", defaults["missing_spread"])
            != defaults["missing_spread"]):
        raise ValueError("missing_spread is set but missing_mechanism is 'random', which has no "
                         "spread (the spread of the blocks' rates is the block mechanism's): give "
                         "missing_mechanism block, or drop "
                         "missing_spread")
    density = options.get("density")
    if density is not None and rate > density:
        raise ValueError(
            f"missing={rate:g} is more than density={density:g}: a sparse table holds the set of "
            "its unobserved entries sparsely, its block sums costing as much as that set, and "
            "more unobserved entries than non-zero ones would not be sparse; use missing <= "
            "density, or a dense table (no density)"
        )


def _with_missing(design: ModelDesign, options: dict[str, Any],
                  rng: np.random.Generator) -> ModelDesign:
    """The design with its missing entries (the block pattern drawn last, from ``rng``)."""
    rate = options["missing"]
    if rate == 0.0:
        return design
    mechanism = options["missing_mechanism"]
    pattern = draw_missing_pattern(*design.block_shape, rng) if mechanism == "block" else None
    return replace(design, missing=MissingDesign(rate, mechanism, pattern,
                                                 options["missing_spread"]))


def random_model(
    kind: Family | str,
    n_row_clusters: int,
    n_col_clusters: int,
    *,
    scale: float,
    rng: np.random.Generator | int | None = None,
    **design_options: Any,
) -> LatentBlockModel:
    """Draw a random latent block model at a given scale.

    Shortcut for ``random_design(kind, g, m, rng=rng, **options).model(scale)``.

    Parameters
    ----------
    kind, n_row_clusters, n_col_clusters, rng, **design_options
        As in :func:`random_design`.
    scale : float
        The model's scale (larger: easier).

    Returns
    -------
    LatentBlockModel

    Examples
    --------
    >>> model = random_model("poisson", 2, 2, scale=1.0, rng=0)
    >>> model.rates.shape
    (2, 2)
    """
    return random_design(kind, n_row_clusters, n_col_clusters, rng=rng,
                         **design_options).model(scale)
