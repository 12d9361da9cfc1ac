"""Verification of a release: checksums, file format and manifest agree, and each
table's certified risks (the MAP's and the floor) are the ones its label sets give."""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Any

from lbm_bench._validation import check_count, describe_value
from lbm_bench.release._files import sha256_file
from lbm_bench.release.card import THUMBNAILS, card_problems
from lbm_bench.release.croissant import croissant_problems
from lbm_bench.release.manifest import read_manifest, release_format_version
from lbm_bench.release.spec import SPEC_FILE, read_spec
from lbm_bench.tasks.heap import release_free_memory
from lbm_bench.tasks.large import is_large
from lbm_bench.tasks.pool import TaskPool
from lbm_bench.tasks.threads import single_blas_thread

#: Files every release of layout 1.1 lists in SHA256SUMS, besides its tables.
RELEASE_FILES = ("README.md", "croissant.json", "index.html", "manifest.json", "tables.csv")
#: Files a release of layout 1.2 adds: the spec it was built from.
RELEASE_FILES_1_2 = (SPEC_FILE,)

__all__ = ["compare_releases", "rederived_risk_problems", "spec_problems", "verify_release"]

#: Fields of a risk estimate that verification re-derives, with the file's attribute names.
_MAP_FIELDS = {"risk": "@risk", "mcse": "@risk_mcse", "rhat": "@risk_rhat", "row_loss": "@row_loss",
               "col_loss": "@col_loss"}
_FLOOR_FIELDS = {"risk": "@bayes_risk", "mcse": "@bayes_risk_mcse", "rhat": "@bayes_risk_rhat",
                 "row_loss": "@bayes_row_loss", "col_loss": "@bayes_col_loss"}
#: Manifest keys of the floor, with the ``read_info`` keys they copy.
_FLOOR_MANIFEST_KEYS = ("criterion", "bayes_risk", "bayes_risk_mcse", "bayes_risk_rhat")


def _same(a: float, b: float) -> bool:
    """Equal floats up to rounding (1e-12 relative), NaN equal to NaN."""
    a, b = float(a), float(b)
    return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-15)


def _estimate_problems(stored: Any, derived: Any, fields: dict[str, str], what: str) -> list[str]:
    return [
        f"{attr} {describe_value(getattr(stored, name))} differs from {what} re-derived from the "
        f"label sets ({describe_value(getattr(derived, name))})"
        for name, attr in fields.items() if not _same(getattr(stored, name), getattr(derived, name))
    ]


def rederived_risk_problems(table: Any) -> list[str]:
    """Re-derive a table's certified risks from its own label sets and compare.

    The MAP's risk (``@risk``, MCSE, R-hat, row and column losses) is, by
    definition (docs/format.md), the mean loss of the stored MAP labels over the
    stored Gibbs sets. The floor (format 1.1) is re-derived the way
    :func:`lbm_bench.generate_table` computes it:
    :func:`lbm_bench.floor_certificate` on the stored sets with the MAP labels as
    the X-only start; its labels must be ``bayes/rows`` and ``bayes/cols`` and its
    cross-fitted risk ``@bayes_risk`` and companions. A value edited in the file
    (even with the manifest and checksums rewritten to match) is reported.

    Parameters
    ----------
    table : Table
        A table as loaded by :func:`lbm_bench.load_table`.

    Returns
    -------
    list of str
        One line per value that differs (empty when all agree).
    """
    import numpy as np

    from lbm_bench.inference.floor import floor_certificate

    samples = table.gibbs
    problems = _estimate_problems(table.risk, samples.risk(table.map_rows, table.map_cols),
                                  _MAP_FIELDS, "the MAP labels' risk")
    if table.bayes_risk is None:  # format 1.0: no floor
        return problems
    g, m = table.model.block_shape
    floor = floor_certificate(samples, starts=[(table.map_rows, table.map_cols)], n_row_clusters=g,
                              n_col_clusters=m)
    for side, stored, derived in (("rows", table.bayes_rows, floor.rows), ("cols", table.bayes_cols,
                                                                           floor.cols)):
        if not np.array_equal(np.asarray(stored), derived):
            problems.append(f"bayes/{side} differs from the Bayes labels re-derived from the label "
                            "sets")
    return problems + _estimate_problems(table.bayes_risk, floor.risk, _FLOOR_FIELDS, "the floor")


def _floor_manifest_problems(info: dict, entry: dict) -> list[str]:
    """The manifest's floor and criterion against the file's (a 1.0 file has neither)."""
    if "bayes_risk" not in info:
        return [] if entry.get("criterion", "map") == "map" and "bayes_risk" not in entry else [
            "the manifest records a floor the file does not hold"]
    problems = []
    for key in _FLOOR_MANIFEST_KEYS:
        if key not in entry:
            problems.append(f"{key} missing from the manifest (the file holds the floor)")
        elif key == "criterion":
            if str(info[key]) != entry[key]:
                problems.append(f"criterion {describe_value(info[key])} differs from the "
                                "manifest's "
                                f"{describe_value(entry[key])}")
        elif not _same(info[key], entry[key]):
            label = "floor (bayes_risk)" if key == "bayes_risk" else key
            problems.append(f"{label} differs from the manifest")
    return problems


#: Manifest keys of a table with missing entries (format 1.3), the ``read_info`` keys they copy.
_MISSING_MANIFEST_KEYS = ("missing_rate", "missing_mechanism", "n_missing")


def _missing_manifest_problems(info: dict, entry: dict) -> list[str]:
    """The manifest's missing entries against the file's (the file's mask itself is checked
    by :func:`~lbm_bench.storage.check_file`: its count, its zeros under the data)."""
    in_file = "missing_mechanism" in info
    if not in_file:
        return ["the manifest records missing entries the file does not have"
                ] if "missing_rate" in entry else []
    problems = []
    for key in _MISSING_MANIFEST_KEYS:
        if key not in entry:
            problems.append(f"{key} missing from the manifest (the file has missing entries)")
        elif key == "missing_rate" and not _same(info[key], entry[key]):
            problems.append("missing_rate differs from the manifest")
        elif key != "missing_rate" and info[key] != entry[key]:
            problems.append(f"{key} {info[key]!r} differs from the manifest's {entry[key]!r}")
    return problems


def verify_release(out_dir: str | os.PathLike[str], *, jobs: int = 1,
                   pool: TaskPool | None = None) -> list[str]:
    """Re-check every checksum and every file against the format and the manifest.

    Every table must load (its checks include the mask of missing entries: its count,
    and zeros under it) and agree with its manifest entry (kind, seed, shape, the
    MAP's risk, the floor and criterion, and the missing entries' rate, mechanism and
    number), and its certified risks must be the
    ones its own label sets give (:func:`rederived_risk_problems`: the MAP's risk and
    the floor are re-derived from the stored Gibbs sets; this is most of the time
    verification takes). Besides the tables: every file listed in ``SHA256SUMS``
    must match its digest;
    a release of layout 1.1 must list ``README.md``, ``manifest.json``,
    ``croissant.json``, ``tables.csv`` and ``index.html``, and every thumbnail, and
    one of layout 1.2 ``spec.toml`` too, which must describe the manifest's tables
    (:func:`spec_problems`);
    ``tables.csv`` must be the manifest's, ``croissant.json``'s FileObjects must
    point to files of the release with their digests, and ``index.html`` must link
    only to files of the release.

    Parameters
    ----------
    out_dir : path
        The release directory.
    jobs : int, default=1
        Processes (loky) checking the tables, each table in one of them; a large table
        (:func:`~lbm_bench.tasks.large.is_large`) is checked by the calling process, one
        at a time, so that two large tables' label sets are never in memory at once. The
        problems are the same, in the same order, whatever ``jobs``.
    pool : TaskPool, optional
        A pool already running (:class:`~lbm_bench.tasks.pool.TaskPool`, on any backend:
        the build's, loky or Dask) to check the tables in instead of ``jobs`` new
        processes; ``jobs`` is then ignored.

    Returns
    -------
    list of str
        Problems found (empty when the release is intact), the tables' in the manifest's order.

    Raises
    ------
    ValueError
        When ``out_dir`` holds no readable ``manifest.json``, or ``jobs`` is below 1.
    TypeError
        When ``jobs`` is not an integer.

    Examples
    --------
    >>> import os, tempfile
    >>> from lbm_bench.release import build_release, parse_spec
    >>> grid = dict(kinds=["bernoulli"], shapes=["30x20"], clusters=["2x2"], risks=[0.1])
    >>> spec = parse_spec({"release": {"name": "tiny", "version": "0.1", "seed": 1},
    ...                    "defaults": {"tolerance": 0.03, "n_samples": 200, "screen_samples": 0,
    ...                                 "n_calibration_tables": 10}, "grid": [grid]})
    >>> tiny = os.path.join(tempfile.mkdtemp(), "tiny")
    >>> build_release(spec, tiny).ok
    True
    >>> verify_release(tiny)   # no problem found
    []
    >>> with open(os.path.join(tiny, "README.md"), "a") as card:
    ...     _ = card.write("edited")
    >>> verify_release(tiny)
    ['README.md: SHA-256 mismatch']
    """
    jobs = check_count("jobs", jobs)
    out = Path(out_dir)
    if pool is not None:
        return _verify(out, pool.map)
    if jobs == 1:
        return _verify(out, _serial_map)
    return _verify(out, _pool_map(jobs))


#: ``map_tables(function, arguments)``: ``[function(*a) for a in arguments]``, in that order,
#: however the calls are spread.
_TableMap = Callable[[Callable[..., Any], Sequence[tuple]], list]


def _serial_map(function: Callable[..., Any], arguments: Sequence[tuple]) -> list:
    return [function(*a) for a in arguments]


def _pool_map(jobs: int) -> _TableMap:
    """A map over a pool of local workers, no more than the tables (and the cores)."""

    def map_tables(function: Callable[..., Any], arguments: Sequence[tuple]) -> list:
        with TaskPool(jobs, backend="loky", most_tasks=len(arguments)) as pool:
            return pool.map(function, arguments)

    return map_tables


def _is_large(entry: dict) -> bool:
    """A table whose label sets take the memory of a large table (its manifest shape)."""
    try:
        n_rows, n_cols = (int(n) for n in entry["shape"])
    except (TypeError, ValueError):
        return False
    return is_large(n_rows, n_cols)


def _size(entry: dict) -> int:
    """The manifest's size of a table file (0 when it is not an integer: the check reports it)."""
    size = entry.get("size")
    return size if isinstance(size, int) else 0


def _verify(out: Path, map_tables: _TableMap) -> list[str]:
    """:func:`verify_release`, the tables' checks (:func:`_table_problems`) run by ``map_tables``
    (the large tables' by this process, one at a time)."""
    manifest = read_manifest(out)
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
        elif sha256_file(path) != digest:
            problems.append(f"{name}: SHA-256 mismatch")
    entries = manifest.get("tables", [])
    names = frozenset(listed)
    large = [i for i, entry in enumerate(entries) if _is_large(entry)]
    small = [i for i, entry in enumerate(entries) if not _is_large(entry)]
    # the pool's tasks longest first (file size), so that none starts last and leaves a worker idle
    small.sort(key=lambda i: -_size(entries[i]))
    per_table: dict[int, list[str]] = dict(zip(small, map_tables(
        _table_problems, [(out, entries[i], names) for i in small]), strict=True))
    per_table.update({i: _table_problems(out, entries[i], names) for i in large})
    for i in range(len(entries)):
        problems += per_table[i]
    known = {e["file"] for e in entries}
    for path in sorted((out / "tables").glob("*.h5")):
        rel = path.relative_to(out).as_posix()
        if rel not in known:
            problems.append(f"{rel}: not in the manifest")
    if release_format_version(manifest) >= (1, 1) and sums_path.is_file():
        required = RELEASE_FILES + (RELEASE_FILES_1_2
                                    if release_format_version(manifest) >= (1, 2) else ())
        problems += [f"{name}: not listed in SHA256SUMS" for name in required if name not in listed]
    problems += spec_problems(out, manifest)
    for path in sorted((out / THUMBNAILS).glob("*")):
        rel = path.relative_to(out).as_posix()
        if rel not in listed:
            problems.append(f"{rel}: not listed in SHA256SUMS")
    problems += croissant_problems(out, manifest)
    problems += card_problems(out)
    return problems


def _table_problems(out: Path, entry: dict, listed: Collection[str]) -> list[str]:
    """The problems of one table of a release: its file against ``SHA256SUMS``'s names
    (``listed``), its manifest entry, the format, and its risks re-derived from its label
    sets; each line starts with the file's name. The file is read once (its checks, its
    table and its root attributes), on one BLAS thread (as the build computes), and the
    memory its label sets took is given back afterwards (the call may be a worker's task)."""
    with single_blas_thread():
        problems = _table_problems_unpinned(out, entry, listed)
    release_free_memory(collect=False)
    return problems


def _table_problems_unpinned(out: Path, entry: dict, listed: Collection[str]) -> list[str]:
    from lbm_bench.storage import read_info
    from lbm_bench.storage.reader import inspect_file

    name = entry["file"]
    path = out / name
    if not path.is_file():
        return [] if name in listed else [f"{name}: missing"]
    problems = [] if name in listed else [f"{name}: not listed in SHA256SUMS"]
    size = path.stat().st_size
    if size != entry["size"]:
        problems.append(f"{name}: size {size} differs from the manifest's {entry['size']}")
    if sha256_file(path) != entry["sha256"]:
        problems.append(f"{name}: SHA-256 differs from the manifest")
    table, file_problems, info = inspect_file(path)
    problems += [f"{name}: {p}" for p in file_problems]
    if file_problems or table is None:
        return problems
    if info is None:  # the attributes could not be read with the table: read_info says why
        info = read_info(path)
    for key, expected in (("kind", entry["kind"]), ("seed", entry["seed"])):
        if info.get(key) != expected:
            problems.append(
                f"{name}: {key} {describe_value(info.get(key))} differs from the manifest's "
                f"{describe_value(expected)}"
            )
    if [int(info["n_rows"]), int(info["n_cols"])] != entry["shape"]:
        problems.append(f"{name}: shape differs from the manifest")
    if abs(float(info["risk"]) - entry["risk"]) > 1e-12:
        problems.append(f"{name}: risk differs from the manifest")
    problems += [f"{name}: {p}" for p in _floor_manifest_problems(info, entry)]
    problems += [f"{name}: {p}" for p in _missing_manifest_problems(info, entry)]
    problems += [f"{name}: {p}" for p in rederived_risk_problems(table)]
    return problems


def spec_problems(out: Path, manifest: dict) -> list[str]:
    """What is wrong with a release's ``spec.toml`` (layout 1.2): missing, unreadable,
    or not the spec of the manifest (another parsed spec, or other tables or seeds),
    in which case ``lbm-bench build spec.toml`` would not rebuild this release.

    Returns
    -------
    list of str
        One line per problem (empty for a release of layout 1.1 or older without one).
    """
    path = out / SPEC_FILE
    if not path.is_file():
        return [f"{SPEC_FILE}: missing"] if release_format_version(manifest) >= (1, 2) else []
    try:
        spec = read_spec(path)
    except ValueError as exc:
        return [f"{SPEC_FILE}: {exc}"]
    if spec.source != manifest.get("spec"):
        return [f"{SPEC_FILE}: differs from the spec the manifest records"]
    built = [(e["id"], e["seed"], e["calibration_seed"]) for e in manifest.get("tables", [])]
    if [(t.id, t.seed, t.calibration_seed) for t in spec.tables] != built:
        return [f"{SPEC_FILE}: its tables or seeds differ from the manifest's"]
    return []


def _checksums(folder: Path) -> dict[str, str]:
    path = folder / "SHA256SUMS"
    if not path.is_file():
        raise ValueError(f"{folder} is not a release: no SHA256SUMS")
    sums = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        digest, _, name = line.partition("  ")
        sums[name] = digest
    return sums


def _table_difference(new: Path, old: Path) -> str:
    """For two table files whose bytes differ, ": the same table up to rounding (...)" or
    ": another table: ... differ" (:func:`~lbm_bench.storage.compare.compare_table_files`);
    empty for other files, or when either cannot be read."""
    if new.suffix != ".h5" or not (new.is_file() and old.is_file()):
        return ""
    from lbm_bench.storage.compare import compare_table_files

    try:
        return f": {compare_table_files(new, old).describe()}"
    except (OSError, ValueError, TypeError):
        return ""


def compare_releases(new_dir: str | os.PathLike[str], old_dir: str | os.PathLike[str]) -> list[str]:
    """Compare two releases file by file through their ``SHA256SUMS`` (e.g. a rebuild
    from a release's ``spec.toml`` against the release).

    Returns
    -------
    list of str
        One line per file listed by only one of them or with another SHA-256 (empty when
        both list the same files with the same digests); a table file whose bytes differ
        is compared item by item and said to be "the same table up to rounding" (every
        integer value identical, every float within
        :data:`~lbm_bench.storage.compare.ROUNDING`, relative: what a CPU whose C library
        rounds differently gives, docs/releases.md) or "another table" (naming what
        differs); when some differ, a last line gives the versions of ``built_with`` (and
        lbm-bench's) that differ between the two manifests, the usual cause.

    Raises
    ------
    ValueError
        When either folder has no ``SHA256SUMS``.
    """
    new, old = Path(new_dir), Path(old_dir)
    a, b = _checksums(new), _checksums(old)
    problems = [f"{name}: only in {new}" for name in sorted(set(a) - set(b))]
    problems += [f"{name}: only in {old}" for name in sorted(set(b) - set(a))]
    problems += [f"{name}: SHA-256 differs from {old}'s{_table_difference(new / name, old / name)}"
                 for name in sorted(set(a) & set(b)) if a[name] != b[name]]
    if problems:
        versions = []
        try:
            ma, mb = read_manifest(new), read_manifest(old)
        except ValueError:
            return problems
        pairs = {"lbm-bench": (ma.get("lbm_bench_version"), mb.get("lbm_bench_version"))}
        for key in sorted(set(ma.get("built_with", {})) | set(mb.get("built_with", {}))):
            pairs[key] = (ma.get("built_with", {}).get(key,
                                                       "unknown"), mb.get("built_with",
                                                                          {}).get(key, "unknown"))
        versions = [f"{key} {x} vs {y}" for key, (x, y) in pairs.items() if x != y]
        if versions:
            problems.append(f"built with other versions: {', '.join(versions)}")
    return problems
