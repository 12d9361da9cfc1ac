"""``lbm-bench fit``: a design fitted to your own table, written as a design file (TOML)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from lbm_bench._atomic import check_writable_file
from lbm_bench.cli.common import (
    READING_ARGUMENTS,
    add_command,
    add_kernel_option,
    add_reading_options,
    pair,
    reading_notes,
    reading_options,
    warn_suffix,
)
from lbm_bench.cli.flags import flag_words
from lbm_bench.models.registry import FAMILIES, family_names

__all__ = ["ARGUMENTS", "add_parser", "run"]

#: The arguments of :func:`~lbm_bench.fit_design` and of the reader that fit's flags set (its
#: errors name them by their flags).
ARGUMENTS = ("max_clusters", "kind", "n_samples", "jobs", *READING_ARGUMENTS, "overwrite",
             "kernel", "rng")


def add_parser(sub: Any) -> None:
    """Add ``fit`` to the subcommands ``sub``."""
    p = add_command(sub, "fit", run,
                    "fit a design to your own table and write it as a design file (TOML)",
                    ARGUMENTS)
    p.add_argument("data", type=Path,
                   help="the table: .npy, .npz, .mtx, .csv/.tsv, .h5ad or .h5 (NaN: missing)")
    p.add_argument("--max-clusters", type=pair, default=(8, 8), metavar="GxM",
                   help="largest counts (default 8x8)")
    kinds = ", ".join(f"{family.kind} ({family.presentation.entries})" for family in FAMILIES)
    p.add_argument("--kind", choices=family_names(),
                   help=f"family of the blocks (default: inferred): {kinds}")
    p.add_argument("-o", "--output", required=True, type=Path, help="output design file (.toml)")
    p.add_argument("--force", action="store_true", help="overwrite an existing output file")
    p.add_argument("--seed", type=int, default=0,
                   help="seed of the model selection and the certification")
    p.add_argument("--samples", type=int, default=1000, metavar="N",
                   help="Gibbs sets of the certified floor")
    p.add_argument("--no-certify", action="store_true",
                   help="do not certify the fitted model's own floor")
    p.add_argument("--jobs", type=int, default=1, help="parallel EM runs of the model selection")
    add_reading_options(p)
    add_kernel_option(p)
    p.add_argument("-q", "--quiet", action="store_true", help="no summary")


def run(args: argparse.Namespace) -> int:
    """Fit a design to your table (family, counts by exact ICL, proportions, blocks, effects,
    density, missing rates), certify the fitted model's own floor, and write the design file that
    `lbm-bench generate --design` calibrates tables like yours from (docs/design-files.md)."""
    from lbm_bench.fitting import fit_design
    from lbm_bench.storage.user_data import read_user_table
    from lbm_bench.user_info import kind_and_storage

    # before the work, not after it; never the table it reads
    check_writable_file(args.output, overwrite=args.force, inputs=(args.data,))
    warn_suffix(args.output, (".toml",), "a design file (TOML text)")
    with reading_notes(ARGUMENTS):
        table = read_user_table(args.data, kind=args.kind, **reading_options(args))
    fitted = fit_design(table, args.max_clusters, kind=args.kind, certify=not args.no_certify,
                        n_samples=args.samples, jobs=args.jobs, max_memory=args.max_memory,
                        kernel=args.kernel, rng=args.seed)
    if not args.quiet:
        given = fitted.design.family if args.kind is not None else None
        print(kind_and_storage(table, given))
        print(flag_words(fitted.summary(), ARGUMENTS))
    if fitted.no_structure:
        raise ValueError(f"{args.data}: {fitted.no_structure}; no design file written")
    try:
        digest = fitted.save(args.output, overwrite=args.force)
    except FileExistsError:
        raise ValueError(f"output {args.output} was created by another process meanwhile; "
                         "not replaced") from None
    if not args.quiet:
        print(f"wrote {args.output} (sha256 {digest[:16]}...)")
    return 0
