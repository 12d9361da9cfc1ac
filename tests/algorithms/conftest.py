"""Fixtures of the algorithm tests.

Easy tables: 3x3-cluster models at a large scale, sampled at 100x80, on which the
true-parameter MAP makes no error; LBM algorithms with *estimated* parameters
must recover the labels up to a permutation (matching error <= 0.02 per side).
"""

import pytest

from lbm_bench import random_model
from tests.algorithms.common import EASY_SCALES, KINDS, OPTIONS


@pytest.fixture(scope="module", params=KINDS)
def easy(request):
    kind = request.param
    model = random_model(kind, 3, 3, scale=EASY_SCALES[kind], rng=0, **OPTIONS.get(kind, {}))
    X, z, w = model.sample(100, 80, rng=1)
    return kind, model, X, z, w


@pytest.fixture(scope="module")
def small_tables():
    """A 30x20 table of each family with 3x2 clusters."""
    tables = {}
    for kind in KINDS:
        model = random_model(kind, 3, 2, scale=EASY_SCALES[kind], rng=3, **OPTIONS.get(kind, {}))
        tables[kind] = model.sample(30, 20, rng=4)[0]
    return tables
