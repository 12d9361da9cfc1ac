"""What the benchmark's tracks share: the track record, the row schema, the per-run call, run files,
CSV, means and the plot.

A **track** of ``lbm-bench benchmark`` is a :class:`Track`: how its algorithms are called (its
:class:`~lbm_bench.algorithms.catalog.Contract`), its runner, its results' columns and summary, and
the options it takes. Each track is declared in its own module
(:mod:`lbm_bench.scoring.known_clusters`: the numbers of clusters given;
:mod:`lbm_bench.scoring.unknown_clusters`: chosen by the algorithm)
and listed in :data:`lbm_bench.scoring.benchmark.TRACKS`, which ``run_benchmark`` and the command
line read. Every track runs one task per (algorithm, table): the algorithm is fitted by
:func:`fit_labels` (the one place a run calls an algorithm, :mod:`lbm_bench.scoring.algorithm_call`:
whatever the algorithm raises is its run's failure, and ``timeout`` fits it in a child process),
its row starts with :func:`entry_row`
and holds the :data:`REPORT_FIELDS` of its score; the row is kept in
``OUT/runs/<algorithm>/<table id>.json``, and ``results.csv``, ``summary.md`` and
``excess_risk.png`` are written with these helpers.

Every track's runner is the same skeleton with its own hooks, as every Gibbs run is the one
sweep loop: it checks its arguments and plans its tasks (the runs a previous run finished
are read back from their files), then :func:`run_track_tasks` runs the tasks over the
workers, as they finish, and writes each one's record where the track's ``keep`` hook says
(a run interrupted keeps the finished runs, for the next to resume; a result that breaks the
track's contract, :class:`ContractError`, stops the run and removes what it wrote), and
:func:`finish_track` writes ``results.csv``, ``summary.md`` and ``excess_risk.png`` of the
rows.
"""

from __future__ import annotations

import csv
import json
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from lbm_bench._atomic import atomic_path, atomic_write_bytes, atomic_write_text
from lbm_bench._records import Record
from lbm_bench.algorithms.catalog import Contract
from lbm_bench.scoring.algorithm_call import RunFailed, algorithm_input, family_keywords, fit_labels
from lbm_bench.tasks.pool import iter_tasks

__all__ = [
    "MISSING_COLUMN", "REPORT_FIELDS", "RESULT_COLUMNS", "ContractError", "RunFailed", "Track",
    "Writes", "algorithm_input", "check_timeout", "entry_row", "excess_figure", "family_keywords",
    "finish_track", "fit_labels", "mean_of", "plot_excess", "report_values", "run_path",
    "run_track_tasks", "safe_name", "write_csv", "write_json"
]

#: Columns of a known-clusters results.csv, in order; the unknown-clusters track's add theirs.
RESULT_COLUMNS = [
    "algorithm", "table", "kind", "n_rows", "n_cols", "n_row_clusters", "n_col_clusters",
    "target_risk", "bayes_risk", "map_risk", "reference", "risk", "risk_mcse", "excess_risk",
    "excess_mcse", "map_excess_risk", "map_excess_mcse", "chance_risk", "row_loss", "col_loss",
    "cari_mean", "cari_std", "ari_rows", "ari_cols", "apparent_l_item", "apparent_cari", "seed",
    "seconds", "error",
]
#: Column of results.csv added when a table of the release has missing entries.
MISSING_COLUMN = "missing_rate"
#: The fields of a :class:`~lbm_bench.scoring.report.Report` a result row holds.
REPORT_FIELDS = ("risk", "risk_mcse", "excess_risk", "excess_mcse", "row_loss", "col_loss",
                 "cari_mean", "cari_std", "ari_rows", "ari_cols", "apparent_l_item",
                 "apparent_cari", "bayes_risk", "map_risk", "reference", "map_excess_risk",
                 "map_excess_mcse", "chance_risk")


@dataclass(frozen=True)
class Track:
    """A track of the benchmark, registered by name in :data:`lbm_bench.scoring.benchmark.TRACKS`.

    Attributes
    ----------
    contract : Contract
        How the track's algorithms are called, and its built-ins
        (:data:`lbm_bench.algorithms.CONTRACTS`); the track's name is its contract's.
    description : str
        What its algorithms are told, in a few words (``lbm-bench benchmark --help``).
    run : callable
        ``run(release_dir, algorithms, out_dir, *, n_jobs, seed, progress, timeout, **options) ->
        rows``: runs the algorithms on every table of a release and writes ``results.csv``,
        ``summary.md`` and ``excess_risk.png`` under ``out_dir``.
    columns : callable
        ``columns(rows) -> list of str``: the columns of its ``results.csv`` for these rows.
    summarise : callable
        ``summarise(rows) -> str``: the Markdown of its ``summary.md``.
    options : type of Record
        Its own options (``max_clusters``...): each field carries its default, its check, its
        command-line flag and its help (``metavar``, and ``parse``: the flag's text to a value,
        ValueError in words after the flag); ``run`` takes them as keywords.
    """

    contract: Contract
    description: str
    run: Callable[..., list[dict]]
    columns: Callable[[list[dict]], list[str]]
    summarise: Callable[[list[dict]], str]
    options: type[Record]

    @property
    def name(self) -> str:
        """The track's name, e.g. ``"known-clusters"``."""
        return self.contract.track

    @property
    def signature(self) -> str:
        """How its algorithms are called."""
        return self.contract.signature

    def option_values(self, options: Mapping[str, Any]) -> dict[str, Any]:
        """``options`` checked by the track's options record, with the defaults of those not
        given (a value of None: not given), as :attr:`run` takes them."""
        given = {key: value for key, value in options.items() if value is not None}
        unknown = sorted(set(given) - set(self.options.names()))
        if unknown:
            allowed = ", ".join(self.options.names()) or "none"
            raise ValueError(f"the {self.name} track has no option {', '.join(unknown)} (its "
                             f"options: {allowed})")
        return self.options.from_mapping(given).to_record()


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


def report_values(report: Any) -> dict[str, Any]:
    """The :data:`REPORT_FIELDS` of a :class:`~lbm_bench.scoring.report.Report`, for a result
    row."""
    return {key: getattr(report, key) for key in REPORT_FIELDS}


def safe_name(name: str) -> str:
    """An algorithm's name as a folder name (no separators, never a hidden folder)."""
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name).lstrip(".")


def run_path(out_dir: str | Path, algorithm: str, table_id: str) -> Path:
    """Where the row of one run is kept: ``OUT/runs/<algorithm>/<table id>.json``."""
    return Path(out_dir) / "runs" / safe_name(algorithm) / f"{table_id}.json"


def write_json(path: Path, record: dict) -> None:
    """Write ``record`` as JSON under ``path``, atomically (a temporary name, then the final
    one)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps(record, sort_keys=True))


def check_timeout(timeout: Any) -> float | None:
    """A per-run time limit in seconds (finite, > 0), or None for none."""
    from lbm_bench._validation import check_positive_float

    return None if timeout is None else check_positive_float("timeout", timeout)


class Writes:
    """The folders and files a benchmark run creates, to remove when the run stops midway: all
    of them when an algorithm broke the track's contract (:meth:`undo`), the folders left empty
    when it was interrupted (:meth:`remove_empty_folders`: the finished runs' files stay, and the
    next run resumes there)."""

    def __init__(self) -> None:
        self.paths: list[Path] = []

    def folder(self, path: Path) -> None:
        missing = [p for p in (path, *path.parents) if not p.exists()]
        path.mkdir(parents=True, exist_ok=True)
        self.paths += reversed(missing)

    def json(self, path: Path, record: dict) -> None:
        self.folder(path.parent)
        existed = path.exists()
        write_json(path, record)
        if not existed:
            self.paths.append(path)

    def undo(self) -> None:
        for path in reversed(self.paths):
            if path.is_dir():
                _remove_if_empty(path)
            else:
                path.unlink(missing_ok=True)

    def remove_empty_folders(self) -> None:
        for path in reversed(self.paths):
            if path.is_dir():
                _remove_if_empty(path)


class ContractError(ValueError):
    """An algorithm returned what its track's contract does not allow (labels of the wrong
    length, too many clusters): the run stops, and what it wrote is removed."""


def run_track_tasks(task: Callable[..., Any], calls: Sequence[tuple], writes: Writes, *,
                    n_jobs: int, progress: bool, keep: Callable[[Any], tuple[Path, dict]]) -> None:
    """The loop of every track: ``task(*call)`` for every call over ``n_jobs`` workers
    (:func:`~lbm_bench.tasks.pool.iter_tasks`), each result taken as its task finishes (a tqdm
    bar with ``progress``) and its record written by this process, atomically, where
    ``keep(result)`` says (``(path, record)``; the hook also keeps the result for the rows).

    Interrupted (Ctrl-C, SIGTERM, an error), the records of the finished runs stay and the
    folders left empty go: the next run resumes there. A :class:`ContractError` raised by
    ``keep`` cancels the tasks not started and removes every file and folder the run wrote.
    """
    from tqdm.auto import tqdm

    try:
        with tqdm(total=len(calls), desc="benchmark", unit="run", disable=not progress) as bar:
            outputs = iter_tasks(task, calls, n_jobs, as_done=True)
            try:
                for result in outputs:
                    writes.json(*keep(result))
                    bar.update()
            except ContractError:
                # joblib's note on the tasks it cancels: the error says it all
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", UserWarning)
                    outputs.close()
                writes.undo()
                raise
    except ContractError:
        raise
    except BaseException:  # interrupted: the finished runs stay, for the next run to resume
        writes.remove_empty_folders()
        raise


def finish_track(out: Path, rows: list[dict], columns: Callable[[list[dict]], list[str]],
                 summarise: Callable[[list[dict]], str]) -> list[dict]:
    """``rows`` sorted by algorithm and table, written as ``results.csv`` with the track's
    ``columns(rows)``, its ``summarise(rows)`` as ``summary.md``, and ``excess_risk.png``;
    returns the rows."""
    rows.sort(key=lambda r: (r["algorithm"], r["table"]))
    write_csv(out / "results.csv", rows, columns(rows))
    atomic_write_text(out / "summary.md", summarise(rows))
    plot_excess(out / "excess_risk.png", rows)
    return rows


def _remove_if_empty(path: Path) -> None:
    try:
        path.rmdir()
    except OSError:  # a folder that holds files (of an earlier run, or of finished runs)
        pass


def write_csv(path: Path, rows: list[dict], columns: Sequence[str]) -> None:
    """``rows`` as CSV with ``columns`` (a missing value is empty), written atomically."""
    import io

    buffer = io.StringIO(newline="")
    writer = csv.DictWriter(buffer, fieldnames=list(columns), extrasaction="ignore")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: row.get(k, "") for k in columns})
    # the csv module's line ends, as they are
    atomic_write_bytes(path, buffer.getvalue().encode("utf-8"))


def mean_of(items: list[dict], key: str) -> float:
    """The mean of ``key`` over the rows that have a value (NaN when none has)."""
    values = [float(i[key]) for i in items if i.get(key) not in (None, "")]
    return float(np.mean(values)) if values else float("nan")


def plot_excess(path: Path, rows: list[dict]) -> bool:
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
    fig = excess_figure(ok)
    try:
        with atomic_path(path) as temporary:
            fig.savefig(temporary, dpi=120, metadata={"Software": None}, format="png")
    finally:
        plt.close(fig)
    return True


def excess_figure(ok: list[dict]) -> Any:
    """The figure of ``excess_risk.png`` for the successful runs ``ok`` (at least one)."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for alg in sorted({r["algorithm"] for r in ok}):
        items = [r for r in ok if r["algorithm"] == alg]
        ax.scatter([r["bayes_risk"] for r in items], [r["excess_risk"] for r in items], label=alg,
                   s=18)
    ax.axhline(0.0, color="grey", lw=0.8)
    ax.set_xlabel("floor of the table (cross-fitted risk of its Bayes labels)")
    ax.set_ylabel("excess risk over the floor")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig
