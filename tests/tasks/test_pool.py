"""Running tasks (lbm_bench.tasks.pool): results in the calls' order or as they come, in worker
processes or in this process, pinned to one BLAS thread, the heap given back after each task."""

from __future__ import annotations

import os

import pytest

from lbm_bench.tasks import pool as pool_module
from lbm_bench.tasks.backends import in_threads, worker_backend
from lbm_bench.tasks.pool import TaskPool, iter_tasks, run_bundles, run_tasks


def _square(x):
    return x * x


def _pid(_):
    return os.getpid()


def _blas_threads(_=None):
    import threadpoolctl

    pools = threadpoolctl.threadpool_info()
    return sorted({pool["num_threads"] for pool in pools if pool["user_api"] == "blas"})


def _bundle_task(base, bundle, offset):
    """A task of run_bundles: one result per item, with the shared input and a further argument."""
    return [(base + item + offset, os.getpid(), _blas_threads()) for item in bundle]


def test_run_tasks_gives_every_result_in_the_calls_order():
    calls = [(k,) for k in range(10)]
    assert run_tasks(_square, calls, 1) == [k * k for k in range(10)]
    with worker_backend("loky", 2):
        assert run_tasks(_square, calls, 2) == [k * k for k in range(10)]
        assert os.getpid() not in run_tasks(_pid, calls[:4], 2)


def _slow_pid(_):
    import time

    time.sleep(0.3)
    return os.getpid()


def test_workers_are_capped_at_the_tasks_and_the_cores():
    """No more workers than tasks and usable cores, whatever ``jobs`` asks: ``--jobs 64`` on 12
    tables started 64 processes (5 GB; issue 48, item 4). Tasks that each hold a worker for a
    while show how many ran at once."""
    import joblib

    cores = joblib.cpu_count()
    calls = [(k,) for k in range(2 * cores + 2)]
    assert len(set(run_tasks(_slow_pid, calls, 64))) <= cores
    assert len(set(iter_tasks(_slow_pid, calls, 64, as_done=True))) <= cores
    with TaskPool(64) as pool:
        assert len(set(pool.map(_slow_pid, calls))) <= cores
    assert run_tasks(_slow_pid, calls[:1], 64) == [os.getpid()]  # one task, one worker: this process


# joblib notes the tasks a closed iterator cancels (the benchmark harness silences it likewise)
@pytest.mark.filterwarnings("ignore:.*tasks which were still being processed:UserWarning")
def test_iter_tasks_in_order_or_as_done():
    calls = [(k,) for k in range(8)]
    with worker_backend("loky", 2):
        assert list(iter_tasks(_square, iter(calls), 2)) == [k * k for k in range(8)]
        assert sorted(iter_tasks(_square, calls, 2, as_done=True)) == [k * k for k in range(8)]
        results = iter_tasks(_square, calls, 2, as_done=True)
        next(results)
        results.close()  # the tasks not yet started are dropped: no error


def test_pin_runs_each_task_on_one_blas_thread():
    pytest.importorskip("threadpoolctl")
    with worker_backend("loky", 2):
        assert run_tasks(_blas_threads, [(k,) for k in range(2)], 2, pin=True) == [[1], [1]]
    assert run_tasks(_blas_threads, [(0,)], 1, pin=True) == [[1]]  # in this process too


def test_trim_gives_the_heap_back_after_each_task_whatever_it_raised(monkeypatch):
    """One job: the tasks run in this process, where the hand-back can be counted."""
    given_back = []
    monkeypatch.setattr(pool_module, "release_free_memory",
                        lambda collect=True: given_back.append(collect))
    assert run_tasks(_square, [(2,), (3,)], 1, trim=True) == [4, 9]
    assert given_back == [False, False]  # no collection: a worker's heap only
    with pytest.raises(ZeroDivisionError):
        run_tasks(divmod, [(1, 0)], 1, trim=True)
    assert given_back == [False] * 3
    run_tasks(_square, [(2,)], 1)
    assert len(given_back) == 3  # without trim, nothing


def test_a_task_pool_keeps_its_workers_for_a_series_of_task_lists():
    calls = [(k,) for k in range(6)]
    with worker_backend("loky", 2), TaskPool(2) as pool:
        assert pool.map(_square, calls) == [k * k for k in range(6)]
        assert sorted(pool.as_done(_square, calls)) == [k * k for k in range(6)]
        first, second = set(pool.map(_pid, calls)), set(pool.map(_pid, calls))
        assert os.getpid() not in first | second and len(first | second) <= 2  # the same workers


def test_a_task_pool_without_a_block_runs_each_list_as_a_call_of_its_own():
    with worker_backend("loky", 2):
        pool = TaskPool(2)  # the build's pool: loky's reusable workers serve every list
        assert pool.map(_square, [(k,) for k in range(5)]) == [0, 1, 4, 9, 16]
        assert sorted(pool.as_done(_square, [(k,) for k in range(3)])) == [0, 1, 4]


def test_a_loky_pool_runs_in_processes_whatever_the_backend_in_force():
    """verify's own pool: local processes even under threads."""
    with in_threads(), TaskPool(2, backend="loky") as pool:
        assert os.getpid() not in pool.map(_pid, [(k,) for k in range(4)])


def test_run_bundles_in_this_process_for_one_bundle():
    pytest.importorskip("threadpoolctl")
    unpinned = _blas_threads()
    one = run_bundles(_bundle_task, [7], 4, 100, shared=(1000,))  # one item: not pinned
    assert one == [(1107, os.getpid(), unpinned)]
    many = run_bundles(_bundle_task, [1, 2, 3], 1, 10, shared=(0,))  # one bundle of three: pinned
    assert [r[0] for r in many] == [11, 12, 13] and {r[1] for r in many} == {os.getpid()}
    assert all(r[2] == [1] for r in many)


def test_run_bundles_over_workers_keeps_the_items_order():
    pytest.importorskip("threadpoolctl")
    with worker_backend("loky", 2):
        results = run_bundles(_bundle_task, list(range(5)), 2, 1, shared=(100,))
    assert [r[0] for r in results] == [101, 102, 103, 104, 105]
    pids = [r[1] for r in results]
    assert os.getpid() not in pids
    assert pids[:2] == [pids[0]] * 2 and pids[2:] == [pids[2]] * 3  # contiguous bundles of 2 and 3
    assert all(r[2] == [1] for r in results)  # each task on one BLAS thread
