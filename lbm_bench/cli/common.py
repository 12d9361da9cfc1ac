"""What the commands of ``lbm-bench`` share: the parser whose errors are one line, the exit
statuses, a subcommand described by its function, the ``AxB`` values, the records' options
(one flag per declared field) and the labels files of ``evaluate`` and ``show``."""

from __future__ import annotations

import argparse
import dataclasses
import inspect
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, NoReturn, TypeVar

from lbm_bench.cli.flags import OptionsError

__all__ = [
    "EXIT_BROKEN_PIPE",
    "EXIT_FAILURE",
    "EXIT_TERMINATED",
    "EXIT_USAGE",
    "CommandParser",
    "add_command",
    "add_record_options",
    "pair",
    "read_labels_file",
    "record_from_options",
    "show_progress",
    "warn_suffix",
]

#: Exit status for errors in the user's input.
EXIT_USAGE = 2
#: Exit status for a run that could not complete (e.g. rejection sampling gave up).
EXIT_FAILURE = 1
#: Exit status when the reader of the output closed the pipe (128 + SIGPIPE, as a shell reports
#: a tool that ``head`` stopped).
EXIT_BROKEN_PIPE = 141
#: Exit status after SIGTERM (128 + SIGTERM, as a shell reports a killed tool).
EXIT_TERMINATED = 143

_R = TypeVar("_R")


def pair(text: str) -> tuple[int, int]:
    """Parse ``"200x100"`` into ``(200, 100)``."""
    parts = text.lower().split("x")
    try:
        a, b = (int(p) for p in parts)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected two integers as AxB, got {text!r}") from None
    if a < 1 or b < 1:
        raise argparse.ArgumentTypeError(f"expected positive integers as AxB, got {text!r}")
    return a, b


class CommandParser(argparse.ArgumentParser):
    """argparse with errors in one line, as every other error of the command line: no usage block
    (``--help`` shows it), and a hint for a value that starts with ``-``, which argparse takes
    for an option (``--max-clusters -1x2``)."""

    def error(self, message: str) -> NoReturn:
        option = message.partition(":")[0].removeprefix("argument ")
        if message.endswith("expected one argument") and option.startswith("-"):
            message += f" (a value that starts with '-' is written {option.split('/')[-1]}=VALUE)"
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def show_progress(args: argparse.Namespace) -> bool:
    """Whether the command draws progress bars: on a terminal, unless ``-q``."""
    return not getattr(args, "quiet", False) and sys.stderr.isatty()


def add_command(sub: Any, name: str, run: Callable[[argparse.Namespace], int], summary: str,
                arguments: Iterable[str] = ()) -> argparse.ArgumentParser:
    """The subcommand ``name`` that ``run`` runs; ``run``'s docstring describes it, and its errors
    name the library's ``arguments`` by their flags (:func:`~lbm_bench.cli.flags.flag_words`)."""
    description = inspect.cleandoc(run.__doc__) if run.__doc__ else None
    p = sub.add_parser(name, help=summary, description=description)
    p.set_defaults(run=run, arguments=tuple(arguments))
    return p


def add_record_options(parser: argparse.ArgumentParser | argparse._ArgumentGroup,
                       fields: type | Iterable[dataclasses.Field]) -> None:
    """Add one command-line option per field of a record (its declared flag and help, the
    default shown in the help).

    ``fields`` is a record class or its fields. Options left out on the command line are
    ``None`` in the parsed namespace, so :func:`record_from_options` keeps the record's
    defaults.
    """
    if isinstance(fields, type):
        fields = dataclasses.fields(fields)
    for f in fields:
        text = f"{f.metadata['help']} (default {f.default})"
        metavar = f.metadata["flag"].lstrip("-").upper().replace("-", "_")
        if f.type in ("bool", bool):
            parser.add_argument(f.metadata["flag"], dest=f.name, action="store_true", default=None,
                                help=text)
            continue
        types = {"int": int, "float": float, "str": str}
        kind = f.metadata.get("parse") or types.get(str(f.type).split(" ")[0])
        parser.add_argument(f.metadata["flag"], dest=f.name, type=kind or float, default=None,
                            metavar=metavar, help=text)


def record_from_options(cls: type[_R], args: argparse.Namespace) -> _R:
    """The record ``cls`` of the options :func:`add_record_options` added, as parsed; a refusal
    is an :class:`~lbm_bench.cli.flags.OptionsError` naming the record's fields."""
    names = cls.names()
    given = {name: getattr(args, name) for name in names if getattr(args, name, None) is not None}
    try:
        return cls.from_mapping(given)
    except (TypeError, ValueError) as exc:
        raise OptionsError(str(exc), names) from None


def warn_suffix(path: Path, suffixes: tuple[str, ...], content: str) -> None:
    """One line on stderr when an output's name says another format than what is written in it
    (``-o t.csv`` for an HDF5 table): the file is written all the same."""
    if path.suffix.lower() not in suffixes:
        print(f"warning: {path} will hold {content}, whatever its name says (the usual name ends "
              f"with {' or '.join(suffixes)})", file=sys.stderr)


def read_labels_file(path: Path, name: str):
    """A labels file, with one line on stderr when its first line was read as a header."""
    from lbm_bench.scoring.label_files import read_labels

    labels, header = read_labels(path, name=name, return_header=True)
    if header is not None:
        print(f"note: {name} file {path}: first line {header!r} read as a header (skipped)",
              file=sys.stderr)
    return labels
