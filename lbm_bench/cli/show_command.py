"""``lbm-bench show``: a picture of a table (PNG, PDF or SVG), as drawn and grouped by labels."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from lbm_bench._atomic import check_writable_file
from lbm_bench.cli.common import add_command, read_labels_file, reading_notes

__all__ = ["ARGUMENTS", "add_parser", "run"]

#: The library's arguments that show's flags set and its errors name by their flags.
ARGUMENTS = ("overwrite", "header", "row_names")


def add_parser(sub: Any) -> None:
    """Add ``show`` to the subcommands ``sub``."""
    p = add_command(sub, "show", run, "draw a table as a picture (PNG, PDF or SVG)", ARGUMENTS)
    p.add_argument("table", type=Path,
                   help="a table file (.h5), or any table lbm-bench fit reads (.npy, .csv...)")
    p.add_argument("--design", type=Path, default=None, metavar="DESIGN.toml",
                   help="group by the MAP labels of this design file's fitted model "
                   "(lbm-bench fit)")
    p.add_argument("-o", "--output", required=True, type=Path,
                   help="output image (.png, .pdf or .svg)")
    p.add_argument("--labels", nargs=2, type=Path, metavar=("ROWS", "COLS"),
                   help="group by these row and column labels (files as for evaluate)")
    p.add_argument("--view", choices=["both", "ordered", "drawn"], default="both",
                   help="both panels (default), only the grouped one, or only the drawn order")
    p.add_argument("--max-cells", type=int, default=1000,
                   help="largest image size per side; bigger tables are block-averaged "
                   "(default 1000)")
    p.add_argument("--dpi", type=int, default=100)
    p.add_argument("--header", choices=["auto", "yes", "no"], default="auto",
                   help="text files: whether the first line is a header (default: detected, "
                   "docs/guide/your-data.md)")
    p.add_argument("--row-names", choices=["auto", "yes", "no"], default="auto",
                   help="text files: whether the first column holds the rows' names "
                   "(default: detected)")
    p.add_argument("--force", action="store_true",
                   help="overwrite an existing output file (without it, an existing file is "
                   "never replaced)")


def run(args: argparse.Namespace) -> int:
    """Draw a table in its drawn order and grouped by its Bayes labels (MAP labels when absent) or
    by your labels, with block boundaries, block means and the per-row and per-column posterior
    uncertainty. Large and sparse tables are drawn as block averages. Needs matplotlib (pip
    install 'lbm-bench[plots]').
    """
    from lbm_bench.plotting import save_figure
    from lbm_bench.user_plots import plot_file

    check_writable_file(args.output, overwrite=args.force,
                        inputs=(args.table, args.design, *(args.labels or ())))
    labels = None
    if args.labels:
        rows, cols = args.labels
        labels = (read_labels_file(rows, "ROWS"), read_labels_file(cols, "COLS"))
    with reading_notes(ARGUMENTS):
        figure = plot_file(args.table, labels=labels, design=args.design, view=args.view,
                           max_cells=args.max_cells, header=args.header, row_names=args.row_names)
    try:
        save_figure(figure, args.output, dpi=args.dpi, overwrite=args.force)
    except FileExistsError:
        raise ValueError(f"output {args.output} was created by another process meanwhile; not "
                         "replaced (use --force to overwrite)") from None
    print(f"wrote {args.output}")
    return 0
