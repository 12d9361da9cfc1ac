"""A family of latent block models as one object: its models, and what the rest of the package asks
of it.

A :class:`Family` is what the package passes around for "Poisson blocks": made once
at a boundary (:func:`~lbm_bench.models.registry.as_family` turns the name a user
types into it), it travels through requests, designs, calibration, the memory
guard, storage, EM and pictures, which ask it what they need and never look its
name up again. It composes, in the manner of statsmodels' ``Family`` and its link
and variance objects, the family's **model class** (the formulas,
:class:`~lbm_bench.models.base.LatentBlockModel`) with one **facet** per concern,
each asked by the part of the package that needs it:

=========================  ======================  ==============================================
attribute                  facet                   asked by
=========================  ======================  ==============================================
``family.model``           the model class         the engine, MAP, Gibbs sampler, sampling
``family.storage``         :class:`StorageCodec`   ``storage/`` (format, writer, validator),
                                                   release manifests
``family.presentation``    :class:`Presentation`   pictures, thumbnails, docstrings, ``--kind``
``family.options``         :class:`Options`        requests, release specs and ids, the CLI,
                                                   the memory guard
``family.designs``         :class:`Designs`        :func:`~lbm_bench.models.design.random_design`,
                                                   ``ModelDesign.model`` (a scale to a model,
                                                   fitted designs too)
``family.estimation``      :class:`Estimation`     the EM baselines, model selection (ICL),
                                                   the inference of a table's family
=========================  ======================  ==============================================

Every facet is declared in the family's one module: a subclass of the facet that
sets its class attributes and overrides the methods whose default does not fit,
passed to :class:`Family` (which makes one of each, bound to the family: a
facet's ``self.family``). A facet left out takes the default class. Adding a
family is writing that module and adding its :class:`Family` to the registry
(docs/architecture.md, "Adding a family").
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

import numpy as np

from lbm_bench._records import open_probability, optional, setting
from lbm_bench.models.base import LatentBlockModel

__all__ = [
    "DENSITY_OPTION", "Designs", "Estimation", "Family", "Options", "Presentation", "StorageCodec"
]

#: The design option of the families whose tables can be sparse (``can_be_sparse``):
#: the expected fraction of non-zero entries at every scale.
DENSITY_OPTION = setting(
    None, optional(open_probability), "--density",
    "bernoulli, poisson: expected fraction of non-zero entries; the table is stored sparse",
)


class _Facet:
    """One concern of a family; :class:`Family` makes it, bound to the family (``self.family``)."""

    def __init__(self, family: Family) -> None:
        self.family = family

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.family.kind!r})"


class StorageCodec(_Facet):
    """How a family's tables are stored (the HDF5 format, :mod:`lbm_bench.storage`).

    Attributes
    ----------
    parameter_names : tuple of str
        Its block parameters as ``params/`` datasets, each of shape ``(g, m) +
        block_extents``; the model class takes them as keyword arguments and gives
        them back by ``block_parameters()``.
    block_extents : tuple of str
        Extents of the block parameters and the design pattern beyond (g, m), as names of
        header attributes: categorical blocks ``("@categories",)``.
    header_attributes : dict of str to (str, str)
        Root attributes its files carry beyond the common header, read with the header
        before any dataset: name to (attribute kind of :mod:`~lbm_bench.storage.format`,
        description). Their values come from :meth:`header_values`, the reader checks them
        by :meth:`header_problem` and passes them to :meth:`value_problem`; release manifests
        repeat them.
    """

    parameter_names: ClassVar[tuple[str, ...]] = ()
    block_extents: ClassVar[tuple[str, ...]] = ()
    header_attributes: ClassVar[dict[str, tuple[str, str]]] = {}

    def header_values(self, model: LatentBlockModel) -> dict[str, Any]:
        """The values of the :attr:`header_attributes` for ``model`` (files store them)."""
        return {}

    def header_problem(self, header: dict[str, Any]) -> str | None:
        """What is wrong with the values of the :attr:`header_attributes` read from a file
        (a sentence), or None."""
        return None

    def value_problem(self, values: np.ndarray, **header: Any) -> str | None:
        """What is wrong with a table's (non-empty) stored values for this family, as the end
        of a sentence (``"holds a negative count (-1)"``), or None; ``header`` holds the
        values of the :attr:`header_attributes`."""
        return None


class Presentation(_Facet):
    """How a family's tables are shown and described.

    Attributes
    ----------
    entries : str
        What a table holds, in words (``"counts"``): the help of ``--kind``.
    block_description : str
        What a block holds (``"Poisson blocks (one rate per block)"``): docstrings of the
        per-family EM algorithms.
    colormap : str
        Matplotlib colour map of its tables (a qualitative one for unordered levels: one
        colour per category).
    boundary_color : str
        Colour of the block boundaries drawn over a table grouped by labels.
    missing_color, missing_color_name : str
        Colour of missing entries, outside the colour map, and its name in the colour key.
    """

    entries: ClassVar[str] = ""
    block_description: ClassVar[str] = ""
    colormap: ClassVar[str] = "viridis"
    boundary_color: ClassVar[str] = "white"
    missing_color: ClassVar[str] = "#bdbdbd"
    missing_color_name: ClassVar[str] = "grey"


class Options(_Facet):
    """A family's own design options (beyond the shared ones of :mod:`lbm_bench.models.design`).

    Attributes
    ----------
    fields : dict of str to dataclasses.Field
        The options, declared with :func:`~lbm_bench._records.setting` (default, check,
        command-line flag, help): they become fields of
        :class:`~lbm_bench.protocol.settings.ModelOptions`, keys of release specs and flags
        of ``lbm-bench generate``. One option may belong to several families (the same
        field object: :data:`DENSITY_OPTION`).

    Which options a request or a design keeps for its family, refusing another
    family's, is decided once, by :func:`~lbm_bench.models.design.check_family_options`.
    """

    fields: ClassVar[dict[str, dataclasses.Field]] = {}

    def check(self, options: dict[str, Any]) -> dict[str, Any]:
        """The family's options (some of :attr:`fields`) checked and normalised, with their
        defaults filled in; ValueError/TypeError naming a bad one."""
        return {
            name: f.metadata["check"](name, options.get(name, f.default))
            for name, f in self.fields.items()
        }

    def resolve(self, options: dict[str, Any], n_rows: int, n_cols: int) -> dict[str, Any]:
        """Options for a table of this shape (Poisson ``effects=True`` becomes the shape)."""
        return dict(options)

    def count_statistics(self, options: dict[str, Any]) -> int:
        """Statistics per entry of the models of a design with these checked options (the
        memory guard's): the model class's ``n_stats`` by default."""
        return self.family.model.n_stats

    def id_tag(self, options: dict[str, Any]) -> str:
        """What a release's table ids add after the kind for these checked options (``""``:
        nothing; categorical blocks: ``"-k5"``), so that tables differing by an option that
        changes their nature have different ids."""
        return ""


class Designs(_Facet):
    """A family's random designs and how a scale becomes a model (protocol steps 1-3).

    Attributes
    ----------
    uses_dispersion : bool
        Whether its designs have block dispersions (else they are ones).
    path_knee : float or None
        The knee of its fitted designs' paths (:mod:`lbm_bench.models.block_path`): from this
        scale up the classes' margins (the tables' degrees) are kept and only the blocks'
        interaction moves; None: the straight line, the table's level kept.
    """

    uses_dispersion: ClassVar[bool] = True
    path_knee: ClassVar[float | None] = None

    def check_clusters(self, n_row_clusters: int, n_col_clusters: int,
                       options: dict[str, Any] | None = None) -> None:
        """Refuse cluster numbers its designs cannot have (ValueError), with its checked
        ``options`` when known."""

    def draw_pattern(self, n_row_clusters: int, n_col_clusters: int, rng: np.random.Generator,
                     options: dict[str, Any]) -> np.ndarray:
        """The block pattern of a random design, ndarray of shape ``(g, m) + block_extents``,
        given the family's checked ``options``."""
        raise NotImplementedError  # pragma: no cover

    def draw_effects(
        self, options: dict[str, Any], rng: np.random.Generator
    ) -> tuple[np.ndarray | None, np.ndarray | None]:
        """Row and column effects of a random design (None, None without effects)."""
        return None, None

    def model_at_scale(self, design: Any, scale: float) -> LatentBlockModel:
        """The model of ``design`` (a :class:`~lbm_bench.models.design.ModelDesign`) at
        ``scale``: monotone, larger is easier, and at scale 0 every block is the same."""
        raise NotImplementedError  # pragma: no cover

    def options_of(self, design: Any) -> dict[str, Any]:
        """The family's own design options a request for tables of ``design`` carries (a
        sparse design's ``density``; categorical blocks add ``categories``)."""
        return {} if design.density is None else {"density": design.density}

    def model_from_natural(self, design: Any, natural: np.ndarray) -> LatentBlockModel:
        """The model with the proportions, effects and storage of ``design`` and the blocks of
        natural parameters ``natural`` (n_stats, g, m), kept in the family's domain (floored
        probabilities, positive variances): a fitted design's model at a scale
        (:mod:`lbm_bench.models.block_path`)."""
        raise NotImplementedError(
            f"{self.family.kind} designs cannot be fitted")  # pragma: no cover

    def model_on_path(self, design: Any, scale: float) -> LatentBlockModel:
        """The model of a fitted design (``design.path``, a
        :class:`~lbm_bench.models.block_path.BlockPath`) at ``scale``: scale 1 is the fitted
        model, scale 0 every block at the table's overall level; at every scale the table's
        expected statistics are the fitted model's (:meth:`BlockPath.model_at
        <lbm_bench.models.block_path.BlockPath.model_at>`)."""
        return design.path.model_at(scale, lambda natural: self.model_from_natural(design, natural))


class Estimation(_Facet):
    """What the EM baselines and the model selection ask of a family (:mod:`lbm_bench.algorithms`).

    Attributes
    ----------
    fit_centred : bool
        Whether its tables are fitted centred (Gaussian blocks: block variances lose
        precision far from zero).
    inference_order : int or None
        When :func:`~lbm_bench.algorithms.infer_kind` asks whether it :meth:`describes`
        a table (lower first); None: never inferred (the benchmark harness then passes
        the table's kind to the algorithms that take a ``kind`` keyword).
    default_icl : {"exact-icl", "bic-icl"}
        What the model selection's criterion ``"icl"`` is for this family: the exact
        integrated complete likelihood (under the prior of :meth:`conjugate_prior`, block
        terms :meth:`log_marginal_blocks`) or its BIC-type approximation.
    icl_prior : str
        The conjugate prior of the exact ICL, in words; empty when the family has no closed
        form (then only the BIC-type ICL applies).
    """

    fit_centred: ClassVar[bool] = False
    inference_order: ClassVar[int | None] = None
    default_icl: ClassVar[str] = "bic-icl"
    icl_prior: ClassVar[str] = ""

    def describes(self, dtype_kind: str, low: float | None, high: float | None) -> bool:
        """Whether a table of this dtype kind (``"b"``, ``"i"``, ``"u"``, ``"f"``) and these
        extreme values (None for a float table) looks like one of the family's."""
        return False

    def estimate_blocks(self, totals: np.ndarray, exposure: np.ndarray, var_floor: float,
                        prior_var: float = 0.0) -> dict[str, np.ndarray]:
        """The M-step: floored maximum-likelihood block parameters (keyword arguments of the
        model class) from the block sums ``totals`` (n_stats, g, m) of ``T(x)`` and the block
        sizes ``exposure`` (g, m); ``var_floor`` bounds variances below, and ``prior_var`` (the
        table's variance) is one pseudo-entry every block variance is shrunk towards (Gaussian
        blocks: a block of one or two observed entries is not fitted exactly)."""
        raise NotImplementedError  # pragma: no cover

    def fit_effects(self, data: Any, z: np.ndarray, w: np.ndarray,
                    model: LatentBlockModel) -> LatentBlockModel | None:
        """``model`` (fitted at the labels ``z``, ``w`` of the table ``data``, a
        :class:`~lbm_bench.models.data.TableData`) with row and column effects fitted too, by
        maximum likelihood at these labels; None for a family without effects (the default)."""
        return None

    def placeholder(self, table: Any = None) -> LatentBlockModel:
        """A 1x1 model of the family without effects (its table check, statistics and base
        measure) that can hold the values of ``table`` when given (the EM baselines fit it)."""
        raise NotImplementedError  # pragma: no cover

    def conjugate_prior(self, totals: np.ndarray, size: float) -> dict[str, float]:
        """Hyperparameters of the conjugate prior of a block's parameters (the exact ICL), from
        the whole table's sums of the statistics ``totals`` (n_stats,) and its number of entries
        ``size`` (a prior may be scaled to the table: it must not change with the labels)."""
        raise NotImplementedError(f"{self.family.kind} blocks have no closed-form ICL; use the "
                                  "BIC-type ICL")

    def log_marginal_blocks(self, totals: np.ndarray, exposure: np.ndarray,
                            prior: dict[str, float]) -> np.ndarray:
        """The log integrated likelihood of each block, less its entries' base measure:
        ``log ∫ exp(eta(theta) . totals_kl - exposure_kl A(theta)) prior(theta) dtheta``,
        ndarray of shape (g, m), from the block sums ``totals`` (n_stats, g, m) and the block
        sizes ``exposure`` (g, m) (zero for an empty block, whose term is zero)."""
        raise NotImplementedError(f"{self.family.kind} blocks have no closed-form ICL; use the "
                                  "BIC-type ICL")


class Family:
    """A family of latent block models: its name, its model class and its facets.

    Parameters
    ----------
    kind : str
        The family's name: the registry key, the spelling of release specs and
        ``--kind``, the ``@kind`` of files.
    model : type of LatentBlockModel
        The model class (the formulas); the family binds itself to it (``model.family``).
    storage, presentation, options, designs, estimation : type, optional
        The facet classes (subclasses of :class:`StorageCodec`, :class:`Presentation`,
        :class:`Options`, :class:`Designs`, :class:`Estimation`); the defaults when omitted.

    Notes
    -----
    A family is one object per process: it compares by identity, and pickles as a
    reference to its model class (unpickled, it is the registered family again).

    Examples
    --------
    >>> from lbm_bench.models.registry import get_family
    >>> family = get_family("poisson")
    >>> family, family.model.__name__, family.storage.parameter_names
    (Family('poisson'), 'PoissonLBM', ('rates',))
    """

    def __init__(
        self,
        kind: str,
        model: type[LatentBlockModel],
        *,
        storage: type[StorageCodec] = StorageCodec,
        presentation: type[Presentation] = Presentation,
        options: type[Options] = Options,
        designs: type[Designs] = Designs,
        estimation: type[Estimation] = Estimation,
    ) -> None:
        if "family" in vars(model):
            raise ValueError(f"{model.__name__} already belongs to the {model.family.kind} family")
        self.kind = kind
        self.model = model
        self.storage = storage(self)
        self.presentation = presentation(self)
        self.options = options(self)
        self.designs = designs(self)
        self.estimation = estimation(self)
        model.family = self

    def __repr__(self) -> str:
        return f"Family({self.kind!r})"

    def __reduce__(self) -> tuple:
        return (getattr, (self.model, "family"))
