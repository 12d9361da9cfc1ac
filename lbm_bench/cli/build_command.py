"""``lbm-bench build``: a release built (or resumed) from a TOML spec, in parallel, resumably and
byte-reproducibly."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from lbm_bench._atomic import check_writable_file, check_writable_folder
from lbm_bench.cli.common import EXIT_FAILURE, add_command, add_kernel_option, show_progress

__all__ = ["ARGUMENTS", "add_parser", "run"]

#: The arguments of :func:`~lbm_bench.build_release` that build's flags set (its errors name them
#: by their flags).
ARGUMENTS = ("out", "force", "backend", "scheduler", "kernel")


def add_parser(sub: Any) -> None:
    """Add ``build`` to the subcommands ``sub``."""
    p = add_command(sub, "build", run, "build (or resume) a release from a TOML spec", ARGUMENTS)
    p.add_argument("spec", type=Path,
                   help="release spec (TOML), e.g. repository/mini.toml; or a release's "
                   "spec.toml, folder or manifest.json, to rebuild it")
    p.add_argument("--out", required=True, type=Path, help="output directory")
    p.add_argument("--jobs", type=int, default=1,
                   help="workers, also for large tables' chains (default 1)")
    p.add_argument("--backend", choices=["loky", "dask"], default="loky")
    p.add_argument("--scheduler", default=None,
                   help="Dask scheduler address (default: a local cluster)")
    p.add_argument("--fail-fast", action="store_true", help="stop at the first failed table")
    p.add_argument("--archive", action="store_true", help="also write OUT.tar.gz")
    p.add_argument("--force", action="store_true",
                   help="replace another release that --out holds (its tables outside this spec "
                   "and its release files are removed, and the command says what it replaced); "
                   "without it such a folder is refused")
    p.add_argument("--timings", action="store_true",
                   help="also print, per configuration, the worker seconds per stage and per kept "
                   "table")
    add_kernel_option(p)
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar, no summary")


def run(args: argparse.Namespace) -> int:
    """Build every table of a release spec, in parallel, resumably and byte-reproducibly. The
    release keeps its spec as spec.toml: lbm-bench build RELEASE/spec.toml --out NEW rebuilds it,
    and lbm-bench verify NEW --against RELEASE compares the two.
    """
    from lbm_bench.release import build_release

    if args.jobs < 1:
        raise ValueError(f"--jobs must be >= 1, got {args.jobs}")
    if args.scheduler and args.backend != "dask":
        raise ValueError("--scheduler needs --backend dask")
    check_writable_folder(args.out, what="--out")
    if args.archive:
        archive = args.out.with_name(args.out.name + ".tar.gz")
        check_writable_file(archive, overwrite=True, what="--archive", inputs=(args.spec,))
    report = build_release(
        args.spec, args.out, n_jobs=args.jobs, backend=args.backend, scheduler=args.scheduler,
        fail_fast=args.fail_fast, archive=args.archive, progress=show_progress(args),
        force=args.force, kernel=args.kernel,
    )
    if report.replaced:  # even with -q: what --force removed
        print(f"--force: {report.replaced}", file=sys.stderr)
    if not args.quiet or not report.ok:
        print(report.summary(), file=sys.stdout if report.ok else sys.stderr)
    if args.timings:
        print(report.format_timings())
    if report.ok and not args.quiet:
        print(f"release written to {args.out} (spec.toml, manifest.json, SHA256SUMS, README.md, "
              "index.html, croissant.json)")
        if report.archive is not None:
            print(f"archive {report.archive}\nSHA-256 {report.archive_sha256}\n"
                  "publish both: lbm-bench fetch URL --sha256 DIGEST downloads and checks it")
    return 0 if report.ok else EXIT_FAILURE
