"""The Bayes rule for ``l_item``: labels that minimise the posterior expected loss.

The paper (Lomet et al., eq. 5) defines the Bayes classifier for ``l_item`` but
certifies its tables with the MAP labels (its surrogate ``h_full``). The MAP is
the Bayes rule of ``l_full``, not of ``l_item``: its conditional risk is an
upper bound of the floor, not the floor. This module finds the minimiser of the
empirical expected ``l_item`` over label sets drawn from ``p(z, w | X)``.

The objective
-------------
With ``A_s`` the number of rows on which a labelling ``(z, w)`` agrees with set
``s`` and ``B_s`` the number of columns, ``1 - l_item = (A_s / n) (B_s / d)``
(eq. 3), so the empirical expected loss over ``S`` sets is::

    R(z, w) = 1 - sum_s A_s B_s / (S n d).

It is not additive over rows and columns, but it is *linear in the rows given
the columns*: for fixed ``w``, ``sum_s A_s B_s = sum_i sum_s B_s [Z_si = z_i]``,
so the best row labels given ``w`` are the marginal modes of the rows weighted
by each set's column agreement ``B_s``, all rows at once; and symmetrically for
the columns. :func:`bayes_labels` alternates these two exact block updates
(block coordinate descent) from several starts until no row and no column label
changes; the result is a labelling that no single row or column change
improves. Scores are integer counts (computed in integers: int32 when the sums
fit, which is also the fastest, else int64), and a label moves only when another
class is strictly better, so the descent terminates and is deterministic.

The label sets of each side are held as :class:`~lbm_bench.inference.label_sides.LabelSide`
(their items' reference labels and the sparse indicators of the sets that differ), on which
the weighted counts and the agreements of the descent are exact integer products.
The honest risk of these labels, cross-fitted over halves of the chains, is
:mod:`lbm_bench.inference.floor`'s (:func:`~lbm_bench.inference.floor.floor_certificate`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from lbm_bench._validation import check_count, check_labels
from lbm_bench.inference.label_sides import LabelSide, label_counts

__all__ = [
    "bayes_labels", "best_descent", "check_starts", "descend", "expected_item_loss",
    "label_frequencies", "prepare_sides", "search_labels", "search_starts"
]

#: Label-set entries compared per chunk when counting (bounds the temporary memory).
_CHUNK_ENTRIES = 1 << 22


def _as_sets(name: str, sets: Any) -> np.ndarray:
    array = np.asarray(sets)
    if array.ndim != 2 or array.shape[0] == 0 or array.shape[1] == 0:
        raise ValueError(f"{name} must be a non-empty 2-D array of label sets, got shape "
                         f"{array.shape}")
    if not np.issubdtype(array.dtype, np.integer):
        raise TypeError(f"{name} must hold integer labels, got dtype {array.dtype}")
    if array.min() < 0:
        raise ValueError(f"{name} must be non-negative, got min {int(array.min())}")
    return array


def label_frequencies(sets: Any, n_classes: int | None = None) -> np.ndarray:
    """Fraction of the label sets giving each item each class (posterior marginals).

    Parameters
    ----------
    sets : array-like of int of shape (n_samples, n_items)
    n_classes : int, optional
        Number of classes; ``max label + 1`` when omitted.

    Returns
    -------
    ndarray of shape (n_items, n_classes), float64
        Rows sum to 1.

    Examples
    --------
    >>> label_frequencies([[0, 1], [0, 0]], 2).tolist()
    [[1.0, 0.0], [0.5, 0.5]]
    """
    sets = _as_sets("sets", sets)
    n_classes = int(sets.max()) + 1 if n_classes is None else check_count("n_classes", n_classes)
    if sets.max() >= n_classes:
        raise ValueError(f"sets hold label {int(sets.max())}, beyond n_classes={n_classes}")
    return label_counts(sets, n_classes) / sets.shape[0]


def _agreements(sets: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Number of items on which each set agrees with ``labels``, int64 of shape (n_sets,)."""
    n_sets, n_items = sets.shape
    out = np.zeros(n_sets, dtype=np.int64)
    step = max(1, _CHUNK_ENTRIES // n_sets)
    for begin in range(0, n_items, step):
        out += np.count_nonzero(sets[:, begin:begin + step] == labels[begin:begin + step], axis=1)
    return out


def descend(
    rows: LabelSide, cols: LabelSide, z: np.ndarray, w: np.ndarray, max_sweeps: int
) -> tuple[np.ndarray, np.ndarray, int, int]:
    """Block coordinate descent from ``(z, w)``; returns labels, objective sum_s A_s B_s, sweeps.
    (The rows' agreements are counted once the rows are chosen: those of the start are needed
    only when the first choice keeps it.)"""
    row_agree = None
    col_agree = cols.agreements(w)
    sweeps = 0
    while sweeps < max_sweeps:
        sweeps += 1
        new_z = rows.best(col_agree, z)
        if row_agree is None or not np.array_equal(new_z, z):
            z = new_z
            row_agree = rows.agreements(z)
        new_w = cols.best(row_agree, w)
        if np.array_equal(new_w, w):
            # The rows were just chosen against these very columns, and the
            # columns against these rows: no single change improves.
            break
        w = new_w
        col_agree = cols.agreements(w)
    if row_agree is None:  # no sweep
        row_agree = rows.agreements(z)
    objective = int(np.dot(row_agree, col_agree))
    return z, w, objective, sweeps


def bayes_labels(
    row_sets: Any,
    col_sets: Any,
    *,
    starts: Sequence[tuple[Any, Any]] | None = None,
    n_row_clusters: int | None = None,
    n_col_clusters: int | None = None,
    n_set_starts: int = 4,
    max_sweeps: int = 1000,
) -> tuple[np.ndarray, np.ndarray]:
    """Labels minimising the empirical expected ``l_item`` over posterior label sets.

    Starts from the per-row and per-column marginal modes, from every pair in
    ``starts`` and from ``n_set_starts`` of the label sets themselves (evenly
    spaced: on ambiguous tables whose posterior has several modes, the
    marginal modes can sit in the basin of a worse local optimum); from each,
    alternates the exact best row labels given the columns and the best column
    labels given the rows (see the module documentation) until no label moves, which leaves a
    labelling that no single row or column change improves; returns the best over the starts
    (the first one on ties).

    Parameters
    ----------
    row_sets : array-like of int of shape (n_samples, n_rows)
        Row label sets drawn from ``p(z, w | X)`` (true parameters, so no label
        switching), paired with ``col_sets`` set by set.
    col_sets : array-like of int of shape (n_samples, n_cols)
        Column label sets.
    starts : sequence of (rows, cols), optional
        Further starting labellings, e.g. the MAP labels.
    n_row_clusters, n_col_clusters : int, optional
        Numbers of classes; the largest label seen plus one when omitted.
    n_set_starts : int, default=4
        Label sets used as further starts (0 for none).
    max_sweeps : int, default=1000
        Bound on the descent sweeps from each start (it converges in a few).

    Returns
    -------
    rows : ndarray of shape (n_rows,), int64
    cols : ndarray of shape (n_cols,), int64

    Examples
    --------
    >>> rows = [[0, 0, 1], [0, 1, 1], [0, 0, 1]]
    >>> cols = [[1, 0], [1, 0], [0, 0]]
    >>> z, w = bayes_labels(rows, cols)
    >>> z.tolist(), w.tolist()
    ([0, 0, 1], [1, 0])
    """
    max_sweeps = check_count("max_sweeps", max_sweeps)
    n_set_starts = check_count("n_set_starts", n_set_starts, minimum=0)
    rows, cols, pairs = prepare_sides(row_sets, col_sets, starts, n_row_clusters, n_col_clusters)
    return search_labels(rows, cols, pairs, n_set_starts, max_sweeps)


def prepare_sides(row_sets, col_sets, starts, n_row_clusters, n_col_clusters, bounds=None):
    """Validate the sets and starts; the two prepared sides (blocks cut at ``bounds``
    too, e.g. the chains' ends) and the checked starts."""
    row_sets = _as_sets("row_sets", row_sets)
    col_sets = _as_sets("col_sets", col_sets)
    if row_sets.shape[0] != col_sets.shape[0]:
        raise ValueError(
            f"row_sets and col_sets must hold the same number of sets, got {row_sets.shape[0]} "
            f"and {col_sets.shape[0]}"
        )
    pairs = check_starts(starts, row_sets.shape[1], col_sets.shape[1], n_row_clusters,
                         n_col_clusters)
    g = max([int(row_sets.max()) + 1] + [int(z.max()) + 1 for z, _ in pairs])
    m = max([int(col_sets.max()) + 1] + [int(w.max()) + 1 for _, w in pairs])
    if n_row_clusters is not None:
        g = max(g, check_count("n_row_clusters", n_row_clusters))
    if n_col_clusters is not None:
        m = max(m, check_count("n_col_clusters", n_col_clusters))
    return LabelSide(row_sets, g, bounds), LabelSide(col_sets, m, bounds), pairs


def check_starts(starts, n: int, d: int, n_row_clusters: int | None,
                 n_col_clusters: int | None) -> list:
    """The starts ``[(rows, cols), ...]`` checked: int64 labels of lengths ``n`` and ``d``."""
    return [
        (
            check_labels(f"starts[{k}][0]", z, length=n, n_clusters=n_row_clusters),
            check_labels(f"starts[{k}][1]", w, length=d, n_clusters=n_col_clusters),
        )
        for k, (z, w) in enumerate(starts or ())
    ]


def search_labels(rows: LabelSide, cols: LabelSide, pairs, n_set_starts: int, max_sweeps: int):
    """Descents from the marginal modes, the given pairs and some sets; the best result."""
    return best_descent([descend(rows, cols, z.astype(np.int64), w.astype(np.int64), max_sweeps)
                  for z, w in search_starts(rows, cols, pairs, n_set_starts)])


def search_starts(rows: LabelSide, cols: LabelSide, pairs,
                  n_set_starts: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """The starts of :func:`_search`: the marginal modes, the given pairs, ``n_set_starts`` sets."""
    n_sets = rows.n_sets
    ones = np.ones(n_sets, dtype=np.int64)
    modes = (rows.best(ones, rows.ref.copy()), cols.best(ones, cols.ref.copy()))
    picked = np.unique(np.linspace(0, n_sets - 1, n_set_starts).round().astype(np.int64))
    set_starts = [(rows.set_labels(s), cols.set_labels(s)) for s in picked]
    return [modes, *pairs, *set_starts]


def best_descent(descents) -> tuple[np.ndarray, np.ndarray]:
    """The labels of the first descent ``(z, w, objective, sweeps)`` of the highest objective."""
    best = None
    for z, w, objective, _ in descents:
        if best is None or objective > best[2]:
            best = (z, w, objective)
    return best[0], best[1]


def expected_item_loss(row_sets: Any, col_sets: Any, z: Any, w: Any) -> float:
    """Empirical expected ``l_item`` of ``(z, w)`` over the label sets (exact arithmetic).

    Examples
    --------
    >>> expected_item_loss([[0, 1]], [[0, 0]], [0, 0], [0, 0])
    0.5
    """
    row_sets = _as_sets("row_sets", row_sets)
    col_sets = _as_sets("col_sets", col_sets)
    z = check_labels("z", z, length=row_sets.shape[1])
    w = check_labels("w", w, length=col_sets.shape[1])
    agree = int(np.dot(_agreements(row_sets, z), _agreements(col_sets, w)))
    total = row_sets.shape[0] * row_sets.shape[1] * col_sets.shape[1]
    return 1.0 - agree / total
