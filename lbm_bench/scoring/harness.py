"""What the benchmark's tracks share: the family an algorithm is told, run files, CSV, means, the plot.

Both tracks of ``lbm-bench benchmark`` (:mod:`lbm_bench.scoring.benchmark`: the numbers of
clusters given; :mod:`lbm_bench.scoring.unknown_clusters`: chosen by the algorithm) run one
task per (algorithm, table), keep its row in ``OUT/runs/<algorithm>/<table id>.json`` and
write ``results.csv``, ``summary.md`` and ``excess_risk.png`` with these helpers.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from lbm_bench._atomic import put_in_place, temporary_path

__all__ = ["Writes", "algorithm_input", "check_timeout", "excess_figure", "family_keywords", "mean_of",
           "plot_excess", "run_path", "safe_name", "write_csv", "write_json", "write_text"]


def safe_name(name: str) -> str:
    """An algorithm's name as a folder name (no separators, never a hidden folder)."""
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name).lstrip(".")


def run_path(out_dir: str | Path, algorithm: str, table_id: str) -> Path:
    """Where the row of one run is kept: ``OUT/runs/<algorithm>/<table id>.json``."""
    return Path(out_dir) / "runs" / safe_name(algorithm) / f"{table_id}.json"


def write_json(path: Path, record: dict) -> None:
    """Write ``record`` as JSON under ``path``, atomically (a temporary name, then the final one)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text(path, json.dumps(record, sort_keys=True))


def write_text(path: Path, text: str) -> None:
    """Write UTF-8 ``text`` under ``path`` atomically: an interrupted write leaves no half file."""
    temporary = temporary_path(path)
    try:
        temporary.write_text(text, encoding="utf-8", newline="")
        put_in_place(temporary, path, overwrite=True)
    finally:
        temporary.unlink(missing_ok=True)


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


def _remove_if_empty(path: Path) -> None:
    try:
        path.rmdir()
    except OSError:  # a folder that holds files (of an earlier run, or of finished runs)
        pass


def family_keywords(
    name: str, fit: Any, table: Any, alternatives: str = "cem, vem, {kind}-cem or {kind}-vem"
) -> dict[str, str]:
    """What the harness tells an algorithm of the table's family.

    A family that cannot be told from the entries' values (``inference_order`` None:
    categorical codes look like counts) is passed as ``kind=`` to the algorithms that
    take it (block CEM and VEM, and their selections); an algorithm that reads the
    entries as numbers is refused a table whose entries are unordered levels
    (``n_levels``), in one line suggesting ``alternatives`` (``{kind}``: the table's kind).
    """
    from lbm_bench.algorithms import fits_family

    how = fits_family(fit, table.kind)
    if how == "values" and table.model.n_levels is not None:
        raise ValueError(
            f"{name} reads the entries as numbers, but the {table.kind} table holds {table.model.n_levels} "
            f"unordered categories; use {alternatives.format(kind=table.kind)} (or an algorithm taking a kind= "
            "keyword)"
        )
    if how == "kind" and table.model.inference_order is None:
        return {"kind": table.kind}
    return {}


def algorithm_input(fit: Any, table: Any) -> Any:
    """The table as an algorithm is given it: ``table.data`` (NaN at missing entries; a sparse
    table: explicit NaN values), or a NumPy masked array in the table's dtype for an algorithm
    that asks for one (attribute :data:`lbm_bench.algorithms.MASKED_INPUT`) when the dense
    table has missing entries."""
    from lbm_bench.algorithms.registry import MASKED_INPUT
    from lbm_bench.models.data import TableData

    data = table.data
    if getattr(fit, MASKED_INPUT, False) and table.missing_mechanism is not None and not TableData.of(data).is_sparse:
        return table.masked_data()
    return data


def write_csv(path: Path, rows: list[dict], columns: Sequence[str]) -> None:
    """``rows`` as CSV with ``columns`` (a missing value is empty), written atomically."""
    import io

    buffer = io.StringIO(newline="")
    writer = csv.DictWriter(buffer, fieldnames=list(columns), extrasaction="ignore")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: row.get(k, "") for k in columns})
    write_text(path, buffer.getvalue())


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
    temporary = temporary_path(path)
    try:
        fig.savefig(temporary, dpi=120, metadata={"Software": None}, format="png")
        put_in_place(temporary, path, overwrite=True)
    finally:
        temporary.unlink(missing_ok=True)
        plt.close(fig)
    return True


def excess_figure(ok: list[dict]) -> Any:
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
