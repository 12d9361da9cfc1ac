"""What the commands of ``lbm-bench`` share: the parser whose errors are one line, the exit
statuses, a subcommand described by its function, the ``AxB`` values, the records' options
(one flag per declared field) and the labels files of ``evaluate`` and ``show``."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import inspect
import sys
import warnings
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, NoReturn, TypeVar

from lbm_bench.cli.flags import OptionsError, flag_words

__all__ = [
    "EXIT_BROKEN_PIPE",
    "EXIT_FAILURE",
    "EXIT_TERMINATED",
    "EXIT_USAGE",
    "READING_ARGUMENTS",
    "CommandParser",
    "add_command",
    "add_kernel_option",
    "add_reading_options",
    "add_record_options",
    "pair",
    "print_kernel_hint",
    "read_labels_file",
    "reading_notes",
    "reading_options",
    "record_from_options",
    "show_progress",
    "warn_suffix",
]

#: The library's arguments that the reading options set (their errors and notes name the flags).
READING_ARGUMENTS = ("format", "delimiter", "header", "row_names", "max_memory")

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


def add_kernel_option(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """Add ``--kernel`` (the library's ``kernel=``: which kernel sums sparse tables)."""
    from lbm_bench.inference.kernel_choice import (
        COMPILED_MIN_ENTRIES,
        KERNEL_CHOICES,
        KERNEL_VARIABLE,
    )

    parser.add_argument("--kernel", choices=KERNEL_CHOICES, default=None,
                        help="which kernel sums sparse tables: loops compiled by numba (pip "
                        "install 'lbm-bench[fast]') or scipy's products, the same bytes either "
                        f"way (default: {KERNEL_VARIABLE}, else auto: compiled from "
                        f"{COMPILED_MIN_ENTRIES:,} stored entries where numba imports)")


def print_kernel_hint(n_stored: int) -> None:
    """The line that says how much faster numba would have made a large sparse table's work
    (:func:`~lbm_bench.inference.kernel_choice.kernel_hint`), on stderr, when it applies."""
    from lbm_bench.inference.kernel_choice import kernel_hint

    hint = kernel_hint(n_stored)
    if hint is not None:
        print(hint, file=sys.stderr)


def record_from_options(cls: type[_R], args: argparse.Namespace) -> _R:
    """The record ``cls`` of the options :func:`add_record_options` added, as parsed; a refusal
    is an :class:`~lbm_bench.cli.flags.OptionsError` naming the record's fields."""
    names = cls.names()
    given = {name: getattr(args, name) for name in names if getattr(args, name, None) is not None}
    try:
        return cls.from_mapping(given)
    except (TypeError, ValueError) as exc:
        raise OptionsError(str(exc), names) from None


def add_reading_options(parser: argparse.ArgumentParser, *, memory: bool = True) -> None:
    """The options of a command that reads a user's table: its format, a text file's delimiter,
    header and names column, and the memory the reading may take."""
    parser.add_argument("--format", default=None,
                        help="the file's format, instead of the one its name says")
    parser.add_argument("--delimiter", default=None, help="text files: the delimiter")
    parser.add_argument("--header", choices=["auto", "yes", "no"], default="auto",
                        help="text files: whether the first line is a header (default: detected, "
                        "docs/guide/your-data.md)")
    parser.add_argument("--row-names", choices=["auto", "yes", "no"], default="auto",
                        help="text files: whether the first column holds the rows' names "
                        "(default: detected)")
    if memory:
        parser.add_argument("--max-memory", default=None, metavar="SIZE",
                            help="refuse a table that needs more to read")


def reading_options(args: argparse.Namespace) -> dict[str, Any]:
    """The keyword arguments of ``read_user_table`` that :func:`add_reading_options` set."""
    return {"format": args.format, "delimiter": args.delimiter, "header": args.header,
            "row_names": args.row_names, "max_memory": getattr(args, "max_memory", None)}


@contextlib.contextmanager
def reading_notes(arguments: Iterable[str] = READING_ARGUMENTS) -> Iterator[None]:
    """Print what the reading of a user's table assumed (its ``ReadNote`` warnings), one line
    each on stderr, the library's arguments named by their flags."""
    from lbm_bench.storage.user_data import ReadNote

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ReadNote)
        try:
            yield
        finally:
            for warning in caught:
                if issubclass(warning.category, ReadNote):
                    text = " ".join(flag_words(str(warning.message), tuple(arguments)).split())
                    print(f"note: {text}", file=sys.stderr)
                else:
                    warnings.warn_explicit(warning.message, warning.category, warning.filename,
                                           warning.lineno)


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
