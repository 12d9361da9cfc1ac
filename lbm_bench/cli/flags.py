"""The library's argument names as the command line spells them, in one table, and the rewording
of a refusal into flag words.

The library raises with its Python argument names (``target_risk must lie in (0, 1)``,
``kind='gaussian' but ...``, ``allowed by max_memory=``); the command line prints the same
refusal naming its flags (``--risk must lie in (0, 1)``, ``--kind gaussian but ...``,
``allowed by --max-memory``). :data:`FLAGS` and the flags the records declare
(:func:`flag_table`) are the one table; :func:`flag_words` rewrites a message with the
arguments a command passes on (``lbm_bench.cli.program`` calls it once, when it prints an
error).

Examples
--------
>>> flag_words("target_risk=0.95 cannot be reached", ("target_risk",))
'--risk 0.95 cannot be reached'
"""

from __future__ import annotations

import dataclasses
import itertools
import re
from collections.abc import Iterable

__all__ = ["FLAGS", "OptionsError", "flag_table", "flag_words"]

#: The arguments of the library's functions that a flag of the command line sets, when the
#: flag is not a record's declared field (those are read from the records: :func:`flag_table`).
#: Two arguments may share a flag (``--shape`` gives ``n_rows`` and ``n_cols``).
FLAGS = {
    "target_risk": "--risk",
    "n_rows": "--shape",
    "n_cols": "--shape",
    "n_row_clusters": "--clusters",
    "n_col_clusters": "--clusters",
    "kind": "--kind",
    "max_clusters": "--max-clusters",
    "n_samples": "--samples",
    "jobs": "--jobs",
    "max_memory": "--max-memory",
    "format": "--format",
    "delimiter": "--delimiter",
    "header": "--header",
    "row_names": "--row-names",
    "overwrite": "--force",
    "force": "--force",
    "out": "--out",
    "backend": "--backend",
    "kernel": "--kernel",
    "scheduler": "--scheduler",
    "track": "--track",
    "timeout": "--timeout",
    "min_rate": "--min-rate",
    "max_size": "--max-size",
    "sha256": "--sha256",
    "rng": "--seed",
    "seed": "--seed",
}

#: Where a sentence starts: the message's start, or after ``: `` or ``; ``.
_STARTS = r"(?:(?<=^)|(?<=: )|(?<=; ))"
#: What follows a plain word (``kind``, ``jobs``, ``missing``) that opens a sentence when it names
#: an argument (``jobs must be >= 1``), and not when it is prose (``missing port number``: a word
#: of a foreign library's message).
_REFUSED = (r"(?=(?:must|is|are|was|has|have|cannot|can|needs|need|should|exceeds|takes|goes|"
            r"and|or)\b)")


class OptionsError(ValueError):
    """A record's refusal of the options given on the command line (its message names the
    record's fields, ``names``, which the error line writes as their flags wherever they
    appear: the message speaks of nothing else)."""

    def __init__(self, message: str, names: Iterable[str]) -> None:
        super().__init__(message)
        self.names = tuple(names)

    def __reduce__(self) -> tuple:
        return (OptionsError, (str(self), self.names))


def flag_table() -> dict[str, str]:
    """Every argument name the command line spells by a flag: :data:`FLAGS` and the fields the
    records declare with their flag (the settings, the request's options, the design options
    and the benchmark tracks' options)."""
    from lbm_bench.protocol.request import RequestOptions
    from lbm_bench.protocol.settings import GenerationSettings, ModelOptions
    from lbm_bench.scoring.benchmark import TRACKS

    records = [GenerationSettings, RequestOptions, ModelOptions,
               *(track.options for track in TRACKS.values())]
    declared = {f.name: f.metadata["flag"] for record in records
                for f in dataclasses.fields(record)}
    return {**declared, **FLAGS}


def flag_words(message: str, names: Iterable[str], *, anywhere: bool = False) -> str:
    """``message`` (a refusal naming Python arguments) with the arguments ``names`` named by their
    flags (:func:`flag_table`; a name without a flag is left as it is).

    ``name='text'`` becomes ``flag text`` (quotes dropped), ``name=True`` the flag alone (a
    switch), ``name=`` without a value (``allowed by max_memory=``) the flag, ``name=value``
    ``flag value``; ``name`` followed by a space becomes the flag where it names an argument: a
    name with an underscore anywhere, a plain word (``kind``, ``jobs``) only where a sentence
    starts (the message's start, or after ``: `` or ``; ``) and a verb of a refusal follows
    (``jobs must``, ``density is``), not inside prose (``missing port number``), as do the names
    listed before a colon where a sentence starts (``density, effects: ...``). A name inside a
    formula (``n_rows*n_cols``) is kept. A pair after a flag is written as the command line
    takes it (``AxB``), and two arguments of one flag are named once (``n_rows and n_cols``).
    With ``anywhere`` (a record's refusal, which speaks of its fields only), every occurrence
    of a name becomes its flag, ``=`` kept.

    Examples
    --------
    >>> flag_words("kind='gaussian' but the design is of poisson blocks", ["kind"])
    '--kind gaussian but the design is of poisson blocks'
    >>> flag_words("jobs must be >= 1, got 0; a kind of table", ["kind", "jobs"])
    '--jobs must be >= 1, got 0; a kind of table'
    >>> flag_words("max_clusters (40, 40) exceeds the table", ["max_clusters"])
    '--max-clusters 40x40 exceeds the table'
    >>> flag_words("a smaller n_rows and n_cols, or a larger max_memory=",
    ...            ["n_rows", "n_cols", "max_memory"])
    'a smaller --shape, or a larger --max-memory'
    >>> flag_words("output t.h5 exists (use overwrite=True to overwrite)", ["overwrite"])
    'output t.h5 exists (use --force to overwrite)'
    >>> flag_words("missing=0.2 is more than density=0.1", ["missing", "density"], anywhere=True)
    '--missing=0.2 is more than --density=0.1'
    """
    table = flag_table()
    flags = {name: table[name] for name in names if name in table}
    for first, second in itertools.permutations(flags, 2):  # two arguments of one flag, named once
        if flags[first] == flags[second]:
            both = rf"(?<![\w-]){re.escape(first)} and {re.escape(second)}(?![\w-])"
            message = re.sub(both, flags[first], message)
    if anywhere:
        for name, flag in flags.items():
            message = re.sub(rf"(?<![\w-]){re.escape(name)}\b", flag, message)
        return message
    if flags:  # names that open a sentence, alone or as a list: ``a, b: ...``
        words = "|".join(map(re.escape, sorted(flags, key=len, reverse=True)))
        listed = rf"{_STARTS}((?:(?:{words}), )*(?:{words}))(?=: )"
        message = re.sub(listed, lambda m: ", ".join(flags[n] for n in m[1].split(", ")), message)
    for name, flag in flags.items():
        message = _argument_in_flag(message, name, flag)
    for flag in set(flags.values()):
        word = re.escape(flag)
        message = re.sub(rf"(?<![\w-]){word} \((\d+), (\d+)\)", rf"{flag} \1x\2", message)
    return message


def _argument_in_flag(message: str, name: str, flag: str) -> str:
    """``message`` with the argument ``name`` written as ``flag`` (:func:`flag_words`' rules)."""
    word = re.escape(name)
    message = re.sub(rf"(?<![\w-]){word}=(['\"])(.*?)\1", rf"{flag} \2", message)
    message = re.sub(rf"(?<![\w-]){word}=True\b", flag, message)
    message = re.sub(rf"(?<![\w-]){word}=(?=[),;:]|$)", flag, message)
    message = re.sub(rf"(?<![\w-]){word}=", f"{flag} ", message)
    if "_" in name:
        return re.sub(rf"(?<![\w-]){word} ", f"{flag} ", message)
    return re.sub(rf"{_STARTS}{word} {_REFUSED}", f"{flag} ", message)
