"""``lbm-bench evaluate``: a co-clustering scored against a table's Gibbs label sets."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from lbm_bench.cli.common import add_command, read_labels_file, show_progress

__all__ = ["ARGUMENTS", "add_parser", "run"]

#: The library's arguments that evaluate's flags set and its errors name by their flags.
ARGUMENTS = ("jobs",)


def add_parser(sub: Any) -> None:
    """Add ``evaluate`` to the subcommands ``sub``."""
    p = add_command(sub, "evaluate", run,
                    "score a co-clustering against a table's Gibbs label sets", ARGUMENTS)
    p.add_argument("table", type=Path, help="a table file (.h5)")
    p.add_argument("--rows", required=True, type=Path, help="row labels file")
    p.add_argument("--cols", required=True, type=Path, help="column labels file")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--jobs", type=int, default=1,
                   help="processes reading the label sets (default 1)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")


def run(args: argparse.Namespace) -> int:
    """Score row and column labels (one integer per line, text/CSV, or a .npy vector) against the
    Gibbs ground truths of a table.
    """
    from lbm_bench.scoring.evaluate import evaluate

    rows = read_labels_file(args.rows, "--rows")
    cols = read_labels_file(args.cols, "--cols")
    report = evaluate(args.table, rows, cols, jobs=args.jobs, progress=show_progress(args))
    print(report.to_json() if args.json else report.summary())
    return 0
