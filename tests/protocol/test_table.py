"""The Table record (lbm_bench.protocol.table): what it derives from its fields (the certified risk,
the settings and the request read back, the posterior marginals), its missing entries in the
boundary's conventions, and its summary."""

import numpy as np
import pytest

from lbm_bench import GenerationSettings, TableRequest
from tests.storage.tables import make_table


@pytest.fixture(scope="module")
def floor_table():
    return make_table("poisson", floor=True, balance=0.25)


def test_what_a_table_derives_from_its_fields(floor_table):
    table = floor_table
    assert table.kind == "poisson" and table.shape == (12, 10)
    assert (table.n_row_clusters, table.n_col_clusters) == (2, 2)
    assert table.criterion == "bayes" and table.certified_risk is table.bayes_risk
    paper = make_table("poisson")  # no floor: the MAP's risk is the certificate
    assert paper.criterion == "map" and paper.certified_risk is paper.risk
    settings = table.settings  # the tolerance and the method from the records, the rest from the options
    assert isinstance(settings, GenerationSettings)
    assert (settings.tolerance, settings.balance, settings.calibration_method) == (0.05, 0.25, "bisection")
    request = table.request
    assert isinstance(request, TableRequest)
    assert (request.kind, request.shape, request.clusters, request.target_risk, request.criterion) == (
        "poisson", (12, 10), (2, 2), 0.1, "bayes")


def test_posterior_marginals_are_the_label_frequencies(floor_table):
    rows, cols = floor_table.posterior_marginals()
    assert rows.shape == (12, 2) and cols.shape == (10, 2) and rows.dtype == np.float32
    assert np.allclose(rows.sum(axis=1), 1) and np.allclose(cols.sum(axis=1), 1)
    sets = floor_table.gibbs.rows
    assert np.allclose(rows[:, 1], (sets == 1).mean(axis=0))


def test_missing_entries_in_every_convention():
    table = make_table("gaussian", missing=(0.3, "random"))
    nan = np.isnan(table.data)
    assert table.missing_mechanism == "random" and table.missing_rate == 0.3
    assert np.array_equal(table.observed, ~nan)
    masked = table.masked_data()
    assert np.array_equal(masked.mask, nan) and masked.dtype == table.model.table_dtype
    data = table.table_data()
    assert data.n_missing == nan.sum() and not np.isnan(data.table).any()
    complete = make_table("gaussian")
    assert complete.observed is None and complete.missing_mechanism is None and complete.missing_rate == 0.0
    sparse = make_table("bernoulli", sparse=True, missing=(0.1, "random"))
    assert sparse.observed is None and sparse.table_data().is_sparse
    with pytest.raises(ValueError, match="a sparse table has no masked-array form"):
        sparse.masked_data()


def test_the_summary(floor_table):
    lines = floor_table.summary().splitlines()
    assert lines[0] == "poisson table 12x10, 2x2 clusters, seed 2"
    assert lines[1] == "target risk 0.1000 (criterion: bayes)"
    assert lines[2].startswith("floor (Bayes labels for l_item, cross-fitted) ")
    assert lines[-2] == ("scale 0.8 after 3 evaluations (MAP apparent error 0.1100 +- 0.0400 over 20 tables; "
                         "minus the gap to the floor 0.0040 over 6 tables)")  # a calibration of older files
    assert lines[-1] == "rejection sampling: 3 attempt(s), acceptance rate 0.333"
    paper = make_table("poisson").summary()
    # a table built in memory without a floor says so; a file names its own format version (issue 35)
    assert "floor: not stored (table in memory); the MAP's risk is the reference" in paper
    assert "MAP apparent error 0.1100" in paper
    sparse = make_table("bernoulli", sparse=True, missing=(0.1, "random")).summary().splitlines()
    assert "sparse:" in sparse[0] and sparse[2].startswith("missing entries: ")
    assert sparse[2].endswith("the risks are given the observed entries") or "no observed entry" in sparse[2]
