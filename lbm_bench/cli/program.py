"""The ``lbm-bench`` program: its parser (one subcommand per command module), and a run that
turns every error into one line with its exit status, the library's argument names written as
the command's flags (:func:`~lbm_bench.cli.flags.flag_words`, here only)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from signal import SIGTERM

from lbm_bench.cli import (
    benchmark_command,
    build_command,
    evaluate_command,
    fetch_command,
    fit_command,
    generate_command,
    info_command,
    show_command,
    verify_command,
)
from lbm_bench.cli.common import (
    EXIT_BROKEN_PIPE,
    EXIT_FAILURE,
    EXIT_TERMINATED,
    EXIT_USAGE,
    CommandParser,
)
from lbm_bench.cli.flags import OptionsError, flag_words

__all__ = ["COMMANDS", "build_parser", "error_line", "main"]

#: The command modules, in the order ``lbm-bench --help`` lists them.
COMMANDS = (generate_command, fit_command, info_command, show_command, evaluate_command,
            build_command, verify_command, fetch_command, benchmark_command)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``lbm-bench``."""
    from lbm_bench._version import __version__

    parser = CommandParser(
        prog="lbm-bench",
        description="Co-clustering benchmark tables with a certified conditional Bayes risk.",
    )
    parser.add_argument("--version", action="version", version=f"lbm-bench {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        command.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status."""
    from lbm_bench._interrupts import handled, hide_tracker_reports, hide_undeliverable_interrupts

    parser = build_parser()
    args = parser.parse_args(argv)
    hide_undeliverable_interrupts()
    hide_tracker_reports()
    with handled():  # SIGTERM raises, so a killed command cleans up as for Ctrl-C
        return _run(args)


def error_line(command: str, exc: BaseException, arguments: Sequence[str] = ()) -> str:
    """The one line that says ``exc``: an OS error in words; a refusal (``ValueError``,
    ``TypeError``) or a run that could not complete (``RuntimeError``) with the library's
    ``arguments`` named by the command's flags (a record's refusal of the options,
    :class:`~lbm_bench.cli.flags.OptionsError`, by its fields' flags)."""
    from lbm_bench._atomic import describe_os_error

    if isinstance(exc, OSError):
        text = describe_os_error(exc)
    elif isinstance(exc, OptionsError):
        text = flag_words(str(exc), exc.names, anywhere=True)
    elif isinstance(exc, (ValueError, TypeError, RuntimeError)):
        text = flag_words(str(exc), arguments)
    else:
        text = str(exc)
    if not isinstance(exc, RuntimeError):  # a refusal is one line whatever its message
        text = " ".join(text.split())
    return f"lbm-bench {command}: error: {text}"


def _silence_stdout() -> None:
    """Point stdout at the null device, so that the interpreter's final flush of what
    is left in its buffer does not fail again on the closed pipe."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # no file descriptor (stdout replaced): nothing to flush
        pass


def _run(args: argparse.Namespace) -> int:
    """Run the parsed command; its exit status (errors as one line)."""
    from lbm_bench._interrupts import Terminated
    from lbm_bench.tasks.backends import kill_local_workers, stop_local_workers

    try:
        status = int(args.run(args) or 0)
        stop_local_workers()  # here, not at exit: a Ctrl-C meanwhile gives one line
        return status
    except Terminated as stop:
        kill_local_workers()
        print("lbm-bench: terminated", file=sys.stderr)
        # as a shell reports a tool a signal ended: 128 plus the signal (SIGHUP: 129)
        return EXIT_TERMINATED if stop.signal_number == SIGTERM else 128 + stop.signal_number
    except KeyboardInterrupt:
        kill_local_workers()
        print("lbm-bench: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (``lbm-bench info T | head``): stop quietly
        _silence_stdout()
        return EXIT_BROKEN_PIPE
    except (ValueError, TypeError, OSError, ImportError) as exc:
        if os.environ.get("LBM_BENCH_DEBUG"):
            raise
        print(error_line(args.command, exc, args.arguments), file=sys.stderr)
        return EXIT_USAGE
    except RuntimeError as exc:
        print(error_line(args.command, exc, args.arguments), file=sys.stderr)
        return EXIT_FAILURE
