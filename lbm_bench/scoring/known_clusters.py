"""The known-clusters track of ``lbm-bench benchmark`` (the default): every algorithm is told the
numbers of clusters.

One task per (algorithm, table): the algorithm ``fit(X, n_row_clusters,
n_col_clusters, *, rng) -> (rows, cols)`` runs with a seed derived from the
master seed, the algorithm's name and the table's id (never from worker order),
and its labels are scored by :func:`lbm_bench.scoring.evaluate`. A table whose
family cannot be told from its values (categorical codes) is given with its
``kind=`` to the algorithms that take one (``cem``, ``vem``); the algorithms that
read the entries as numbers are refused it, in one line (the row's ``error``).

**Tables with missing entries** are handed to algorithms as float64 arrays with
NaN at the missing entries (scikit-learn's and pandas' convention; a sparse
table: explicit NaN values), unless the algorithm asks for a NumPy masked array
in the table's dtype by having the attribute ``masked_input = True``
(:data:`lbm_bench.algorithms.MASKED_INPUT`; the built-in CEM and VEM do). The
results then hold the table's ``missing_rate`` and the summary groups by it. Each finished task
writes ``OUT/runs/<algorithm>/<table id>.json`` (atomically), so an interrupted
run resumes where it stopped. At the end, ``OUT/results.csv`` holds one row per
(algorithm, table), ``OUT/summary.md`` the mean excess risk and CARI per
algorithm by kind, shape and risk level, and, when matplotlib is installed and a
run succeeded, ``OUT/excess_risk.png`` plots each run's excess risk over its table's
floor against that floor. The
excess risk is over the table's floor (the cross-fitted risk of its Bayes labels
for ``l_item``; the MAP's risk for format 1.0 tables, column ``reference``); the
excess over the MAP labels (the paper's reference) is reported too.

The track is :data:`KNOWN_CLUSTERS`, registered in :data:`lbm_bench.scoring.benchmark.TRACKS`;
the unknown-clusters track (:mod:`lbm_bench.scoring.unknown_clusters`) runs algorithms that
choose the numbers of clusters, and compares each with the same method told them here
(:func:`known_row`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from lbm_bench._records import Record
from lbm_bench.algorithms.catalog import GIVEN_COUNTS
from lbm_bench.scoring.harness import (
    MISSING_COLUMN,
    RESULT_COLUMNS,
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

__all__ = [
    "KNOWN_CLUSTERS", "KnownClustersOptions", "known_clusters_columns", "known_row",
    "run_known_clusters", "summarise_known_clusters"
]


def known_row(algorithm: str, entry: dict, release_dir: str, seed: int,
              timeout: float | None = None) -> dict:
    """Run one algorithm, told the table's numbers of clusters, on one table and score it:
    its result row (an error in the row's ``error``, whatever the algorithm raised; never raises,
    except for an interruption of the process: :func:`~lbm_bench.scoring.harness.fit_labels`)."""
    from lbm_bench.scoring.evaluate import evaluate
    from lbm_bench.storage import load_table

    row = entry_row(algorithm, entry, seed)
    path = Path(release_dir) / entry["file"]
    try:
        table = load_table(path)
        counts = (table.n_row_clusters, table.n_col_clusters)
        rows, cols, row["seconds"] = fit_labels(algorithm, table, counts, seed,
                                                track=GIVEN_COUNTS.track, path=path,
                                                timeout=timeout)
        row.update(report_values(evaluate(table, rows, cols)))
    except RunFailed as exc:
        row["error"] = str(exc)
    except Exception as exc:  # reported in the results, the others go on
        row["error"] = f"{type(exc).__name__}: {exc}"
    return row


def run_known_clusters(
    release_dir: str | os.PathLike[str],
    algorithms: Sequence[str],
    out_dir: str | os.PathLike[str],
    *,
    n_jobs: int = 1,
    seed: int = 0,
    progress: bool = False,
    timeout: float | None = None,
) -> list[dict]:
    """Run ``algorithms``, told the numbers of clusters, on every table of a release; write
    results and summary.

    Parameters
    ----------
    release_dir : path
        A built release (with ``manifest.json``).
    algorithms : sequence of str
        Built-in names (see :data:`lbm_bench.algorithms.ALGORITHMS`) or
        ``"module:function"``: ``fit(X, n_row_clusters, n_col_clusters, *, rng) -> (rows, cols)``.
    out_dir : path
        Where results go (created if needed): ``results.csv``, ``summary.md``,
        ``excess_risk.png`` and ``runs/``.
    n_jobs : int, default=1
        Parallel workers (:mod:`lbm_bench.tasks`: loky processes).
    seed : int, default=0
        Master seed of the algorithms' seeds.
    progress : bool, default=False
        Show a tqdm bar.
    timeout : float, optional
        Seconds each fit may take: each run's algorithm then runs in a child process, stopped
        when over, and the run fails as timed out (:func:`~lbm_bench.scoring.harness.fit_labels`).
        None: no limit, in the worker.

    Returns
    -------
    list of dict
        The rows of ``results.csv``.

    Notes
    -----
    Whatever an algorithm raises (``SystemExit`` included) fails its run only. Every run
    file and ``results.csv``, ``summary.md`` and ``excess_risk.png`` are written by this
    process, atomically; an interrupted run (Ctrl-C, SIGTERM) keeps the run files of the
    finished runs (the next run resumes there) and removes the folders it created that hold
    nothing.
    """
    from lbm_bench.algorithms import resolve_algorithm
    from lbm_bench.release import derive_seed, load_release

    if not algorithms:
        raise ValueError("at least one algorithm is required")
    names = [resolve_algorithm(a, track=GIVEN_COUNTS.track)[0] for a in algorithms]
    timeout = check_timeout(timeout)
    manifest = load_release(release_dir)
    out = Path(out_dir)
    writes = Writes()
    writes.folder(out)
    calls, rows = [], []
    for name in names:
        for entry in manifest["tables"]:
            done = run_path(out, name, entry["id"])
            if done.is_file():
                rows.append(json.loads(done.read_text(encoding="utf-8")))
            else:
                calls.append(
                    (name, entry, str(release_dir), derive_seed(seed,
                                                                f"{name}:{entry['id']}"), timeout))

    def keep(row: dict) -> tuple[Path, dict]:
        rows.append(row)
        return run_path(out, row["algorithm"], row["table"]), row

    run_track_tasks(known_row, calls, writes, n_jobs=n_jobs, progress=progress, keep=keep)
    # a complete table of a release with missing entries: rate 0
    if any(MISSING_COLUMN in r for r in rows):
        rows = [{MISSING_COLUMN: 0.0, **r} for r in rows]
    return finish_track(out, rows, known_clusters_columns, summarise_known_clusters)


def known_clusters_columns(rows: list[dict]) -> list[str]:
    """The columns of results.csv: :data:`~lbm_bench.scoring.harness.RESULT_COLUMNS`, and the
    missing rate after the numbers of clusters when a table of the release has missing entries."""
    if not any(MISSING_COLUMN in r for r in rows):
        return RESULT_COLUMNS
    at = RESULT_COLUMNS.index("n_col_clusters") + 1
    return RESULT_COLUMNS[:at] + [MISSING_COLUMN] + RESULT_COLUMNS[at:]


def _group_table(rows: list[dict], key: str, label: str) -> list[str]:
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        if not r.get("error"):
            value = f"{r['n_rows']}x{r['n_cols']}" if key == "shape" else r.get(key, 0.0)
            groups.setdefault((r["algorithm"], value), []).append(r)
    lines = [f"| algorithm | {label} | tables | mean excess risk | mean excess over MAP | mean "
             "CARI "
             "| mean risk | mean floor | mean MAP risk |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for (alg, value), items in sorted(groups.items(), key=lambda kv: (kv[0][0], str(kv[0][1]))):
        def mean(key: str, items: list[dict] = items) -> float:
            return mean_of(items, key)

        lines.append(
            f"| {alg} | {value} | {len(items)} | {mean('excess_risk'):+.4f} | "
            f"{mean('map_excess_risk'):+.4f} | {mean('cari_mean'):.4f} | {mean('risk'):.4f} | "
            f"{mean('bayes_risk'):.4f} | {mean('map_risk'):.4f} |"
        )
    return lines


def summarise_known_clusters(rows: list[dict]) -> str:
    """Markdown summary: mean excess risk and CARI per algorithm by kind, shape, risk level."""
    failed = [r for r in rows if r.get("error")]
    parts = ["# Benchmark summary", "",
             f"{len(rows)} runs, {len(failed)} failed. Excess risk = conditional risk of the "
             "algorithm's labels minus the table's floor (the cross-fitted risk of its Bayes "
             "labels for l_item; the MAP labels' risk for format 1.0 tables, which store no "
             "floor). Excess over MAP = the same risk minus the risk of the table's X-only MAP "
             "labels (true "
             "parameters; the paper's reference).", ""]
    groups = [("kind", "kind"), ("shape", "shape"), ("target_risk", "target risk")]
    if any(MISSING_COLUMN in r for r in rows):
        groups.append((MISSING_COLUMN, "missing rate"))
    for key, label in groups:
        parts += [f"## By {label}", ""] + _group_table(rows, key, label) + [""]
    if failed:
        parts += ["## Failures", ""
                  ] + [f"- {r['algorithm']} on {r['table']}: {r['error']}" for r in failed] + [""]
    return "\n".join(parts)


@dataclass(frozen=True)
class KnownClustersOptions(Record):
    """The known-clusters track takes no option of its own: the tables give the numbers of
    clusters."""


#: The known-clusters track.
KNOWN_CLUSTERS = Track(
    contract=GIVEN_COUNTS,
    description="every algorithm is told the table's numbers of clusters",
    run=run_known_clusters,
    columns=known_clusters_columns,
    summarise=summarise_known_clusters,
    options=KnownClustersOptions,
)
