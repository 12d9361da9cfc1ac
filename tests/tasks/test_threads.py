"""BLAS pinned to one thread in worker tasks (lbm_bench.tasks.threads)."""

import numpy as np
import pytest

from lbm_bench.tasks.threads import single_blas_thread


def test_blas_runs_on_one_thread_inside_and_as_before_after():
    threadpoolctl = pytest.importorskip("threadpoolctl")
    before = [pool["num_threads"] for pool in threadpoolctl.threadpool_info() if pool["user_api"] == "blas"]
    with single_blas_thread():
        inside = [pool["num_threads"] for pool in threadpoolctl.threadpool_info() if pool["user_api"] == "blas"]
        assert all(n == 1 for n in inside)
    after = [pool["num_threads"] for pool in threadpoolctl.threadpool_info() if pool["user_api"] == "blas"]
    assert after == before


def test_products_are_the_same_bytes_pinned_or_not():
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(200, 300)), rng.normal(size=(300, 100))
    with single_blas_thread():
        pinned = a @ b
    assert np.allclose(pinned, a @ b)  # same product (bytes may differ by threads: hence the pinning)
    with single_blas_thread():
        assert np.array_equal(pinned, a @ b)  # pinned twice: the same bytes
