"""Where the workers run (lbm_bench.tasks.backends) and generate --jobs/--backend: the same bytes
for any workers."""

from __future__ import annotations

import contextlib
import hashlib
import os
import socket
import struct
import threading

import pytest

from lbm_bench.cli import main
from lbm_bench.tasks import backends
from lbm_bench.tasks.backends import (
    check_backend,
    in_threads,
    local_backend,
    reach_scheduler,
    stop_local_workers,
    usable_cores,
    worker_backend,
    worker_count,
)
from lbm_bench.tasks.pool import run_tasks


def test_check_backend():
    assert check_backend("loky", 2, None) == ("loky", 2, None)
    with pytest.raises(ValueError, match="backend must be one of"):
        check_backend("threads", 1, None)
    with pytest.raises(ValueError, match="scheduler address needs backend='dask', got backend='loky'"):
        check_backend("loky", 1, "tcp://127.0.0.1:8786")
    with pytest.raises(ValueError, match="n_jobs must be >= 1"):
        check_backend("loky", 0, None)


def test_worker_count_caps_at_the_tasks_and_the_cores(monkeypatch):
    """``--jobs 200`` started 202 processes for a dozen tasks on 2 cores (issue 48, item 4)."""
    from lbm_bench.tasks import backends

    assert usable_cores() >= 1
    monkeypatch.setattr(backends, "usable_cores", lambda: 4)
    assert worker_count(200) == 4 and worker_count(200, 3) == 3 and worker_count(2, 30) == 2
    assert worker_count(200, 0) == 1  # no task: one worker, never zero
    assert worker_count(200, 30, local=False) == 30  # a cluster's cores are its own
    with in_threads():
        assert worker_count(200) == 4  # threads of this process: its cores
    with pytest.raises(ValueError, match="jobs must be >= 1"):
        worker_count(0)


def _pid(_):
    return os.getpid()


def _pids(jobs=2):
    return run_tasks(_pid, [(k,) for k in range(4)], jobs)


def test_loky_backend_runs_in_worker_processes():
    with worker_backend("loky", 2):
        assert local_backend()
        pids = _pids()
    assert os.getpid() not in pids


def test_in_threads_runs_the_tasks_in_this_process():
    with in_threads():
        assert local_backend()
        assert set(_pids()) == {os.getpid()}


def test_stop_local_workers_stops_them_and_the_next_call_starts_new_ones():
    from joblib.externals.loky import reusable_executor

    with worker_backend("loky", 2):
        first = set(_pids())
    executor = reusable_executor._executor
    processes = list(executor._processes.values())
    assert processes and all(process.is_alive() for process in processes)  # kept for reuse
    stop_local_workers()
    assert not any(process.is_alive() for process in processes)
    stop_local_workers()  # nothing left to stop: no error
    with worker_backend("loky", 2):
        assert not first & set(_pids())


def _generate(path, *extra):
    args = ["generate", "--kind", "bernoulli", "--shape", "40x30", "--clusters", "2x2", "--risk", "0.1",
            "--tolerance", "0.05", "--samples", "200", "--chains", "4", "--seed", "7", "-q", "-o", str(path)]
    assert main(args + list(extra)) == 0
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.slow
def test_generate_same_bytes_on_one_worker_loky_and_a_dask_local_cluster(tmp_path):
    pytest.importorskip("dask.distributed")
    one = _generate(tmp_path / "one.h5")
    assert _generate(tmp_path / "loky.h5", "--jobs", "2") == one
    with worker_backend("dask", 2):  # a LocalCluster of 2 worker processes
        from joblib.parallel import get_active_backend

        assert type(get_active_backend()[0]).__name__ == "DaskDistributedBackend"
        assert not local_backend()  # the cluster's workers may be on other machines
        assert os.getpid() not in _pids()
    assert _generate(tmp_path / "dask.h5", "--jobs", "2", "--backend", "dask") == one


@pytest.mark.slow
def test_generate_on_a_running_dask_scheduler(tmp_path):
    distributed = pytest.importorskip("dask.distributed")
    one = _generate(tmp_path / "one.h5")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=None) as cluster:
        digest = _generate(tmp_path / "remote.h5", "--jobs", "2", "--backend", "dask",
                           "--scheduler", cluster.scheduler_address)
    assert digest == one


@pytest.mark.slow
def test_sparse_generate_same_bytes_on_one_and_two_workers(tmp_path):
    """Issue 16, item 5: the calibration tables of a sparse table run in worker processes
    (a fixed number of tables per scale, so that they are spread) with the same bytes."""
    sparse = ("--density", "0.05", "--shape", "200x150", "--calibration-tables", "6")
    one = _generate(tmp_path / "one.h5", *sparse)
    assert _generate(tmp_path / "two.h5", *sparse, "--jobs", "2") == one
    from lbm_bench import load_table

    data = load_table(tmp_path / "two.h5").data
    assert data.format == "csr" and data.shape == (200, 150)


# -- a scheduler that does not answer is refused before the work (issue 48, item 4) -------------


@contextlib.contextmanager
def _server(answer: bytes | None):
    """A TCP server on 127.0.0.1 that accepts and then sends ``answer`` (None: never speaks, as a
    server that waits for a request, an HTTP server); yields its address."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    held = []

    def serve():
        while True:
            try:
                connection, _ = listener.accept()
            except OSError:
                return
            held.append(connection)
            if answer is not None:
                connection.sendall(answer)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"tcp://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        listener.shutdown(socket.SHUT_RDWR)  # wakes the accept of the serving thread
        listener.close()
        for connection in held:
            connection.close()


def test_a_scheduler_address_is_checked_before_the_work():
    with pytest.raises(ValueError, match=r"scheduler='notanaddress' is not the address of a Dask scheduler \(tcp://"):
        check_backend("dask", 1, "notanaddress")
    for bad in ("tcp://host", "host:port", "tcp://:8786", "tcp://h:99999", ""):
        with pytest.raises(ValueError, match="scheduler"):
            check_backend("dask", 1, bad)
    assert check_backend("dask", 1, "tcp://[::1]:8786")[2] == "tcp://[::1]:8786"
    assert check_backend("dask", 1, "tls://host:8786")[2] == "tls://host:8786"  # the client's to check


def test_reach_scheduler_refuses_what_is_not_a_scheduler():
    with _server(None) as silent, pytest.raises(ValueError, match="no Dask scheduler answered within 0.5 s"):
        reach_scheduler(silent, timeout=0.5)
    with _server(b"HTTP/1.0 400 Bad Request\r\n\r\n") as http, pytest.raises(
            ValueError, match="answered, but not as a Dask scheduler"):
        reach_scheduler(http, timeout=5)
    with socket.socket() as bound:  # a port of this machine where nothing listens
        bound.bind(("127.0.0.1", 0))
        refused = r"scheduler='tcp://127.0.0.1:\d+': could not connect \(connection refused\)"
        with pytest.raises(ValueError, match=refused):
            reach_scheduler(f"tcp://127.0.0.1:{bound.getsockname()[1]}", timeout=5)
    with _server(struct.pack("<Q", 300) + b"x" * 300) as greeting:
        reach_scheduler(greeting, timeout=5)  # a scheduler's greeting: its length first


@pytest.mark.slow
def test_reach_scheduler_accepts_a_running_scheduler():
    distributed = pytest.importorskip("dask.distributed")
    with distributed.LocalCluster(n_workers=0, processes=True, host="127.0.0.1",
                                  dashboard_address=None) as cluster:
        reach_scheduler(cluster.scheduler_address, timeout=10)


@pytest.mark.parametrize("answer", [None, b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"])
def test_a_build_on_a_scheduler_that_does_not_answer_touches_nothing(tmp_path, monkeypatch, capsys, answer):
    """A server that accepts and never speaks hung the build forever; an HTTP server was a
    traceback (a 3.07 EiB allocation); and every failed connection left rel/spec.toml and tables/."""
    pytest.importorskip("dask.distributed")
    monkeypatch.setattr(backends, "CONNECT_TIMEOUT", 1.0)
    spec = tmp_path / "s.toml"
    spec.write_text(SPEC)
    with _server(answer) as address:
        code = main(["build", str(spec), "--out", str(tmp_path / "rel"), "--backend", "dask", "--scheduler",
                     address, "-q"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1, err
    assert err.startswith(f"lbm-bench build: error: --scheduler {address}")
    assert not (tmp_path / "rel").exists()


def test_generate_names_the_scheduler_flag_for_an_address_that_is_none(tmp_path, capsys):
    """It said ``--missing port number in address`` (the word "missing" rewritten into a flag)."""
    assert main(["generate", "--kind", "bernoulli", "--shape", "30x20", "--clusters", "2x2", "--risk", "0.1",
                 "--backend", "dask", "--scheduler", "notanaddress", "-o", str(tmp_path / "x.h5")]) == 2
    err = capsys.readouterr().err
    assert err == ("lbm-bench generate: error: --scheduler notanaddress is not the address of a Dask scheduler "
                   "(tcp://HOST:PORT, as dask-scheduler prints it)\n")


SPEC = """[release]
name = "probe"
version = "1.0"
seed = 1
license = "CC-BY-4.0"
description = "probe"

[[grid]]
kinds = ["bernoulli"]
shapes = ["30x20"]
clusters = ["2x2"]
risks = [0.1]
"""
