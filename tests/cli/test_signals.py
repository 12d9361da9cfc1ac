"""No process of a run outlives it (issue 48, item 4): under SIGINT, SIGTERM and SIGHUP (a closed
terminal) sent to the command at ``--jobs`` 1, 2 and 64, every process it started (loky's
workers and resource tracker, a timed fit's child and what a plug-in started in it) has ended
5 s after the signal, and the command says so in one line with its exit status. ``fit --jobs
200`` once started 202 workers and SIGTERM orphaned 53 of them; SIGHUP left the workers for
five minutes; a plug-in's ``sleep 300`` outlived its benchmark."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from lbm_bench import get_family

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

#: How long a process of the run may outlive the signal.
GRACE = 5.0


def _children() -> dict[int, list[int]]:
    """Every running process's children (zombies, which have ended, left out)."""
    tree: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z":
            tree.setdefault(int(fields[1]), []).append(int(entry))
    return tree


def _descendants(pid: int) -> set[int]:
    tree, found, todo = _children(), set(), [pid]
    while todo:
        for child in tree.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def _running(pids: set[int]) -> set[int]:
    alive = set()
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as handle:
                if handle.read().rsplit(")", 1)[1].split()[0] != "Z":
                    alive.add(pid)
        except OSError:
            pass
    return alive


def _signalled(argv: list[str], cwd: Path, signum: int, *, started, at_least: int = 0) -> tuple[int, str, set]:
    """Run the command, wait until ``started()`` and ``at_least`` processes below it, send
    ``signum`` to the command alone; return its exit status, its stderr and the processes of the
    run still running ``GRACE`` seconds later (killed then, so that nothing is left)."""
    err_path = cwd / f"stderr-{signum}"
    with open(err_path, "w") as err:
        command = subprocess.Popen([sys.executable, "-m", "lbm_bench.cli", *argv], cwd=cwd,
                                   stdout=subprocess.DEVNULL, stderr=err, start_new_session=True)
    seen: set[int] = set()
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline and command.poll() is None:
            seen |= _descendants(command.pid)
            if started() and len(seen) >= at_least:
                break
            time.sleep(0.05)
        assert command.poll() is None, "the command ended before the signal: " + err_path.read_text()
        time.sleep(0.5)
        seen |= _descendants(command.pid)
        command.send_signal(signum)
        end = time.monotonic() + GRACE
        while time.monotonic() < end:
            seen |= _descendants(command.pid)
            if command.poll() is not None and not _running(seen):
                break
            time.sleep(0.05)
        left = _running(seen | ({command.pid} if command.poll() is None else set()))
    finally:
        for pid in _running(seen | {command.pid}):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        command.wait(30)
    return command.returncode, err_path.read_text(), left


STATUS = {signal.SIGINT: (130, "lbm-bench: interrupted"), signal.SIGTERM: (143, "lbm-bench: terminated"),
          signal.SIGHUP: (129, "lbm-bench: terminated")}


@pytest.fixture(scope="module")
def counts(tmp_path_factory):
    """Counts whose model selection keeps the workers busy for a while (6x6 cells)."""
    folder = tmp_path_factory.mktemp("signals")
    model = get_family("poisson").model([0.3, 0.3, 0.4], [0.5, 0.5], [[0.5, 4.0], [3.0, 1.0], [2.0, 2.0]])
    X, _, _ = model.sample(600, 400, rng=0)
    np.save(folder / "counts.npy", X)
    return folder / "counts.npy"


def _fit_case(counts: Path, tmp_path: Path, signum: int, jobs: str) -> None:
    workers = 0 if jobs == "1" else 2  # loky's workers (capped at the cores) and its tracker
    start = time.monotonic()
    code, err, left = _signalled(["fit", str(counts), "--max-clusters", "6x6", "--jobs", jobs, "-q", "-o",
                                  str(tmp_path / "d.toml")], tmp_path, signum,
                                 started=lambda: time.monotonic() - start > 3, at_least=workers)
    assert not left, f"{len(left)} process(es) of the run outlived {signal.Signals(signum).name} by {GRACE} s"
    assert (code, err.strip()) == STATUS[signum]
    assert not (tmp_path / "d.toml").exists()


SIGNALS = pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP],
                                  ids=["SIGINT", "SIGTERM", "SIGHUP"])


@SIGNALS
def test_no_process_of_a_fit_outlives_a_signal(counts, tmp_path, signum):
    _fit_case(counts, tmp_path, signum, "2")


@pytest.mark.slow  # 4 s each; the same at 2 workers in the default suite
@SIGNALS
@pytest.mark.parametrize("jobs", ["1", "64"])
def test_no_process_of_a_fit_at_1_or_64_jobs_outlives_a_signal(counts, tmp_path, signum, jobs):
    _fit_case(counts, tmp_path, signum, jobs)


PLUGIN = """
import subprocess, time
from pathlib import Path


def spawns_and_hangs(X, g, m, *, rng):
    sleep = subprocess.Popen(["sleep", "300"])
    Path(__file__).with_name(f"started-{sleep.pid}").write_text("")
    time.sleep(600)
"""


@pytest.mark.parametrize("signum, jobs", [(signal.SIGTERM, "2"), (signal.SIGHUP, "64"),
                                         pytest.param(signal.SIGINT, "1", marks=pytest.mark.slow)],
                         ids=["SIGTERM-2", "SIGHUP-64", "SIGINT-1"])
def test_no_process_of_a_timed_benchmark_outlives_a_signal(release, tmp_path, signum, jobs):
    """The hardest case: each fit in a child of its own process group (``--timeout``), started by
    a worker, and the plug-in's own ``sleep 300`` in it."""
    (tmp_path / "algos.py").write_text(PLUGIN)
    code, err, left = _signalled(
        ["benchmark", str(release), "--algorithm", "algos:spawns_and_hangs", "--timeout", "600", "--out", "out",
         "-q", "--jobs", jobs], tmp_path, signum, started=lambda: any(tmp_path.glob("started-*")))
    sleeps = [int(p.name.partition("-")[2]) for p in tmp_path.glob("started-*")]
    assert not left and not _running(set(sleeps)), "a process of the run outlived the signal"
    assert (code, err.strip()) == STATUS[signum]


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    from lbm_bench.release import build_release
    from tests.release.helpers import TINY_SPEC

    folder = tmp_path_factory.mktemp("signals-release")
    (folder / "tiny.toml").write_text(TINY_SPEC)
    report = build_release(folder / "tiny.toml", folder / "tiny")
    assert report.ok, report.summary()
    return folder / "tiny"
