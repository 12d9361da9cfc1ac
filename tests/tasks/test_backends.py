"""Where the workers run (lbm_bench.tasks.backends) and generate --jobs/--backend: the same bytes
for any workers."""

from __future__ import annotations

import hashlib
import os

import pytest

from lbm_bench.cli import main
from lbm_bench.tasks.backends import (
    check_backend,
    in_threads,
    local_backend,
    stop_local_workers,
    worker_backend,
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
