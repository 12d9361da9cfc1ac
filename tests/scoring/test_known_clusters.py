"""The known-clusters track (lbm_bench.scoring.known_clusters) and ``lbm-bench benchmark``: plugged-in
algorithms from the current directory or a path, the summary's wording, the plot's axes,
a run whose every fit fails, and a second run that resumes from the run files."""

import csv
import os
import subprocess
import sys
from pathlib import Path

import pytest

from lbm_bench.scoring.benchmark import run_benchmark
from lbm_bench.scoring.known_clusters import summarise_known_clusters

USER_ALGORITHM = """
import numpy as np

def fit(X, n_row_clusters, n_col_clusters, *, rng):
    return np.arange(X.shape[0]) % n_row_clusters, np.arange(X.shape[1]) % n_col_clusters

def broken(X, n_row_clusters, n_col_clusters, *, rng):
    raise RuntimeError("my algorithm failed")
"""



def _cli(cwd, *args):
    """Run the ``lbm-bench`` entry point as a user would: unlike ``python -m``, it does not
    put the current directory on sys.path."""
    script = Path(sys.executable).with_name("lbm-bench")
    if not script.is_file():
        pytest.skip(f"no lbm-bench entry point next to {sys.executable}")
    return subprocess.run([str(script), *map(str, args)], capture_output=True, text=True, cwd=cwd,
                          env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})


@pytest.mark.parametrize("spec", ["myalgo:fit", "./myalgo.py:fit"])
def test_an_algorithm_of_the_current_directory_runs_and_says_its_file(release, tmp_path, spec):
    """``--algorithm myalgo:fit`` for ./myalgo.py needs no PYTHONPATH, and so does its path;
    the command says which file it loaded (issue 27, item 3)."""
    (tmp_path / "myalgo.py").write_text(USER_ALGORITHM)
    done = _cli(tmp_path, "benchmark", release, "--algorithm", spec, "--out", "results")
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip() == f"algorithm {spec}: fit from {(tmp_path / 'myalgo.py').resolve()}"
    assert "5 rows, 0 failed" in done.stdout
    with open(tmp_path / "results" / "results.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 5 and {r["algorithm"] for r in rows} == {spec} and not any(r["error"] for r in rows)
    assert all(not p.name.startswith(".") for p in (tmp_path / "results" / "runs").iterdir())


def test_every_run_failed_prints_one_line_and_no_matplotlib_warning(release, tmp_path):
    """With -q and every run failed: one line on stderr saying so (no legend warning from
    matplotlib), exit status 1, and no picture (issue 27, item 4)."""
    pytest.importorskip("matplotlib")
    (tmp_path / "myalgo.py").write_text(USER_ALGORITHM)
    done = _cli(tmp_path, "benchmark", release, "--algorithm", "./myalgo.py:broken", "--out", "results", "-q")
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.strip().splitlines() == [
        f"5 of 5 run(s) failed (column error of {'results/results.csv'}); first: ./myalgo.py:broken on "
        "bernoulli-30x20-2x2-r0.1-01: RuntimeError: my algorithm failed"
    ]
    assert not (tmp_path / "results" / "excess_risk.png").exists()


def test_summary_wording_and_plot_axes(release, tmp_path):
    """The summary says what each excess is over, in whole sentences; the plot's axes say
    "floor", which is what they plot (issue 27, item 4)."""
    pytest.importorskip("matplotlib")
    from lbm_bench.scoring.harness import excess_figure as _excess_figure

    rows = run_benchmark(release, ["double-kmeans"], tmp_path / "results")
    text = summarise_known_clusters(rows)
    assert "Excess over MAP = the same risk minus the risk of the table's X-only MAP labels" in text
    assert "= minus" not in text
    assert (tmp_path / "results" / "excess_risk.png").is_file()
    (ax,) = _excess_figure([r for r in rows if not r["error"]]).axes
    assert ax.get_xlabel() == "floor of the table (cross-fitted risk of its Bayes labels)"
    assert ax.get_ylabel() == "excess risk over the floor"
    assert "MAP" not in ax.get_xlabel() + ax.get_ylabel()
    xs = sorted(float(x) for x in ax.collections[0].get_offsets()[:, 0])
    assert xs == sorted(r["bayes_risk"] for r in rows)


def test_a_second_run_resumes_from_the_run_files(release, tmp_path, monkeypatch):
    """Each finished run is kept in runs/<algorithm>/<table>.json; a second run into the same folder
    reads them back instead of fitting again, and writes the same results."""
    from lbm_bench.scoring import known_clusters

    out = tmp_path / "results"
    rows = known_clusters.run_known_clusters(release, ["double-kmeans"], out, seed=3)
    assert sorted(p.stem for p in (out / "runs" / "double-kmeans").glob("*.json")) == sorted(r["table"] for r in rows)

    def refuse(*args, **kwargs):
        raise AssertionError("a finished run was fitted again")

    monkeypatch.setattr(known_clusters, "known_row", refuse)
    again = known_clusters.run_known_clusters(release, ["double-kmeans"], out, seed=3)
    assert again == rows
    with pytest.raises(AssertionError, match="fitted again"):  # another algorithm: new runs
        known_clusters.run_known_clusters(release, ["cem"], out, seed=3)


def test_known_row_reports_a_failure_in_its_row(release, tmp_path):
    from lbm_bench.release import load_release
    from lbm_bench.scoring.known_clusters import known_row

    entry = load_release(release)["tables"][0]
    row = known_row("double-kmeans", {**entry, "file": "tables/absent.h5"}, str(release), 5)
    assert row["table"] == entry["id"] and row["seed"] == 5 and "seconds" not in row
    assert row["error"].startswith(("FileNotFoundError", "OSError", "FormatError", "ValueError"))
    fine = known_row("double-kmeans", entry, str(release), 5)
    assert fine["error"] == "" and 0 <= fine["risk"] <= 1 and fine["seconds"] > 0


def test_the_missing_rate_column_appears_only_with_missing_entries():
    from lbm_bench.scoring.harness import MISSING_COLUMN, RESULT_COLUMNS
    from lbm_bench.scoring.known_clusters import known_clusters_columns

    assert known_clusters_columns([{"table": "a"}]) == RESULT_COLUMNS
    columns = known_clusters_columns([{"table": "a"}, {"table": "b", MISSING_COLUMN: 0.3}])
    assert columns.index(MISSING_COLUMN) == columns.index("n_col_clusters") + 1
    assert [c for c in columns if c != MISSING_COLUMN] == RESULT_COLUMNS
