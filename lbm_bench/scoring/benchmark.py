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
"""

from __future__ import annotations

import csv
import json
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from lbm_bench.algorithms.registry import MASKED_INPUT
from lbm_bench.models.data import TableData

__all__ = ["run_benchmark", "summarise", "MISSING_COLUMN", "RESULT_COLUMNS"]

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


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name).lstrip(".")  # no hidden folder


def _run_one(algorithm: str, entry: dict, release_dir: str, out_dir: str, seed: int) -> dict:
    """Run one algorithm on one table and write its result file; never raises."""
    from lbm_bench.algorithms import resolve_algorithm
    from lbm_bench.scoring.evaluate import evaluate
    from lbm_bench.storage import load_table

    row: dict[str, Any] = {
        "algorithm": algorithm, "table": entry["id"], "kind": entry["kind"],
        "n_rows": entry["shape"][0], "n_cols": entry["shape"][1],
        "n_row_clusters": entry["clusters"][0], "n_col_clusters": entry["clusters"][1],
        "target_risk": entry["target_risk"], "bayes_risk": entry.get("bayes_risk", entry["risk"]),
        "map_risk": entry["risk"], "seed": seed, "error": "",
    }
    if "missing_rate" in entry:
        row[MISSING_COLUMN] = entry["missing_rate"]
    try:
        _, fit = resolve_algorithm(algorithm)
        table = load_table(Path(release_dir) / entry["file"])
        family = _family_keywords(algorithm, fit, table)
        data = table.data
        wants_masked = getattr(fit, MASKED_INPUT, False)
        if wants_masked and table.missing_mechanism is not None and not TableData.of(data).is_sparse:
            data = table.masked_data()  # the algorithm asked for a masked array (MASKED_INPUT)
        start = time.perf_counter()
        rows, cols = fit(data, table.n_row_clusters, table.n_col_clusters, rng=np.random.default_rng(seed),
                         **family)
        row["seconds"] = time.perf_counter() - start
        report = evaluate(table, rows, cols)
        for key in ("risk", "risk_mcse", "excess_risk", "excess_mcse", "row_loss", "col_loss",
                    "cari_mean", "cari_std", "ari_rows", "ari_cols", "apparent_l_item", "apparent_cari",
                    "bayes_risk", "map_risk", "reference", "map_excess_risk", "map_excess_mcse", "chance_risk"):
            row[key] = getattr(report, key)
    except Exception as exc:  # reported in the results, the others go on
        row["error"] = f"{type(exc).__name__}: {exc}"
    path = Path(out_dir) / "runs" / _safe(algorithm) / f"{entry['id']}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    tmp.write_text(json.dumps(row, sort_keys=True), encoding="utf-8")
    os.replace(tmp, path)
    return row


def _family_keywords(name: str, fit: Any, table: Any) -> dict[str, str]:
    """What the harness tells an algorithm of the table's family.

    A family that cannot be told from the entries' values (``inference_order`` None:
    categorical codes look like counts) is passed as ``kind=`` to the algorithms that
    take it (block CEM and VEM); an algorithm that reads the entries as numbers is
    refused a table whose entries are unordered levels (``n_levels``), in one line.
    """
    from lbm_bench.algorithms import fits_family

    how = fits_family(fit, table.kind)
    if how == "values" and table.model.n_levels is not None:
        raise ValueError(
            f"{name} reads the entries as numbers, but the {table.kind} table holds {table.model.n_levels} "
            f"unordered categories; use cem, vem, {table.kind}-cem or {table.kind}-vem (or an algorithm "
            "taking a kind= keyword)"
        )
    if how == "kind" and table.model.inference_order is None:
        return {"kind": table.kind}
    return {}


def run_benchmark(
    release_dir: str | os.PathLike[str],
    algorithms: Sequence[str],
    out_dir: str | os.PathLike[str],
    *,
    n_jobs: int = 1,
    seed: int = 0,
    progress: bool = False,
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

    Returns
    -------
    list of dict
        The rows of ``results.csv``.
    """
    from joblib import Parallel, delayed
    from tqdm.auto import tqdm

    from lbm_bench.algorithms import resolve_algorithm
    from lbm_bench.release import derive_seed, load_release

    if not algorithms:
        raise ValueError("at least one algorithm is required")
    names = [resolve_algorithm(a)[0] for a in algorithms]
    manifest = load_release(release_dir)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tasks, rows = [], []
    for name in names:
        for entry in manifest["tables"]:
            done = out / "runs" / _safe(name) / f"{entry['id']}.json"
            if done.is_file():
                rows.append(json.loads(done.read_text(encoding="utf-8")))
            else:
                tasks.append((name, entry, derive_seed(seed, f"{name}:{entry['id']}")))
    with tqdm(total=len(tasks), desc="benchmark", unit="run", disable=not progress) as bar:
        jobs = (delayed(_run_one)(n, e, str(release_dir), str(out), s) for n, e, s in tasks)
        for row in Parallel(n_jobs=n_jobs, return_as="generator_unordered")(jobs):
            rows.append(row)
            bar.update()
    rows.sort(key=lambda r: (r["algorithm"], r["table"]))
    _write_csv(out / "results.csv", rows)
    (out / "summary.md").write_text(summarise(rows), encoding="utf-8")
    _plot(out / "excess_risk.png", rows)
    return rows


def _columns(rows: list[dict]) -> list[str]:
    """The columns of results.csv: :data:`RESULT_COLUMNS`, and the missing rate after the shape
    when a table of the release has missing entries."""
    if not any(MISSING_COLUMN in r for r in rows):
        return RESULT_COLUMNS
    at = RESULT_COLUMNS.index("n_col_clusters") + 1
    return RESULT_COLUMNS[:at] + [MISSING_COLUMN] + RESULT_COLUMNS[at:]


def _write_csv(path: Path, rows: list[dict]) -> None:
    columns = _columns(rows)
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns, extrasaction="ignore")
        writer.writeheader()
        for row in rows:
            writer.writerow({k: row.get(k, 0.0 if k == MISSING_COLUMN else "") for k in columns})


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
            values = [float(i[key]) for i in items if i.get(key) not in (None, "")]
            return float(np.mean(values)) if values else float("nan")

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


def _plot(path: Path, rows: list[dict]) -> bool:
    """Draw ``excess_risk.png``: each run's excess risk over its table's floor against that
    floor. Nothing is drawn (and a stale picture is removed) when no run succeeded or
    matplotlib is missing; returns whether the picture was written."""
    ok = [r for r in rows if not r.get("error")]
    if not ok:
        path.unlink(missing_ok=True)
        return False
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig = _excess_figure(ok)
    fig.savefig(path, dpi=120, metadata={"Software": None})
    plt.close(fig)
    return True


def _excess_figure(ok: list[dict]) -> Any:
    """The figure of ``excess_risk.png`` for the successful runs ``ok`` (at least one)."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for alg in sorted({r["algorithm"] for r in ok}):
        items = [r for r in ok if r["algorithm"] == alg]
        ax.scatter([r["bayes_risk"] for r in items], [r["excess_risk"] for r in items], label=alg, s=18)
    ax.axhline(0.0, color="grey", lw=0.8)
    ax.set_xlabel("floor of the table (cross-fitted risk of its Bayes labels)")
    ax.set_ylabel("excess risk over the floor")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig
