"""Settings every task carries to its worker (lbm_bench.tasks.carried): set for a block, read
where the work runs, in this process, loky workers and threads, and gone after the block."""

import os

import pytest

from lbm_bench.tasks.backends import in_threads, worker_backend
from lbm_bench.tasks.carried import carried_in, carried_settings, carried_value, carrying
from lbm_bench.tasks.pool import TaskPool, iter_tasks, run_bundles, run_tasks


def _read(_=None):
    return carried_value("colour"), os.getpid()


def _bundle(items, extra):
    return [(carried_value("colour"), item + extra) for item in items]


def test_a_setting_holds_for_its_block_and_nests():
    assert carried_value("colour") is None and carried_value("colour", "none") == "none"
    with carrying("colour", "red"):
        assert carried_value("colour") == "red" and carried_settings() == {"colour": "red"}
        with carrying("colour", "blue"):
            assert carried_value("colour") == "blue"
        with carrying("colour", None):  # None: left as it is
            assert carried_value("colour") == "red"
        assert carried_value("colour") == "red"
    assert carried_value("colour") is None and carried_settings() == {}


def test_carried_in_restores_the_worker_s_own_settings_whatever_the_task_raised():
    with carrying("colour", "green"):
        with pytest.raises(RuntimeError), carried_in({"colour": "red", "size": 3}):
            assert carried_value("size") == 3
            raise RuntimeError
        assert carried_value("colour") == "green" and carried_value("size") is None


@pytest.mark.parametrize("where", ["loky", "threads"])
def test_every_way_of_handing_over_tasks_carries_the_settings(where):
    calls = [(k,) for k in range(4)]
    with worker_backend("loky", 2) if where == "loky" else in_threads():
        assert {c for c, _ in run_tasks(_read, calls, 2)} == {None}
        with carrying("colour", "red"):
            got = run_tasks(_read, calls, 2)
            assert {c for c, _ in got} == {"red"}
            assert {c for c, _ in iter_tasks(_read, calls, 2, as_done=True)} == {"red"}
            assert run_bundles(_bundle, list(range(4)), 2, 10)[0] == ("red", 10)
            with TaskPool(2) as pool:
                assert {c for c, _ in pool.map(_read, calls)} == {"red"}
                assert {c for c, _ in pool.as_done(_read, calls, pin=True)} == {"red"}
        assert {c for c, _ in run_tasks(_read, calls, 2)} == {None}  # the workers forgot it
    if where == "loky":
        assert os.getpid() not in {pid for _, pid in got}
