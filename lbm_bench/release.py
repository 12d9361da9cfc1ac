"""Dataset releases: spec-driven, parallel, resumable, byte-reproducible builds.

A release spec (TOML) describes grids of tables: kinds, shapes, cluster numbers,
target risks, replicates and the generation settings. :func:`build_release`
turns it into ``DIR/tables/<id>.h5`` files, ``DIR/manifest.json``,
``DIR/SHA256SUMS`` and a data card ``DIR/README.md``.

Determinism: every seed derives from the master seed and the identity of what
it seeds (``SeedSequence(master, spawn_key=digest(id))``), never from worker
order. The replicates of one configuration share one calibrated design (the
paper's "one distribution, several tables"), whose seed derives from the
configuration's identity. Files are written byte-stably (see
:mod:`lbm_bench.io`) and the manifest carries no timestamps, so the same spec
gives the same bytes for any number of jobs and either backend.

Resumability: tables already present and valid are skipped; files are written
under a temporary name and renamed, so an interrupted build leaves no partial
file under a final name, and stale temporary files are removed on the next run.
"""

from __future__ import annotations

import hashlib
import io
import itertools
import json
import os
import sys
import tarfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from lbm_bench._validation import KINDS

__all__ = [
    "ReleaseSpec",
    "TableSpec",
    "BuildReport",
    "read_spec",
    "parse_spec",
    "build_release",
    "verify_release",
    "load_release",
    "load_release_table",
    "write_archive",
]

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

#: Generation settings a spec may set (in [defaults] or per [[grid]]), with defaults.
SETTINGS: dict[str, Any] = {
    "tolerance": 0.01,
    "n_samples": 2000,
    "n_chains": 8,
    "burn_in": 50,
    "thin": 1,
    "screen_samples": 200,
    "max_attempts": 100,
    "balance": None,
    "n_calibration_tables": "auto",
    "calibration_tolerance": None,
    "calibration_method": "secant",
    "n_init": 10,
}
#: Options of random_design a spec may set in ``model_options``.
MODEL_OPTIONS = {"equal_proportions", "equal_dispersions", "dispersion_spread", "base_rate"}
_GRID_KEYS = {"kinds", "shapes", "clusters", "risks", "replicates", "model_options"} | set(SETTINGS)
_RELEASE_KEYS = {"name", "version", "seed", "description", "license", "citation"}


@dataclass(frozen=True)
class TableSpec:
    """One table of a release: its identity, settings and seeds."""

    id: str
    config_id: str
    kind: str
    shape: tuple[int, int]
    clusters: tuple[int, int]
    risk: float
    replicate: int
    settings: dict
    model_options: dict
    seed: int
    calibration_seed: int

    @property
    def filename(self) -> str:
        return f"tables/{self.id}.h5"


@dataclass(frozen=True)
class ReleaseSpec:
    """A parsed, validated release spec."""

    name: str
    version: str
    seed: int
    description: str
    license: str
    citation: str
    tables: tuple[TableSpec, ...]
    source: dict = field(repr=False)

    def configurations(self) -> dict[str, list[TableSpec]]:
        """Tables grouped by configuration (shared calibration), in id order."""
        groups: dict[str, list[TableSpec]] = {}
        for table in self.tables:
            groups.setdefault(table.config_id, []).append(table)
        return groups


def _derive_seed(master: int, identity: str) -> int:
    """A 63-bit seed from the master seed and an identity string (order-free)."""
    digest = hashlib.sha256(identity.encode()).digest()
    key = tuple(int.from_bytes(digest[i : i + 4], "little") for i in range(0, 16, 4))
    state = np.random.SeedSequence(master, spawn_key=key).generate_state(2, np.uint32)
    return int(state.view(np.uint64)[0] >> np.uint64(1))


def _pair(where: str, text: Any) -> tuple[int, int]:
    if not isinstance(text, str):
        raise ValueError(f"{where}: expected a string like '200x100', got {text!r}")
    parts = text.lower().split("x")
    try:
        a, b = (int(p) for p in parts)
    except ValueError:
        raise ValueError(f"{where}: expected a string like '200x100', got {text!r}") from None
    if a < 1 or b < 1:
        raise ValueError(f"{where}: sizes must be positive, got {text!r}")
    return a, b


def _list(where: str, value: Any) -> list:
    if not isinstance(value, list) or not value:
        raise ValueError(f"{where} must be a non-empty list, got {value!r}")
    return value


def _check_keys(where: str, table: dict, allowed: set[str]) -> None:
    unknown = sorted(set(table) - allowed)
    if unknown:
        raise ValueError(f"{where}: unknown key(s) {', '.join(unknown)}; allowed: {', '.join(sorted(allowed))}")


def _check_settings(where: str, settings: dict) -> dict:
    out = dict(settings)
    if out["n_calibration_tables"] != "auto" and (
        not isinstance(out["n_calibration_tables"], int) or isinstance(out["n_calibration_tables"], bool)
        or out["n_calibration_tables"] < 1
    ):
        raise ValueError(f"{where}: n_calibration_tables must be a positive integer or 'auto', "
                         f"got {out['n_calibration_tables']!r}")
    if out["calibration_method"] not in ("secant", "bisection"):
        raise ValueError(f"{where}: calibration_method must be 'secant' or 'bisection', "
                         f"got {out['calibration_method']!r}")
    for key in ("n_samples", "n_chains", "thin", "max_attempts", "n_init"):
        if not isinstance(out[key], int) or isinstance(out[key], bool) or out[key] < 1:
            raise ValueError(f"{where}: {key} must be a positive integer, got {out[key]!r}")
    for key in ("burn_in", "screen_samples"):
        if not isinstance(out[key], int) or isinstance(out[key], bool) or out[key] < 0:
            raise ValueError(f"{where}: {key} must be a non-negative integer, got {out[key]!r}")
    if not isinstance(out["tolerance"], (int, float)) or not 0 < out["tolerance"] < 1:
        raise ValueError(f"{where}: tolerance must be in (0, 1), got {out['tolerance']!r}")
    if out["n_chains"] > out["n_samples"]:
        raise ValueError(f"{where}: n_chains ({out['n_chains']}) exceeds n_samples ({out['n_samples']})")
    if out["balance"] is not None and not 0 <= out["balance"] <= 1:
        raise ValueError(f"{where}: balance must be in [0, 1], got {out['balance']!r}")
    return out


def _check_model_options(where: str, options: Any) -> dict:
    if not isinstance(options, dict):
        raise ValueError(f"{where}: model_options must be a table, got {options!r}")
    _check_keys(f"{where}.model_options", options, MODEL_OPTIONS)
    return {k: options[k] for k in sorted(options)}


def _grid_tables(index: int, grid: dict, defaults: dict, master: int) -> list[TableSpec]:
    where = f"grid[{index}]"
    _check_keys(where, grid, _GRID_KEYS)
    for key in ("kinds", "shapes", "clusters", "risks"):
        if key not in grid:
            raise ValueError(f"{where}: missing required key {key!r}")
    settings = _check_settings(where, {**SETTINGS, **defaults.get("settings", {}), **{k: grid[k] for k in SETTINGS if k in grid}})
    options = _check_model_options(where, {**defaults.get("model_options", {}), **grid.get("model_options", {})})
    replicates = grid.get("replicates", 1)
    if not isinstance(replicates, int) or isinstance(replicates, bool) or replicates < 1:
        raise ValueError(f"{where}: replicates must be a positive integer, got {replicates!r}")
    tables = []
    for kind, shape_text, cluster_text, risk in itertools.product(
        _list(f"{where}.kinds", grid["kinds"]),
        _list(f"{where}.shapes", grid["shapes"]),
        _list(f"{where}.clusters", grid["clusters"]),
        _list(f"{where}.risks", grid["risks"]),
    ):
        if kind not in KINDS:
            raise ValueError(f"{where}: kind must be one of {', '.join(KINDS)}, got {kind!r}")
        n, d = _pair(f"{where}.shapes", shape_text)
        g, m = _pair(f"{where}.clusters", cluster_text)
        if g < 2 or m < 2:
            raise ValueError(f"{where}: clusters must be at least 2x2, got {cluster_text!r}")
        if g > n or m > d:
            raise ValueError(f"{where}: {cluster_text} clusters do not fit a {shape_text} table")
        if kind == "bernoulli" and (g > 2**m or m > 2**g):
            raise ValueError(f"{where}: bernoulli blocks need distinct binary modes; impossible with {cluster_text}")
        if not isinstance(risk, (int, float)) or isinstance(risk, bool) or not 0 < risk < 1:
            raise ValueError(f"{where}: risks must be in (0, 1), got {risk!r}")
        if risk < 1.0 / (n * d):
            raise ValueError(f"{where}: risk {risk} is below 1/(n_rows*n_cols) for {shape_text}")
        config_id = f"{kind}-{n}x{d}-{g}x{m}-r{risk:.4f}".rstrip("0")
        for rep in range(1, replicates + 1):
            table_id = f"{config_id}-{rep:02d}"
            tables.append(
                TableSpec(
                    id=table_id, config_id=config_id, kind=kind, shape=(n, d), clusters=(g, m),
                    risk=float(risk), replicate=rep, settings=settings, model_options=options,
                    seed=_derive_seed(master, "table:" + table_id),
                    calibration_seed=_derive_seed(master, "calibration:" + config_id),
                )
            )
    return tables


def parse_spec(source: dict) -> ReleaseSpec:
    """Validate a spec given as a dict (the parsed TOML) and expand its grids.

    Raises
    ------
    ValueError
        Naming the offending key: unknown keys, missing keys, impossible
        combinations (more clusters than rows, binary modes that cannot be
        distinct), risks out of range, duplicate tables.
    """
    _check_keys("spec", source, {"release", "defaults", "grid"})
    release = source.get("release")
    if not isinstance(release, dict):
        raise ValueError("spec: missing [release] table")
    _check_keys("release", release, _RELEASE_KEYS)
    for key in ("name", "version", "seed"):
        if key not in release:
            raise ValueError(f"release: missing required key {key!r}")
    seed = release["seed"]
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"release: seed must be a non-negative integer, got {seed!r}")
    defaults_source = source.get("defaults", {})
    _check_keys("defaults", defaults_source, set(SETTINGS) | {"model_options"})
    defaults = {
        "settings": {k: v for k, v in defaults_source.items() if k in SETTINGS},
        "model_options": defaults_source.get("model_options", {}),
    }
    grids = source.get("grid")
    if not isinstance(grids, list) or not grids:
        raise ValueError("spec: at least one [[grid]] is required")
    tables = [t for i, grid in enumerate(grids) for t in _grid_tables(i, grid, defaults, seed)]
    ids = [t.id for t in tables]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise ValueError(f"spec: tables defined twice: {', '.join(duplicates[:5])}")
    configs: dict[str, TableSpec] = {}
    for t in tables:
        first = configs.setdefault(t.config_id, t)
        if (first.settings, first.model_options) != (t.settings, t.model_options):
            raise ValueError(f"spec: configuration {t.config_id} appears with different settings")
    return ReleaseSpec(
        name=str(release["name"]), version=str(release["version"]), seed=seed,
        description=str(release.get("description", "")), license=str(release.get("license", "CC-BY-4.0")),
        citation=str(release.get("citation", "")), tables=tuple(sorted(tables, key=lambda t: t.id)),
        source=source,
    )


def read_spec(path: str | os.PathLike[str]) -> ReleaseSpec:
    """Read and validate a release spec from a TOML file."""
    path = Path(path)
    try:
        source = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(f"spec {path} does not exist") from None
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"spec {path} is not valid TOML: {exc}") from None
    try:
        return parse_spec(source)
    except ValueError as exc:
        raise ValueError(f"spec {path}: {exc}") from None


# -- building -------------------------------------------------------------------


def _one_blas_thread():
    """Pin BLAS to one thread for a task (threadpoolctl, when installed), so a table's
    floating-point results do not depend on how many threads the worker's BLAS uses:
    in-process builds, loky workers and Dask workers then compute the same bytes."""
    import contextlib

    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - documented in docs/releases.md
        return contextlib.nullcontext()
    return threadpool_limits(limits=1, user_api="blas")


def _calibrate(config: TableSpec) -> tuple[str, Any, float]:
    with _one_blas_thread():
        return _calibrate_unpinned(config)


def _calibrate_unpinned(config: TableSpec) -> tuple[str, Any, float]:
    from lbm_bench.protocol.calibration import calibrate_scale

    start = time.perf_counter()
    s = config.settings
    result = calibrate_scale(
        config.kind, *config.shape, *config.clusters, config.risk,
        n_tables=s["n_calibration_tables"], tolerance=s["calibration_tolerance"], n_init=s["n_init"],
        method=s["calibration_method"], rng=config.calibration_seed, **config.model_options,
    )
    return config.config_id, result, time.perf_counter() - start


def _build_table(spec: TableSpec, calibration: Any, out_dir: str) -> dict:
    """Generate and write one table; never raises (errors are returned)."""
    with _one_blas_thread():
        return _build_table_unpinned(spec, calibration, out_dir)


def _build_table_unpinned(spec: TableSpec, calibration: Any, out_dir: str) -> dict:
    from lbm_bench.protocol.generate import generate_table
    from lbm_bench.storage import save_table

    try:
        s = spec.settings
        table = generate_table(
            spec.kind, *spec.shape, *spec.clusters, spec.risk,
            tolerance=s["tolerance"], n_samples=s["n_samples"], n_chains=s["n_chains"],
            burn_in=s["burn_in"], thin=s["thin"], screen_samples=s["screen_samples"],
            max_attempts=s["max_attempts"], balance=s["balance"], n_init=s["n_init"],
            calibration=calibration, rng=spec.seed, **spec.model_options,
        )
        start = time.perf_counter()
        save_table(_with_calibration_seed(table, spec.calibration_seed), Path(out_dir) / spec.filename)
        timings = dict(table.timings, writing=time.perf_counter() - start)
        return {"id": spec.id, "ok": True, "timings": timings, "attempts": table.rejection.attempts}
    except Exception as exc:  # reported per table, the others go on
        return {"id": spec.id, "ok": False, "error": f"{type(exc).__name__}: {exc}"}


def _with_calibration_seed(table: Any, calibration_seed: int) -> Any:
    from dataclasses import replace

    return replace(table, options=dict(table.options, calibration_seed=calibration_seed))


def _table_is_complete(out_dir: Path, spec: TableSpec) -> bool:
    from lbm_bench.storage import read_info, check_file

    path = out_dir / spec.filename
    if not path.is_file() or check_file(path):
        return False
    info = read_info(path)
    return int(info.get("seed", -1)) == spec.seed and info.get("kind") == spec.kind


def _remove_stale_temporaries(tables_dir: Path) -> int:
    count = 0
    for path in tables_dir.glob(".*.tmp*"):
        path.unlink(missing_ok=True)
        count += 1
    return count


@dataclass
class BuildReport:
    """What a build did: per-table outcomes, per-stage seconds, acceptance rates."""

    out_dir: Path
    built: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    stage_seconds: dict[str, float] = field(default_factory=dict)
    attempts: dict[str, int] = field(default_factory=dict)
    wall_seconds: float = 0.0
    calibration_seconds: dict[str, float] = field(default_factory=dict)
    table_seconds: dict[str, dict[str, float]] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.failed

    def summary(self) -> str:
        lines = [
            f"built {len(self.built)} table(s), skipped {len(self.skipped)} already complete, "
            f"failed {len(self.failed)}; wall time {self.wall_seconds:.1f} s",
        ]
        if self.stage_seconds:
            stages = ", ".join(f"{k} {v:.1f} s" for k, v in self.stage_seconds.items())
            lines.append(f"time per stage (summed over workers): {stages}")
        if self.attempts:
            total = sum(self.attempts.values())
            lines.append(
                f"rejection sampling: {total} attempt(s) for {len(self.attempts)} table(s), "
                f"acceptance rate {len(self.attempts) / total:.3f}"
            )
        for table_id, error in sorted(self.failed.items()):
            lines.append(f"FAILED {table_id}: {error}")
        return "\n".join(lines)

    def timings_by_configuration(self) -> list[dict[str, Any]]:
        """Where the time went, per configuration (kind, shape, clusters, risk) built.

        Returns
        -------
        list of dict
            One per configuration, in id order: ``config`` (its id), ``tables``
            (kept tables built), ``attempts`` (candidates drawn for them),
            ``calibration``, ``rejection``, ``gibbs``, ``writing`` (worker seconds,
            summed over the configuration's tables) and ``per_kept_table``
            (their total divided by ``tables``).
        """
        rows: dict[str, dict[str, Any]] = {}
        for config_id, seconds in self.calibration_seconds.items():
            rows[config_id] = {"config": config_id, "tables": 0, "attempts": 0,
                               "calibration": seconds, "rejection": 0.0, "gibbs": 0.0, "writing": 0.0}
        for table_id, timings in self.table_seconds.items():
            row = rows[table_id.rsplit("-", 1)[0]]
            row["tables"] += 1
            row["attempts"] += self.attempts.get(table_id, 0)
            for key in ("rejection", "gibbs", "writing"):
                row[key] += timings[key]
        for row in rows.values():
            total = row["calibration"] + row["rejection"] + row["gibbs"] + row["writing"]
            row["per_kept_table"] = total / row["tables"] if row["tables"] else float("nan")
        return [rows[k] for k in sorted(rows)]

    def format_timings(self) -> str:
        """:meth:`timings_by_configuration` as a fixed-width table, with a total line."""
        header = (f"{'configuration':<34} {'tables':>6} {'tries':>5} {'calib s':>8} {'reject s':>8} "
                  f"{'gibbs s':>7} {'write s':>7} {'s/table':>8}")
        lines = [header, "-" * len(header)]
        rows = self.timings_by_configuration()
        for r in rows:
            lines.append(f"{r['config']:<34} {r['tables']:>6} {r['attempts']:>5} {r['calibration']:>8.1f} "
                         f"{r['rejection']:>8.2f} {r['gibbs']:>7.2f} {r['writing']:>7.2f} {r['per_kept_table']:>8.2f}")
        if rows:
            total = {k: sum(r[k] for r in rows) for k in ("tables", "attempts", "calibration", "rejection",
                                                          "gibbs", "writing")}
            seconds = total["calibration"] + total["rejection"] + total["gibbs"] + total["writing"]
            per_table = seconds / total["tables"] if total["tables"] else float("nan")
            lines.append(f"{'total':<34} {total['tables']:>6} {total['attempts']:>5} {total['calibration']:>8.1f} "
                         f"{total['rejection']:>8.2f} {total['gibbs']:>7.2f} {total['writing']:>7.2f} {per_table:>8.2f}")
        return "\n".join(lines)


def _parallel(backend: str, n_jobs: int, scheduler: str | None):
    """A context manager that configures joblib for the chosen backend."""
    import contextlib

    import joblib

    if backend == "loky":
        return contextlib.nullcontext(joblib.Parallel(n_jobs=n_jobs, backend="loky", return_as="generator_unordered"))
    if backend != "dask":
        raise ValueError(f"backend must be 'loky' or 'dask', got {backend!r}")

    @contextlib.contextmanager
    def dask_parallel():
        try:
            from dask.distributed import Client, LocalCluster
        except ImportError:
            raise ImportError("the dask backend needs: pip install 'lbm-bench[dask]'") from None
        if scheduler:
            client = Client(scheduler)
            cluster = None
        else:
            cluster = LocalCluster(
                n_workers=n_jobs, threads_per_worker=1, processes=True, host="127.0.0.1",
                dashboard_address=None,
            )
            client = Client(cluster)
        try:
            with joblib.parallel_config(backend="dask"):
                yield joblib.Parallel(n_jobs=n_jobs, return_as="generator_unordered")
        finally:
            client.close()
            if cluster is not None:
                cluster.close()

    return dask_parallel()


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
) -> BuildReport:
    """Build (or resume) a release into ``out_dir``.

    Parameters
    ----------
    spec : ReleaseSpec or path
        The release spec.
    out_dir : path
        Output directory (created if needed).
    n_jobs : int, default=1
        Parallel workers.
    backend : {"loky", "dask"}
        joblib backend; ``"dask"`` runs the same tasks on a Dask cluster.
    scheduler : str, optional
        Address of a Dask scheduler; a local cluster when omitted.
    fail_fast : bool, default=False
        Stop at the first failed table instead of building the others.
    archive : bool, default=False
        Also write ``<out_dir>.tar.gz``.
    progress : bool, default=False
        Show a tqdm bar over tables.

    Returns
    -------
    BuildReport
    """
    from tqdm.auto import tqdm

    if not isinstance(spec, ReleaseSpec):
        spec_path = spec_path or str(spec)
        spec = read_spec(spec)
    if not isinstance(n_jobs, int) or n_jobs < 1:
        raise ValueError(f"n_jobs must be a positive integer, got {n_jobs!r}")
    start = time.perf_counter()
    out = Path(out_dir)
    (out / "tables").mkdir(parents=True, exist_ok=True)
    _remove_stale_temporaries(out / "tables")
    report = BuildReport(out_dir=out)
    pending = [t for t in spec.tables if not _table_is_complete(out, t)]
    report.skipped = [t.id for t in spec.tables if t not in pending]
    configs = {t.config_id: t for t in pending}
    stage = {"calibration": 0.0, "rejection": 0.0, "gibbs": 0.0, "writing": 0.0}
    with _parallel(backend, n_jobs, scheduler) as parallel, tqdm(
        total=len(configs) + len(pending), desc=f"building {spec.name}", unit="task", disable=not progress
    ) as bar:
        from joblib import delayed

        calibrations = {}
        for config_id, result, seconds in parallel(delayed(_calibrate)(c) for c in configs.values()):
            calibrations[config_id] = result
            stage["calibration"] += seconds
            report.calibration_seconds[config_id] = seconds
            bar.update()
        jobs = (delayed(_build_table)(t, calibrations[t.config_id], str(out)) for t in pending)
        for outcome in parallel(jobs):
            bar.update()
            if outcome["ok"]:
                report.built.append(outcome["id"])
                report.attempts[outcome["id"]] = outcome["attempts"]
                report.table_seconds[outcome["id"]] = dict(outcome["timings"])
                for key in ("rejection", "gibbs", "writing"):
                    stage[key] += outcome["timings"][key]
            else:
                report.failed[outcome["id"]] = outcome["error"]
                if fail_fast:
                    break
    report.built.sort()
    report.stage_seconds = stage
    if not report.failed:
        write_manifest(spec, out, spec_path=spec_path)
        if archive:
            write_archive(out)
    report.wall_seconds = time.perf_counter() - start
    return report


# -- manifest, checksums, data card ----------------------------------------------


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _atomic_write_text(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def _table_entry(out: Path, spec: TableSpec) -> dict:
    from lbm_bench.storage import read_info

    path = out / spec.filename
    info = read_info(path)
    return {
        "id": spec.id,
        "kind": spec.kind,
        "shape": list(spec.shape),
        "clusters": list(spec.clusters),
        "target_risk": spec.risk,
        "risk": float(info["risk"]),
        "risk_mcse": float(info["risk_mcse"]),
        "risk_rhat": float(info["risk_rhat"]),
        "row_loss": float(info["row_loss"]),
        "col_loss": float(info["col_loss"]),
        "acceptance_rate": float(info["acceptance_rate"]),
        "attempts": int(info["attempts"]),
        "scale": float(info["scale"]),
        "seed": spec.seed,
        "calibration_seed": spec.calibration_seed,
        "file": spec.filename,
        "size": path.stat().st_size,
        "sha256": _sha256(path),
    }


def write_manifest(spec: ReleaseSpec, out: Path, *, spec_path: str | None = None) -> dict:
    """Write ``manifest.json``, ``SHA256SUMS`` and ``README.md`` for a complete build."""
    from lbm_bench import __version__

    entries = [_table_entry(out, t) for t in spec.tables]
    manifest = {
        "release": {"name": spec.name, "version": spec.version, "seed": spec.seed,
                    "description": spec.description, "license": spec.license},
        "lbm_bench_version": __version__,
        "format": "lbm-bench-release",
        "format_version": "1.0",
        "spec": spec.source,
        "spec_file": Path(spec_path).name if spec_path else None,
        "tables": entries,
    }
    _atomic_write_text(out / "manifest.json", json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    _atomic_write_text(out / "README.md", data_card(manifest, spec_path=spec_path))
    sums = [f"{e['sha256']}  {e['file']}" for e in entries]
    for name in ("manifest.json", "README.md"):
        sums.append(f"{_sha256(out / name)}  {name}")
    _atomic_write_text(out / "SHA256SUMS", "\n".join(sorted(sums, key=lambda s: s.split("  ")[1])) + "\n")
    return manifest


def data_card(manifest: dict, *, spec_path: str | None = None) -> str:
    """The release's README.md, generated from its manifest."""
    release = manifest["release"]
    tables = manifest["tables"]
    kinds = sorted({t["kind"] for t in tables})
    shapes = sorted({tuple(t["shape"]) for t in tables})
    spec_name = manifest.get("spec_file") or "SPEC.toml"
    rows = "\n".join(
        f"| `{t['id']}` | {t['kind']} | {t['shape'][0]}x{t['shape'][1]} | {t['clusters'][0]}x{t['clusters'][1]} "
        f"| {t['target_risk']:.3f} | {t['risk']:.4f} ± {t['risk_mcse']:.4f} | {t['row_loss']:.3f} / {t['col_loss']:.3f} "
        f"| {t['acceptance_rate']:.2f} |"
        for t in tables
    )
    example = tables[0]["id"] if tables else "ID"
    return f"""# {release['name']} {release['version']}

{release['description'] or 'Co-clustering benchmark tables with a certified conditional Bayes risk.'}

{len(tables)} tables of {', '.join(kinds)} entries, shapes from {shapes[0][0]}x{shapes[0][1]} to
{shapes[-1][0]}x{shapes[-1][1]}, built by lbm-bench {manifest['lbm_bench_version']}. License: {release['license']}.

## What the tables are

Each table was drawn from a latent block model whose scale was calibrated so that the
X-only MAP classifier's apparent error is centred on the target risk (dichotomy over
tables sharing common random numbers), then kept by rejection sampling only if its own
conditional risk, estimated from Gibbs label sets drawn given the table with the true
parameters, was within the tolerance of the target (Lomet, Govaert and Grandvalet's
protocol). Every file holds the table, its generating labels, its MAP labels, the Gibbs
label sets (several plausible ground truths), the parameters and the calibration
record; `docs/format.md` of lbm-bench is the normative description of the file format.

| id | kind | shape | clusters | target | risk ± MCSE | l_row / l_col | acceptance |
| --- | --- | --- | --- | --- | --- | --- | --- |
{rows}

## Load a table

```python
import h5py
with h5py.File("tables/{example}.h5", "r") as f:
    X = f["data"][:]
    gibbs_rows, gibbs_cols = f["gibbs/rows"][:], f["gibbs/cols"][:]

import lbm_bench
release = lbm_bench.load_release(".")
table = lbm_bench.load_release_table(".", "{example}")
```

## Score an algorithm

```
lbm-bench evaluate tables/{example}.h5 --rows rows.txt --cols cols.txt
lbm-bench benchmark . --algorithm cem --out results/
```

The score is the conditional risk of your labels (mean l_item over the Gibbs label
sets under one optimal label matching) and its excess over the table's Bayes reference.

## Verify and rebuild

```
lbm-bench verify .
lbm-bench build {spec_name} --out DIR --jobs 2
```

The rebuilt files are byte-identical (same lbm-bench, numpy, h5py and HDF5 versions).

## Cite

{release.get('citation') or 'Lomet, A., Govaert, G. and Grandvalet, Y. Design of Artificial Data Tables for Co-Clustering Analysis. And lbm-bench.'}
"""


def write_archive(out_dir: str | os.PathLike[str]) -> Path:
    """Write ``<out_dir>.tar.gz`` deterministically (sorted entries, no times or owners)."""
    import gzip

    out = Path(out_dir)
    target = out.with_name(out.name + ".tar.gz")
    files = sorted(p for p in out.rglob("*") if p.is_file() and not p.name.startswith("."))
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path in files:
            info = tarfile.TarInfo(f"{out.name}/{path.relative_to(out).as_posix()}")
            info.size = path.stat().st_size
            info.mtime = 0
            info.mode = 0o644
            with open(path, "rb") as handle:
                tar.addfile(info, handle)
    tmp = target.with_name(f".{target.name}.tmp-{os.getpid()}")
    try:
        with open(tmp, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as gz:
            gz.write(buffer.getvalue())
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    return target


# -- verify and load ---------------------------------------------------------------


def _read_manifest(out: Path) -> dict:
    path = out / "manifest.json"
    if not path.is_file():
        raise ValueError(f"{out} is not a release: no manifest.json")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path} is not valid JSON: {exc}") from None


def verify_release(out_dir: str | os.PathLike[str]) -> list[str]:
    """Re-check every checksum and every file against the format and the manifest.

    Returns
    -------
    list of str
        Problems found (empty when the release is intact).
    """
    from lbm_bench.storage import check_file, read_info

    out = Path(out_dir)
    manifest = _read_manifest(out)
    problems: list[str] = []
    sums_path = out / "SHA256SUMS"
    listed: dict[str, str] = {}
    if not sums_path.is_file():
        problems.append("SHA256SUMS is missing")
    else:
        for line in sums_path.read_text(encoding="utf-8").splitlines():
            digest, _, name = line.partition("  ")
            listed[name] = digest
    for name, digest in sorted(listed.items()):
        path = out / name
        if not path.is_file():
            problems.append(f"{name}: missing")
        elif _sha256(path) != digest:
            problems.append(f"{name}: SHA-256 mismatch")
    for entry in manifest.get("tables", []):
        path = out / entry["file"]
        if not path.is_file():
            if entry["file"] not in listed:
                problems.append(f"{entry['file']}: missing")
            continue
        if entry["file"] not in listed:
            problems.append(f"{entry['file']}: not listed in SHA256SUMS")
        if path.stat().st_size != entry["size"]:
            problems.append(f"{entry['file']}: size {path.stat().st_size} differs from the manifest's {entry['size']}")
        if _sha256(path) != entry["sha256"]:
            problems.append(f"{entry['file']}: SHA-256 differs from the manifest")
        file_problems = check_file(path)
        problems += [f"{entry['file']}: {p}" for p in file_problems]
        if not file_problems:
            info = read_info(path)
            for key, expected in (("kind", entry["kind"]), ("seed", entry["seed"])):
                if info.get(key) != expected:
                    problems.append(f"{entry['file']}: {key} {info.get(key)!r} differs from the manifest's {expected!r}")
            if [int(info["n_rows"]), int(info["n_cols"])] != entry["shape"]:
                problems.append(f"{entry['file']}: shape differs from the manifest")
            if abs(float(info["risk"]) - entry["risk"]) > 1e-12:
                problems.append(f"{entry['file']}: risk differs from the manifest")
    known = {e["file"] for e in manifest.get("tables", [])}
    for path in sorted((out / "tables").glob("*.h5")):
        rel = path.relative_to(out).as_posix()
        if rel not in known:
            problems.append(f"{rel}: not in the manifest")
    return problems


def load_release(out_dir: str | os.PathLike[str]) -> dict:
    """The manifest of a release (release info, spec and one entry per table).

    Examples
    --------
    >>> release = load_release("mini-release")  # doctest: +SKIP
    >>> [t["id"] for t in release["tables"]][:1]  # doctest: +SKIP
    ['bernoulli-60x40-2x2-r0.1-01']
    """
    return _read_manifest(Path(out_dir))


def load_release_table(out_dir: str | os.PathLike[str], table_id: str):
    """Load one table of a release by id (see :func:`lbm_bench.io.load_table`)."""
    from lbm_bench.storage import load_table

    out = Path(out_dir)
    manifest = _read_manifest(out)
    for entry in manifest["tables"]:
        if entry["id"] == table_id:
            return load_table(out / entry["file"])
    raise ValueError(f"release {out} has no table {table_id!r}")
