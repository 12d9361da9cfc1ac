"""Checked, frozen records whose fields carry their own check, flag and help.

A *setting* is a dataclass field declared with :func:`setting`: its default, the
function that checks it (``check(name, value) -> normalised value``, raising
``ValueError``/``TypeError`` naming the field), its command-line flag and its
help. A record (a frozen dataclass deriving from :class:`Record`) validates
every field on construction, is built from a mapping (keyword arguments, a TOML
table), and serialises to a plain dict; the command line reads the fields' flags and
help to make its options (:mod:`lbm_bench.cli.common`).
The generation settings (:mod:`lbm_bench.protocol.settings`), the table request
(:mod:`lbm_bench.protocol.request`) and the design options that each family
declares in its own module (:mod:`lbm_bench.models`) are all declared this way,
so that the API, release specs and the command line check them identically.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from lbm_bench._validation import (
    check_choice,
    check_count,
    check_positive_float,
    check_probability,
    describe_value,
)

__all__ = [
    "Record",
    "choice",
    "count",
    "flag",
    "fraction",
    "int_or_auto",
    "non_negative",
    "open_probability",
    "optional",
    "positive",
    "setting",
    "spread",
]

_R = TypeVar("_R", bound="Record")


# -- checks: each returns the normalised value or raises naming the setting -----------------
def count(minimum: int) -> Callable[[str, Any], int]:
    """Check of an integer ``>= minimum``."""
    return lambda name, value: check_count(name, value, minimum=minimum)


def open_probability(name: str, value: Any) -> float:
    """Check of a float in (0, 1)."""
    return check_probability(name, value)


def fraction(name: str, value: Any) -> float:
    """Check of a float in [0, 1]."""
    return check_probability(name, value, open_interval=False)


def positive(name: str, value: Any) -> float:
    """Check of a finite float > 0."""
    return check_positive_float(name, value)


def non_negative(name: str, value: Any) -> float:
    """Check of a finite float >= 0."""
    return check_positive_float(name, value, allow_zero=True)


def spread(name: str, value: Any) -> float:
    """Check of a float in [0, 1)."""
    value = check_positive_float(name, value, allow_zero=True)
    if value >= 1:
        raise ValueError(f"{name} must be < 1, got {value}")
    return value


def flag(name: str, value: Any) -> bool:
    """Check of a boolean (``True``/``False`` only)."""
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be true or false, got {describe_value(value)}")
    return value


def optional(check: Callable[[str, Any], Any]) -> Callable[[str, Any], Any]:
    """``check``, or None left as it is."""
    return lambda name, value: None if value is None else check(name, value)


def choice(*choices: str) -> Callable[[str, Any], str]:
    """Check of one of ``choices`` (:func:`~lbm_bench._validation.check_choice`)."""
    return lambda name, value: check_choice(name, value, choices)


def int_or_auto(text: str) -> int | str:
    """Command-line parser of an integer or ``auto``."""
    return text if text == "auto" else int(text)


def setting(default: Any, check: Callable[[str, Any], Any], flag: str, help: str,
            **extra: Any) -> Any:
    """A dataclass field carrying its check, its command-line flag and its help.

    Extra metadata: ``stored=False`` (how, not what: left out of :meth:`Record.to_record`),
    ``parse`` (the command-line parser of the value), ``metavar`` and ``show`` (how the help
    names the value and writes the default, e.g. ``GxM`` and ``8x8``).
    """
    return dataclasses.field(default=default,
                             metadata={"check": check, "flag": flag, "help": help, **extra})


class Record:
    """Validation and conversions shared by the checked records (frozen dataclasses)."""

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
    def from_mapping(cls: type[_R], values: Mapping[str, Any], *, where: str = "") -> _R:
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
                f"{prefix}unknown setting(s) {', '.join(unknown)}; allowed: "
                f"{', '.join(sorted(cls.names()))}"
            )
        try:
            return cls(**dict(values))
        except (TypeError, ValueError) as exc:
            if not prefix:
                raise
            raise type(exc)(f"{prefix}{exc}") from None

    @classmethod
    def from_record(cls: type[_R], record: Mapping[str, Any]) -> _R:
        """Read back a record stored by :meth:`to_record` (other keys are ignored: files
        of older versions store fewer fields, or more)."""
        return cls(**{name: record[name] for name in cls.names() if name in record})

    def replace(self: _R, **changes: Any) -> _R:
        """A copy with some fields changed (validated again)."""
        return dataclasses.replace(self, **changes)

    def changed(self) -> dict[str, Any]:
        """The fields that differ from their defaults, sorted by name."""
        return self.to_record(only_changed=True)

    def to_record(self, *, only_changed: bool = False) -> dict[str, Any]:
        """The stored fields as a plain dict, sorted by name (what files store).

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
