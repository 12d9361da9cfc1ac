"""Tests of lbm_bench.metrics.partition: reference values, scikit-learn, properties."""

from __future__ import annotations

import math

import numpy as np
import pytest

from lbm_bench.metrics import (
    adjusted_asymmetric_accuracy,
    ami,
    ari,
    cari,
    contingency,
    l_full,
    l_item,
    l_row,
    matching_error,
    nmi,
    normalized_accuracy,
    pair_sets_index,
    rand,
)
from tests.metrics.helpers import (
    exact_ari_from_table,
    injections,
    random_labels,
)

PARTITION_SCORES = [ari, rand, nmi, ami, normalized_accuracy, pair_sets_index]
SYMMETRIC = [ari, rand, nmi, ami, matching_error, normalized_accuracy, pair_sets_index]


def test_genieclust_reference_values():
    """Values printed by genieclust's compare_partitions doctest for this table."""
    table = np.array([[1, 10], [8, 2]])
    expected = {
        ari: 0.49,
        rand: 0.74,
        nmi: 0.41,
        ami: 0.39,
        normalized_accuracy: 0.71,
        pair_sets_index: 0.65,
        adjusted_asymmetric_accuracy: 0.71,
    }
    x = [1, 1, 2, 1, 2, 2, 2, 2, 1, 1, 2, 1, 1, 1, 1, 2, 2, 1, 2, 1, 2]
    y = [2, 2, 1, 2, 2, 1, 1, 1, 2, 2, 1, 1, 2, 2, 2, 1, 1, 2, 2, 2, 1]
    np.testing.assert_array_equal(contingency(x, y), table)
    for function, value in expected.items():
        assert round(function(table), 2) == value, function.__name__
        assert function(x, y) == function(table), function.__name__
    assert round(pair_sets_index(table, simplified=True), 2) == 0.63


def test_matching_error_worked_example():
    # Reference clusters {0,1,2,3}, {4,5,6}; prediction {0,1,4}, {2,3}, {5,6}.
    a = [0, 0, 0, 0, 1, 1, 1]
    b = [7, 7, 8, 8, 7, 9, 9]
    assert matching_error(a, b) == 3 / 7  # 7 -> 0 (2 items) is beaten by 8 -> 0, 9 -> 1
    assert l_row(a, b) == 3 / 7


@pytest.mark.parametrize("seed", range(6))
def test_agreement_with_sklearn(seed):
    skm = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 400))
    a = random_labels(rng, n, int(rng.integers(1, 9)), offset=-5)
    b = random_labels(rng, n, int(rng.integers(1, 9)), offset=2)
    assert ari(a, b) == pytest.approx(skm.adjusted_rand_score(a, b), abs=1e-12)
    assert rand(a, b) == pytest.approx(skm.rand_score(a, b), abs=1e-12)
    assert nmi(a, b) == pytest.approx(skm.normalized_mutual_info_score(a, b), abs=1e-10)
    assert ami(a, b) == pytest.approx(skm.adjusted_mutual_info_score(a, b), abs=1e-10)


def test_agreement_with_sklearn_correlated_and_large():
    skm = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(7)
    a = rng.integers(0, 12, 20_000)
    b = np.where(rng.random(a.size) < 0.3, rng.integers(0, 9, a.size), a % 9)
    assert ari(a, b) == pytest.approx(skm.adjusted_rand_score(a, b), abs=1e-12)
    assert nmi(a, b) == pytest.approx(skm.normalized_mutual_info_score(a, b), abs=1e-10)
    assert ami(a, b) == pytest.approx(skm.adjusted_mutual_info_score(a, b), abs=1e-10)


@pytest.mark.parametrize(
    "a, b",
    [
        ([3], [4]),
        ([1, 1, 1], [1, 1, 1]),
        ([1, 1, 1, 1], [0, 1, 2, 3]),
        ([0, 1, 2, 3], [0, 1, 2, 3]),
        ([0, 0, 1, 1], [0, 1, 0, 1]),
    ],
)
def test_edge_cases_match_sklearn(a, b):
    skm = pytest.importorskip("sklearn.metrics")
    assert ari(a, b) == pytest.approx(skm.adjusted_rand_score(a, b), abs=1e-12)
    assert rand(a, b) == pytest.approx(skm.rand_score(a, b), abs=1e-12)
    assert nmi(a, b) == pytest.approx(skm.normalized_mutual_info_score(a, b), abs=1e-12)
    assert ami(a, b) == pytest.approx(skm.adjusted_mutual_info_score(a, b), abs=1e-12)


AMI_EDGE_CASES = [
    ([0, 1], [0, 1]),  # two singletons: MI = E[MI], the formula is 0 / 0
    ([0, 1], [1, 0]),
    ([7, -3], [2, 5]),
    (list(range(5)), list(range(5))),  # all singletons
    (list(range(6)), [5, 3, 1, 0, 2, 4]),  # all singletons, permuted
    ([1, 1, 1], [1, 1, 1]),  # one cluster each
    ([4, 4, 4, 4], [0, 0, 0, 0]),
    ([0, 0, 1], [1, 1, 0]),  # identical up to relabelling
    ([0, 0, 1, 1, 2, 2], [2, 2, 0, 0, 1, 1]),
    ([0, 1, 2, 3], [0, 0, 1, 1]),  # singletons against pairs: MI = E[MI], not identical
    ([0, 1, 2], [0, 0, 0]),  # singletons against one cluster
    ([0, 0, 0], [0, 1, 2]),
]


@pytest.mark.parametrize("a, b", AMI_EDGE_CASES)
def test_ami_and_nmi_edge_cases_match_sklearn(a, b):
    skm = pytest.importorskip("sklearn.metrics")
    assert ami(a, b) == pytest.approx(skm.adjusted_mutual_info_score(a, b), abs=1e-12)
    assert nmi(a, b) == pytest.approx(skm.normalized_mutual_info_score(a, b), abs=1e-12)
    assert ami(contingency(a, b)) == ami(a, b)


@pytest.mark.parametrize("n", [2, 3, 10, 257])
def test_ami_of_identical_partitions_is_exactly_one(n):
    rng = np.random.default_rng(n)
    singletons = np.arange(n)
    assert ami(singletons, singletons) == 1.0
    assert ami(singletons, rng.permutation(n)) == 1.0
    assert ami(np.eye(n, dtype=int)) == 1.0
    labels = rng.integers(0, max(2, n // 3), n)
    relabelled = (labels * 7 - 11)[:]
    assert ami(labels, relabelled) == 1.0
    assert nmi(labels, relabelled) == 1.0
    # Not identical (singletons against pairs): MI equals its expectation, AMI is 0.
    if n % 2 == 0 and n > 2:
        assert ami(singletons, singletons // 2) == pytest.approx(0.0, abs=1e-12)


def test_batched_ari_and_rand_match_sklearn_per_set():
    skm = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(3)
    sets = rng.integers(-2, 4, (25, 60))
    pred = rng.integers(0, 5, 60)
    batched = ari(sets, pred)
    assert isinstance(batched, np.ndarray) and batched.shape == (25,)
    expected_ari = [skm.adjusted_rand_score(s, pred) for s in sets]
    np.testing.assert_allclose(batched, expected_ari, atol=1e-12)
    expected_rand = [skm.rand_score(s, pred) for s in sets]
    np.testing.assert_allclose(rand(sets, pred), expected_rand, atol=1e-12)


def test_ari_is_exact_on_a_million_items():
    rng = np.random.default_rng(11)
    a = rng.integers(0, 4, 1_000_000)
    b = a.copy()
    b[:7] = (b[:7] + 1) % 4  # nearly identical: ARI just below 1
    expected = float(exact_ari_from_table(contingency(a, b)))
    assert ari(a, b) == expected
    assert ari(a[None, :], b)[0] == expected
    assert ari(contingency(a, b)) == expected


@pytest.mark.parametrize("seed", range(4))
def test_symmetry(seed):
    rng = np.random.default_rng(seed)
    a, b = rng.integers(0, 4, 80), rng.integers(-2, 3, 80)
    for function in SYMMETRIC:
        assert function(a, b) == pytest.approx(function(b, a), abs=1e-14), function.__name__


@pytest.mark.parametrize("seed", range(4))
def test_relabelling_invariance(seed):
    rng = np.random.default_rng(seed)
    a, b = rng.integers(0, 5, 90), rng.integers(0, 4, 90)
    a2 = rng.permutation(np.arange(-50, 50, 10))[a]  # any integer values
    b2 = np.array([1000, -7, 3, 2**40])[b]
    for function in [*SYMMETRIC, adjusted_asymmetric_accuracy]:
        assert function(a2, b2) == pytest.approx(function(a, b), abs=1e-14), function.__name__
    assert l_row(a2, b2) == pytest.approx(l_row(a, b), abs=1e-15)


@pytest.mark.parametrize("k", [1, 2, 5])
def test_identical_partitions(k):
    rng = np.random.default_rng(k)
    a = rng.integers(0, k, 50)
    b = np.array([9, -1, 4, 6, 2])[a]  # same partition, other labels
    for function in [*PARTITION_SCORES, adjusted_asymmetric_accuracy]:
        assert function(a, b) == 1.0, function.__name__
    assert matching_error(a, b) == 0.0
    w = rng.integers(0, 3, 40)
    assert cari(a, w, b, w + 5) == 1.0
    assert l_item(a, w, b, w + 5) == 0.0
    assert l_full(a, w, b, w + 5) == 0.0


@pytest.mark.parametrize("seed", range(5))
def test_bounds(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 60))
    a, b = rng.integers(0, 6, n), rng.integers(0, 3, n)
    assert ari(a, b) <= 1.0
    assert ari(a, b) >= -1.0
    assert 0.0 <= rand(a, b) <= 1.0
    assert 0.0 <= nmi(a, b) <= 1.0
    assert ami(a, b) <= 1.0
    assert 0.0 <= matching_error(a, b) < 1.0
    assert 0.0 <= normalized_accuracy(a, b) <= 1.0
    assert 0.0 <= pair_sets_index(a, b) <= 1.0
    assert adjusted_asymmetric_accuracy(a, b) <= 1.0
    # Non-negative when the prediction has no more clusters than the reference.
    assert adjusted_asymmetric_accuracy(b, a) >= 0.0 or len(set(a)) > len(set(b))
    assert adjusted_asymmetric_accuracy(a, b) >= 0.0 or len(set(b)) > len(set(a))
    w, wp = rng.integers(0, 3, 20), rng.integers(0, 4, 20)
    assert 0.0 <= l_item(a, w, b, wp) <= 1.0
    assert cari(a, w, b, wp) <= 1.0


def test_chance_adjusted_scores_near_zero_on_independent_partitions():
    """Independent uniform partitions: |ARI|, |AMI|, |CARI| < 0.005 (seeded)."""
    rng = np.random.default_rng(2024)
    a, b = rng.integers(0, 5, 20_000), rng.integers(0, 4, 20_000)
    assert abs(ari(a, b)) < 0.005
    assert abs(ami(a, b)) < 0.005
    z, w = rng.integers(0, 4, 3000), rng.integers(0, 4, 3000)
    zp, wp = rng.integers(0, 4, 3000), rng.integers(0, 4, 3000)
    assert abs(cari(z, w, zp, wp)) < 0.005
    # Set matching scores are not adjusted for chance but stay small.
    assert normalized_accuracy(a, b) < 0.05
    assert pair_sets_index(a, b) < 0.05


def test_table_input_equals_label_input_and_drops_empty_clusters():
    rng = np.random.default_rng(9)
    a, b = rng.integers(0, 4, 100), rng.integers(0, 3, 100)
    table = contingency(a, b)
    padded = np.zeros((6, 5), dtype=int)
    padded[1:5, 2:5] = table
    for function in [*PARTITION_SCORES, matching_error, adjusted_asymmetric_accuracy]:
        assert function(padded) == function(a, b), function.__name__
        assert function(table.astype(float)) == function(a, b), function.__name__


def test_set_matching_conventions_with_different_cluster_counts():
    # Two reference clusters; the prediction splits one of them in two.
    a = [0, 0, 0, 0, 1, 1, 1, 1]
    b = [0, 0, 1, 1, 2, 2, 2, 2]
    assert matching_error(a, b) == 0.25
    assert normalized_accuracy(a, b) == (6 / 8 - 1 / 3) / (1 - 1 / 3)
    assert adjusted_asymmetric_accuracy(a, b) == 0.5  # recalls 1/2 and 1
    assert adjusted_asymmetric_accuracy(b, a) == 0.5  # recalls 1, 0 (unmatched) and 1
    # Eq. (18) of Rezaei & Franti with k = 3: s = 2/4 + 4/4, E = (4 + 2 + 0) / 8.
    assert pair_sets_index(a, b) == pytest.approx((1.5 - 0.75) / (3 - 0.75), abs=1e-15)
    assert pair_sets_index(a, b, simplified=True) == pytest.approx(0.25, abs=1e-15)
    worse_than_chance = ([0, 0, 0, 1, 1, 1, 2, 1], [2, 0, 0, 0, 1, 2, 0, 0])
    assert pair_sets_index(*worse_than_chance, clipped=False) < 0
    assert pair_sets_index(*worse_than_chance) == 0.0
    assert math.isnan(adjusted_asymmetric_accuracy([0, 0, 0], [0, 1, 1]))


@pytest.mark.parametrize("seed", range(6))
def test_matching_error_brute_force(seed):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, int(rng.integers(1, 5)), 30)
    b = rng.integers(0, int(rng.integers(1, 6)), 30)
    best = min(
        float(np.mean(a != m[b])) for m in injections(a.max() + 1, b.max() + 1)
    )
    assert matching_error(a, b) == pytest.approx(best, abs=1e-15)


@pytest.mark.parametrize("function", [contingency, nmi, ami, matching_error, pair_sets_index])
def test_two_dimensional_where_one_dimensional_expected(function):
    with pytest.raises(ValueError, match=r"a must be 1-D, got shape \(2, 2\)"):
        function([[0, 1], [1, 0]], [0, 1])
