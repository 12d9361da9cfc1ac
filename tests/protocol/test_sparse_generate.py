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

    assert first_tables(500, 300) == AUTO_FIRST_TABLES
    assert first_tables(50, 50) == AUTO_FIRST_TABLES
    assert first_tables(1000, 1000) == 4
    assert first_tables(2000, 2000) == 2
    assert first_tables(100_000, 10_000) == 2


def test_calibration_and_rejection_never_densify(monkeypatch):
    """The whole of generate_table on a sparse design (calibration tables, MAP, Gibbs,
    screening, rejection) runs with scipy.sparse's densifying methods refusing any matrix
    larger than the first guess's fixed reference sample (48 g x 48 m entries, whatever
    the table's shape: lbm_bench.protocol.separation)."""
    original = sparse.csr_array.toarray

    def refuse_large(self, *args, **kwargs):
        if max(self.shape) > 48 * 2:
            raise AssertionError(f"a {type(self).__name__} of shape {self.shape} was densified")
        return original(sparse.csr_array(self))

    for name in ("csr_array", "csc_array", "coo_array", "csr_matrix", "csc_matrix", "coo_matrix"):
        for method in ("toarray", "todense"):
            monkeypatch.setattr(getattr(sparse, name), method, refuse_large)
    with pytest.raises(AssertionError, match="densified"):
        sparse.csc_array(np.eye(97)).toarray()  # the guard is armed
    table = generate_table("bernoulli", 300, 250, 2, 2, 0.1, tolerance=0.05, n_samples=200,
                           n_calibration_tables=5, density=0.05, rng=6)
    assert isinstance(table.data, sparse.csr_array) and table.gibbs.rows.shape == (200, 300)
