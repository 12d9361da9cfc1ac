"""Choosing the numbers of clusters of a latent block model: the ICL over (g, m).

:func:`select_lbm` fits block CEM (or VEM) at numbers of clusters ``(g, m)`` up to
``max_clusters`` and keeps the labelling of highest ICL
(:mod:`lbm_bench.algorithms.criteria`). Two searches:

``"grid"``
    Every cell ``(g, m)`` of ``1..G x 1..M``, each from ``n_init`` k-means++ seeded
    starts (the labelling of highest criterion kept per cell).
``"path"``
    Splits from ``(1, 1)`` and merges, as sparsebm's and blockmodels' explorations do:
    from the best cell so far, every cluster of one side is split in two (by 2-means on
    its rows, or columns, and on their profiles over the other side's clusters), the
    candidates ranked by their criterion before any EM and the best few refined by EM;
    the ascent goes on a few steps past the best cell; then every cell at or above the
    best one proposes merges of two of its clusters (ranked from the block sums alone,
    which add up), refined the same way; and k-means++ starts are made at the best cell
    (``n_init``) and at the three cells with one more cluster on one side or both (four
    tenths as many), where a search that stops too early misses the counts. Rounds repeat until the
    best criterion stops growing. Before returning, the search checks the cells next to its
    choice: k-means++ starts at those no round started, the merges and splits
    that lead from each back to the choice, and two runs from the chosen labelling with a
    quarter of its rows and columns moved at random; it goes on from any better cell.
    Last, the best labellings of the chosen cell and of the cells next to it are polished by
    greedy single-item moves (:mod:`lbm_bench.algorithms.moves`: a row or a column moved to
    another cluster while that raises the exact ICL), where block CEM, which ends at a
    labelling no move improves by the complete likelihood at the fitted parameters, leaves
    a better one by the criterion; the choice moves if a neighbour ends above it.
    The path runs in stages of growing limits (``(min(G, s), min(M, s))``, ``s = 2 ..
    max(G, M)``: :func:`~lbm_bench.algorithms.path_search.stages`), so that the search of a
    larger ``max_clusters`` goes through the whole search of a smaller one first: raising
    ``max_clusters`` from a square, or raising only its larger side, never returns a worse
    criterion.

The search over the cells is :mod:`lbm_bench.algorithms.cell_search`'s (the grid) and
:mod:`lbm_bench.algorithms.path_search`'s (the path). Every EM run is a task of its own; the
random draws (k-means++ seedings) are made in the main process from named streams (a grid's
``"cell"``, a path's ``"round"``: ``_seeds.SEED_TREE``), so that the same ``rng`` gives the
same selection whatever ``jobs`` (BLAS pinned to one thread).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from lbm_bench._seeds import draw_seed
from lbm_bench._validation import check_choice, check_count
from lbm_bench.algorithms.cell_search import CellSearch, grid_search
from lbm_bench.algorithms.criteria import Criterion
from lbm_bench.algorithms.em_problem import EMProblem
from lbm_bench.algorithms.inputs import few_values, infer_kind
from lbm_bench.algorithms.lbm_em import LBMFit, em_inputs
from lbm_bench.algorithms.path_search import path_search
from lbm_bench.models.data import TableData
from lbm_bench.models.family import Family
from lbm_bench.tasks.pool import TaskPool
from lbm_bench.tasks.threads import single_blas_thread

__all__ = [
    "DEFAULT_SEARCH", "LBMSelection", "SEARCHES", "cem_icl", "check_max_clusters", "select_lbm",
    "vem_icl"
]

#: The searches of :func:`select_lbm`.
SEARCHES = ("path", "grid")
#: The default search (docs/benchmark.md: as accurate as the grid, at a fraction of its cost).
DEFAULT_SEARCH = "path"


@dataclass(frozen=True)
class LBMSelection:
    """The numbers of clusters chosen by :func:`select_lbm`, and the labels.

    Attributes
    ----------
    rows : ndarray of shape (n_rows,) of int64
        Row labels ``0 .. n_row_clusters - 1``.
    cols : ndarray of shape (n_cols,) of int64
        Column labels ``0 .. n_col_clusters - 1``.
    n_row_clusters, n_col_clusters : int
        The chosen numbers of clusters.
    fit : LBMFit
        The fit of the chosen cell (``start_criteria``: the EM criterion of every run
        that ended in that cell).
    criterion_table : ndarray of shape max_clusters
        The best criterion found at each cell ``(g, m)`` (index ``[g - 1, m - 1]``), NaN
        where the search made no fit.
    criterion : str
        The criterion's form (``"exact-icl"`` or ``"bic-icl"``).
    search : str
        ``"path"`` or ``"grid"``.
    n_runs : int
        EM runs made (the cost: a fit at known counts makes ``n_init`` of them).

    Examples
    --------
    >>> from lbm_bench import random_model
    >>> X = random_model("bernoulli", 3, 2, scale=3.0, rng=0).sample(90, 60, rng=1)[0]
    >>> pick = select_lbm(X, (4, 4), rng=2)
    >>> (pick.n_row_clusters, pick.n_col_clusters), pick.criterion_table.shape, pick.search
    ((3, 2), (4, 4), 'path')
    """

    rows: np.ndarray
    cols: np.ndarray
    n_row_clusters: int
    n_col_clusters: int
    fit: LBMFit
    criterion_table: np.ndarray
    criterion: str
    search: str
    n_runs: int

    @property
    def value(self) -> float:
        """The criterion of the chosen labelling."""
        return float(self.criterion_table[self.n_row_clusters - 1, self.n_col_clusters - 1])

    @property
    def family(self) -> Family:
        """The family fitted (the chosen fit's)."""
        return self.fit.family


def check_max_clusters(name: str, value: Any,
                       shape: tuple[int, int] | None = None) -> tuple[int, int]:
    """``(G, M)``: two positive integers, at most the table's ``shape`` when given."""
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence) or len(value) != 2:
        raise TypeError(f"{name} must be a pair of integers (G, M), got {value!r}")
    G, M = check_count(f"{name}[0]", value[0]), check_count(f"{name}[1]", value[1])
    if shape is not None and (G > shape[0] or M > shape[1]):
        raise ValueError(f"{name} ({G}, {M}) exceeds the table's {shape[0]} rows and {shape[1]} "
                         "columns")
    return G, M


#: The searches by name: each runs on a CellSearch from ``n_init`` and its root seed.
_SEARCH_FUNCTIONS: dict[str, Callable[[CellSearch, int, np.random.SeedSequence], None]] = {
    "path": path_search, "grid": grid_search}


def select_lbm(
    X: ArrayLike,
    max_clusters: tuple[int, int] = (8, 8),
    *,
    kind: Family | str | None = None,
    method: str = "cem",
    criterion: str = "icl",
    search: str = DEFAULT_SEARCH,
    n_init: int = 10,
    jobs: int = 1,
    rng: np.random.Generator | int | None = None,
) -> LBMSelection:
    """Choose the numbers of clusters of a latent block model by ICL, and fit it.

    Parameters
    ----------
    X : array-like or scipy.sparse matrix of shape (n_rows, n_cols)
        The table (a sparse table stays sparse: every block sum is a sparse product).
    max_clusters : (int, int), default=(8, 8)
        The largest numbers of row and column clusters ``(G, M)`` considered, at most
        the table's numbers of rows and columns.
    kind : {"gaussian", "poisson", "bernoulli", "categorical"} or Family, optional
        Family of the blocks; inferred from the table when None (see :func:`fit_lbm`).
    method : {"cem", "vem"}, default="cem"
        Block CEM or VEM (the criterion is computed at the MAP labels of VEM, which the
        path's polish may move: the model is then the M-step at the labels returned).
    criterion : {"icl", "exact-icl", "bic-icl"}, default="icl"
        The exact ICL or its BIC-type approximation (:mod:`lbm_bench.algorithms.criteria`);
        ``"icl"`` is the family's choice (``default_icl``: exact for Bernoulli, Poisson and
        categorical blocks, see docs/benchmark.md for Gaussian blocks).
    search : {"path", "grid"}, default="path"
        Splits and merges from ``(1, 1)``, or every cell (see the module docstring).
    n_init : int, default=10
        k-means++ seeded starts per cell of the grid; of the path search, at the best
        cell and the two cells with one more cluster (its other runs start from splits
        and merges).
    jobs : int, default=1
        Parallel workers (:mod:`lbm_bench.tasks`) for the EM runs; the result does not depend on it.
    rng : None, int or numpy.random.Generator

    Returns
    -------
    LBMSelection

    Examples
    --------
    >>> from lbm_bench import random_model
    >>> X, z, w = random_model("bernoulli", 3, 2, scale=3.0, rng=0).sample(80, 60, rng=1)
    >>> chosen = select_lbm(X, (4, 4), rng=2)
    >>> (chosen.n_row_clusters, chosen.n_col_clusters), chosen.criterion
    ((3, 2), 'exact-icl')
    >>> chosen.criterion_table.shape
    (4, 4)
    """
    rng = np.random.default_rng(rng)
    # missing entries (NaN, masked, explicit NaN of a sparse table)
    data, family = em_inputs(X, kind, method)
    bounds = check_max_clusters("max_clusters", max_clusters, data.shape)
    check_choice("search", search, SEARCHES)
    n_init, jobs = check_count("n_init", n_init), check_count("jobs", jobs)
    crit = Criterion(EMProblem(data, family, method), criterion)
    _warn_continuous_on_few_values(data, family)
    root = np.random.SeedSequence(draw_seed(rng))
    with single_blas_thread():
        if jobs == 1:
            state = CellSearch(crit, method, bounds, jobs, None)
            _SEARCH_FUNCTIONS[search](state, n_init, root)
        else:
            with TaskPool(jobs) as pool:
                state = CellSearch(crit, method, bounds, jobs, pool)
                _SEARCH_FUNCTIONS[search](state, n_init, root)
    return _selection(state, search)


def _warn_continuous_on_few_values(data: TableData, family: Family) -> None:
    """Warn when blocks of real values (a family stored as floats) are fitted to a table of two
    values: each split towards purer blocks shrinks their variances without bound, so the
    criterion keeps rising and the choice runs to ``max_clusters`` with small clusters."""
    if np.dtype(family.model.table_dtype).kind != "f":
        return
    values = few_values(data, 2)
    if values is None or len(values) < 2:
        return
    integral = all(v == round(v) for v in values)
    better = infer_kind(np.array(values, dtype=np.int64)[None, :]) if integral else None
    warnings.warn(
        f"the table holds only the values {values[0]:g} and {values[1]:g}: {family.kind} blocks "
        "fitted to it have variances shrinking towards 0 as clusters get purer, so the choice of "
        "the numbers of clusters runs to "
        "max_clusters with small clusters" +
        (f"; use kind={better!r}" if better and better != family.kind else ""), UserWarning,
        stacklevel=3,
    )


def _selection(search: CellSearch, name: str) -> LBMSelection:
    table = np.full(search.bounds, np.nan)
    for (g, m), cell in search.cells.items():
        table[g - 1, m - 1] = cell.value
    key = search.best()
    cell = search.cells[key]
    fit = LBMFit.from_run(search.criterion.problem, cell.run, cell.fit_criteria, search.method,
                          labels=(cell.rows, cell.cols))
    return LBMSelection(rows=cell.rows, cols=cell.cols, n_row_clusters=key[0],
                        n_col_clusters=key[1], fit=fit, criterion_table=table,
                        criterion=search.criterion.form, search=name, n_runs=search.n_runs)


def cem_icl(
    X: ArrayLike,
    max_row_clusters: int,
    max_col_clusters: int,
    *,
    kind: str | None = None,
    rng: np.random.Generator | int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Block CEM with the numbers of clusters chosen by ICL: :func:`select_lbm` with its
    defaults (the path search, the family's ICL, 10 starts). An algorithm of the
    unknown-clusters track of ``lbm-bench benchmark`` (``cem-icl``).

    Returns
    -------
    rows : ndarray of shape (n_rows,) of int64
    cols : ndarray of shape (n_cols,) of int64
    """
    chosen = select_lbm(X, (max_row_clusters, max_col_clusters), kind=kind, method="cem", rng=rng)
    return chosen.rows, chosen.cols


def vem_icl(
    X: ArrayLike,
    max_row_clusters: int,
    max_col_clusters: int,
    *,
    kind: str | None = None,
    rng: np.random.Generator | int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Block VEM with the numbers of clusters chosen by ICL at its MAP labels (``vem-icl``);
    see :func:`cem_icl`."""
    chosen = select_lbm(X, (max_row_clusters, max_col_clusters), kind=kind, method="vem", rng=rng)
    return chosen.rows, chosen.cols


#: The algorithm each is compared with on the unknown-clusters track: itself told the counts.
cem_icl.given_counts = "cem"
vem_icl.given_counts = "vem"
