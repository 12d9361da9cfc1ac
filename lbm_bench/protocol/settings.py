"""The settings records of generation, shared by the API, release specs and the CLI.

Every generation setting (rejection tolerance, Gibbs run, screening, attempts,
calibration, MAP starts) is declared once here, as a field of the frozen record
:class:`GenerationSettings` with its default, its validation and its
command-line help (:func:`~lbm_bench._records.setting`). The options of the
model design are the record :class:`ModelOptions`, made of the options every
family shares (:data:`~lbm_bench.models.design.SHARED_OPTION_FIELDS`) and those
each family declares in its own module: a new family's options appear here, in
release specs and on the command line without an edit of this module.

:func:`~lbm_bench.generate_table` builds a :class:`GenerationSettings` from its
keyword arguments, a release spec from a TOML table
(:meth:`~lbm_bench._records.Record.from_mapping`), and ``lbm-bench generate``
from its options, which are themselves made from the fields
(:func:`lbm_bench.cli.common.add_record_options`). A table file stores the
record's own serialisation (:meth:`~lbm_bench._records.Record.to_record`) and
:attr:`~lbm_bench.Table.settings` reads it back into the same record.

Examples
--------
>>> s = GenerationSettings.from_mapping({"n_samples": 500, "tolerance": 0.02})
>>> s.n_samples, s.tolerance, s.n_chains
(500, 0.02, 8)
>>> GenerationSettings(n_chains=0)
Traceback (most recent call last):
...
ValueError: n_chains must be >= 1, got 0
>>> ModelOptions.from_mapping({"base_rate": 3.0}).design_options()
{'base_rate': 3.0}
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from lbm_bench._records import (
    Record,
    choice,
    count,
    fraction,
    int_or_auto,
    open_probability,
    optional,
    setting,
)
from lbm_bench._validation import check_count
from lbm_bench.metrics.mcmc import MIN_SETS_PER_CHAIN
from lbm_bench.models.design import check_missing_together, design_option_fields
from lbm_bench.models.missing import expand_missing

__all__ = [
    "MIN_SAMPLES",
    "GenerationSettings",
    "ModelOptions",
    "split_options",
]


#: Fewest label sets of a certifying run (with at least
#: :data:`~lbm_bench.metrics.mcmc.MIN_SETS_PER_CHAIN` per chain). The floor is cross-fitted on
#: two halves of the chains; with fewer than 100 sets in a half, the labels each half chooses
#: differ from those chosen on all sets on the ambiguous items, and the table's own Bayes
#: labels then scored below its floor by more than 3 MCSE (up to 5 on tables of 30x20 to
#: 60x40 with 100 sets; within 2.2 with 200, over 216 tables of 2, 4 and 8 chains:
#: ``tests/scoring/test_evaluate.py``).
MIN_SAMPLES = 200


def _tables(name: str, value: Any) -> int | str:
    if value == "auto":
        return value
    if isinstance(value, str):
        raise ValueError(f"{name} must be a positive integer or 'auto', got {value!r}")
    return check_count(name, value)


@dataclass(frozen=True)
class GenerationSettings(Record):
    """How a table is calibrated, drawn, screened and certified.

    Every field is validated on construction (``ValueError``/``TypeError`` naming
    it). Build one from keyword arguments, :meth:`from_mapping` (a release spec's
    TOML table) or the command line's options. What the target risk applies to (the floor or
    the MAP's risk) is part of the request (:class:`~lbm_bench.TableRequest`), not
    of these settings.

    Attributes
    ----------
    tolerance : float, default=0.01
        A table is kept when ``|risk - target| <= tolerance``.
    n_samples, n_chains, burn_in, thin : int
        The certifying Gibbs run (label sets, chains, burn-in sweeps, thinning): at least
        :data:`MIN_SAMPLES` (200) sets, and :data:`~lbm_bench.metrics.mcmc.MIN_SETS_PER_CHAIN`
        (10) per chain, the fewest with an honest Monte Carlo standard error.
    screen_samples : int, default=200
        Label sets of the screening run (0 disables screening; else at least 10 per chain).
    max_attempts : int, default=100
        Candidates drawn before giving up.
    balance : float or None
        Also require ``min(l_row, l_col) >= balance * max(l_row, l_col)``.
    n_calibration_tables : int or "auto", default="auto"
        Tables per evaluated scale of the calibration: sequential (``"auto"``: few
        while far from the target, then, at one scale, as many as a cost rule weighs
        against the candidates of the rejection step, or as make the standard error
        of the mean half the calibration tolerance, whichever is fewer: at most 16),
        or fixed.
    calibration_method : {"secant", "bisection"}, default="secant"
        Root finding of the calibration (see :func:`~lbm_bench.calibrate_scale`);
        ``"bisection"`` is the paper's dichotomy from scale 1.
    jobs : int, default=1
        Worker processes over which the calibration spreads its tables and the Gibbs
        runs of a large table their chains. The table does not depend on it, and it
        is not stored.
    calibration_tolerance : float or None
        Tolerance of the calibration (see :func:`~lbm_bench.calibrate_scale`).
    n_init : int, default=10
        Random starts of the MAP.
    gibbs_method : {"incremental", "full"}
        How the Gibbs sampler updates its block sums ("full" is the reference).

    Examples
    --------
    >>> settings = GenerationSettings(n_samples=500, tolerance=0.02)
    >>> settings.to_record()["n_samples"], settings.replace(n_chains=4).n_chains
    (500, 4)
    """

    tolerance: float = setting(0.01, open_probability, "--tolerance", "rejection tolerance on the "
                                                                      "risk")
    n_samples: int = setting(
        2000, count(1), "--samples",
        f"Gibbs label sets of the certifying run: at least {MIN_SAMPLES}, and {MIN_SETS_PER_CHAIN} "
        "per chain (fewer "
        "give no honest Monte Carlo standard error)",
    )
    n_chains: int = setting(
        8, count(1), "--chains", f"Gibbs chains (each keeps at least {MIN_SETS_PER_CHAIN} of the "
                                 "--samples sets)"
    )
    burn_in: int = setting(50, count(0), "--burn-in", "Gibbs burn-in sweeps")
    thin: int = setting(1, count(1), "--thin", "Gibbs thinning")
    screen_samples: int = setting(
        200, count(0), "--screen-samples",
        f"label sets of the screening run (0: none; else at least {MIN_SETS_PER_CHAIN} per chain)",
    )
    max_attempts: int = setting(100, count(1), "--max-attempts", "rejection attempts before giving "
                                                                 "up")
    balance: float | None = setting(
        None, optional(fraction), "--balance", "require min(l_row, l_col) >= BALANCE * max(l_row, "
                                               "l_col)"
    )
    n_calibration_tables: int | str = setting(
        "auto", _tables, "--calibration-tables",
        "tables per evaluated scale of the calibration, or 'auto' (sequential)", parse=int_or_auto,
    )
    calibration_method: str = setting(
        "secant", choice("secant", "bisection"), "--calibration-method",
        "root finding of the calibration ('bisection': the paper's dichotomy, slower)",
    )
    jobs: int = setting(
        1, count(1), "--jobs",
        "worker processes for the calibration's tables and a large table's Gibbs chains (same "
        "table for any number)",
        stored=False,
    )
    calibration_tolerance: float | None = setting(
        None, optional(open_probability), "--calibration-tolerance", "tolerance of the calibration"
    )
    n_init: int = setting(10, count(1), "--n-init", "random starts of the MAP")
    gibbs_method: str = setting(
        "incremental", choice("incremental", "full"), "--gibbs-method",
        "block-sum updates of the Gibbs sampler ('full' is the slow reference)",
    )

    def _check_together(self) -> None:
        if self.n_chains > self.n_samples:
            raise ValueError(f"n_chains ({self.n_chains}) exceeds n_samples ({self.n_samples})")
        least = max(MIN_SAMPLES, MIN_SETS_PER_CHAIN * self.n_chains)
        if self.n_samples < least:
            raise ValueError(
                f"n_samples ({self.n_samples}) must be at least {least}: {MIN_SAMPLES} label sets "
                f"in all and {MIN_SETS_PER_CHAIN} per chain with n_chains={self.n_chains} (fewer "
                "give no honest Monte Carlo standard error of the certified risks)"
            )
        screened = min(self.n_chains, self.screen_samples)  # the screening run's chains
        if 0 < self.screen_samples < MIN_SETS_PER_CHAIN * screened:
            raise ValueError(
                f"screen_samples ({self.screen_samples}) must be 0 (no screening) or at least "
                f"{MIN_SETS_PER_CHAIN * screened}: {MIN_SETS_PER_CHAIN} label sets per chain with "
                f"n_chains={self.n_chains}"
            )

    def gibbs_options(self) -> dict[str, Any]:
        """Keyword arguments of :func:`~lbm_bench.gibbs_labels` for the certifying run."""
        return dict(n_chains=self.n_chains, burn_in=self.burn_in, thin=self.thin,
                    method=self.gibbs_method, jobs=self.jobs)


def _option_type(f: dataclasses.Field) -> str:
    """The annotation of a design option, for the command line: from its default."""
    if isinstance(f.default, bool):
        return "bool"
    if isinstance(f.default, int):
        return "int"
    if isinstance(f.default, str):
        return "str"
    return "float | None" if f.default is None else "float"


def _design_options(self: Any) -> dict[str, Any]:
    """Keyword arguments of :func:`~lbm_bench.random_design` that differ from its defaults."""
    return self.to_record(only_changed=True)


def _from_mapping(cls: Any, values: Mapping[str, Any], *, where: str = "") -> Any:
    """:meth:`Record.from_mapping`, a ``missing`` mapping (``{"rate": 0.3, "mechanism":
    "block"}``) first written as the options ``missing`` and ``missing_mechanism``."""
    try:
        values = expand_missing(values)
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}" if where else str(exc)) from None
    record = Record.from_mapping.__func__(cls, values, where=where)
    # an option given explicitly at its default value may still do nothing (missing_mechanism
    # without a rate)
    try:
        check_missing_together(record.to_record(), given=values)
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}" if where else str(exc)) from None
    return record


def _check_options_together(self: Any) -> None:
    check_missing_together(self.to_record())


#: The design options (see :func:`~lbm_bench.random_design`): the shared ones
#: (``equal_proportions``, ``equal_dispersions``, ``dispersion_spread``) and each
#: family's (``base_rate``, ``density``, ``effects``, ``effects_spread``, ...), one
#: field each; a family refuses another family's option (:class:`~lbm_bench.TableRequest`).
ModelOptions = dataclasses.make_dataclass(
    "ModelOptions",
    [
        (name, _option_type(f), dataclasses.field(default=f.default, metadata=f.metadata))
        for name, f in design_option_fields().items()
    ],
    bases=(Record,),
    frozen=True,
    namespace={"design_options": _design_options, "from_mapping": classmethod(_from_mapping),
               "_check_together": _check_options_together, "__module__": __name__},
)
ModelOptions.__doc__ = """Options of the model design (see :func:`~lbm_bench.random_design`).

Attributes
----------
equal_proportions, equal_dispersions : bool
    Equal cluster proportions / dispersions instead of random ones.
dispersion_spread : float, default=0.25
    Spread of the random dispersions, in [0, 1).
base_rate : float, default=2.0
    Poisson: geometric mean of the block rates (dense designs).
density : float or None, default=None
    Bernoulli, Poisson: expected fraction of non-zero entries; the design
    and its tables are sparse (``scipy.sparse.csr_array``).
effects : bool, default=False
    Poisson: row and column effects (the contingency model) for the
    table's shape.
effects_spread : float, default=0.3
    Standard deviation of the log effects.
missing : float, default=0.0
    Every family: expected fraction of missing entries, in [0, 1) (0: a complete
    table). ``from_mapping`` (and so :func:`~lbm_bench.generate_table`,
    :class:`~lbm_bench.TableRequest` and release specs) also takes
    ``missing={"rate": 0.3, "mechanism": "block"}``.
missing_mechanism : {"random", "block"}, default="random"
    Entries missing completely at random, or by block (not at random), see
    :mod:`lbm_bench.models.missing`.
missing_spread : float, default=0.5
    The block mechanism's spread of missing logits at scale 1.
(and the options of any other registered family, declared in its module)

Examples
--------
>>> options = ModelOptions.from_mapping({"base_rate": 3.0, "missing": {"rate": 0.3,
...                                      "mechanism": "block"}})
>>> options.design_options()   # random_design's keyword arguments, those not at their default
{'base_rate': 3.0, 'missing': 0.3, 'missing_mechanism': 'block'}
"""


def split_options(options: Mapping[str, Any]) -> tuple[GenerationSettings, Any]:
    """Split keyword arguments into generation settings and model options.

    Raises
    ------
    ValueError
        For a key that is neither, naming it and the allowed keys.
    """
    unknown = sorted(set(options) - set(GenerationSettings.names()) - set(ModelOptions.names()))
    if unknown:
        allowed = sorted(GenerationSettings.names() + ModelOptions.names())
        raise ValueError(f"unknown option(s) {', '.join(unknown)}; allowed: {', '.join(allowed)}")
    settings = GenerationSettings.from_mapping(
        {k: v
         for k, v in options.items() if k in GenerationSettings.names()})
    model = ModelOptions.from_mapping(
        {k: v
         for k, v in options.items() if k in ModelOptions.names()})
    return settings, model
