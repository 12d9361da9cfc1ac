"""A large table crosses to the workers once (issue 33, item 2): memory-mapped for loky
workers, scattered once to a Dask cluster (lbm_bench.tasks.shipping), never in every task's
graph; the label sets stay those of one process."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import scipy.sparse as sp

from lbm_bench import floor_certificate, gibbs_labels, map_labels, random_model
from lbm_bench.tasks import large, shipping
from lbm_bench.tasks.backends import worker_backend
from lbm_bench.tasks.pool import run_bundles


def _memory_mapped(array):
    """Whether ``array`` is a view of a np.memmap (what joblib gives loky workers)."""
    while array is not None:
        if isinstance(array, np.memmap):
            return True
        array = getattr(array, "base", None)
    return False


def _arrays_task(model, table, bundle):
    """A task of run_bundles that reports, for each item, whether the table's CSR arrays
    arrived memory-mapped."""
    csr = table.table
    return [[_memory_mapped(csr.data), _memory_mapped(csr.indices)] for _ in bundle]


def test_loky_workers_read_a_large_sparse_table_memory_mapped():
    """The CSR arrays above joblib's 1 MiB threshold reach every loky task as memory maps of
    one file, not as pickled copies."""
    model = random_model("poisson", 2, 2, scale=1.0, rng=1)
    X = sp.random_array((2000, 1000), density=0.2, rng=3, format="csr", dtype=np.float64)
    X.data = np.ceil(X.data * 3)  # counts
    table = model.check_data(sp.csr_array(X.astype(np.int64)))
    assert table.table.indices.nbytes > 2**20
    with worker_backend("loky", 2):
        seen = run_bundles(_arrays_task, [0, 1, 2, 3], 2, shared=(model, table))
    assert seen == [[True, True]] * 4


def test_a_large_table_crosses_to_the_dask_workers_once(monkeypatch):
    """The MAP's starts and two Gibbs runs of one table on a local Dask cluster: the table is
    scattered once (not in each task's graph, not again for the next run), and the label
    sets are those of one process."""
    distributed = pytest.importorskip("dask.distributed")
    monkeypatch.setattr(large, "LARGE_TABLE_ENTRIES", 1)
    monkeypatch.setattr(shipping, "SHIP_BYTES", 2**12)  # the table and the floor's sides, not the model
    model = random_model("poisson", 2, 3, scale=0.7, rng=1)
    X, z, w = model.sample(300, 200, rng=2)
    table_bytes = X.nbytes
    options = dict(n_samples=40, n_chains=4, burn_in=2, init=[(z, w)], rng=4)
    one = gibbs_labels(model, X, jobs=1, **options)
    start = map_labels(model, X, n_init=4, jobs=1, rng=5)
    floor = floor_certificate(one, starts=[(start.rows, start.cols)], jobs=1)

    sent, scattered = [], []
    submit, scatter = distributed.Client.submit, distributed.Client.scatter

    def counted_submit(self, func, *args, **kwargs):
        sent.append(len(pickle.dumps((args, kwargs), protocol=5)))
        return submit(self, func, *args, **kwargs)

    def counted_scatter(self, data, *args, **kwargs):
        scattered.extend(type(item).__name__ for item in data)
        return scatter(self, data, *args, **kwargs)

    monkeypatch.setattr(distributed.Client, "submit", counted_submit)
    monkeypatch.setattr(distributed.Client, "scatter", counted_scatter)
    with worker_backend("dask", 2):
        found = map_labels(model, X, n_init=4, jobs=2, rng=5)
        runs = [gibbs_labels(model, X, jobs=2, **options) for _ in range(2)]
        assert len(shipping._SHIPPED) == 1  # the table's future, kept while the client lives
        spread = floor_certificate(runs[0], starts=[(found.rows, found.cols)], jobs=2)
    assert not shipping._SHIPPED  # released when the client closed
    assert len(sent) >= 8  # 2 tasks for the starts, 2 per Gibbs run, 2 for the floor's descents
    assert max(sent) < table_bytes / 4, f"a task carried {max(sent)} bytes; the table has {table_bytes}"
    assert sum(name.endswith("TableData") for name in scattered) == 1, scattered
    assert scattered.count("tuple") >= 2  # the floor's label sides, each once
    np.testing.assert_array_equal(spread.rows, floor.rows)
    np.testing.assert_array_equal(spread.cols, floor.cols)
    assert spread.risk == floor.risk
    np.testing.assert_array_equal(found.rows, start.rows)
    for run in runs:
        assert run.rows.tobytes() == one.rows.tobytes() and run.cols.tobytes() == one.cols.tobytes()


def test_off_a_dask_cluster_an_input_is_given_as_it_is():
    """In this process, on loky or in threads, shipped() gives the input itself (loky memory-maps
    its large arrays; threads share it), and nothing is kept."""
    from lbm_bench.tasks.backends import in_threads

    big = np.zeros(2**18)  # 2 MiB, above SHIP_BYTES
    assert shipping.shipped(big) is big
    with worker_backend("loky", 2):
        assert shipping.shipped(big) is big and shipping.shipped(big, reuse=False) is big
    with in_threads():
        assert shipping.shipped(big, broadcast=False) is big
    assert not shipping._SHIPPED
    shipping.release_shipped()  # nothing kept: nothing to release, no error
