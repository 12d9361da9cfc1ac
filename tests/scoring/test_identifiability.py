"""Are a table's counts recoverable by the ICL? (lbm_bench.scoring.identifiability): a clear table's
Bayes labels beat every other cell the reference search visits, a noisy table's do not (a smaller
model explains it better), a format 1.0 table is judged on its MAP labels, and the answer depends
on the table and the bounds alone."""

import json
from pathlib import Path

import numpy as np
import pytest

from lbm_bench.algorithms.criteria import Criterion
from lbm_bench.algorithms.em_problem import EMProblem
from lbm_bench.scoring.identifiability import REFERENCE_SEARCH, identifiability
from lbm_bench.storage import load_table
from tests.storage.tables import make_table

DATA = Path(__file__).resolve().parents[1] / "data"


@pytest.fixture(scope="module")
def clear():
    return make_table("bernoulli", n_rows=60, n_cols=40, scale=3.0, floor=True, n_samples=60)


def test_a_clear_tables_counts_are_identifiable(clear):
    answer = identifiability(clear, (3, 3), name="clear")
    assert answer.identifiable and answer.labels == "bayes" and answer.criterion == "exact-icl"
    assert answer.true_clusters == answer.labels_clusters == [2, 2] and answer.max_clusters == [3, 3]
    assert answer.best_other_clusters != [2, 2] and answer.labels_value > answer.best_other_value
    icl = Criterion(EMProblem(clear.table_data(), clear.model.family), "icl")
    assert answer.labels_value == pytest.approx(icl(clear.bayes_rows, clear.bayes_cols))
    assert answer.reference == REFERENCE_SEARCH
    assert json.loads(json.dumps(answer.to_dict())) == answer.to_dict()


def test_a_noisy_tables_counts_are_not():
    noisy = make_table("bernoulli", n_rows=12, n_cols=10, scale=0.3, floor=True)
    answer = identifiability(noisy, (3, 3), name="noisy")
    assert not answer.identifiable and answer.best_other_value > answer.labels_value


def test_a_format_1_0_table_is_judged_on_its_map_labels():
    old = load_table(DATA / "table_v1.h5")
    answer = identifiability(old, (3, 3), name="old")
    assert answer.labels == "map" and answer.labels_clusters == [2, 2]


def test_the_answer_depends_on_the_table_and_the_bounds_only(clear):
    first = identifiability(clear, (3, 3), name="clear")
    assert identifiability(clear, (3, 3), name="clear") == first  # seeded by the table's id
    assert identifiability(clear, (4, 3), name="clear").max_clusters == [4, 3]
    assert np.isfinite(first.best_other_value)


def test_bounds_that_miss_the_tables_counts_are_refused(clear):
    with pytest.raises(ValueError, match="max_clusters 1x3 does not include the table's 2x2 clusters"):
        identifiability(clear, (1, 3))
    with pytest.raises(ValueError, match="exceeds the table's 60 rows and 40 columns"):
        identifiability(clear, (61, 3))
