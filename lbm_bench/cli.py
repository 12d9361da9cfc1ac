"""Command line: ``lbm-bench generate | fit | info | show | evaluate | build | verify | fetch | benchmark``.

Every error that comes from the user's input (a bad argument, a file that is not
a table, a target that cannot be reached) is printed as one line on stderr with a
non-zero exit status, never as a traceback.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from lbm_bench._atomic import check_writable_file, check_writable_folder, describe_os_error
from lbm_bench._records import add_cli_arguments
from lbm_bench.models.registry import FAMILIES, family_names
from lbm_bench.protocol.request import RequestOptions
from lbm_bench.protocol.settings import GenerationSettings, ModelOptions

__all__ = ["main"]

#: Exit status for errors in the user's input.
EXIT_USAGE = 2
#: Exit status for a run that could not complete (e.g. rejection sampling gave up).
EXIT_FAILURE = 1
#: Exit status when the reader of the output closed the pipe (128 + SIGPIPE, as a shell reports
#: a tool that ``head`` stopped).
EXIT_BROKEN_PIPE = 141
#: Exit status after SIGTERM (128 + SIGTERM, as a shell reports a killed tool).
EXIT_TERMINATED = 143


def _pair(text: str) -> tuple[int, int]:
    """Parse ``"200x100"`` into ``(200, 100)``."""
    parts = text.lower().split("x")
    try:
        a, b = (int(p) for p in parts)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected two integers as AxB, got {text!r}") from None
    if a < 1 or b < 1:
        raise argparse.ArgumentTypeError(f"expected positive integers as AxB, got {text!r}")
    return a, b


class _Parser(argparse.ArgumentParser):
    """argparse with errors in one line, as every other error of the command line: no usage block
    (``--help`` shows it), and a hint for a value that starts with ``-``, which argparse takes
    for an option (``--max-clusters -1x2``)."""

    def error(self, message: str) -> NoReturn:
        option = message.partition(":")[0].removeprefix("argument ")
        if message.endswith("expected one argument") and option.startswith("-"):
            message += f" (a value that starts with '-' is written {option.split('/')[-1]}=VALUE)"
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def _show_progress(args: argparse.Namespace) -> bool:
    return not getattr(args, "quiet", False) and sys.stderr.isatty()


def _command(sub, run: Callable[[argparse.Namespace], int], summary: str) -> argparse.ArgumentParser:
    """The subcommand ``name`` that ``_run_<name>`` runs; the function's docstring describes it."""
    name = run.__name__.removeprefix("_run_")
    description = inspect.cleandoc(run.__doc__) if run.__doc__ else None
    p = sub.add_parser(name, help=summary, description=description)
    p.set_defaults(run=run)
    return p


def _add_generate(sub) -> None:
    p = _command(sub, _run_generate, "generate one calibrated table and write it as HDF5")
    kinds = ", ".join(f"{family.kind} ({family.presentation.entries})" for family in FAMILIES)
    p.add_argument("--kind", choices=family_names(), help=f"family of the blocks: {kinds}")
    p.add_argument("--shape", type=_pair, metavar="ROWSxCOLS",
                   help="e.g. 200x100 (with --design: default, the source table's shape)")
    p.add_argument("--clusters", type=_pair, metavar="GxM", help="e.g. 3x2")
    p.add_argument("--design", type=Path, default=None, metavar="DESIGN.toml",
                   help="a design file (lbm-bench fit): calibrate tables like its source instead of a random "
                   "design; it fixes the kind, the clusters and the model options")
    p.add_argument("--risk", required=True, type=float, help="target conditional risk, e.g. 0.1")
    p.add_argument("--seed", type=int, default=None, help="seed (recorded in the file)")
    p.add_argument("-o", "--output", required=True, type=Path, help="output .h5 file")
    p.add_argument("--force", action="store_true",
                   help="overwrite an existing output file (without it, an existing file is never replaced, "
                   "not even one another process writes meanwhile)")
    add_cli_arguments(p, RequestOptions)
    add_cli_arguments(p.add_argument_group("generation settings"), GenerationSettings)
    add_cli_arguments(p.add_argument_group("model options"), ModelOptions)
    resources = p.add_argument_group("resources (they never change the table)")
    resources.add_argument("--max-memory", default=None, metavar="SIZE",
                           help="refuse the request when its estimated peak memory exceeds SIZE "
                           "(e.g. 8G, 512M; default: the available memory, MemAvailable)")
    resources.add_argument("--backend", choices=["loky", "dask"], default="loky",
                           help="where the --jobs workers of the calibration and of a large table's chains run: "
                           "local processes "
                           "(loky, default) or a Dask cluster, as for releases")
    resources.add_argument("--scheduler", default=None, metavar="ADDR",
                           help="Dask scheduler address, e.g. tcp://host:8786 (default with --backend dask: "
                           "a local cluster of --jobs workers)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar, no summary")


def _run_generate(args: argparse.Namespace) -> int:
    """Calibrate a latent block model to a target conditional risk, draw a table that meets it by
    rejection sampling, and write it with its Gibbs label sets.
    """
    from lbm_bench.protocol.from_design import design_request
    from lbm_bench.protocol.generate import generate_table
    from lbm_bench.protocol.memory import MemoryLimitError
    from lbm_bench.protocol.request import TableRequest, request_in_flags
    from lbm_bench.storage import save_table
    from lbm_bench.tasks.backends import check_backend

    check_writable_file(args.output, overwrite=args.force)  # before the work, not after it
    settings = GenerationSettings.from_cli(args)
    options, design = ModelOptions.from_cli(args), None
    try:  # a refused request names its arguments as the command line spells them
        if args.design is not None:  # the design fixes the kind, the clusters and the model options
            given = {f"--{name.replace('_', '-')}": value for name, value in options.design_options().items()}
            request, design = design_request(args.design, args.risk, *(args.shape or (None, None)), kind=args.kind,
                                             clusters=args.clusters or (None, None), options=given,
                                             **RequestOptions.from_cli(args).to_record())
        elif absent := [flag for flag in ("--kind", "--shape", "--clusters") if getattr(args, flag[2:]) is None]:
            raise ValueError(f"{', '.join(absent)} required (or --design DESIGN.toml)")
        else:
            request = TableRequest(args.kind, *args.shape, *args.clusters, args.risk, model_options=options,
                                   **RequestOptions.from_cli(args).to_record())
    except (TypeError, ValueError) as exc:
        raise type(exc)(request_in_flags(str(exc))) from None
    check_backend(args.backend, settings.jobs, args.scheduler)
    start = time.perf_counter()
    try:
        table = generate_table(request, settings=settings, max_memory=args.max_memory, backend=args.backend,
                               scheduler=args.scheduler, progress=_show_progress(args), rng=args.seed,
                               design=design)
    except MemoryLimitError as exc:  # estimated once, by generate_table: named as the options here
        raise exc.in_style("cli") from None
    except (TypeError, ValueError) as exc:  # a request that cannot be met, named as the command line spells it
        raise type(exc)(request_in_flags(str(exc))) from None
    try:
        save_table(table, args.output, overwrite=args.force)
    except FileExistsError:
        raise ValueError(f"output {args.output} was created by another process meanwhile; not replaced "
                         "(use --force to overwrite)") from None
    if not args.quiet:
        print(table.summary())
        print(f"wrote {args.output} in {time.perf_counter() - start:.1f} s")
    return 0


def _add_fit(sub) -> None:
    p = _command(sub, _run_fit, "fit a design to your own table and write it as a design file (TOML)")
    p.add_argument("data", type=Path, help="the table: .npy, .npz, .mtx, .csv/.tsv, .h5ad or .h5 (NaN: missing)")
    p.add_argument("--max-clusters", type=_pair, default=(8, 8), metavar="GxM", help="largest counts (default 8x8)")
    kinds = ", ".join(f"{family.kind} ({family.presentation.entries})" for family in FAMILIES)
    p.add_argument("--kind", choices=family_names(), help=f"family of the blocks (default: inferred): {kinds}")
    p.add_argument("-o", "--output", required=True, type=Path, help="output design file (.toml)")
    p.add_argument("--force", action="store_true", help="overwrite an existing output file")
    p.add_argument("--seed", type=int, default=0, help="seed of the model selection and the certification")
    p.add_argument("--samples", type=int, default=1000, metavar="N", help="Gibbs sets of the certified floor")
    p.add_argument("--no-certify", action="store_true", help="do not certify the fitted model's own floor")
    p.add_argument("--jobs", type=int, default=1, help="parallel EM runs of the model selection")
    p.add_argument("--format", default=None, help="the file's format, instead of the one its name says")
    p.add_argument("--delimiter", default=None, help="text files: the delimiter")
    p.add_argument("--max-memory", default=None, metavar="SIZE", help="refuse a table that needs more to read")
    p.add_argument("-q", "--quiet", action="store_true", help="no summary")


def _run_fit(args: argparse.Namespace) -> int:
    """Fit a design to your table (family, counts by exact ICL, proportions, blocks, effects, density,
    missing rates), certify the fitted model's own floor, and write the design file that
    `lbm-bench generate --design` calibrates tables like yours from (docs/design-files.md)."""
    from lbm_bench.fitting import fit_design, fit_in_flags
    from lbm_bench.storage.user_data import read_user_table

    check_writable_file(args.output, overwrite=args.force)  # before the work, not after it
    try:  # a refusal names the arguments as the command line spells them
        table = read_user_table(args.data, kind=args.kind, format=args.format, delimiter=args.delimiter,
                                max_memory=args.max_memory, style="cli")
        fitted = fit_design(table, args.max_clusters, kind=args.kind, certify=not args.no_certify,
                            n_samples=args.samples, jobs=args.jobs, rng=args.seed)
    except (TypeError, ValueError) as exc:
        if fit_in_flags(str(exc)) == str(exc):
            raise
        raise (TypeError if isinstance(exc, TypeError) else ValueError)(fit_in_flags(str(exc))) from None
    try:
        digest = fitted.save(args.output, overwrite=args.force)
    except FileExistsError:
        raise ValueError(f"output {args.output} was created by another process meanwhile; not replaced") from None
    if not args.quiet:
        print(fitted.summary())
        print(f"wrote {args.output} (sha256 {digest[:16]}...)")
    return 0


def _add_info(sub) -> None:
    p = _command(sub, _run_info, "print the summary of a table file")
    p.add_argument("table", type=Path)
    p.add_argument("--json", action="store_true",
                   help="print the file's attributes as JSON (a value that is not a number is null)")


def _run_info(args: argparse.Namespace) -> int:
    from lbm_bench.storage import load_table, read_info

    if args.json:
        print(json.dumps(_json_ready(read_info(args.table)), indent=2, sort_keys=True, allow_nan=False))
    else:  # the label sets stay in the file (gigabytes on a large table; the summary needs their shape)
        print(load_table(args.table, label_sets=False).summary())
    return 0


def _json_ready(value):
    """``value`` as strict JSON can hold it: numpy values as Python ones, paths as strings,
    and NaN and infinities as None (JSON has no NaN: ``json.dumps`` would write ``NaN``,
    which JSON parsers refuse)."""
    import math

    import numpy as np

    if isinstance(value, dict):
        return {key: _json_ready(item) for key, item in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [_json_ready(item) for item in (value.tolist() if isinstance(value, np.ndarray) else value)]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, Path):
        return str(value)
    return value


def _add_evaluate(sub) -> None:
    p = _command(sub, _run_evaluate, "score a co-clustering against a table's Gibbs label sets")
    p.add_argument("table", type=Path, help="a table file (.h5)")
    p.add_argument("--rows", required=True, type=Path, help="row labels file")
    p.add_argument("--cols", required=True, type=Path, help="column labels file")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--jobs", type=int, default=1, help="processes reading the label sets (default 1)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")


def _read_labels(path: Path, name: str):
    """A labels file, with one line on stderr when its first line was read as a header."""
    from lbm_bench.scoring.evaluate import read_labels

    labels, header = read_labels(path, name=name, return_header=True)
    if header is not None:
        print(f"note: {name} file {path}: first line {header!r} read as a header (skipped)", file=sys.stderr)
    return labels


def _run_evaluate(args: argparse.Namespace) -> int:
    """Score row and column labels (one integer per line, text/CSV, or a .npy vector) against the
    Gibbs ground truths of a table.
    """
    from lbm_bench.scoring.evaluate import evaluate

    rows = _read_labels(args.rows, "--rows")
    cols = _read_labels(args.cols, "--cols")
    report = evaluate(args.table, rows, cols, jobs=args.jobs, progress=_show_progress(args))
    print(report.to_json() if args.json else report.summary())
    return 0


def _add_build(sub) -> None:
    p = _command(sub, _run_build, "build (or resume) a release from a TOML spec")
    p.add_argument("spec", type=Path,
                   help="release spec (TOML), e.g. repository/mini.toml; or a release's spec.toml, folder or "
                   "manifest.json, to rebuild it")
    p.add_argument("--out", required=True, type=Path, help="output directory")
    p.add_argument("--jobs", type=int, default=1, help="workers, also for large tables' chains (default 1)")
    p.add_argument("--backend", choices=["loky", "dask"], default="loky")
    p.add_argument("--scheduler", default=None, help="Dask scheduler address (default: a local cluster)")
    p.add_argument("--fail-fast", action="store_true", help="stop at the first failed table")
    p.add_argument("--archive", action="store_true", help="also write OUT.tar.gz")
    p.add_argument("--force", action="store_true",
                   help="replace another release that --out holds (its tables outside this spec and its release "
                   "files are removed, and the command says what it replaced); without it such a folder is refused")
    p.add_argument("--timings", action="store_true",
                   help="also print, per configuration, the worker seconds per stage and per kept table")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar, no summary")


def _run_build(args: argparse.Namespace) -> int:
    """Build every table of a release spec, in parallel, resumably and byte-reproducibly. The release
    keeps its spec as spec.toml: lbm-bench build RELEASE/spec.toml --out NEW rebuilds it, and
    lbm-bench verify NEW --against RELEASE compares the two.
    """
    from lbm_bench.release import build_release

    if args.jobs < 1:
        raise ValueError(f"--jobs must be >= 1, got {args.jobs}")
    if args.scheduler and args.backend != "dask":
        raise ValueError("--scheduler needs --backend dask")
    check_writable_folder(args.out, what="--out")
    if args.archive:
        check_writable_file(args.out.with_name(args.out.name + ".tar.gz"), overwrite=True, what="--archive")
    report = build_release(
        args.spec, args.out, n_jobs=args.jobs, backend=args.backend, scheduler=args.scheduler,
        fail_fast=args.fail_fast, archive=args.archive, progress=_show_progress(args), force=args.force,
    )
    if report.replaced:  # even with -q: what --force removed
        print(report.replaced, file=sys.stderr)
    if not args.quiet or not report.ok:
        print(report.summary(), file=sys.stdout if report.ok else sys.stderr)
    if args.timings:
        print(report.format_timings())
    if report.ok and not args.quiet:
        print(f"release written to {args.out} (spec.toml, manifest.json, SHA256SUMS, README.md, index.html, "
              "croissant.json)")
        if report.archive is not None:
            print(f"archive {report.archive}\nSHA-256 {report.archive_sha256}\n"
                  "publish both: lbm-bench fetch URL --sha256 DIGEST downloads and checks it")
    return 0 if report.ok else EXIT_FAILURE


def _add_verify(sub) -> None:
    p = _command(sub, _run_verify, "re-check a release's checksums, files and manifest")
    p.add_argument("release", type=Path, help="release directory")
    p.add_argument("--against", type=Path, default=None, metavar="OTHER",
                   help="also compare the release's SHA256SUMS with OTHER's (e.g. a rebuild and the original)")
    p.add_argument("--jobs", type=int, default=1, help="processes checking the tables (default 1)")


def _run_verify(args: argparse.Namespace) -> int:
    """Re-check every checksum, every file against the format and the manifest, and each table's certified
    risks re-derived from its own label sets. With --against OTHER, also compare the two releases file by
    file (SHA256SUMS): a rebuild from a release's spec.toml gives the same bytes with the same versions."""
    from lbm_bench.release import compare_releases, load_release, verify_release

    if args.jobs < 1:
        raise ValueError(f"--jobs must be >= 1, got {args.jobs}")
    problems = verify_release(args.release, jobs=args.jobs)
    for problem in problems:
        print(f"PROBLEM {problem}")
    differences = compare_releases(args.release, args.against) if args.against is not None else []
    for difference in differences:
        print(f"DIFFERS {difference}")
    if problems or differences:
        print(f"{len(problems)} problem(s) in {args.release}"
              + (f", {len(differences)} difference(s) from {args.against}" if args.against is not None else ""),
              file=sys.stderr)
        return EXIT_FAILURE
    print(f"OK: {len(load_release(args.release)['tables'])} table(s), checksums, formats and manifest agree")
    if args.against is not None:
        files = len((args.release / "SHA256SUMS").read_text(encoding="utf-8").splitlines())
        print(f"same bytes as {args.against}: {files} file(s), identical SHA256SUMS")
    return 0


def _add_show(sub) -> None:
    p = _command(sub, _run_show, "draw a table as a picture (PNG, PDF or SVG)")
    p.add_argument("table", type=Path, help="a table file (.h5), or any table lbm-bench fit reads (.npy, .csv...)")
    p.add_argument("--design", type=Path, default=None, metavar="DESIGN.toml",
                   help="group by the MAP labels of this design file's fitted model (lbm-bench fit)")
    p.add_argument("-o", "--output", required=True, type=Path, help="output image (.png, .pdf or .svg)")
    p.add_argument("--labels", nargs=2, type=Path, metavar=("ROWS", "COLS"),
                   help="group by these row and column labels (files as for evaluate)")
    p.add_argument("--view", choices=["both", "ordered", "drawn"], default="both",
                   help="both panels (default), only the grouped one, or only the drawn order")
    p.add_argument("--max-cells", type=int, default=1000,
                   help="largest image size per side; bigger tables are block-averaged (default 1000)")
    p.add_argument("--dpi", type=int, default=100)
    p.add_argument("--force", action="store_true",
                   help="overwrite an existing output file (without it, an existing file is never replaced)")


def _run_show(args: argparse.Namespace) -> int:
    """Draw a table in its drawn order and grouped by its Bayes labels (MAP labels when absent) or
    by your labels, with block boundaries, block means and the per-row and per-column posterior
    uncertainty. Large and sparse tables are drawn as block averages. Needs matplotlib (pip install
    'lbm-bench[plots]').
    """
    from lbm_bench.plotting import plot_file, save_figure

    check_writable_file(args.output, overwrite=args.force)
    labels = None
    if args.labels:
        labels = (_read_labels(args.labels[0], "ROWS"), _read_labels(args.labels[1], "COLS"))
    figure = plot_file(args.table, labels=labels, design=args.design, view=args.view, max_cells=args.max_cells)
    try:
        save_figure(figure, args.output, dpi=args.dpi, overwrite=args.force)
    except FileExistsError:
        raise ValueError(f"output {args.output} was created by another process meanwhile; not replaced "
                         "(use --force to overwrite)") from None
    print(f"wrote {args.output}")
    return 0


def _add_fetch(sub) -> None:
    p = _command(sub, _run_fetch, "download, check and cache a published release (a build --archive tarball)")
    p.add_argument("url", help="URL or path of the release archive (.tar.gz)")
    p.add_argument("--sha256", default=None, help="expected SHA-256 of the archive (refused if different)")
    p.add_argument("--cache", type=Path, default=None, help="cache folder (default: $LBM_BENCH_CACHE)")
    p.add_argument("--timeout", type=float, default=60.0,
                   help="seconds to wait for the server (default 60); the download also fails when the server "
                   "sends less than --min-rate bytes per second over any such window (a server that trickles)")
    p.add_argument("--min-rate", type=float, default=1024.0, metavar="BYTES_PER_S",
                   help="slowest download accepted, in bytes per second over any --timeout seconds "
                   "(default 1024; 0: no minimum)")
    p.add_argument("--max-size", default="16G", metavar="SIZE",
                   help="largest archive to download and release to unpack, e.g. 500M, 64G (default 16G); "
                   "checked from the archive's listing before anything is written")
    p.add_argument("-q", "--quiet", action="store_true", help="print only the release folder")


def _run_fetch(args: argparse.Namespace) -> int:
    """Download a release archive (https://, http://, file:// or a local path), check its SHA-256
    when given, extract it safely, verify it, keep it in the cache (LBM_BENCH_CACHE, default
    ~/.cache/lbm-bench) and print the release folder. A second fetch uses the cache. The archive's
    listing must be the release's own (SHA256SUMS, manifest.json and its table sizes) and at most
    --max-size before anything is written; a server slower than --min-rate is given up.
    """
    from lbm_bench.release import fetch_release, load_release

    if args.cache is not None:
        check_writable_folder(args.cache, what="--cache")
    folder = fetch_release(args.url, sha256=args.sha256, cache_dir=args.cache, timeout=args.timeout,
                           min_rate=args.min_rate, max_size=args.max_size, progress=_show_progress(args))
    if not args.quiet:
        release = load_release(folder)["release"]
        print(f"OK: {release['name']} {release['version']}, {len(load_release(folder)['tables'])} table(s), "
              "verified", file=sys.stderr)
    print(folder)
    return 0


def _track_option_fields() -> dict[str, tuple[Any, list[str]]]:
    """The options the tracks declare, by name: the field and the tracks that take it."""
    import dataclasses

    from lbm_bench.scoring.benchmark import TRACKS

    fields: dict[str, tuple[Any, list[str]]] = {}
    for track in TRACKS.values():
        for field in dataclasses.fields(track.options):
            fields.setdefault(field.name, (field, []))[1].append(track.name)
    return fields


def _add_benchmark(sub) -> None:
    from lbm_bench.scoring.benchmark import DEFAULT_TRACK, TRACKS

    p = _command(sub, _run_benchmark, "run co-clustering algorithms over a release and summarise their scores")
    p.add_argument("release", type=Path, help="release directory")
    builtins = "; ".join(f"{t.name}: {', '.join(t.contract.builtins)}" for t in TRACKS.values())
    p.add_argument("--algorithm", action="append", required=True,
                   help=f"built-in name of the track ({builtins}), module:function (a module on "
                   "the path, or MODULE.py in the current directory) or path/to/file.py:function; "
                   "repeatable")
    tracks = " or ".join(f"{t.name} ({'default: ' if t.name == DEFAULT_TRACK else ''}{t.description})"
                         for t in TRACKS.values())
    p.add_argument("--track", default=DEFAULT_TRACK, metavar="TRACK", help=tracks)
    for name, (field, owners) in _track_option_fields().items():
        show = field.metadata.get("show", str)
        p.add_argument(field.metadata["flag"], dest=name, default=None, metavar=field.metadata.get("metavar"),
                       help=f"with --track {' or '.join(owners)}: {field.metadata['help']} "
                       f"(default {show(field.default)})")
    p.add_argument("--out", required=True, type=Path, help="results directory")
    p.add_argument("--jobs", type=int, default=1)
    p.add_argument("--seed", type=int, default=0, help="master seed of the algorithms")
    p.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                   help="the longest a fit may take: each run's algorithm then runs in a process of its own, "
                   "stopped after SECONDS, and the run is recorded as failed (timed out); default: no limit")
    p.add_argument("-q", "--quiet", action="store_true")


def _track_options(args: argparse.Namespace, track: Any) -> dict[str, Any]:
    """The track options given on the command line, parsed; one of another track is refused."""
    options = {}
    for name, (field, owners) in _track_option_fields().items():
        text = getattr(args, name)
        if text is None:
            continue
        flag = field.metadata["flag"]
        if track.name not in owners:
            raise ValueError(f"{flag} goes with --track {' or '.join(owners)} (on the {track.name} track "
                             f"{track.description})")
        try:
            options[name] = field.metadata["parse"](text)
        except ValueError as exc:
            raise ValueError(f"{flag} {exc}") from None
    return options


def _run_benchmark(args: argparse.Namespace) -> int:
    """Run co-clustering algorithms over every table of a release and summarise their scores. An
    algorithm is a built-in name, module:function (a module on the path, or MODULE.py in the current
    directory) or path/to/file.py:function; the file of each plugged-in algorithm is printed.
    """
    from lbm_bench.algorithms import algorithm_source, resolve_algorithm
    from lbm_bench.scoring.benchmark import TRACKS, run_benchmark

    if args.track not in TRACKS:
        raise ValueError(f"--track must be {' or '.join(TRACKS)}, got {args.track!r}")
    track = TRACKS[args.track]
    check_writable_folder(args.out, what="--out")
    options = _track_options(args, track)
    for name in args.algorithm:
        key, fit = resolve_algorithm(name, track=track.name)
        if ":" in name and not args.quiet:
            print(f"algorithm {key}: {getattr(fit, '__name__', 'callable')} from "
                  f"{algorithm_source(fit) or 'an unknown file'}", file=sys.stderr)
    if args.timeout is not None and not (args.timeout > 0 and args.timeout < float("inf")):
        raise ValueError(f"--timeout must be a positive number of seconds, got {args.timeout:g}")
    rows = run_benchmark(args.release, args.algorithm, args.out, n_jobs=args.jobs, seed=args.seed,
                         progress=_show_progress(args), track=track.name, timeout=args.timeout, **options)
    failed = [r for r in rows if r.get("error")]
    if not args.quiet:
        print((args.out / "summary.md").read_text(encoding="utf-8"))
        print(f"wrote {args.out / 'results.csv'} ({len(rows)} rows, {len(failed)} failed)")
    if failed:  # even with -q: the exit status alone does not say what went wrong
        first = failed[0]
        print(f"{len(failed)} of {len(rows)} run(s) failed (column error of {args.out / 'results.csv'}); "
              f"first: {first['algorithm']} on {first['table']}: {first['error']}", file=sys.stderr)
    return EXIT_FAILURE if failed else 0


_COMMANDS: list[Callable] = [_add_generate, _add_fit, _add_info, _add_show, _add_evaluate, _add_build, _add_verify,
                             _add_fetch, _add_benchmark]


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``lbm-bench``."""
    from lbm_bench._version import __version__

    parser = _Parser(
        prog="lbm-bench",
        description="Co-clustering benchmark tables with a certified conditional Bayes risk.",
    )
    parser.add_argument("--version", action="version", version=f"lbm-bench {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for add in _COMMANDS:
        add(sub)
    return parser


def _silence_stdout() -> None:
    """Point stdout at the null device, so that the interpreter's final flush of what
    is left in its buffer does not fail again on the closed pipe."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # no file descriptor (stdout replaced): nothing to flush
        pass


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status."""
    from lbm_bench._interrupts import handled, hide_tracker_reports, hide_undeliverable_interrupts

    parser = build_parser()
    args = parser.parse_args(argv)
    hide_undeliverable_interrupts()
    hide_tracker_reports()
    with handled():  # SIGTERM raises, so a killed command cleans up as for Ctrl-C
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    """Run the parsed command; its exit status (errors as one line)."""
    from lbm_bench._interrupts import Terminated
    from lbm_bench.tasks.backends import kill_local_workers, stop_local_workers

    try:
        status = int(args.run(args) or 0)
        stop_local_workers()  # here, not at exit: a Ctrl-C meanwhile gives one line
        return status
    except Terminated:
        kill_local_workers()
        print("lbm-bench: terminated", file=sys.stderr)
        return EXIT_TERMINATED
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
        text = describe_os_error(exc) if isinstance(exc, OSError) else str(exc)
        print(f"lbm-bench {args.command}: error: {' '.join(text.split())}", file=sys.stderr)
        return EXIT_USAGE
    except RuntimeError as exc:
        print(f"lbm-bench {args.command}: error: {exc}", file=sys.stderr)
        return EXIT_FAILURE


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
