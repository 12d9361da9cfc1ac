"""What a plugged-in algorithm can do to the benchmark (issue 35, item 3): raise ``SystemExit``,
``KeyboardInterrupt`` or another ``BaseException`` (a failed run, never a silent exit 0), hang
(``--timeout``: a failed run, timed out), end its process, or be killed with the benchmark
(SIGTERM: one line, status 143, no empty or half-written output)."""

import csv
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from lbm_bench.scoring.algorithm_call import RunFailed, fit_labels
from lbm_bench.scoring.benchmark import run_benchmark
from lbm_bench.scoring.harness import ContractError
from lbm_bench.storage import load_table

ALGORITHMS = """
import os, sys, time
from pathlib import Path
import numpy as np


class Stop(BaseException):
    pass


def exits(X, g, m, *, rng):
    sys.exit(0)


def interrupts(X, g, m, *, rng):
    raise KeyboardInterrupt


def stops(X, g, m, *, rng):
    raise Stop("a BaseException of its own")


def ends(X, g, m, *, rng):
    os._exit(0)


def _sleeper(name):
    import subprocess
    sleep = subprocess.Popen(["sleep", "300"])
    Path(__file__).with_name(name).write_text(str(sleep.pid))


def spawns_and_hangs(X, g, m, *, rng):
    _sleeper("spawned-hangs")
    time.sleep(600)


def spawns_and_returns(X, g, m, *, rng):
    _sleeper("spawned-returns")
    return np.arange(X.shape[0]) % 2, np.arange(X.shape[1]) % 2


def masked(X, g, m, *, rng):
    rows = np.ma.masked_array(np.arange(X.shape[0]) % 2, mask=np.arange(X.shape[0]) == 0)
    return rows, np.arange(X.shape[1]) % 2


def hangs_on_gaussian(X, g, m, *, rng):
    if X.dtype.kind == "f" and not np.all(X == np.round(X)):
        Path(__file__).with_name("marker").write_text("started")  # no env: workers may predate it
        time.sleep(600)
    return np.arange(X.shape[0]) % 2, np.arange(X.shape[1]) % 2
"""


@pytest.fixture()
def algorithms(tmp_path):
    path = tmp_path / "hostile.py"
    path.write_text(ALGORITHMS)
    return path


def _rows(path):
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


@pytest.mark.parametrize("name, error", [
    ("exits", "SystemExit: 0 (raised by the algorithm)"),
    ("interrupts", "KeyboardInterrupt (raised by the algorithm)"),
    ("stops", "Stop: a BaseException of its own (raised by the algorithm)"),
])
@pytest.mark.parametrize("track, jobs", [("known-clusters", 1), ("known-clusters", 2), ("unknown-clusters", 2)])
def test_a_base_exception_of_the_algorithm_is_a_failed_run(release, algorithms, tmp_path, name, error, track, jobs):
    """SystemExit(0) in a plugged-in algorithm used to end the benchmark with status 0 and an empty
    --out: it is that run's failure, on both tracks and in worker processes."""
    out = tmp_path / "out"
    rows = run_benchmark(release, [f"{algorithms}:{name}"], out, n_jobs=jobs, track=track,
                         max_clusters=(4, 4) if track == "unknown-clusters" else None)
    assert len(rows) == 5 and all(r["error"] == error for r in rows)
    assert [r["error"] for r in _rows(out / "results.csv")] == [error] * 5


def test_the_command_line_fails_on_an_algorithm_that_exits(release, algorithms, tmp_path):
    done = subprocess.run([sys.executable, "-m", "lbm_bench.cli", "benchmark", str(release), "--algorithm",
                           f"{algorithms}:exits", "--out", str(tmp_path / "out"), "-q", "--jobs", "2"],
                          capture_output=True, text=True)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.strip().endswith("SystemExit: 0 (raised by the algorithm)")
    assert len(done.stderr.strip().splitlines()) == 1


def test_fit_labels_with_a_time_limit(release, algorithms):
    """In a child process: the labels come back as in this process; a hang is stopped at the
    limit, an algorithm that ends its process is a failed run."""
    path = sorted((release / "tables").glob("gaussian-*.h5"))[0]
    table = load_table(path)
    here = fit_labels("double-kmeans", table, (2, 2), 7)
    there = fit_labels("double-kmeans", table, (2, 2), 7, path=path, timeout=60)
    np.testing.assert_array_equal(here[0], there[0])
    np.testing.assert_array_equal(here[1], there[1])
    start = time.perf_counter()
    with pytest.raises(RunFailed, match=r"^TimeoutError: the fit ran longer than the time limit of 1 s"):
        fit_labels(f"{algorithms}:hangs_on_gaussian", table, (2, 2), 0, path=path, timeout=1)
    assert time.perf_counter() - start < 30
    with pytest.raises(RunFailed, match=r"process ended \(exit status 0\) without returning labels"):
        fit_labels(f"{algorithms}:ends", table, (2, 2), 0, path=path, timeout=60)
    with pytest.raises(RunFailed, match=r"^SystemExit: 0 \(raised by the algorithm\)$"):
        fit_labels(f"{algorithms}:exits", table, (2, 2), 0, path=path, timeout=60)


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie left for its new parent to reap has ended)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_what_the_algorithm_starts_ends_with_its_run(release, algorithms):
    """Under ``--timeout`` a plug-in that starts a subprocess (a solver, here ``sleep 300``) left
    it running, orphaned, after its run: 12 of them after a benchmark (issue 48, item 4). The
    child leads a process group, and the whole group is stopped when the run ends: timed out,
    or done with a process left behind."""
    path = sorted((release / "tables").glob("gaussian-*.h5"))[0]
    table = load_table(path)
    with pytest.raises(RunFailed, match="^TimeoutError"):
        fit_labels(f"{algorithms}:spawns_and_hangs", table, (2, 2), 0, path=path, timeout=2)
    rows, _, _ = fit_labels(f"{algorithms}:spawns_and_returns", table, (2, 2), 0, path=path, timeout=60)
    assert len(rows) == table.shape[0]
    for name in ("spawned-hangs", "spawned-returns"):
        pid = int(algorithms.with_name(name).read_text())
        deadline = time.monotonic() + 5
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(pid), f"the algorithm's sleep 300 ({name}) outlived its run"


@pytest.mark.parametrize("timeout", [None, 60])
@pytest.mark.parametrize("track", ["known-clusters", "unknown-clusters"])
def test_masked_labels_are_a_failed_run_not_their_hidden_values(release, algorithms, tmp_path, track, timeout):
    """A plug-in's masked label array was scored by its masked values (issue 48)."""
    if track == "unknown-clusters":  # labels that are none: the contract broken, the benchmark stops
        with pytest.raises(ContractError, match="row labels is a masked array with 1 masked entry"):
            run_benchmark(release, [f"{algorithms}:masked"], tmp_path / "out", track=track, timeout=timeout,
                          max_clusters=(4, 4))
        return
    rows = run_benchmark(release, [f"{algorithms}:masked"], tmp_path / "out", track=track, timeout=timeout)
    assert rows and all("rows is a masked array with 1 masked entry" in r["error"] for r in rows), [
        r["error"] for r in rows]


def test_a_time_limit_far_away_is_no_error(release):
    """``--timeout 1e10`` failed every run with ``OverflowError: timestamp out of range``."""
    path = sorted((release / "tables").glob("gaussian-*.h5"))[0]
    rows, cols, seconds = fit_labels("double-kmeans", load_table(path), (2, 2), 7, path=path, timeout=1e10)
    assert len(rows) > 0 and len(cols) > 0 and seconds >= 0


@pytest.mark.parametrize("track", ["known-clusters", "unknown-clusters"])
def test_timeout_fails_only_the_run_that_hangs(release, algorithms, tmp_path, track):
    unknown = track == "unknown-clusters"
    rows = run_benchmark(release, [f"{algorithms}:hangs_on_gaussian"], tmp_path / "out", n_jobs=2, track=track,
                         timeout=1.5, max_clusters=(4, 4) if unknown else None)
    failed = {r["table"] for r in rows if r["error"]}
    assert failed == {r["table"] for r in rows if r["kind"] == "gaussian"} and len(failed) == 2
    errors = [r["error"] for r in rows if r["error"]]
    assert all(e.startswith("TimeoutError: the fit ran longer than the time limit of 1.5 s") for e in errors), errors
    assert all(float(r["risk"]) >= 0 for r in rows if not r["error"])


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_sigterm_leaves_no_empty_or_half_output(release, algorithms, tmp_path, jobs):
    marker = tmp_path / "marker"
    out = tmp_path / "deep" / "out"
    proc = subprocess.Popen([sys.executable, "-m", "lbm_bench.cli", "benchmark", str(release), "--algorithm",
                             f"{algorithms}:hangs_on_gaussian", "--out", str(out), "-q", "--jobs", jobs],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not marker.exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert marker.exists(), proc.stderr.read() if proc.poll() is not None else "the algorithm never started"
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143 and err.strip() == "lbm-bench: terminated"
    # the finished runs' files are kept for a resume, complete; nothing else, no empty folder
    kept = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file() and p.name != "marker")
    assert all(p.suffix == ".json" and not p.name.startswith(".") for p in kept if p.parts[0] == "deep")
    if not any(p.parts[0] == "deep" for p in kept):
        assert not (tmp_path / "deep").exists()
    assert not (out / "results.csv").exists()
