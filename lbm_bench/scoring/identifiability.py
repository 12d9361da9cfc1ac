"""Are a table's numbers of clusters recoverable by the ICL?

A method that chooses the numbers of clusters can miss them for two reasons: its
criterion prefers other counts on this table (no search could find the true counts by
that criterion), or its search stopped at a worse labelling. :func:`identifiability`
tells them apart, table by table: the table's own Bayes labels (for ``l_item``, computed
with the true parameters: format 1.1; the MAP labels for a format 1.0 file) at the true
counts are scored by the ICL of the table's family (the exact ICL,
:mod:`lbm_bench.algorithms.criteria`), and compared with the best labelling that a
reference search finds at every *other* cell ``(g, m)`` up to ``max_clusters``: the full
grid of block CEM fits (10 starts per cell) and the path search of
:func:`~lbm_bench.algorithms.select_lbm`, the higher of the two per cell. The counts are
**identifiable** when the Bayes labels score higher than all of them: a miss on such a
table is the search's, a miss elsewhere the criterion's.

The reference search is seeded from the table's id alone, so the answer is a property of
the table and the criterion (the benchmark caches it with the results).
"""

from __future__ import annotations

import zlib
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from lbm_bench.algorithms.criteria import Criterion
from lbm_bench.algorithms.em_problem import EMProblem
from lbm_bench.algorithms.selection import check_max_clusters, select_lbm
from lbm_bench.metrics.contingency_tables import compact_labels
from lbm_bench.protocol.table import Table

__all__ = ["REFERENCE_SEARCH", "Identifiability", "identifiability"]

#: The reference search, as cached answers record it (an answer of another search is redone).
REFERENCE_SEARCH = ("grid (block CEM, 10 starts per cell) and path, the better per cell; "
                    "family's ICL")


@dataclass(frozen=True)
class Identifiability:
    """Whether a table's numbers of clusters are recoverable by the ICL.

    Attributes
    ----------
    table : str
        The table's id (or description).
    criterion : str
        The criterion's form (``"exact-icl"``, or ``"bic-icl"`` for a family without a closed form).
    max_clusters : list of int
        ``[G, M]``, the cells searched.
    true_clusters : list of int
        The table's numbers of clusters ``[g, m]``.
    labels : {"bayes", "map"}
        Which of the table's labels were scored (the MAP labels only in a format 1.0 file).
    labels_clusters : list of int
        Their numbers of distinct labels (the true counts, unless a cluster is empty).
    labels_value : float
        Their criterion.
    best_other_value : float
        The best criterion the reference search found at another cell.
    best_other_clusters : list of int
        That cell.
    identifiable : bool
        ``labels_value > best_other_value`` (and the labels have the true counts).
    reference : str
        :data:`REFERENCE_SEARCH`.
    """

    table: str
    criterion: str
    max_clusters: list
    true_clusters: list
    labels: str
    labels_clusters: list
    labels_value: float
    best_other_value: float
    best_other_clusters: list
    identifiable: bool
    reference: str

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready dict."""
        return asdict(self)


def identifiability(table: Table, max_clusters: tuple[int, int], *,
                    name: str | None = None) -> Identifiability:
    """Whether ``table``'s numbers of clusters are identifiable by the ICL (see the module
    docstring).

    Parameters
    ----------
    table : Table
        A benchmark table (its Bayes labels, or MAP labels for a format 1.0 file).
    max_clusters : (int, int)
        The cells the reference search visits, ``1..G x 1..M``; they must include the
        table's counts.
    name : str, optional
        The table's id, which seeds the reference search (default: the table's seed).

    Returns
    -------
    Identifiability
    """
    G, M = check_max_clusters("max_clusters", max_clusters, table.shape)
    g, m = table.n_row_clusters, table.n_col_clusters
    if g > G or m > M:
        raise ValueError(f"max_clusters {G}x{M} does not include the table's {g}x{m} clusters")
    name = name if name is not None else f"{table.kind} table seed {table.seed}"
    seed = zlib.crc32(name.encode())
    family = table.model.family
    reference = [
        select_lbm(table.data, (G, M), kind=family, search=search, rng=[seed, i]).criterion_table
        for i, search in enumerate(("grid", "path"))
    ]
    values = np.fmax(*reference)
    bayes = table.bayes_rows is not None
    rows, cols = (table.bayes_rows, table.bayes_cols) if bayes else (table.map_rows, table.map_cols)
    rows, cols = compact_labels(rows), compact_labels(cols)
    criterion = Criterion(EMProblem(table.table_data(), family), "icl")
    labels_value = criterion(rows, cols)
    others = values.copy()
    others[g - 1, m - 1] = np.nan
    if np.all(np.isnan(others)):  # a 1x1 search: no other cell
        best, best_cell = -np.inf, [g, m]
    else:
        flat = int(np.nanargmax(others))
        best, best_cell = float(others.flat[flat]), [flat // M + 1, flat % M + 1]
    counts = [int(rows.max()) + 1, int(cols.max()) + 1]
    return Identifiability(table=name, criterion=criterion.form, max_clusters=[G, M],
                           true_clusters=[g, m], labels="bayes" if bayes else "map",
                           labels_clusters=counts, labels_value=float(labels_value),
                           best_other_value=best, best_other_clusters=best_cell,
                           identifiable=bool(counts == [g, m] and
                                             labels_value > best), reference=REFERENCE_SEARCH,
                           )
