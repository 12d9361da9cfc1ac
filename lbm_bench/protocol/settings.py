"""One settings record for generation, shared by the API, release specs and the CLI.

Every generation setting (rejection tolerance, Gibbs run, screening, attempts,
calibration, MAP starts) and every option of the model design is declared once
here, as a field of a frozen dataclass with its default, its validation and its
command-line help. :func:`~lbm_bench.generate_table` builds a
:class:`GenerationSettings` from its keyword arguments, a release spec from a
TOML table (:meth:`GenerationSettings.from_mapping`), and ``lbm-bench generate``
from its options, which are themselves made from the fields
(:func:`add_cli_arguments`). The record is stored in the file's options record
(:meth:`GenerationSettings.to_record`).

Adding a setting means adding one field: its ``metadata`` says how it is
checked (``check``), how it is spelled on the command line (``flag``) and what
``--help`` says (``help``).

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

import argparse
import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from lbm_bench._validation import check_count, check_positive_float, check_probability

__all__ = [
    "GenerationSettings",
    "ModelOptions",
    "add_cli_arguments",
    "split_options",
]

_Record = TypeVar("_Record", bound="_SettingsRecord")


# -- checks: each returns the normalised value or raises naming the setting ---------------


def _count(minimum: int) -> Callable[[str, Any], int]:
    return lambda name, value: check_count(name, value, minimum=minimum)


def _open_probability(name: str, value: Any) -> float:
    return check_probability(name, value)


def _optional(check: Callable[[str, Any], Any]) -> Callable[[str, Any], Any]:
    return lambda name, value: None if value is None else check(name, value)


def _fraction(name: str, value: Any) -> float:
    return check_probability(name, value, open_interval=False)


def _positive(name: str, value: Any) -> float:
    return check_positive_float(name, value)


def _flag(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be true or false, got {value!r}")
    return value


def _non_negative(name: str, value: Any) -> float:
    return check_positive_float(name, value, allow_zero=True)


def _spread(name: str, value: Any) -> float:
    value = check_positive_float(name, value, allow_zero=True)
    if value >= 1:
        raise ValueError(f"{name} must be < 1, got {value}")
    return value


def _choice(*choices: str) -> Callable[[str, Any], str]:
    def check(name: str, value: Any) -> str:
        if value not in choices:
            raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}, got {value!r}")
        return value

    return check


def _tables(name: str, value: Any) -> int | str:
    if value == "auto":
        return value
    if isinstance(value, str):
        raise ValueError(f"{name} must be a positive integer or 'auto', got {value!r}")
    return check_count(name, value)


def _int_or_auto(text: str) -> int | str:
    """Command-line parser of an integer or ``auto``."""
    return text if text == "auto" else int(text)


def _setting(default: Any, check: Callable[[str, Any], Any], flag: str, help: str, **extra: Any) -> Any:
    """A dataclass field carrying its check, its command-line flag and its help."""
    return field(default=default, metadata={"check": check, "flag": flag, "help": help, **extra})


class _SettingsRecord:
    """Validation and conversions shared by the settings records."""

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            value = f.metadata["check"](f.name, getattr(self, f.name))
            object.__setattr__(self, f.name, value)
        self._check_together()

    def _check_together(self) -> None:
        """Constraints between fields (none by default)."""

    @classmethod
    def names(cls) -> tuple[str, ...]:
        """The field names, in declaration order."""
        return tuple(f.name for f in dataclasses.fields(cls))

    @classmethod
    def from_mapping(cls: type[_Record], values: Mapping[str, Any], *, where: str = "") -> _Record:
        """Build from a mapping (keyword arguments, a TOML table); unknown keys are refused.

        Parameters
        ----------
        values : mapping of str to value
            Some fields; the others take their defaults.
        where : str, default=""
            Prefix of error messages (e.g. ``"grid[2]"`` in a release spec).
        """
        prefix = f"{where}: " if where else ""
        unknown = sorted(set(values) - set(cls.names()))
        if unknown:
            raise ValueError(
                f"{prefix}unknown setting(s) {', '.join(unknown)}; allowed: {', '.join(sorted(cls.names()))}"
            )
        try:
            return cls(**dict(values))
        except (TypeError, ValueError) as exc:
            if not prefix:
                raise
            raise type(exc)(f"{prefix}{exc}") from None

    @classmethod
    def from_cli(cls: type[_Record], args: argparse.Namespace) -> _Record:
        """Build from parsed command-line options made by :func:`add_cli_arguments`."""
        given = {name: getattr(args, name) for name in cls.names() if getattr(args, name, None) is not None}
        return cls.from_mapping(given)

    def replace(self: _Record, **changes: Any) -> _Record:
        """A copy with some fields changed (validated again)."""
        return dataclasses.replace(self, **changes)

    def to_record(self, *, only_changed: bool = False) -> dict[str, Any]:
        """The fields as a plain dict, sorted by name (what the file's options record stores).

        With ``only_changed``, the fields that differ from their defaults.
        """
        out = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if not f.metadata.get("stored", True):  # how, not what (e.g. worker processes)
                continue
            if only_changed and value == f.default:
                continue
            out[f.name] = value
        return {k: out[k] for k in sorted(out)}


@dataclass(frozen=True)
class GenerationSettings(_SettingsRecord):
    """How a table is calibrated, drawn, screened and certified.

    Every field is validated on construction (``ValueError``/``TypeError`` naming
    it). Build one from keyword arguments, :meth:`from_mapping` (a release spec's
    TOML table) or :meth:`from_cli`.

    Attributes
    ----------
    tolerance : float, default=0.01
        A table is kept when ``|risk - target| <= tolerance``.
    n_samples, n_chains, burn_in, thin : int
        The certifying Gibbs run (label sets, chains, burn-in sweeps, thinning).
    screen_samples : int, default=200
        Label sets of the screening run (0 disables screening).
    max_attempts : int, default=100
        Candidates drawn before giving up.
    balance : float or None
        Also require ``min(l_row, l_col) >= balance * max(l_row, l_col)``.
    n_calibration_tables : int or "auto", default="auto"
        Tables per evaluated scale of the calibration: sequential (``"auto"``: few
        while far from the target, up to the number that makes the standard error
        of the mean error half the calibration tolerance or a quarter of the
        errors' spread, whichever is looser: at most 16), or fixed.
    calibration_method : {"secant", "bisection"}, default="secant"
        Root finding of the calibration (see :func:`~lbm_bench.calibrate_scale`);
        ``"bisection"`` is the paper's dichotomy from scale 1.
    jobs : int, default=1
        Worker processes over which the calibration spreads its tables. The table
        does not depend on it, and it is not stored.
    calibration_tolerance : float or None
        Tolerance of the calibration (see :func:`~lbm_bench.calibrate_scale`).
    n_init : int, default=10
        Random starts of the MAP.
    gibbs_method : {"incremental", "full"}
        How the Gibbs sampler updates its block sums ("full" is the reference).
    criterion : {"bayes", "map"}, default="bayes"
        Which conditional risk the target and the rejection step apply to: the
        floor (the risk of the Bayes labels for ``l_item``, cross-fitted) or the
        risk of the X-only MAP labels (the paper's protocol).
    """

    tolerance: float = _setting(0.01, _open_probability, "--tolerance", "rejection tolerance on the risk")
    n_samples: int = _setting(2000, _count(1), "--samples", "Gibbs label sets of the certifying run")
    n_chains: int = _setting(8, _count(1), "--chains", "Gibbs chains")
    burn_in: int = _setting(50, _count(0), "--burn-in", "Gibbs burn-in sweeps")
    thin: int = _setting(1, _count(1), "--thin", "Gibbs thinning")
    screen_samples: int = _setting(200, _count(0), "--screen-samples", "label sets of the screening run (0: none)")
    max_attempts: int = _setting(100, _count(1), "--max-attempts", "rejection attempts before giving up")
    balance: float | None = _setting(
        None, _optional(_fraction), "--balance", "require min(l_row, l_col) >= BALANCE * max(l_row, l_col)"
    )
    n_calibration_tables: int | str = _setting(
        "auto", _tables, "--calibration-tables",
        "tables per evaluated scale of the calibration, or 'auto' (sequential)", parse=_int_or_auto,
    )
    calibration_method: str = _setting(
        "secant", _choice("secant", "bisection"), "--calibration-method",
        "root finding of the calibration ('bisection': the paper's dichotomy, slower)",
    )
    jobs: int = _setting(
        1, _count(1), "--jobs", "worker processes for the calibration's tables (same table for any number)",
        stored=False,
    )
    calibration_tolerance: float | None = _setting(
        None, _optional(_open_probability), "--calibration-tolerance", "tolerance of the calibration"
    )
    n_init: int = _setting(10, _count(1), "--n-init", "random starts of the MAP")
    gibbs_method: str = _setting(
        "incremental", _choice("incremental", "full"), "--gibbs-method",
        "block-sum updates of the Gibbs sampler ('full' is the slow reference)",
    )
    criterion: str = _setting(
        "bayes", _choice("bayes", "map"), "--criterion",
        "risk the target applies to: 'bayes' (the floor, the Bayes labels for l_item) "
        "or 'map' (the X-only MAP labels, the paper's protocol)",
    )

    def _check_together(self) -> None:
        if self.n_chains > self.n_samples:
            raise ValueError(f"n_chains ({self.n_chains}) exceeds n_samples ({self.n_samples})")

    def gibbs_options(self) -> dict[str, Any]:
        """Keyword arguments of :func:`~lbm_bench.gibbs_labels` for the certifying run."""
        return dict(n_chains=self.n_chains, burn_in=self.burn_in, thin=self.thin, method=self.gibbs_method)


@dataclass(frozen=True)
class ModelOptions(_SettingsRecord):
    """Options of the model design (see :func:`~lbm_bench.random_design`).

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
    """

    equal_proportions: bool = _setting(False, _flag, "--equal-proportions", "equal cluster proportions")
    equal_dispersions: bool = _setting(False, _flag, "--equal-dispersions", "equal dispersions")
    dispersion_spread: float = _setting(0.25, _spread, "--dispersion-spread", "spread of the dispersions, in [0, 1)")
    base_rate: float = _setting(2.0, _positive, "--base-rate", "Poisson: geometric mean of the block rates")
    density: float | None = _setting(
        None, _optional(_open_probability), "--density",
        "bernoulli, poisson: expected fraction of non-zero entries; the table is stored sparse",
    )
    effects: bool = _setting(False, _flag, "--effects", "poisson: row and column effects (contingency model)")
    effects_spread: float = _setting(
        0.3, _non_negative, "--effects-spread", "poisson: standard deviation of the log effects"
    )

    def design_options(self) -> dict[str, Any]:
        """Keyword arguments of :func:`~lbm_bench.random_design` that differ from its defaults."""
        return self.to_record(only_changed=True)


def split_options(options: Mapping[str, Any]) -> tuple[GenerationSettings, ModelOptions]:
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
    settings = GenerationSettings.from_mapping({k: v for k, v in options.items() if k in GenerationSettings.names()})
    model = ModelOptions.from_mapping({k: v for k, v in options.items() if k in ModelOptions.names()})
    return settings, model


def add_cli_arguments(parser: argparse.ArgumentParser, record: type[_SettingsRecord]) -> None:
    """Add one command-line option per field of ``record`` (defaults shown in the help).

    Options left out on the command line are ``None`` in the parsed namespace, so
    :meth:`~_SettingsRecord.from_cli` keeps the record's defaults.
    """
    for f in dataclasses.fields(record):
        text = f"{f.metadata['help']} (default {f.default})"
        metavar = f.metadata["flag"].lstrip("-").upper().replace("-", "_")
        if f.type in ("bool", bool):
            parser.add_argument(f.metadata["flag"], dest=f.name, action="store_true", default=None, help=text)
            continue
        kind = f.metadata.get("parse") or {"int": int, "float": float, "str": str}.get(str(f.type).split(" ")[0])
        parser.add_argument(
            f.metadata["flag"], dest=f.name, type=kind or float, default=None, metavar=metavar, help=text
        )
