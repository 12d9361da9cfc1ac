"""The unknown-clusters track of ``lbm-bench benchmark``: algorithms that choose the numbers of
clusters.

An algorithm of this track is called as ``fit(X, max_row_clusters, max_col_clusters, *,
rng) -> (rows, cols)`` on every table of a release and chooses the numbers of clusters
itself, up to ``max_clusters``. Its labels are scored like any other
(:func:`~lbm_bench.scoring.evaluate`: the conditional risk under the best rectangular
matching, unmatched clusters counting as errors, against the table's floor, which stays a
lower bound whatever the numbers of clusters: docs/benchmark.md), and the row says which
counts it found: the table's (**found**), **too few** (fewer on one side, no more on the
other), **too many**, or **other** (fewer on one side, more on the other).

Each table's counts are tested for **identifiability**
(:func:`lbm_bench.scoring.identifiability.identifiability`, cached in
``OUT/identifiability/<table id>.json`` so that a second run does not pay for it again): a
miss on a table whose counts are not identifiable is the criterion's, on an identifiable
table the search's. Beside each algorithm, the summary shows the same method told the
counts (its attribute ``given_counts``: ``cem`` for ``cem-icl``), run as on the
known-clusters track (same seeds, same run files).

An algorithm that breaks the track's contract (labels of the wrong length, or more
clusters than ``max_clusters``) stops the run: one line, and nothing this run wrote is
left behind (the run files are written by the main process only).

The track is :data:`UNKNOWN_CLUSTERS`, registered in :data:`lbm_bench.scoring.benchmark.TRACKS`;
its one option, ``max_clusters`` (``--max-clusters GxM``), is declared by
:class:`UnknownClustersOptions`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from lbm_bench._records import Record, setting
from lbm_bench.algorithms.catalog import CHOSEN_COUNTS
from lbm_bench.algorithms.selection import check_max_clusters
from lbm_bench.scoring.harness import (
    RESULT_COLUMNS,
    ContractError,
    RunFailed,
    Track,
    Writes,
    check_timeout,
    entry_row,
    finish_track,
    fit_labels,
    mean_of,
    report_values,
    run_path,
    run_track_tasks,
)
from lbm_bench.scoring.known_clusters import known_row

__all__ = [
    "UNKNOWN_CLUSTERS", "UNKNOWN_CLUSTERS_COLUMNS", "UnknownClustersOptions",
    "check_track_clusters", "counts_found", "parse_clusters", "run_unknown_clusters",
    "summarise_unknown_clusters"
]

#: Columns of the unknown-clusters track's results.csv: the known-clusters track's (the table's
#: counts are ``n_row_clusters``, ``n_col_clusters``), the counts searched and found, the
#: table's identifiability and the kind of miss, and the same method told the counts.
UNKNOWN_CLUSTERS_COLUMNS = [
    *RESULT_COLUMNS[:7], "max_row_clusters", "max_col_clusters", "found_row_clusters",
    "found_col_clusters", "counts", "identifiable", "miss", *RESULT_COLUMNS[7:-3],
    "given_algorithm", "given_excess_risk", "given_cari_mean", "given_error", *RESULT_COLUMNS[-3:],
]


#: What the counts found can be, against the table's.
_COUNTS = ("found", "too few", "too many", "other")


def counts_found(found: Sequence[int], true: Sequence[int]) -> str:
    """``"found"``, ``"too few"``, ``"too many"`` or ``"other"`` (fewer on one side, more on the
    other).

    Examples
    --------
    >>> counts_found([3, 2], [3, 2]), counts_found([2, 2], [3, 2]), counts_found([4, 2], [3, 2])
    ('found', 'too few', 'too many')
    >>> counts_found([2, 3], [3, 2])
    'other'
    """
    fewer = any(f < t for f, t in zip(found, true, strict=True))
    more = any(f > t for f, t in zip(found, true, strict=True))
    return "found" if not (
        fewer or more) else "other" if fewer and more else "too few" if fewer else "too many"


def check_track_clusters(max_clusters: Any, tables: Sequence[dict]) -> tuple[int, int]:
    """``(G, M)``, checked against every table of the release: at most its numbers of rows and
    columns, at least its numbers of clusters (a search could never find them otherwise)."""
    G, M = check_max_clusters("max_clusters", max_clusters)
    for entry in tables:
        (n, d), (g, m) = entry["shape"], entry["clusters"]
        if G > n or M > d:
            raise ValueError(f"max_clusters {G}x{M} exceeds the {n} rows and {d} columns of table "
                             f"{entry['id']}")
        if g > G or m > M:
            raise ValueError(f"max_clusters {G}x{M} is below the {g}x{m} clusters of table "
                             f"{entry['id']}: "
                             "a search could never find them")
    return G, M


def _check_labels(name: str, labels: Any, length: int, most: int, side: str,
                  table_id: str) -> np.ndarray:
    """Labels as the track's contract says (ContractError otherwise), compacted to ``0..k-1``.

    The values get the check every scored label gets (:func:`lbm_bench._validation.check_labels`,
    as in :func:`~lbm_bench.scoring.evaluate` and the known-clusters track): integers (integral
    floats accepted), non-negative, finite; a label of -1 or inf is not a cluster.
    """
    from lbm_bench._validation import check_labels
    from lbm_bench.metrics.contingency_tables import label_codes

    try:
        shape = np.shape(labels)
    except ValueError:  # a ragged sequence
        shape = ("ragged",)
    if len(shape) != 1 or shape[0] != length:
        raise ContractError(
            f"algorithm {name} returned {side} labels of shape {shape} for table {table_id}, "
            f"which has {length} {side}s: an algorithm returns one label per {side}")
    try:
        array = check_labels(f"{side} labels", labels, length=length)
    except (TypeError, ValueError) as exc:
        raise ContractError(f"algorithm {name} returned {side} labels for table {table_id} that "
                            "are not "
                            f"cluster labels: {exc}") from None
    codes, found = label_codes(array)
    if found.size > most:
        raise ContractError(f"algorithm {name} returned {found.size} {side} clusters for table "
                            f"{table_id}, "
                            f"more than the {most} allowed (max_clusters)")
    return codes


def _selection_row(name: str, entry: dict, release_dir: str, seed: int, bounds: tuple[int, int],
                   timeout: float | None = None) -> dict:
    """Run one algorithm of the track on one table and score it (errors in the row's ``error``;
    a contract violation in ``contract``)."""
    from lbm_bench.scoring.evaluate import evaluate
    from lbm_bench.storage import load_table

    row = {
        **entry_row(name, entry, seed), "max_row_clusters": bounds[0], "max_col_clusters": bounds[1]
    }
    path = Path(release_dir) / entry["file"]
    try:
        table = load_table(path)
        rows, cols, row["seconds"] = fit_labels(name, table, bounds, seed,
                                                track=CHOSEN_COUNTS.track, path=path,
                                                timeout=timeout)
    except RunFailed as exc:
        row["error"] = str(exc)
        return row
    except Exception as exc:  # reported in the results, the others go on
        row["error"] = f"{type(exc).__name__}: {exc}"
        return row
    try:
        rows = _check_labels(name, rows, table.shape[0], bounds[0], "row", entry["id"])
        cols = _check_labels(name, cols, table.shape[1], bounds[1], "column", entry["id"])
    except ContractError as exc:
        return {**row, "contract": str(exc)}
    report = evaluate(table, rows, cols)
    row.update(report_values(report))
    found = report.predicted_clusters
    row.update(found_row_clusters=found[0], found_col_clusters=found[1],
               counts=counts_found(found, entry["clusters"]))
    return row


def _identifiability_key(entry: dict, bounds: tuple[int, int]) -> dict:
    from lbm_bench.scoring.identifiability import REFERENCE_SEARCH

    return {"table": entry["id"], "sha256": entry.get("sha256", ""), "max_clusters": list(bounds),
            "reference": REFERENCE_SEARCH}


def _identifiability_record(entry: dict, release_dir: str, bounds: tuple[int, int]) -> dict:
    from lbm_bench.scoring.identifiability import identifiability
    from lbm_bench.storage import load_table

    result = identifiability(load_table(Path(release_dir) / entry["file"]), bounds,
                             name=entry["id"])
    return {"key": _identifiability_key(entry, bounds), **result.to_dict()}


def _cached(path: Path, key: dict | None = None) -> dict | None:
    if not path.is_file():
        return None
    record = json.loads(path.read_text(encoding="utf-8"))
    return record if key is None or record.get("key") == key else None


def _task(kind: str, name: str, entry: dict, release_dir: str, seed: int, bounds: tuple[int, int],
          timeout: float | None) -> tuple:
    if kind == "selection":
        return kind, name, entry["id"], _selection_row(name, entry, release_dir, seed, bounds,
                                                       timeout)
    if kind == "given":
        return kind, name, entry["id"], known_row(name, entry, release_dir, seed, timeout)
    return kind, name, entry["id"], _identifiability_record(entry, release_dir, bounds)


def run_unknown_clusters(
    release_dir: str | os.PathLike[str],
    algorithms: Sequence[str],
    out_dir: str | os.PathLike[str],
    *,
    max_clusters: tuple[int, int] = (8, 8),
    n_jobs: int = 1,
    seed: int = 0,
    progress: bool = False,
    timeout: float | None = None,
) -> list[dict]:
    """Run algorithms that choose the numbers of clusters on every table of a release.

    Parameters
    ----------
    release_dir : path
        A built release.
    algorithms : sequence of str
        Names of :data:`lbm_bench.algorithms.SELECTION_ALGORITHMS` (``cem-icl``, ``vem-icl``,
        ``sparsebm-selection``) or ``"module:function"``: ``fit(X, max_row_clusters,
        max_col_clusters, *, rng) -> (rows, cols)``.
    out_dir : path
        Where results go: ``results.csv``, ``summary.md``, ``excess_risk.png``, ``runs/``
        and ``identifiability/``.
    max_clusters : (int, int), default=(8, 8)
        The largest numbers of row and column clusters the algorithms may choose.
    n_jobs : int, default=1
        Parallel workers (:mod:`lbm_bench.tasks`: loky processes), over tables.
    seed : int, default=0
        Master seed of the algorithms' seeds (the same as on the known-clusters track).
    progress : bool, default=False
        Show a tqdm bar.
    timeout : float, optional
        Seconds each fit may take (see
        :func:`~lbm_bench.scoring.known_clusters.run_known_clusters`).

    Returns
    -------
    list of dict
        The rows of ``results.csv`` (:data:`UNKNOWN_CLUSTERS_COLUMNS`).

    Raises
    ------
    ValueError
        Before anything is written, for an unknown algorithm or ``max_clusters`` that do
        not fit a table; during the run, when an algorithm breaks the track's contract
        (then what the run wrote is removed).
    """
    from lbm_bench.algorithms import resolve_algorithm
    from lbm_bench.release import derive_seed, load_release

    if not algorithms:
        raise ValueError("at least one algorithm is required")
    resolved = [resolve_algorithm(a, track=CHOSEN_COUNTS.track) for a in algorithms]
    givens = {name: getattr(fit, "given_counts", None) for name, fit in resolved}
    for given in {g for g in givens.values() if g}:
        resolve_algorithm(given)
    manifest = load_release(release_dir)
    bounds = check_track_clusters(max_clusters, manifest["tables"])
    timeout = check_timeout(timeout)
    out, release_dir = Path(out_dir), str(release_dir)
    writes = Writes()
    writes.folder(out)
    done: dict[tuple, dict] = {}
    tasks = []
    for entry in manifest["tables"]:
        path = out / "identifiability" / f"{entry['id']}.json"
        record = _cached(path, _identifiability_key(entry, bounds))
        if record is None:
            tasks.append(("identifiability", "", entry, 0))
        else:
            done["identifiability", "", entry["id"]] = record
        for kind, name in [("selection", n)
                           for n, _ in resolved] + [("given", g)
                                                    for g in set(givens.values()) if g]:
            if ("given", name, entry["id"]) in done:
                continue
            cached = _cached(run_path(out, name, entry["id"]))
            if cached is not None and (kind == "given" or
                                       cached.get("max_row_clusters") == bounds[0] and
                                       cached.get("max_col_clusters") == bounds[1]):
                done[kind, name, entry["id"]] = cached
            else:
                tasks.append((kind, name, entry, derive_seed(seed, f"{name}:{entry['id']}")))
    order = {"selection": 0, "given": 1, "identifiability": 2}  # a broken contract shows first
    tasks = sorted(dict.fromkeys((k, n, e["id"], s) for k, n, e, s in tasks),
                   key=lambda task: order[task[0]])
    entries = {e["id"]: e for e in manifest["tables"]}
    calls = [(k, n, entries[i], release_dir, s, bounds, timeout) for k, n, i, s in tasks]

    def keep(output: tuple) -> tuple[Path, dict]:
        kind, name, table_id, record = output
        if "contract" in record:
            raise ContractError(record["contract"])
        done[kind, name, table_id] = record
        return (out / "identifiability" / f"{table_id}.json" if kind == "identifiability"
                else run_path(out, name, table_id)), record

    run_track_tasks(_task, calls, writes, n_jobs=n_jobs, progress=progress, keep=keep)
    rows = [
        _with_context(done["selection", name, entry["id"]], done["identifiability", "",
                                                                 entry["id"]], givens[name] and
                      done["given", givens[name], entry["id"]], givens[name])
        for name, _ in resolved for entry in manifest["tables"]
    ]
    return finish_track(out, rows, lambda rows: list(UNKNOWN_CLUSTERS_COLUMNS),
                        summarise_unknown_clusters)


def _with_context(row: dict, identifiable: dict, given: dict | None,
                  given_name: str | None) -> dict:
    """A selection row with its table's identifiability, the kind of miss and the given-counts
    run."""
    row = dict(row)
    row["identifiable"] = bool(identifiable["identifiable"])
    if not row.get("error") and row.get("counts") != "found":
        row["miss"] = "search" if row["identifiable"] else "criterion"
    else:
        row["miss"] = ""
    row["given_algorithm"] = given_name or ""
    if given:
        row.update(given_excess_risk=given.get("excess_risk", ""),
                   given_cari_mean=given.get("cari_mean", ""), given_error=given.get("error", ""))
    return row


def summarise_unknown_clusters(rows: list[dict]) -> str:
    """Markdown summary of the unknown-clusters track, by algorithm, kind and risk level."""
    failed = [r for r in rows if r.get("error")]
    bounds = {(r["max_row_clusters"], r["max_col_clusters"]) for r in rows}
    limit = ", ".join(f"{g}x{m}" for g, m in sorted(bounds))
    parts = [
        "# Benchmark summary: unknown numbers of clusters", "",
        f"{len(rows)} runs, {len(failed)} failed. Every algorithm chose the numbers of clusters of "
        f"every table, up to {limit}. Found: the table's counts; too few: fewer clusters on a side "
        "and no more on the other; too many: the reverse; other: fewer on one side and more on "
        "the other. A table's counts are identifiable when its Bayes labels at the true counts "
        "score a higher ICL than every labelling a reference search finds at other counts: a miss "
        "there is the search's, a miss elsewhere the criterion's. Excess risk = conditional risk "
        "minus the table's floor, a lower bound for labels with any numbers of clusters. Counts "
        "given: the "
        "same method told the table's numbers of clusters.", "",
        "## By kind and target risk", "",
        "| algorithm | kind | target risk | tables | found | too few | too many | other | misses: "
        "criterion "
        "| misses: search | mean CARI | mean excess risk | counts given: mean CARI | counts given: "
        "mean excess risk |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        if not r.get("error"):
            groups.setdefault((r["algorithm"], r["kind"], float(r["target_risk"])), []).append(r)
    for (alg, kind, risk), items in sorted(groups.items()):
        share = {c: sum(i["counts"] == c for i in items) / len(items) for c in _COUNTS}
        misses = {m: sum(i["miss"] == m for i in items) for m in ("criterion", "search")}
        given = ("| " + f"{mean_of(items, 'given_cari_mean'):.4f} | "
                        f"{mean_of(items, 'given_excess_risk'):+.4f} |"
                 if any(i.get("given_algorithm") for i in items) else "| | |")
        parts.append(
            f"| {alg} | {kind} | {risk:g} | {len(items)} | {share['found']:.0%} | "
            f"{share['too few']:.0%} | {share['too many']:.0%} | {share['other']:.0%} | "
            f"{misses['criterion']} | {misses['search']} | {mean_of(items, 'cari_mean'):.4f} | "
            f"{mean_of(items, 'excess_risk'):+.4f} {given}"
        )
    tables: dict[tuple, dict[str, bool]] = {}
    for r in rows:
        tables.setdefault((r["kind"], float(r["target_risk"])),
                          {})[r["table"]] = bool(r["identifiable"])
    parts += ["", "## Identifiable counts", "", "| kind | target risk | tables | identifiable |",
              "| --- | --- | --- | --- |"]
    parts += [f"| {kind} | {risk:g} | {len(flags)} | {sum(flags.values())} |"
              for (kind, risk), flags in sorted(tables.items())]
    parts.append("")
    if failed:
        parts += ["## Failures", ""
                  ] + [f"- {r['algorithm']} on {r['table']}: {r['error']}" for r in failed] + [""]
    return "\n".join(parts)


def parse_clusters(text: str) -> tuple[int, int]:
    """``"8x8"`` as ``(8, 8)``; ValueError in words (after the flag) for anything but two positive
    integers written ``GxM``."""
    parts = text.lower().split("x")
    if len(parts) != 2 or not all(p.strip().isdigit() for p in parts):
        raise ValueError(f"must be two positive integers as GxM (e.g. 8x8), got {text!r}")
    g, m = (int(p) for p in parts)
    if g < 1 or m < 1:
        raise ValueError(f"must be at least 1x1, got {text!r}")
    return g, m


@dataclass(frozen=True)
class UnknownClustersOptions(Record):
    """The unknown-clusters track's options."""

    max_clusters: tuple[int, int] = setting(
        (8, 8), check_max_clusters, "--max-clusters",
        "the largest numbers of row and column clusters an algorithm may choose", metavar="GxM",
        parse=parse_clusters, show=lambda value: f"{value[0]}x{value[1]}",
    )


#: The unknown-clusters track.
UNKNOWN_CLUSTERS = Track(
    contract=CHOSEN_COUNTS,
    description="every algorithm chooses the numbers of clusters, up to a maximum",
    run=run_unknown_clusters,
    columns=lambda rows: list(UNKNOWN_CLUSTERS_COLUMNS),
    summarise=summarise_unknown_clusters,
    options=UnknownClustersOptions,
)
