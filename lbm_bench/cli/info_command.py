"""``lbm-bench info``: the summary of a table file, or of a user's own table (any file ``fit``
reads: its kind, storage, density, missing entries, range, names and the memory it needs); its
attributes as strict JSON."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from lbm_bench._json import strict_json
from lbm_bench.cli.common import (
    READING_ARGUMENTS,
    add_command,
    add_reading_options,
    reading_notes,
    reading_options,
)

__all__ = ["ARGUMENTS", "add_parser", "run", "versions"]

#: The library's arguments that info's flags set (its errors and notes name them by their flags).
ARGUMENTS = READING_ARGUMENTS


def add_parser(sub: Any) -> None:
    """Add ``info`` to the subcommands ``sub``."""
    p = add_command(sub, "info", run, "print the summary of a table file", ARGUMENTS)
    p.add_argument("table", type=Path, nargs="?")
    p.add_argument("--json", action="store_true",
                   help="print the file's attributes as JSON (a value that is not a number is "
                   "null)")
    p.add_argument("--versions", action="store_true",
                   help="print the versions of lbm-bench and of what it runs on, and which "
                   "kernel sums sparse tables here (with a table: before its summary)")
    add_reading_options(p)


def run(args: argparse.Namespace) -> int:  # no docstring: ``info --help`` has no description
    from lbm_bench.storage import load_table, read_info
    from lbm_bench.storage.user_formats import format_of

    if args.versions:
        print("\n".join(versions()))
        if args.table is None:
            return 0
    if args.table is None:
        raise ValueError("info needs a table file (or --versions)")
    if args.format is None and format_of(args.table, str(args.table)) == "table" and (
            _is_table_file(args.table)):
        if args.json:
            print(strict_json(read_info(args.table)))
        else:  # the label sets stay in the file (gigabytes on a large table): their shape is enough
            print(load_table(args.table, label_sets=False).summary())
        return 0
    return _user_table(args)


def _is_table_file(path: Path) -> bool:
    """Whether an ``.h5`` file is an lbm-bench table file (else: an AnnData file, or an error the
    table reader words)."""
    from lbm_bench.storage.anndata_files import is_anndata

    try:
        import h5py

        with h5py.File(path, "r") as file:
            return not is_anndata(file)
    except (OSError, KeyError, RuntimeError, ValueError):  # not HDF5, missing or damaged: the
        return True  # table reader says which, in one line


def _user_table(args: argparse.Namespace) -> int:
    from lbm_bench.storage.user_data import read_user_table
    from lbm_bench.user_info import info_text, table_info

    with reading_notes(ARGUMENTS):
        table = read_user_table(args.table, **reading_options(args))
    info = table_info(table)
    if args.json:
        print(strict_json(info))
    else:
        print(info_text(info))
    return 0


def versions() -> list[str]:
    """The lines of ``info --versions``: lbm-bench's version, Python's and those of the
    packages it runs on (the manifest's ``built_with``), and the sparse kernels
    (:func:`~lbm_bench.inference.kernel_choice.kernel_report`)."""
    import platform
    from importlib.metadata import PackageNotFoundError, version

    from lbm_bench._version import __version__
    from lbm_bench.inference.kernel_choice import kernel_report

    lines = [f"lbm-bench {__version__}", f"python {platform.python_version()}"]
    for package in ("numpy", "scipy", "h5py", "joblib"):
        try:
            lines.append(f"{package} {version(package)}")
        except PackageNotFoundError:  # pragma: no cover - dependencies of the package
            lines.append(f"{package}: not installed")
    return lines + kernel_report()

