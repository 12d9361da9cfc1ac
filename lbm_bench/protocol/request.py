"""One request for a table: its family and options, shape, clusters, target risk, criterion.

A :class:`TableRequest` is what a user asks for, checked once: the family (a
:class:`~lbm_bench.models.family.Family`, given by name or as the object) and
its design options, the table's shape, the numbers of row and column clusters,
the target conditional risk and the criterion it applies to (the
floor, ``"bayes"``, or the X-only MAP's risk, ``"map"``). It travels as one
object through generation, calibration, the memory guard and release builds,
together with the :class:`~lbm_bench.protocol.settings.GenerationSettings`
that say *how* the table is made. The public functions keep their positional
form (``generate_table("gaussian", 200, 100, 3, 2, 0.1)``) and also take a
request (``generate_table(request, rng=7)``).

Examples
--------
>>> request = TableRequest("gaussian", 200, 100, 3, 2, 0.1)
>>> request.describe()
'gaussian 200x100 table, 3x2 clusters, target risk 0.1 (criterion bayes)'
>>> TableRequest("gaussian", 200, 100, 3, 2, 0.1, model_options={"density": 0.1})
Traceback (most recent call last):
...
ValueError: density is defined for the poisson and bernoulli kinds, got kind='gaussian'
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from lbm_bench._records import Record, choice, setting
from lbm_bench._validation import check_choice, check_count, check_probability
from lbm_bench.models.design import check_family_options
from lbm_bench.models.family import Family
from lbm_bench.models.registry import as_family
from lbm_bench.protocol.settings import GenerationSettings, ModelOptions

__all__ = [
    "RISK_CRITERIA", "RequestOptions", "TableRequest", "check_criterion", "request_from_arguments"
]

#: What the target risk can apply to: the floor (the Bayes labels for l_item) or the
#: X-only MAP labels (the paper's protocol); a table file's ``@criterion``.
RISK_CRITERIA = ("bayes", "map")


def check_criterion(criterion: str) -> str:
    """``criterion`` if it is ``"bayes"`` or ``"map"``, else ValueError."""
    return check_choice("criterion", criterion, RISK_CRITERIA)


@dataclass(frozen=True)
class RequestOptions(Record):
    """The options of a request beyond its family, shape, clusters and target (one field
    today: the criterion), declared like the settings so that specs and the command line
    read them the same way."""

    criterion: str = setting(
        "bayes", choice(*RISK_CRITERIA), "--criterion",
        "risk the target applies to: 'bayes' (the floor, the Bayes labels for l_item) "
        "or 'map' (the X-only MAP labels, the paper's protocol)",
    )


@dataclass(frozen=True)
class TableRequest:
    """A table to generate, checked on construction (ValueError/TypeError naming the argument).

    Parameters
    ----------
    family : Family or str
        The family, or its name (:func:`~lbm_bench.family_names`, case-insensitive): the
        attribute ``family`` holds the object, ``kind`` its name.
    n_rows, n_cols : int
        Table shape.
    n_row_clusters, n_col_clusters : int
        Cluster numbers, at least 2 each and at most the rows and columns.
    target_risk : float
        Target conditional risk, in (0, 1) and at least ``1 / (n_rows * n_cols)``.
    model_options : ModelOptions or mapping, optional
        Design options (shared ones and the family's own); another family's
        option is refused.
    criterion : {"bayes", "map"}, default="bayes"
        The risk the target applies to: the floor or the X-only MAP's.

    Notes
    -----
    A request says *what* to generate; :class:`~lbm_bench.GenerationSettings` says *how*
    (the tolerance, the Gibbs run, screening, attempts, the calibration, the MAP starts).
    Both travel as objects through calibration, generation and release builds; a table file
    stores the settings record's own serialisation, which ``Table.settings`` and
    ``Table.request`` read back. :func:`~lbm_bench.generate_table` and
    :func:`~lbm_bench.calibrate_scale` take a request alone, or the kind and sizes.

    Examples
    --------
    >>> request = TableRequest("poisson", 60, 40, 3, 2, 0.1, model_options={"base_rate": 3.0})
    >>> request.describe()
    'poisson 60x40 table, 3x2 clusters, target risk 0.1 (criterion bayes, base_rate=3.0)'
    >>> request.shape, request.clusters, request.kind, request.model_options.base_rate
    ((60, 40), (3, 2), 'poisson', 3.0)
    >>> TableRequest("gaussian", 60, 40, 3, 2, 0.1, model_options={"base_rate": 3.0})
    Traceback (most recent call last):
    ...
    ValueError: base_rate is defined for the poisson kind, got kind='gaussian'
    """

    family: Family
    n_rows: int
    n_cols: int
    n_row_clusters: int
    n_col_clusters: int
    target_risk: float
    model_options: Any = field(default_factory=ModelOptions)
    criterion: str = "bayes"

    def __post_init__(self) -> None:
        put = object.__setattr__
        put(self, "family", as_family(self.family))
        put(self, "n_rows", check_count("n_rows", self.n_rows))
        put(self, "n_cols", check_count("n_cols", self.n_cols))
        g = check_count("n_row_clusters", self.n_row_clusters, minimum=2)
        m = check_count("n_col_clusters", self.n_col_clusters, minimum=2)
        put(self, "n_row_clusters", g)
        put(self, "n_col_clusters", m)
        if g > self.n_rows or m > self.n_cols:
            raise ValueError(
                f"more clusters than rows or columns: {g}x{m} clusters for a "
                f"{self.n_rows}x{self.n_cols} table"
            )
        target = check_probability("target_risk", self.target_risk)
        if target < 1.0 / (self.n_rows * self.n_cols):
            raise ValueError(
                f"target_risk={target} cannot be reached: below 1/(n_rows*n_cols) = "
                f"{1.0 / (self.n_rows * self.n_cols):.3g}"
            )
        put(self, "target_risk", target)
        put(self, "criterion", RequestOptions(criterion=self.criterion).criterion)
        options = self.model_options
        if not isinstance(options, ModelOptions):
            if not isinstance(options, Mapping):
                raise TypeError("model_options must be a ModelOptions or a mapping, got "
                                f"{options!r}")
            options = ModelOptions.from_mapping(options)
        put(self, "model_options", options)
        self.family.designs.check_clusters(g, m, self.family_options())

    @property
    def kind(self) -> str:
        """The name of the request's family."""
        return self.family.kind

    @property
    def shape(self) -> tuple[int, int]:
        """``(n_rows, n_cols)``."""
        return (self.n_rows, self.n_cols)

    @property
    def clusters(self) -> tuple[int, int]:
        """``(n_row_clusters, n_col_clusters)``."""
        return (self.n_row_clusters, self.n_col_clusters)

    @property
    def sparse(self) -> bool:
        """Whether the table will be sparse (a ``density`` was given)."""
        return getattr(self.model_options, "density", None) is not None

    def family_options(self) -> dict[str, Any]:
        """The family's own design options, checked, with their defaults, for the table's shape
        (e.g. ``categories``; ``effects=True`` becomes the shape)."""
        return check_family_options(self.family, self.model_options.design_options(), self.shape)

    def design_options(self) -> dict[str, Any]:
        """Keyword arguments of :func:`~lbm_bench.random_design` for this table (the options
        that differ from their defaults, resolved for the shape: ``effects=True`` becomes it)."""
        return self.family.options.resolve(self.model_options.design_options(), self.n_rows,
                                           self.n_cols)

    def replace(self, **changes: Any) -> TableRequest:
        """A copy with some fields changed (checked again)."""
        return dataclasses.replace(self, **changes)

    def describe(self) -> str:
        """One line: ``'gaussian 200x100 table, 3x2 clusters, target risk 0.1 (criterion
        bayes)'``."""
        options = self.model_options.design_options()
        extra = "".join(f", {k}={v}" for k, v in options.items())
        return (f"{self.kind} {self.n_rows}x{self.n_cols} table, "
                f"{self.n_row_clusters}x{self.n_col_clusters} "
                f"clusters, target risk {self.target_risk:g} (criterion {self.criterion}{extra})")


def request_from_arguments(
    kind: Any,
    sizes: tuple[Any, ...],
    settings: GenerationSettings | None,
    options: Mapping[str, Any],
    *,
    caller: str,
) -> tuple[TableRequest, GenerationSettings]:
    """The request and settings of a call such as ``generate_table(kind, n, d, g, m, target,
    **options)``.

    ``kind`` is a :class:`TableRequest` (then ``sizes`` must all be None, and ``options``
    may only hold generation settings) or a family (or its name) with the five ``sizes``;
    ``options`` mixes generation settings, design options and ``criterion``.

    Raises
    ------
    TypeError
        For sizes given with a request, or missing without one.
    ValueError
        For an unknown option, naming it and the allowed ones.
    """
    options = dict(options)
    if settings is not None and not isinstance(settings, GenerationSettings):
        raise TypeError(f"settings must be a GenerationSettings, got {type(settings).__name__}")
    given = {k: options.pop(k) for k in list(options) if k in GenerationSettings.names()}
    if isinstance(kind, TableRequest):
        if any(size is not None for size in sizes):
            raise TypeError(
                f"{caller}() takes a TableRequest alone, without n_rows ... target_risk")
        if options:
            raise ValueError(
                f"{', '.join(sorted(options))}: give model options and criterion in the "
                f"TableRequest, or call {caller}() with the kind and sizes"
            )
        request = kind
    else:
        if any(size is None for size in sizes):
            raise TypeError(f"{caller}() needs kind, n_rows, n_cols, n_row_clusters, "
                            "n_col_clusters and target_risk")
        criterion = options.pop("criterion", "bayes")
        unknown = sorted(set(options) - set(ModelOptions.names()))
        if unknown:
            allowed = sorted(GenerationSettings.names() + ModelOptions.names() +
                             RequestOptions.names())
            raise ValueError(f"unknown option(s) {', '.join(unknown)}; allowed: "
                             f"{', '.join(allowed)}")
        request = TableRequest(kind, *sizes, model_options=ModelOptions.from_mapping(options),
                               criterion=criterion)
    if settings is None:
        settings = GenerationSettings.from_mapping(given)
    elif given:
        settings = settings.replace(**given)
    return request, settings
