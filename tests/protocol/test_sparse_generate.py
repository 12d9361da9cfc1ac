"""generate_table with density= returns a certified sparse table."""

import numpy as np
import pytest
from scipy import sparse

from lbm_bench import generate_table


@pytest.mark.parametrize("kind, options", [
    ("bernoulli", {"density": 0.05}),
    ("poisson", {"density": 0.05, "effects": True, "effects_spread": 0.5}),
])
def test_generate_table_with_density_is_sparse_and_on_target(kind, options):
    table = generate_table(kind, 300, 200, 2, 3, 0.1, tolerance=0.03, n_samples=200,
                           n_calibration_tables=10, rng=4, **options)
    assert isinstance(table.data, sparse.csr_array)
    assert table.shape == (300, 200)
    assert table.model.sparse and table.design.density == 0.05
    assert abs(table.risk.risk - 0.1) <= 0.03
    assert table.data.nnz / (300 * 200) == pytest.approx(0.05, rel=0.25)
    assert table.options["model_options"]["density"] == 0.05
    if "effects" in options:
        assert table.model.row_effects.shape == (300,) and table.model.col_effects.shape == (200,)
    again = generate_table(kind, 300, 200, 2, 3, 0.1, tolerance=0.03, n_samples=200,
                           n_calibration_tables=10, rng=4, **options)
    assert (again.data != table.data).nnz == 0 and np.array_equal(again.gibbs.rows, table.gibbs.rows)


def test_generate_table_without_density_stays_dense():
    table = generate_table("bernoulli", 40, 30, 2, 2, 0.1, tolerance=0.03, n_samples=200,
                           n_calibration_tables=10, rng=3)
    assert isinstance(table.data, np.ndarray)


def test_large_tables_start_the_calibration_with_fewer_tables():
    from lbm_bench.protocol.scale_search import AUTO_FIRST_TABLES, first_tables

    assert first_tables(1000, 1000) == AUTO_FIRST_TABLES
    assert first_tables(50, 50) == AUTO_FIRST_TABLES
    assert first_tables(2000, 2000) == 3
    assert first_tables(100_000, 10_000) == 2
