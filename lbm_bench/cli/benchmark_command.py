"""``lbm-bench benchmark``: co-clustering algorithms run over a release, on one of the tracks, and
their scores summarised."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from lbm_bench._atomic import check_writable_folder
from lbm_bench.cli.common import EXIT_FAILURE, add_command, show_progress

__all__ = ["ARGUMENTS", "add_parser", "run", "track_options"]

#: The library's arguments that benchmark's flags set and its errors name by their flags.
ARGUMENTS = ("track", "seed", "jobs")


def _track_option_fields() -> dict[str, tuple[Any, list[str]]]:
    """The options the tracks declare, by name: the field and the tracks that take it."""
    import dataclasses

    from lbm_bench.scoring.benchmark import TRACKS

    fields: dict[str, tuple[Any, list[str]]] = {}
    for track in TRACKS.values():
        for field in dataclasses.fields(track.options):
            fields.setdefault(field.name, (field, []))[1].append(track.name)
    return fields


def add_parser(sub: Any) -> None:
    """Add ``benchmark`` to the subcommands ``sub``."""
    from lbm_bench.scoring.benchmark import DEFAULT_TRACK, TRACKS

    p = add_command(sub, "benchmark", run,
                    "run co-clustering algorithms over a release and summarise their scores",
                    ARGUMENTS)
    p.add_argument("release", type=Path, help="release directory")
    builtins = "; ".join(f"{t.name}: {', '.join(t.contract.builtins)}" for t in TRACKS.values())
    p.add_argument("--algorithm", action="append", required=True,
                   help=f"built-in name of the track ({builtins}), module:function (a module on "
                   "the path, or MODULE.py in the current directory) or path/to/file.py:function; "
                   "repeatable")
    tracks = " or ".join(f"{t.name} ({'default: ' if t.name == DEFAULT_TRACK else ''}"
                         f"{t.description})" for t in TRACKS.values())
    p.add_argument("--track", default=DEFAULT_TRACK, metavar="TRACK", help=tracks)
    for name, (field, owners) in _track_option_fields().items():
        show = field.metadata.get("show", str)
        p.add_argument(field.metadata["flag"], dest=name, default=None,
                       metavar=field.metadata.get("metavar"),
                       help=f"with --track {' or '.join(owners)}: {field.metadata['help']} "
                       f"(default {show(field.default)})")
    p.add_argument("--out", required=True, type=Path, help="results directory")
    p.add_argument("--jobs", type=int, default=1)
    p.add_argument("--seed", type=int, default=0, help="master seed of the algorithms")
    p.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                   help="the longest a fit may take: each run's algorithm then runs in a process "
                   "of its own, stopped after SECONDS, and the run is recorded as failed (timed "
                   "out); default: no limit")
    p.add_argument("-q", "--quiet", action="store_true")


def track_options(args: argparse.Namespace, track: Any) -> dict[str, Any]:
    """The track options given on the command line, parsed; one of another track is refused."""
    options = {}
    for name, (field, owners) in _track_option_fields().items():
        text = getattr(args, name)
        if text is None:
            continue
        flag = field.metadata["flag"]
        if track.name not in owners:
            raise ValueError(f"{flag} goes with --track {' or '.join(owners)} (on the {track.name} "
                             f"track {track.description})")
        try:
            options[name] = field.metadata["parse"](text)
        except ValueError as exc:
            raise ValueError(f"{flag} {exc}") from None
    return options


def run(args: argparse.Namespace) -> int:
    """Run co-clustering algorithms over every table of a release and summarise their scores. An
    algorithm is a built-in name, module:function (a module on the path, or MODULE.py in the
    current directory) or path/to/file.py:function; the file of each plugged-in algorithm is
    printed.
    """
    from lbm_bench.algorithms import algorithm_source, resolve_algorithm
    from lbm_bench.scoring.benchmark import TRACKS, run_benchmark

    if args.track not in TRACKS:
        raise ValueError(f"--track must be {' or '.join(TRACKS)}, got {args.track!r}")
    track = TRACKS[args.track]
    check_writable_folder(args.out, what="--out")
    options = track_options(args, track)
    for name in args.algorithm:
        key, fit = resolve_algorithm(name, track=track.name)
        if ":" in name and not args.quiet:
            print(f"algorithm {key}: {getattr(fit, '__name__', 'callable')} from "
                  f"{algorithm_source(fit) or 'an unknown file'}", file=sys.stderr)
    if args.timeout is not None and not (args.timeout > 0 and args.timeout < float("inf")):
        raise ValueError(f"--timeout must be a positive number of seconds, got {args.timeout:g}")
    rows = run_benchmark(args.release, args.algorithm, args.out, n_jobs=args.jobs, seed=args.seed,
                         progress=show_progress(args), track=track.name, timeout=args.timeout,
                         **options)
    failed = [r for r in rows if r.get("error")]
    results = args.out / "results.csv"
    if not args.quiet:
        print((args.out / "summary.md").read_text(encoding="utf-8"))
        print(f"wrote {results} ({len(rows)} rows, {len(failed)} failed)")
    if failed:  # even with -q: the exit status alone does not say what went wrong
        first = failed[0]
        print(f"{len(failed)} of {len(rows)} run(s) failed (column error of {results}); first: "
              f"{first['algorithm']} on {first['table']}: {first['error']}", file=sys.stderr)
    return EXIT_FAILURE if failed else 0
