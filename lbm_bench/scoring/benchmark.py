"""Run co-clustering algorithms over every table of a release and summarise the scores.

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

That is the **known-clusters** track (the default): every algorithm is told the table's
numbers of clusters. The **unknown-clusters** track (``track="unknown-clusters"``,
:mod:`lbm_bench.scoring.unknown_clusters`) runs algorithms that choose them.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lbm_bench.scoring.harness import (
    Writes,
    check_timeout,
    mean_of,
    plot_excess,
    run_path,
    write_csv,
    write_text,
)

__all__ = ["MISSING_COLUMN", "RESULT_COLUMNS", "REPORT_FIELDS", "entry_row", "known_row", "run_benchmark",
           "summarise"]

#: Columns of results.csv, in order.
RESULT_COLUMNS = [
    "algorithm", "table", "kind", "n_rows", "n_cols", "n_row_clusters", "n_col_clusters",
    "target_risk", "bayes_risk", "map_risk", "reference", "risk", "risk_mcse", "excess_risk", "excess_mcse",
    "map_excess_risk", "map_excess_mcse", "chance_risk",
    "row_loss", "col_loss", "cari_mean", "cari_std", "ari_rows", "ari_cols",
    "apparent_l_item", "apparent_cari", "seed", "seconds", "error",
]
#: Column of results.csv added when a table of the release has missing entries.
MISSING_COLUMN = "missing_rate"


#: The fields of a :class:`~lbm_bench.scoring.evaluate.Report` a result row holds.
REPORT_FIELDS = ("risk", "risk_mcse", "excess_risk", "excess_mcse", "row_loss", "col_loss",
                 "cari_mean", "cari_std", "ari_rows", "ari_cols", "apparent_l_item", "apparent_cari",
                 "bayes_risk", "map_risk", "reference", "map_excess_risk", "map_excess_mcse", "chance_risk")


def entry_row(algorithm: str, entry: dict, seed: int) -> dict[str, Any]:
    """The fields of a result row that the release's manifest entry gives."""
    return {
        "algorithm": algorithm, "table": entry["id"], "kind": entry["kind"],
        "n_rows": entry["shape"][0], "n_cols": entry["shape"][1],
        "n_row_clusters": entry["clusters"][0], "n_col_clusters": entry["clusters"][1],
        "target_risk": entry["target_risk"], "bayes_risk": entry.get("bayes_risk", entry["risk"]),
        "map_risk": entry["risk"], "seed": seed, "error": "",
        **({MISSING_COLUMN: entry["missing_rate"]} if "missing_rate" in entry else {}),
    }


def known_row(algorithm: str, entry: dict, release_dir: str, seed: int, timeout: float | None = None) -> dict:
    """Run one algorithm, told the table's numbers of clusters, on one table and score it:
    its result row (an error in the row's ``error``; never raises, except for an interruption
    of the process: :func:`~lbm_bench.scoring.algorithm_call.fit_labels`)."""
    from lbm_bench.scoring.algorithm_call import RunFailed, fit_labels
    from lbm_bench.scoring.evaluate import evaluate
    from lbm_bench.storage import load_table

    row = entry_row(algorithm, entry, seed)
    path = Path(release_dir) / entry["file"]
    try:
        table = load_table(path)
        counts = (table.n_row_clusters, table.n_col_clusters)
        rows, cols, row["seconds"] = fit_labels(algorithm, table, counts, seed, path=path, timeout=timeout)
        report = evaluate(table, rows, cols)
        row.update({key: getattr(report, key) for key in REPORT_FIELDS})
    except RunFailed as exc:
        row["error"] = str(exc)
    except Exception as exc:  # reported in the results, the others go on
        row["error"] = f"{type(exc).__name__}: {exc}"
    return row


def run_benchmark(
    release_dir: str | os.PathLike[str],
    algorithms: Sequence[str],
    out_dir: str | os.PathLike[str],
    *,
    n_jobs: int = 1,
    seed: int = 0,
    progress: bool = False,
    track: str = "known-clusters",
    max_clusters: tuple[int, int] | None = None,
    timeout: float | None = None,
) -> list[dict]:
    """Run ``algorithms`` on every table of a release; write results and summary.

    Parameters
    ----------
    release_dir : path
        A built release (with ``manifest.json``).
    algorithms : sequence of str
        Built-in names (see :data:`lbm_bench.algorithms.ALGORITHMS`) or
        ``"module:function"``.
    out_dir : path
        Where results go (created if needed).
    n_jobs : int, default=1
        Parallel workers (joblib, loky).
    seed : int, default=0
        Master seed of the algorithms' seeds.
    progress : bool, default=False
        Show a tqdm bar.
    track : {"known-clusters", "unknown-clusters"}, default="known-clusters"
        Whether the algorithms are told the tables' numbers of clusters, or choose them
        (:func:`lbm_bench.scoring.unknown_clusters.run_selection_track`, whose algorithms
        are looked up in :data:`lbm_bench.algorithms.SELECTION_ALGORITHMS`).
    max_clusters : (int, int), optional
        The unknown-clusters track's largest numbers of clusters (default 8x8); refused on
        the known-clusters track.
    timeout : float, optional
        Seconds each fit may take: each run's algorithm then runs in a child process, stopped
        when over, and the run fails as timed out
        (:func:`~lbm_bench.scoring.algorithm_call.fit_labels`). None: no limit, in the worker.

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
    from joblib import Parallel, delayed
    from tqdm.auto import tqdm

    from lbm_bench._validation import check_choice
    from lbm_bench.algorithms import TRACKS, resolve_algorithm
    from lbm_bench.release import derive_seed, load_release

    check_choice("track", track, tuple(TRACKS))
    timeout = check_timeout(timeout)
    if track == "unknown-clusters":
        from lbm_bench.scoring.unknown_clusters import run_selection_track

        return run_selection_track(release_dir, algorithms, out_dir, max_clusters=max_clusters or (8, 8),
                                   n_jobs=n_jobs, seed=seed, progress=progress, timeout=timeout)
    if max_clusters is not None:
        raise ValueError("max_clusters is an option of the unknown-clusters track (track='unknown-clusters')")
    if not algorithms:
        raise ValueError("at least one algorithm is required")
    names = [resolve_algorithm(a)[0] for a in algorithms]
    manifest = load_release(release_dir)
    out = Path(out_dir)
    writes = Writes()
    writes.folder(out)
    tasks, rows = [], []
    for name in names:
        for entry in manifest["tables"]:
            done = run_path(out, name, entry["id"])
            if done.is_file():
                rows.append(json.loads(done.read_text(encoding="utf-8")))
            else:
                tasks.append((name, entry, derive_seed(seed, f"{name}:{entry['id']}")))
    try:
        with tqdm(total=len(tasks), desc="benchmark", unit="run", disable=not progress) as bar:
            jobs = (delayed(known_row)(n, e, str(release_dir), s, timeout) for n, e, s in tasks)
            for row in Parallel(n_jobs=n_jobs, return_as="generator_unordered")(jobs):
                writes.json(run_path(out, row["algorithm"], row["table"]), row)
                rows.append(row)
                bar.update()
    except BaseException:
        writes.remove_empty_folders()
        raise
    rows.sort(key=lambda r: (r["algorithm"], r["table"]))
    columns = _columns(rows)
    if MISSING_COLUMN in columns:  # a complete table of a release with missing entries: rate 0
        rows = [{MISSING_COLUMN: 0.0, **r} for r in rows]
    write_csv(out / "results.csv", rows, columns)
    write_text(out / "summary.md", summarise(rows))
    plot_excess(out / "excess_risk.png", rows)
    return rows


def _columns(rows: list[dict]) -> list[str]:
    """The columns of results.csv: :data:`RESULT_COLUMNS`, and the missing rate after the shape
    when a table of the release has missing entries."""
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
    lines = [f"| algorithm | {label} | tables | mean excess risk | mean excess over MAP | mean CARI "
             "| mean risk | mean floor | mean MAP risk |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for (alg, value), items in sorted(groups.items(), key=lambda kv: (kv[0][0], str(kv[0][1]))):
        def mean(key: str, items: list[dict] = items) -> float:
            return mean_of(items, key)

        lines.append(
            f"| {alg} | {value} | {len(items)} | {mean('excess_risk'):+.4f} | {mean('map_excess_risk'):+.4f} "
            f"| {mean('cari_mean'):.4f} | {mean('risk'):.4f} | {mean('bayes_risk'):.4f} | {mean('map_risk'):.4f} |"
        )
    return lines


def summarise(rows: list[dict]) -> str:
    """Markdown summary: mean excess risk and CARI per algorithm by kind, shape, risk level."""
    failed = [r for r in rows if r.get("error")]
    parts = ["# Benchmark summary", "",
             f"{len(rows)} runs, {len(failed)} failed. Excess risk = conditional risk of the "
             "algorithm's labels minus the table's floor (the cross-fitted risk of its Bayes labels "
             "for l_item; the MAP labels' risk for format 1.0 tables, which store no floor). "
             "Excess over MAP = the same risk minus the risk of the table's X-only MAP labels (true "
             "parameters; the paper's reference).", ""]
    groups = [("kind", "kind"), ("shape", "shape"), ("target_risk", "target risk")]
    if any(MISSING_COLUMN in r for r in rows):
        groups.append((MISSING_COLUMN, "missing rate"))
    for key, label in groups:
        parts += [f"## By {label}", ""] + _group_table(rows, key, label) + [""]
    if failed:
        parts += ["## Failures", ""] + [f"- {r['algorithm']} on {r['table']}: {r['error']}" for r in failed] + [""]
    return "\n".join(parts)
