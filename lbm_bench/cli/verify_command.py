"""``lbm-bench verify``: a release re-checked (checksums, files, manifest, certified risks), and
compared with another one (``--against``)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from lbm_bench.cli.common import EXIT_FAILURE, add_command

__all__ = ["add_parser", "run"]


def add_parser(sub: Any) -> None:
    """Add ``verify`` to the subcommands ``sub``."""
    p = add_command(sub, "verify", run, "re-check a release's checksums, files and manifest")
    p.add_argument("release", type=Path, help="release directory")
    p.add_argument("--against", type=Path, default=None, metavar="OTHER",
                   help="also compare the release's SHA256SUMS with OTHER's (e.g. a rebuild and "
                   "the original)")
    p.add_argument("--jobs", type=int, default=1,
                   help="processes checking the tables (default 1)")


def run(args: argparse.Namespace) -> int:
    """Re-check every checksum, every file against the format and the manifest, and each table's
    certified risks re-derived from its own label sets. With --against OTHER, also compare the two
    releases file by file (SHA256SUMS): a rebuild from a release's spec.toml gives the same bytes
    with the same versions."""
    from lbm_bench.release import compare_releases, load_release, verify_release

    if args.jobs < 1:
        raise ValueError(f"--jobs must be >= 1, got {args.jobs}")
    problems = verify_release(args.release, jobs=args.jobs)
    for problem in problems:
        print(f"PROBLEM {problem}")
    against = args.against
    differences = compare_releases(args.release, against) if against is not None else []
    for difference in differences:
        print(f"DIFFERS {difference}")
    if problems or differences:
        other = f", {len(differences)} difference(s) from {against}" if against is not None else ""
        print(f"{len(problems)} problem(s) in {args.release}{other}", file=sys.stderr)
        return EXIT_FAILURE
    tables = len(load_release(args.release)["tables"])
    print(f"OK: {tables} table(s), checksums, formats and manifest agree")
    if against is not None:
        files = len((args.release / "SHA256SUMS").read_text(encoding="utf-8").splitlines())
        print(f"same bytes as {against}: {files} file(s), identical SHA256SUMS")
    return 0
