"""``lbm-bench info``: the summary of a table file, or its attributes as strict JSON."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from lbm_bench._json import strict_json
from lbm_bench.cli.common import add_command

__all__ = ["add_parser", "run"]


def add_parser(sub: Any) -> None:
    """Add ``info`` to the subcommands ``sub``."""
    p = add_command(sub, "info", run, "print the summary of a table file")
    p.add_argument("table", type=Path)
    p.add_argument("--json", action="store_true",
                   help="print the file's attributes as JSON (a value that is not a number is "
                   "null)")


def run(args: argparse.Namespace) -> int:  # no docstring: ``info --help`` has no description
    from lbm_bench.storage import load_table, read_info

    if args.json:
        print(strict_json(read_info(args.table)))
    else:  # the label sets stay in the file (gigabytes on a large table): their shape is enough
        print(load_table(args.table, label_sets=False).summary())
    return 0
