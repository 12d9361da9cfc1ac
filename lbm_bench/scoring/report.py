"""The scores of one co-clustering on one table: the :class:`Report` that
:func:`~lbm_bench.scoring.evaluate.evaluate` returns, as a record, a JSON-ready dict and a
summary a person reads (``lbm-bench evaluate``, ``--json``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from lbm_bench._json import strict_json

__all__ = ["Report"]


@dataclass(frozen=True)
class Report:
    """Scores of one co-clustering on one table.

    Attributes
    ----------
    table : str
        File (or description) of the table.
    risk, risk_mcse : float
        Conditional risk of the submission (mean ``l_item`` over the Gibbs sets,
        one optimal matching) and its Monte Carlo standard error.
    row_loss, col_loss : float
        Mean ``l_row`` and ``l_col`` under that matching.
    bayes_risk, bayes_mcse : float
        The table's reference: its floor (cross-fitted risk of the Bayes labels
        for ``l_item``); for a format 1.0 file, the MAP's risk (see ``reference``).
    map_risk, map_mcse : float
        Conditional risk of the table's X-only MAP labels (the paper's certificate).
    chance_risk, chance_mcse : float
        The chance level and its Monte Carlo standard error: the mean conditional
        risk of 20 labellings drawn from the model's proportions independently of X
        (seed :data:`~lbm_bench.scoring.evaluate.CHANCE_SEED`), each scored like a submission
        against 100 of the Gibbs sets (:func:`lbm_bench.metrics.chance_risk`). With the floor it
        spans
        the scale of ``risk``.
    excess_risk, excess_mcse : float
        ``risk - bayes_risk`` and its paired standard error.
    map_excess_risk, map_excess_mcse : float
        ``risk - map_risk`` and its paired standard error.
    reference : {"bayes", "map"}
        What ``bayes_risk`` is: the floor, or the MAP's risk (format 1.0 file).
    criterion : {"bayes", "map"}
        Which risk the table's target applied to.
    note : str
        One line when the reference is not the floor, else empty.
    cari_mean, cari_std : float
        CARI against each Gibbs set: mean and standard deviation.
    ari_rows, ari_cols : float
        Mean ARI of the rows and of the columns against the Gibbs sets.
    apparent_l_item, apparent_cari : float
        ``l_item`` (optimal matching) and CARI against the generating labels.
    apparent_ari_rows, apparent_ari_cols : float
        ARI of rows and columns against the generating labels.
    matching_error_rows, matching_error_cols : float
        Matching error of rows and columns against the generating labels.
    n_samples : int
        Number of Gibbs label sets.
    row_labels, col_labels : list of int
        The distinct submitted row and column labels, in increasing order.
    row_map, col_map : list of int
        The matching: the reference cluster of the submitted cluster ``row_labels[i]``
        (``col_labels[i]``), -1 when unmatched; for labels ``0..k-1``, indexed by the label.
    matching_exact : bool
        Whether the matching is certified optimal.
    table_clusters : list of int
        The table's numbers of row and column clusters ``[g, m]``.
    predicted_clusters : list of int
        The numbers of distinct row and column labels submitted.
    warning : str
        One line when ``predicted_clusters`` differs from ``table_clusters``, else empty.
    missing : str
        One line when the table has missing entries (how many, the mechanism, and that every
        risk is the conditional risk given the observed entries), else empty.

    Examples
    --------
    >>> from lbm_bench import evaluate, load_table
    >>> table = load_table("tests/data/table_v1_1.h5")
    >>> report = evaluate(table, table.map_rows, table.map_cols)
    >>> report.reference, report.map_excess_risk   # the MAP labels against themselves
    ('bayes', 0.0)
    >>> sorted(report.to_dict())[:3]
    ['apparent_ari_cols', 'apparent_ari_rows', 'apparent_cari']
    """

    table: str
    risk: float
    risk_mcse: float
    row_loss: float
    col_loss: float
    bayes_risk: float
    bayes_mcse: float
    map_risk: float
    map_mcse: float
    excess_risk: float
    excess_mcse: float
    map_excess_risk: float
    map_excess_mcse: float
    reference: str
    criterion: str
    note: str
    cari_mean: float
    cari_std: float
    ari_rows: float
    ari_cols: float
    apparent_l_item: float
    apparent_cari: float
    apparent_ari_rows: float
    apparent_ari_cols: float
    matching_error_rows: float
    matching_error_cols: float
    n_samples: int
    row_map: list
    col_map: list
    row_labels: list
    col_labels: list
    matching_exact: bool
    chance_risk: float
    chance_mcse: float
    table_clusters: list
    predicted_clusters: list
    warning: str
    missing: str = ""

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready dict."""
        return asdict(self)

    def to_json(self) -> str:
        """The report as strict JSON: a score that is not a number (a NaN floor of a table that
        has none) is ``null``, as ``lbm-bench info --json`` writes it (:mod:`lbm_bench._json`)."""
        return strict_json(self.to_dict())

    def summary(self) -> str:
        """Human-readable report."""
        return "\n".join(
            [
                f"table: {self.table}",
                *([f"warning: {self.warning}"] if self.warning else []),
                f"conditional risk r_item  {self.risk:.4f} +- {self.risk_mcse:.4f}  "
                f"(l_row {self.row_loss:.4f}, l_col {self.col_loss:.4f}; {self.n_samples} Gibbs "
                "sets)",
                *([f"note: {self.note}"] if self.note else []),
                *([f"missing entries: {self.missing}"] if self.missing else []),
                "numbers of clusters      "
                f"{self.predicted_clusters[0]}x{self.predicted_clusters[1]}  "
                f"(the table's: {self.table_clusters[0]}x{self.table_clusters[1]})",
                f"floor (Bayes, l_item)    {self.bayes_risk:.4f} +- {self.bayes_mcse:.4f}"
                if self.reference == "bayes" else
                f"reference (MAP; no floor) {self.bayes_risk:.4f} +- {self.bayes_mcse:.4f}",
                f"chance level             {self.chance_risk:.4f} +- {self.chance_mcse:.4f}  "
                "(random labels drawn from the proportions)",
                f"MAP labels (paper)       {self.map_risk:.4f} +- {self.map_mcse:.4f}  "
                f"(target applied to: {self.criterion})",
                f"excess risk              {self.excess_risk:+.4f} +- {self.excess_mcse:.4f}"
                f"  (over the {'floor' if self.reference == 'bayes' else 'MAP'})",
                f"excess over the MAP      {self.map_excess_risk:+.4f} +- "
                f"{self.map_excess_mcse:.4f}",
                f"CARI over Gibbs sets     {self.cari_mean:.4f} (sd {self.cari_std:.4f}); "
                f"ARI rows {self.ari_rows:.4f}, cols {self.ari_cols:.4f}",
                f"apparent (generating labels only): l_item {self.apparent_l_item:.4f}, "
                f"CARI {self.apparent_cari:.4f}, ARI rows {self.apparent_ari_rows:.4f}, "
                f"cols {self.apparent_ari_cols:.4f}, matching error rows "
                f"{self.matching_error_rows:.4f}, cols {self.matching_error_cols:.4f}",
            ]
        )
