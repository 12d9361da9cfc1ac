"""``lbm-bench generate``: one calibrated table, written as HDF5 (from a random design, or from a
design file that ``lbm-bench fit`` wrote)."""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from lbm_bench._atomic import check_writable_file
from lbm_bench.cli.common import (
    add_command,
    add_kernel_option,
    add_record_options,
    pair,
    print_kernel_hint,
    record_from_options,
    show_progress,
    warn_suffix,
)
from lbm_bench.models.registry import FAMILIES, family_names
from lbm_bench.protocol.request import RequestOptions
from lbm_bench.protocol.settings import GenerationSettings, ModelOptions

__all__ = ["ARGUMENTS", "add_parser", "run"]

#: The library's arguments that generate's flags set (its errors name them by their flags).
ARGUMENTS = ("target_risk", "n_rows", "n_cols", "n_row_clusters", "n_col_clusters", "kind",
             *ModelOptions.names(), *GenerationSettings.names(), *RequestOptions.names(),
             "max_memory", "overwrite", "backend", "scheduler", "kernel", "rng")


def add_parser(sub: Any) -> None:
    """Add ``generate`` to the subcommands ``sub``."""
    p = add_command(sub, "generate", run, "generate one calibrated table and write it as HDF5",
                    ARGUMENTS)
    kinds = ", ".join(f"{family.kind} ({family.presentation.entries})" for family in FAMILIES)
    p.add_argument("--kind", choices=family_names(), help=f"family of the blocks: {kinds}")
    p.add_argument("--shape", type=pair, metavar="ROWSxCOLS",
                   help="e.g. 200x100 (with --design: default, the source table's shape)")
    p.add_argument("--clusters", type=pair, metavar="GxM", help="e.g. 3x2")
    p.add_argument("--design", type=Path, default=None, metavar="DESIGN.toml",
                   help="a design file (lbm-bench fit): calibrate tables like its source instead "
                   "of a random design; it fixes the kind, the clusters and the model options")
    p.add_argument("--risk", required=True, type=float, help="target conditional risk, e.g. 0.1")
    p.add_argument("--seed", type=int, default=None, help="seed (recorded in the file)")
    p.add_argument("-o", "--output", required=True, type=Path, help="output .h5 file")
    p.add_argument("--force", action="store_true",
                   help="overwrite an existing output file (without it, an existing file is never "
                   "replaced, not even one another process writes meanwhile)")
    add_record_options(p, RequestOptions)
    add_record_options(p.add_argument_group("generation settings"), GenerationSettings)
    add_record_options(p.add_argument_group("model options"), ModelOptions)
    resources = p.add_argument_group("resources (they never change the table)")
    resources.add_argument("--max-memory", default=None, metavar="SIZE",
                           help="refuse the request when its estimated peak memory exceeds SIZE "
                           "(e.g. 8G, 512M; default: the memory available, the smallest of "
                           "MemAvailable, the cgroup's limit and ulimit -v)")
    resources.add_argument("--backend", choices=["loky", "dask"], default="loky",
                           help="where the --jobs workers of the calibration and of a large "
                           "table's chains run: local processes (loky, default) or a Dask "
                           "cluster, as for releases")
    resources.add_argument("--scheduler", default=None, metavar="ADDR",
                           help="Dask scheduler address, e.g. tcp://host:8786 (default with "
                           "--backend dask: a local cluster of --jobs workers)")
    add_kernel_option(resources)
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar, no summary")


def _request(args: argparse.Namespace, options: Any) -> tuple[Any, Any]:
    """The table request of the command line and the design it was made from (None: random)."""
    from lbm_bench.models.registry import get_family
    from lbm_bench.protocol.from_design import design_request
    from lbm_bench.protocol.request import TableRequest

    if args.design is not None:  # the design fixes the kind, the clusters and the model options
        family = None if args.kind is None else get_family(args.kind)  # --kind: a name, a boundary
        # every model option given is refused, also one at its default (--base-rate 2)
        given = {name: getattr(options, name) for name in ModelOptions.names()
                 if getattr(args, name, None) is not None}
        return design_request(args.design, args.risk, *(args.shape or (None, None)),
                              kind=family, clusters=args.clusters or (None, None),
                              options=given,
                              **record_from_options(RequestOptions, args).to_record())
    flags = ("--kind", "--shape", "--clusters")
    if absent := [flag for flag in flags if getattr(args, flag[2:]) is None]:
        raise ValueError(f"{', '.join(absent)} required (or --design DESIGN.toml)")
    return TableRequest(args.kind, *args.shape, *args.clusters, args.risk, model_options=options,
                        **record_from_options(RequestOptions, args).to_record()), None


def run(args: argparse.Namespace) -> int:
    """Calibrate a latent block model to a target conditional risk, draw a table that meets it by
    rejection sampling, and write it with its Gibbs label sets.
    """
    from lbm_bench.protocol.generate import generate_table
    from lbm_bench.storage import save_table
    from lbm_bench.tasks.backends import check_backend

    # before the work, not after it; never the design file it reads
    check_writable_file(args.output, overwrite=args.force, inputs=(args.design,))
    warn_suffix(args.output, (".h5", ".hdf5"), "an HDF5 table file")
    settings = record_from_options(GenerationSettings, args)
    request, design = _request(args, record_from_options(ModelOptions, args))
    check_backend(args.backend, settings.jobs, args.scheduler)
    start = time.perf_counter()
    table = generate_table(request, settings=settings, max_memory=args.max_memory,
                           backend=args.backend, scheduler=args.scheduler, kernel=args.kernel,
                           progress=show_progress(args), rng=args.seed, design=design)
    try:
        save_table(table, args.output, overwrite=args.force)
    except FileExistsError:
        raise ValueError(f"output {args.output} was created by another process meanwhile; not "
                         "replaced (use --force to overwrite)") from None
    if not args.quiet:
        print(table.summary())
        print(f"wrote {args.output} in {time.perf_counter() - start:.1f} s")
        print_kernel_hint(int(getattr(table.data, "nnz", 0)))  # a sparse table's
    return 0
