"""``lbm-bench fetch``: a published release downloaded, checked, cached and verified."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from lbm_bench._atomic import check_writable_folder
from lbm_bench.cli.common import add_command, show_progress

__all__ = ["ARGUMENTS", "add_parser", "run"]

#: The arguments of :func:`~lbm_bench.fetch_release` that fetch's flags set (its errors name them
#: by their flags).
ARGUMENTS = ("sha256", "timeout", "min_rate", "max_size")


def add_parser(sub: Any) -> None:
    """Add ``fetch`` to the subcommands ``sub``."""
    p = add_command(sub, "fetch", run,
                    "download, check and cache a published release (a build --archive tarball)",
                    ARGUMENTS)
    p.add_argument("url", help="URL or path of the release archive (.tar.gz)")
    p.add_argument("--sha256", default=None,
                   help="expected SHA-256 of the archive (refused if different)")
    p.add_argument("--cache", type=Path, default=None,
                   help="cache folder (default: $LBM_BENCH_CACHE)")
    p.add_argument("--timeout", type=float, default=60.0,
                   help="seconds to wait for the server (default 60); the download also fails "
                   "when the server sends less than --min-rate bytes per second over any such "
                   "window (a server that trickles)")
    p.add_argument("--min-rate", type=float, default=1024.0, metavar="BYTES_PER_S",
                   help="slowest download accepted, in bytes per second over any --timeout "
                   "seconds (default 1024; 0: no minimum)")
    p.add_argument("--max-size", default="16G", metavar="SIZE",
                   help="largest archive to download and release to unpack, e.g. 500M, 64G "
                   "(default 16G); checked from the archive's listing before anything is written")
    p.add_argument("-q", "--quiet", action="store_true", help="print only the release folder")


def run(args: argparse.Namespace) -> int:
    """Download a release archive (https://, http://, file:// or a local path), check its SHA-256
    when given, extract it safely, verify it, keep it in the cache (LBM_BENCH_CACHE, default
    ~/.cache/lbm-bench) and print the release folder. A second fetch uses the cache. The
    archive's listing must be the release's own (SHA256SUMS, manifest.json and its table sizes)
    and at most --max-size before anything is written; a server slower than --min-rate is given
    up.
    """
    from lbm_bench.release import fetch_release, load_release

    if args.cache is not None:
        check_writable_folder(args.cache, what="--cache")
    folder = fetch_release(args.url, sha256=args.sha256, cache_dir=args.cache,
                           timeout=args.timeout, min_rate=args.min_rate, max_size=args.max_size,
                           progress=show_progress(args))
    if not args.quiet:
        loaded = load_release(folder)
        release, tables = loaded["release"], len(loaded["tables"])
        print(f"OK: {release['name']} {release['version']}, {tables} table(s), verified",
              file=sys.stderr)
    print(folder)
    return 0
