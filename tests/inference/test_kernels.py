"""The storages' kernels behind one door (lbm_bench.inference.kernels): the Sweeper takes
the first registered kernel that accepts its tables, and a new kernel is one registration."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from lbm_bench import random_model
from lbm_bench.inference import kernels
from lbm_bench.inference.code_sums import CodeStatistics
from lbm_bench.inference.dense_sums import DenseStatistics
from lbm_bench.inference.engine import Sweeper
from lbm_bench.inference.kernels import StorageKernel, TableLayout, choose_kernel, register_kernel
from lbm_bench.inference.sparse_sums import SparseStatistics


def test_the_built_in_kernels_follow_the_storage(monkeypatch):
    model = random_model("bernoulli", 2, 2, scale=1.0, rng=0)
    X, _, _ = model.sample(30, 20, rng=1)
    dense = Sweeper.for_table(model, X)
    assert dense.kernel.name == "dense" and isinstance(dense.storage, DenseStatistics)
    stacked = Sweeper(model, np.stack([X, X]))
    assert stacked.kernel.name == "dense" and stacked.n_tables == 2
    sparse = Sweeper.for_table(model, sp.csr_array(X))
    assert sparse.kernel.name == "sparse" and isinstance(sparse.storage, SparseStatistics) and sparse.is_sparse
    incomplete = X.astype(float)
    incomplete[0, 0] = np.nan
    assert Sweeper.for_table(model, incomplete).kernel.name == "dense"
    categorical = random_model("categorical", 2, 2, scale=1.0, rng=0, categories=3)
    C, _, _ = categorical.sample(30, 20, rng=1)
    monkeypatch.setattr("lbm_bench.inference.code_sums.CODE_MIN_TABLE_BYTES", 0)
    codes = Sweeper.for_table(categorical, C)
    assert codes.kernel.name == "codes" and isinstance(codes.storage, CodeStatistics)


def test_a_registered_kernel_is_asked_first_and_chosen(monkeypatch):
    monkeypatch.setattr(kernels, "KERNELS", list(kernels.KERNELS))
    model = random_model("poisson", 2, 2, scale=1.0, rng=0)
    X, _, _ = model.sample(30, 20, rng=1)
    built = []

    def build(family, layout, sides):  # the dense kernel, counted: a compiled kernel would be its own
        built.append(layout)
        return DenseStatistics(family, layout.arrays, sides, layout.masks)

    register_kernel(StorageKernel("counted", lambda model, layout: not layout.is_sparse, build))
    sweeper = Sweeper.for_table(model, X)
    assert sweeper.kernel.name == "counted" and len(built) == 1
    assert built[0].n_rows == 30 and not built[0].incomplete and built[0].masks is None
    assert Sweeper.for_table(model, sp.csr_array(X)).kernel.name == "sparse"  # it declined sparse tables
    with pytest.raises(ValueError, match="a kernel named 'counted' is registered already"):
        register_kernel(StorageKernel("counted", lambda model, layout: False, build))
    with pytest.raises(TypeError, match="kernel must be a StorageKernel, got str"):
        register_kernel("dense")


def test_no_kernel_for_the_tables_is_refused(monkeypatch):
    monkeypatch.setattr(kernels, "KERNELS", [k for k in kernels.KERNELS if k.name != "sparse"])
    model = random_model("bernoulli", 2, 2, scale=1.0, rng=0)
    layout = TableLayout([], True, False, 3, 4)
    with pytest.raises(TypeError, match="no registered kernel accepts sparse tables of BernoulliLBM"):
        choose_kernel(model, layout)
