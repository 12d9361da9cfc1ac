"""How a list of items is cut into bundles, one task each: contiguous runs of items, of
about equal numbers of items or of about equal cost.

A bundle is a run of consecutive items, so that the results of the bundles, joined in
order, are the items' results in order. Cutting is deterministic: it depends on the
items (their number or their costs) and the number of bundles, never on the workers.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["even_bundles", "weighted_bundles"]


def even_bundles(n_items: int, n_bundles: int) -> list[range]:
    """``n_bundles`` contiguous runs of ``range(n_items)``, of sizes differing by at most one
    (the bounds of ``linspace(0, n_items, n_bundles + 1)``, rounded).

    Parameters
    ----------
    n_items : int
    n_bundles : int
        At least 1 and at most ``n_items`` (a bundle is then never empty).

    Returns
    -------
    list of range

    Examples
    --------
    >>> even_bundles(8, 3)
    [range(0, 3), range(3, 5), range(5, 8)]
    """
    bounds = np.linspace(0, n_items, n_bundles + 1).round().astype(int)
    return [range(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]


def weighted_bundles(costs: Sequence[float], n_bundles: int) -> list[np.ndarray]:
    """At most ``n_bundles`` contiguous runs of the items' indices, of about equal summed cost:
    a bundle ends at the first item where the running cost reaches the next ``k / n_bundles``
    of the total; empty runs are dropped.

    Parameters
    ----------
    costs : sequence of float
        Each item's cost (positive), in order.
    n_bundles : int
        At least 1.

    Returns
    -------
    list of ndarray of int
        The indices of each bundle's items, in order.

    Examples
    --------
    >>> [b.tolist() for b in weighted_bundles([4, 1, 1, 1, 1], 2)]
    [[0], [1, 2, 3, 4]]
    """
    cost = np.cumsum(costs)
    cuts = np.searchsorted(cost, cost[-1] * np.arange(1, n_bundles) / n_bundles, side="left") + 1
    return [b for b in np.split(np.arange(len(cost)), cuts) if b.size]
