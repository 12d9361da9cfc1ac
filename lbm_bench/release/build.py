"""Building a release: spec-driven, parallel, resumable, byte-reproducible.

:func:`build_release` turns a spec into ``DIR/tables/<id>.h5`` files, then writes
``DIR/spec.toml`` (the spec, byte for byte: ``lbm-bench build DIR/spec.toml --out NEW``
rebuilds the release), ``DIR/manifest.json``, the release files of
:data:`RELEASE_FILE_WRITERS` (README.md, the Croissant files, the HTML card) and
``DIR/SHA256SUMS`` listing them all, and on request the archive ``DIR.tar.gz``.

Determinism: every seed derives from the master seed and the identity of what
it seeds (:func:`lbm_bench.release.derive_seed`), never from worker
order. The replicates of one configuration share one calibrated design (the
paper's "one distribution, several tables"), whose seed derives from the
configuration's identity. Files are written byte-stably (see
:mod:`lbm_bench.storage`) and the manifest carries no timestamps, so the same spec
gives the same bytes for any number of jobs and either backend.

Scheduling: one pool of workers (``n_jobs`` loky processes, or the Dask cluster)
serves both the tables and the chains of large tables (:class:`~lbm_bench.tasks.pool.TaskPool`).
A large table (:func:`~lbm_bench.tasks.large.is_large`: :func:`spreads_over_workers`)
is certified by the build's own process with ``jobs=n_jobs``: its calibration's
tables, the MAP's random starts, the Gibbs chains and the floor's descents run as
tasks over the pool (:mod:`lbm_bench.tasks.pool`), so one large table no
longer runs in one process while the others wait for it. These tables come first,
configuration after configuration (longest first), one at a time: the pool is never
asked for more than ``n_jobs`` tasks at once, and no worker starts workers of its
own (nested loky pools would oversubscribe the cores). The other tables then go to
the pool as tasks of their own, in two phases: phase 1 runs one task per
configuration with a pending table, which calibrates the configuration and builds
its first pending table (and draws its thumbnail); phase 2 builds the other pending
replicates with the calibrations of phase 1. Each phase submits its tasks longest
first by a deterministic cost estimate (:func:`task_order`: entries ``n_rows *
n_cols``, then target risk, descending), so the longest tasks do not start last and
leave a worker idle at the end of a phase. Once the release files are written, the
build verifies them with the same pool (:func:`~lbm_bench.release.verify_release`'s
checks of each table are tasks of it) before closing it. Neither the order nor the route changes
a byte: seeds come from identities, and a table's chains draw the same labels in
any grouping.

Resumability: tables already present and valid are skipped (a configuration whose
tables are all complete is not calibrated); files are written under a temporary
name and renamed, so an interrupted build leaves no partial file under a final
name, and stale temporary files are removed on the next run. The thumbnail of a
table about to be built is removed first, so no picture of an earlier table
survives; the card draws the thumbnails of tables built by an earlier run.
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from lbm_bench._atomic import TEMPORARY_GLOB
from lbm_bench._docstrings import fill_doc
from lbm_bench.inference.kernel_choice import kernel_hint, use_kernel
from lbm_bench.release._files import sha256_file
from lbm_bench.release.archive import write_archive
from lbm_bench.release.build_report import TABLE_STAGES, BuildReport
from lbm_bench.release.card import (
    THUMBNAILS,
    can_draw_thumbnails,
    draw_thumbnail,
    thumbnail_name,
)
from lbm_bench.release.folder import claim_folder, locked_folder
from lbm_bench.release.release_files import write_release_files, write_spec_file
from lbm_bench.release.spec import SPEC_FILE, ReleaseSpec, TableSpec, read_spec
from lbm_bench.tasks.backends import worker_backend
from lbm_bench.tasks.heap import release_free_memory
from lbm_bench.tasks.large import is_large
from lbm_bench.tasks.pool import TaskPool
from lbm_bench.tasks.threads import single_blas_thread

__all__ = [
    "NO_THUMBNAILS",
    "TABLE_STAGES",
    "BuildReport",
    "check_build_memory",
    "build_release",
    "spreads_over_workers",
    "task_order",
]

#: The build's note when matplotlib is missing: the card is written without pictures.
NO_THUMBNAILS = ("thumbnails skipped: matplotlib is not installed (pip install "
                 "'lbm-bench[plots]'); "
                 "index.html is written without them")


def _settings(spec: TableSpec, jobs: int) -> Any:
    """The spec's generation settings with ``jobs`` workers (not stored: no byte changes)."""
    return spec.settings if jobs == spec.settings.jobs else replace(spec.settings, jobs=jobs)


def _calibrate_unpinned(config: TableSpec, jobs: int = 1) -> tuple[str, Any, float]:
    from lbm_bench.protocol.calibration import calibrate

    start = time.perf_counter()
    design = None if config.design is None else config.design.at_shape(
        *config.shape, rng=config.calibration_seed)
    result = calibrate(config.request, _settings(config, jobs), design=design,
                       rng=config.calibration_seed)
    return config.config_id, result, time.perf_counter() - start


def _without_progress_lock() -> None:
    """Keep tqdm from creating its inter-process lock in this process (a worker's).

    A worker shows no progress bar, but tqdm creates a named semaphore at its first
    bar, even a disabled one, and registers it with multiprocessing's resource
    tracker. Ctrl-C kills the workers before they unregister it, and the tracker then
    prints "resource_tracker: There appear to be N leaked semaphore objects" after
    the build's "interrupted". Without it tqdm uses its thread lock, which is all a
    process that draws no bar needs. In the main process the build's own bar has
    made the lock already, and it is left alone."""
    from tqdm.std import TqdmDefaultWriteLock

    if not hasattr(TqdmDefaultWriteLock, "mp_lock"):
        TqdmDefaultWriteLock.mp_lock = None


def _calibrate_and_build(spec: TableSpec, out_dir: str) -> tuple[str, Any, float, dict]:
    """Phase 1: calibrate ``spec``'s configuration, then build ``spec`` (its first pending
    table) with that calibration; return the calibration for the other replicates. A task
    of the build's pool, pinned to one BLAS thread, its heap's free pages given back after."""
    _without_progress_lock()
    config_id, calibration, seconds = _calibrate_unpinned(spec)
    outcome = _build_table_unpinned(spec, calibration, out_dir)
    return config_id, calibration, seconds, outcome


def _build_spread(spec: TableSpec, calibration: Any, out_dir: str,
                  n_jobs: int) -> tuple[str, Any, float, dict]:
    """A large table, in the build's own process with ``jobs=n_jobs``: its calibration
    (when ``calibration`` is None) and its certification spread their tasks over the
    build's pool (the backend in force). On one BLAS thread, as in a worker, so
    that its float sums are a worker's. Returns what :func:`_calibrate_and_build`
    does (the calibration given, and 0 s, when one was given)."""
    with single_blas_thread():
        if calibration is None:
            config_id, calibration, seconds = _calibrate_unpinned(spec, n_jobs)
        else:
            config_id, seconds = spec.config_id, 0.0
        outcome = _build_table_unpinned(spec, calibration, out_dir, n_jobs)
    release_free_memory(collect=False)  # the table and its Gibbs runs are gone by now
    return config_id, calibration, seconds, outcome


def _build_table(spec: TableSpec, calibration: Any, out_dir: str) -> dict:
    """Generate and write one table; never raises (errors are returned). A task of the
    build's pool, as :func:`_calibrate_and_build`."""
    _without_progress_lock()
    return _build_table_unpinned(spec, calibration, out_dir)


def _build_table_unpinned(spec: TableSpec, calibration: Any, out_dir: str, jobs: int = 1) -> dict:
    from lbm_bench.protocol.generate import generate_table
    from lbm_bench.storage import save_table

    try:
        table = generate_table(spec.request, settings=_settings(spec, jobs),
                               calibration=calibration, rng=spec.seed)
        start = time.perf_counter()
        table = _with_calibration_seed(table, spec.calibration_seed)
        save_table(table, Path(out_dir) / spec.filename)
        timings = dict(table.timings, writing=time.perf_counter() - start)
    except Exception as exc:  # reported per table, the others go on
        return {"id": spec.id, "ok": False, "error": f"{type(exc).__name__}: {exc}"}
    seconds = _draw_thumbnail(table, Path(out_dir), spec.id)
    if seconds is not None:
        timings["thumbnail"] = seconds
    return {"id": spec.id, "ok": True, "timings": timings, "attempts": table.rejection.attempts}


def _draw_thumbnail(table: Any, out: Path, table_id: str) -> float | None:
    """Draw a just-built table's thumbnail from memory; its seconds, or None when not drawn
    (no matplotlib, or the drawing failed: the card then draws it from the file, and
    reports the error if it fails again)."""
    if not can_draw_thumbnails():
        return None
    start = time.perf_counter()
    try:
        (out / THUMBNAILS).mkdir(exist_ok=True)
        draw_thumbnail(table, out / thumbnail_name(table_id))
    except Exception:  # the table is built; the card retries the picture from its file
        return None
    return time.perf_counter() - start


def _with_calibration_seed(table: Any, calibration_seed: int) -> Any:
    return replace(table, options=dict(table.options, calibration_seed=calibration_seed))


def _table_is_complete(out_dir: Path, spec: TableSpec) -> bool:
    """The table's file is present, valid (it loads: every check of ``check_file``) and
    of the expected kind and seed. One read of the file, without a second pass for its
    attributes."""
    from lbm_bench.storage import FormatError, load_table

    path = out_dir / spec.filename
    if not path.is_file():
        return False
    try:
        table = load_table(path)
    except FormatError:
        return False
    return table.seed == spec.seed and table.kind == spec.kind


def _remove_stale_temporaries(*folders: Path) -> int:
    count = 0
    for folder in folders:
        for path in folder.glob(TEMPORARY_GLOB):
            path.unlink(missing_ok=True)
            count += 1
    return count


def task_order(tables: list[TableSpec]) -> list[TableSpec]:
    """The tables in the order their tasks are submitted: longest first.

    The cost estimate is deterministic and read from the spec alone: the number of
    entries ``n_rows * n_cols`` (the calibration's and the Gibbs runs' cost grow with
    it), then the target risk (a higher risk takes longer to calibrate and
    to sample), both descending, then the id (a stable tie-break). The order changes
    no byte of the release: every seed derives from an identity.

    Parameters
    ----------
    tables : list of TableSpec

    Returns
    -------
    list of TableSpec
    """
    return sorted(tables, key=lambda t: (-t.shape[0] * t.shape[1], -t.risk, t.id))


def _stored_entries(spec: TableSpec) -> int:
    """The stored entries expected of a table of ``spec`` (0 for a dense table)."""
    density = getattr(spec.request.model_options, "density", None)
    return 0 if density is None else int(density * spec.shape[0] * spec.shape[1])


def spreads_over_workers(spec: TableSpec) -> bool:
    """Whether a build certifies ``spec`` over all its workers (its chains as tasks) rather
    than as one task: a large table (:func:`~lbm_bench.tasks.large.is_large`), whose chains
    may run as tasks. A smaller table's chains run in one batched loop whatever ``jobs``,
    and the table is one task of the pool.

    Parameters
    ----------
    spec : TableSpec

    Returns
    -------
    bool
    """
    return is_large(*spec.shape)


def check_build_memory(spec: ReleaseSpec, n_jobs: int, *, remote_workers: bool = False) -> None:
    """Refuse (ValueError, one line), before the folder is touched, a spec with a table whose
    generation would not fit in memory: :func:`~lbm_bench.generate_table`'s guard, a large
    table over the ``n_jobs`` workers, another as one task (a 100000x100000 table wrote
    ``spec.toml`` and ``tables/``, then died in a ``MemoryError`` traceback)."""
    from lbm_bench.protocol import memory

    for table in spec.tables:
        jobs = n_jobs if spreads_over_workers(table) else 1
        estimate = memory.estimate_request_memory(table.request, _settings(table, jobs),
                                                  remote_workers=remote_workers and jobs > 1,
                                                  design=table.design)
        try:
            memory.check_memory(estimate)
        except memory.MemoryLimitError as exc:
            raise ValueError(
                f"table {table.id} of the spec: the {estimate.what} needs about "
                f"{estimate.describe()}, more than the {memory.format_bytes(exc.limit)} available "
                f"({exc.source}); give it a smaller shape, a density or fewer n_samples") from None


@fill_doc
def build_release(
    spec: ReleaseSpec | str | os.PathLike[str],
    out_dir: str | os.PathLike[str],
    *,
    n_jobs: int = 1,
    backend: str = "loky",
    scheduler: str | None = None,
    fail_fast: bool = False,
    archive: bool = False,
    progress: bool = False,
    spec_path: str | None = None,
    force: bool = False,
    kernel: str | None = None,
) -> BuildReport:
    """Build (or resume) a release into ``out_dir``.

    Parameters
    ----------
    spec : ReleaseSpec or path
        The release spec: a TOML file, a release directory or its ``manifest.json``
        (:func:`~lbm_bench.release.spec.read_spec`: the release's own ``spec.toml``).
    out_dir : path
        Output directory (created if needed).
    n_jobs : int, default=1
        Parallel workers.
    backend : {"loky", "dask"}
        Where the workers run (:mod:`lbm_bench.tasks.backends`); ``"dask"`` runs the same
        tasks on a Dask cluster.
    scheduler : str, optional
        Address of a Dask scheduler; a local cluster when omitted.
    fail_fast : bool, default=False
        Stop at the first failed table instead of building the others.
    archive : bool, default=False
        Also write ``<out_dir>.tar.gz`` (its path and SHA-256 are in the report).
    progress : bool, default=False
        Show a tqdm bar over tables.
    force : bool, default=False
        Replace another release that ``out_dir`` holds (its tables outside this spec and its
        release files are removed; the report's ``replaced`` says what). Without it, such a
        folder is refused (:func:`~lbm_bench.release.folder.claim_folder`).
    {{kernel}}

    Returns
    -------
    BuildReport
        Not ``ok`` when a table failed, or when the release written does not pass
        :func:`~lbm_bench.release.verify_release` (its ``problems``).

    Raises
    ------
    ValueError
        Before anything is written: another build holds the folder (one build per folder at
        a time), the folder holds another release and ``force`` is not given, or a table
        would not fit in memory (:func:`check_build_memory`).

    Examples
    --------
    A spec as a mapping (:func:`~lbm_bench.release.parse_spec`; a TOML file says the same,
    see ``repository/mini.toml``): one table, with few label sets to run in seconds.

    >>> import os, tempfile
    >>> from lbm_bench.release import build_release, parse_spec
    >>> grid = dict(kinds=["bernoulli"], shapes=["30x20"], clusters=["2x2"], risks=[0.1])
    >>> spec = parse_spec({"release": {"name": "tiny", "version": "0.1", "seed": 1},
    ...                    "defaults": {"tolerance": 0.03, "n_samples": 200, "screen_samples": 0,
    ...                                 "n_calibration_tables": 10}, "grid": [grid]})
    >>> tiny = os.path.join(tempfile.mkdtemp(), "tiny")
    >>> report = build_release(spec, tiny)
    >>> report.ok, report.built
    (True, ['bernoulli-30x20-2x2-r0.1-01'])
    >>> sorted(os.listdir(tiny))
    ['README.md', 'SHA256SUMS', 'croissant.json', 'index.html', 'manifest.json', 'spec.toml',
     'tables', 'tables.csv', 'thumbnails']
    """
    if not isinstance(spec, ReleaseSpec):
        spec_path = spec_path or str(spec)
        spec = read_spec(spec)
    _check_spec_describes_its_tables(spec)
    if not isinstance(n_jobs, int) or n_jobs < 1:
        raise ValueError(f"n_jobs must be a positive integer, got {n_jobs!r}")
    check_build_memory(spec, n_jobs, remote_workers=backend == "dask" and scheduler is not None)
    start = time.perf_counter()
    out = Path(out_dir)
    # the workers first (worker_backend, the one place that opens a Dask cluster): a scheduler
    # that does not answer is refused before the folder is touched
    with use_kernel(kernel), worker_backend(backend, n_jobs, scheduler), locked_folder(out):
        replaced = claim_folder(spec, out, force=force)
        write_spec_file(spec, out)  # an interrupted build says which release it was building
        # each of the pool's task lists is a call of its own on the backend in force
        report = _build_locked(spec, out, TaskPool(n_jobs), n_jobs=n_jobs, fail_fast=fail_fast,
                               archive=archive, progress=progress, spec_path=spec_path)
    report.replaced = replaced
    report.wall_seconds = time.perf_counter() - start
    return report


def _build_locked(spec: ReleaseSpec, out: Path, pool: TaskPool, *, n_jobs: int, fail_fast: bool,
                  archive: bool, progress: bool, spec_path: str | None) -> BuildReport:
    """The build of :func:`build_release`, in the folder it holds."""
    from tqdm.auto import tqdm

    from lbm_bench.release.verify import verify_release

    (out / "tables").mkdir(parents=True, exist_ok=True)
    _remove_stale_temporaries(out / "tables", out / THUMBNAILS)
    report = BuildReport(out_dir=out)
    pending = [t for t in spec.tables if not _table_is_complete(out, t)]
    report.skipped = [t.id for t in spec.tables if t not in pending]
    for t in pending:  # a table about to be (re)built: no picture of an earlier one survives
        (out / thumbnail_name(t.id)).unlink(missing_ok=True)
    by_config: dict[str, list[TableSpec]] = {}
    for t in pending:
        by_config.setdefault(t.config_id, []).append(t)
    spread = [by_config.pop(t.config_id) for t in task_order([ts[0] for ts in by_config.values()])
              if spreads_over_workers(t)]  # a configuration's tables share its shape
    first = task_order([tables[0] for tables in by_config.values()])
    rest = task_order([t for tables in by_config.values() for t in tables[1:]])
    stage = {"calibration": 0.0, **dict.fromkeys(TABLE_STAGES, 0.0)}

    def record(outcome: dict) -> bool:
        """Add a table's outcome to the report; True to stop (a failure with fail_fast)."""
        bar.update()
        if outcome["ok"]:
            report.built.append(outcome["id"])
            report.attempts[outcome["id"]] = outcome["attempts"]
            report.table_seconds[outcome["id"]] = dict(outcome["timings"])
            for key in TABLE_STAGES:
                stage[key] += outcome["timings"].get(key, math.nan)
            return False
        report.failed[outcome["id"]] = outcome["error"]
        return fail_fast

    def calibrated(config_id: str, result: Any, seconds: float) -> None:
        calibrations[config_id] = result
        stage["calibration"] += seconds
        report.calibration_seconds[config_id] = seconds
        bar.update()

    calibrations: dict[str, Any] = {}
    with tqdm(total=len(by_config) + len(spread) + len(pending), desc=f"building {spec.name}",
              unit="task", disable=not progress) as bar:
        stop = False
        # one at a time, each over the whole pool
        for t in (t for tables in spread for t in tables):
            config_id, result, seconds, outcome = _build_spread(t, calibrations.get(t.config_id),
                                                                str(out), n_jobs)
            if config_id not in calibrations:
                calibrated(config_id, result, seconds)
            report.spread.append(t.id)
            if record(outcome):
                stop = True
                break
        for config_id, result, seconds, outcome in ([] if stop else pool.as_done(
            _calibrate_and_build, ((t, str(out)) for t in first), pin=True, trim=True
        )):
            calibrated(config_id, result, seconds)
            if record(outcome):
                stop = True
                break
        if not stop and rest:
            calls = ((t, calibrations[t.config_id], str(out)) for t in rest)
            for outcome in pool.as_done(_build_table, calls, pin=True, trim=True):
                if record(outcome):
                    break
        report.built.sort()
        report.stage_seconds = stage
        # verified with the pool still open: each table's checks are a task of it
        if not report.failed:
            write_release_files(spec, out, spec_path=spec_path)
            if not can_draw_thumbnails():
                report.notes.append(NO_THUMBNAILS)
            if hint := kernel_hint(max(map(_stored_entries, pending), default=0)):
                report.notes.append(hint)  # a large sparse table built without numba
            report.problems = verify_release(out, pool=pool)
    if archive and not report.failed and not report.problems:
        report.archive = write_archive(out)
        report.archive_sha256 = sha256_file(report.archive)
    return report



def _check_spec_describes_its_tables(spec: ReleaseSpec) -> None:
    """Refuse a spec whose tables are not the ones its source expands to (a ReleaseSpec
    edited in Python): the release's spec.toml would not rebuild it."""
    from lbm_bench.release.spec import parse_spec

    expanded = [(t.id, t.seed, t.calibration_seed, t.settings, t.request)
                for t in parse_spec(spec.source, base=spec.base).tables]
    if [(t.id, t.seed, t.calibration_seed, t.settings, t.request) for t in spec.tables] != expanded:
        raise ValueError(
            f"spec {spec.name}: its tables are not the ones its source describes, so the release's "
            f"{SPEC_FILE} could not rebuild it; edit the spec's TOML (or the dict given to "
            "parse_spec) instead"
        )
