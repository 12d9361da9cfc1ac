"""Items cut into bundles (lbm_bench.tasks.bundles): contiguous, every item once, in order."""

import numpy as np
import pytest

from lbm_bench.tasks.bundles import even_bundles, weighted_bundles


@pytest.mark.parametrize("n_items, n_bundles", [(1, 1), (5, 1), (8, 3), (3, 3), (10, 4), (7, 7)])
def test_even_bundles_cover_the_items_in_order_with_sizes_one_apart(n_items, n_bundles):
    bundles = even_bundles(n_items, n_bundles)
    assert len(bundles) == n_bundles
    assert [i for b in bundles for i in b] == list(range(n_items))
    sizes = [len(b) for b in bundles]
    assert min(sizes) >= 1 and max(sizes) - min(sizes) <= 1


def test_even_bundles_are_those_of_rounded_linspace():
    assert even_bundles(8, 3) == [range(0, 3), range(3, 5), range(5, 8)]
    assert even_bundles(3, 3) == [range(0, 1), range(1, 2), range(2, 3)]


def test_weighted_bundles_balance_the_cost_not_the_count():
    bundles = weighted_bundles([4, 1, 1, 1, 1], 2)
    assert [b.tolist() for b in bundles] == [[0], [1, 2, 3, 4]]
    costs = np.random.default_rng(0).integers(1, 20, 40)
    bundles = weighted_bundles(costs, 4)
    assert np.concatenate(bundles).tolist() == list(range(40))  # contiguous, in order, each once
    sums = [int(costs[b].sum()) for b in bundles]
    assert len(bundles) == 4 and max(sums) - min(sums) <= 2 * costs.max()


def test_weighted_bundles_drop_empty_ones_and_one_bundle_holds_all():
    assert [b.tolist() for b in weighted_bundles([10, 1], 3)] == [[0], [1]]
    assert [b.tolist() for b in weighted_bundles([1, 2, 3], 1)] == [[0, 1, 2]]
