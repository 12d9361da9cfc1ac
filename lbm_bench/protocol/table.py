"""The records of a calibrated benchmark table: what generation produces and files store."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from lbm_bench._validation import describe_percent
from lbm_bench.inference.bayes import label_frequencies
from lbm_bench.inference.gibbs import GibbsSamples, RiskEstimate
from lbm_bench.models.base import LatentBlockModel
from lbm_bench.models.data import TableData
from lbm_bench.models.design import ModelDesign
from lbm_bench.models.family import Family
from lbm_bench.protocol.request import TableRequest
from lbm_bench.protocol.settings import GenerationSettings, ModelOptions

__all__ = ["CalibrationResult", "RejectionRecord", "Table"]


@dataclass(frozen=True)
class CalibrationResult:
    """Outcome of the calibration of the scale (step 3 of the protocol).

    Attributes
    ----------
    scale : float
        Calibrated scale.
    bracket : tuple of float
        Final bracket ``(low, high)`` of the search (low is harder), at the
        final number of tables.
    n_steps : int
        Number of evaluations (a scale re-evaluated on more tables counts twice).
    mean_error : float
        The calibrated mean risk at ``scale`` over the ``n_tables`` tables: the
        X-only MAP's mean apparent error ``l_item((z0, w0), h(X))`` (an unbiased
        estimate of its mean conditional risk; ``criterion="map"``) or the mean
        short-run floor (``"bayes"``). When the search's last steps used fewer
        tables, their mean at ``scale`` plus the anchor's correction (both in
        ``history``; :mod:`lbm_bench.protocol.scale_search`). Files of earlier
        versions with a ``gap``: the MAP's mean apparent error minus it.
    error_std : float
        Standard deviation of the risk over the tables.
    target_risk : float
        Target conditional risk.
    tolerance : float
        Stop when the mean error is within this distance of the target.
    n_tables : int
        Tables the calibrated mean is measured on (common random numbers across scales).
    history : ndarray of shape (n_steps, 4)
        Every evaluation ``(scale, mean risk, risk std, n_tables)``, in order
        (files of format 1.0 have no fourth column: it is filled with ``n_tables``).
    design : ModelDesign or None
        The design whose scale was calibrated (``model = design.model(scale)``).
    method : str
        ``"secant"`` (root finding with a sequential number of tables) or
        ``"bisection"`` (the paper's dichotomy, the only method before format 1.1).
    criterion : str
        The risk calibrated: ``"map"`` (the X-only MAP's) or ``"bayes"`` (the floor).
    gap : float
        Files written before the short-run floors, ``criterion="bayes"``: the mean gap
        between the MAP's conditional risk and the floor at ``scale`` (``mean_error``
        is the MAP's mean minus it); 0.0 otherwise.
    gap_history : ndarray of shape (n_gap_steps, 4) or None
        The same files: every measure of the gap ``(scale, mean gap, gap std,
        n_tables)``, in order; None otherwise.

    Examples
    --------
    >>> from lbm_bench import load_table
    >>> cal = load_table("tests/data/table_v1_1.h5").calibration   # as the table records it
    >>> cal.scale, cal.n_steps, cal.history.shape   # (scale, mean risk, sd, n_tables) per step
    (0.8, 3, (3, 4))
    """

    scale: float
    bracket: tuple[float, float]
    n_steps: int
    mean_error: float
    error_std: float
    target_risk: float
    tolerance: float
    n_tables: int
    history: np.ndarray
    design: ModelDesign | None = field(default=None, compare=False, repr=False)
    method: str = field(default="bisection", compare=False)
    criterion: str = field(default="map", compare=False)
    gap: float = field(default=0.0, compare=False)
    gap_history: np.ndarray | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class RejectionRecord:
    """Outcome of rejection sampling (step 4 of the protocol).

    Attributes
    ----------
    attempts : int
        Candidate tables drawn, the kept one included.
    screened_out : int
        Candidates rejected by the short screening run.
    acceptance_rate : float
        ``1 / attempts``.
    tolerance : float
        Kept when ``|risk - target| <= tolerance``.
    candidate_risks : ndarray of shape (attempts,)
        Risk estimate of each candidate, of the table's criterion (screening
        estimate for the candidates screened out, full estimate for the others).
    balance : float or None
        When set, the kept table also satisfies
        ``min(l_row, l_col) >= balance * max(l_row, l_col)``.

    Examples
    --------
    >>> from lbm_bench import load_table
    >>> record = load_table("tests/data/table_v1_1.h5").rejection
    >>> record.attempts, record.screened_out, record.acceptance_rate == 1 / record.attempts
    (3, 2, True)
    """

    attempts: int
    screened_out: int
    acceptance_rate: float
    tolerance: float
    candidate_risks: np.ndarray
    balance: float | None = None


@dataclass(frozen=True)
class Table:
    """A benchmark table with its labels, ground truths and certificate.

    Attributes
    ----------
    data : ndarray of shape (n_rows, n_cols)
        float64 (Gaussian), int64 (Poisson) or uint8 (Bernoulli); a
        ``scipy.sparse.csr_array`` for a sparse table. A table with missing
        entries holds NaN there, as float64 (a sparse one: explicit NaN values);
        :attr:`observed`, :meth:`masked_data` and :meth:`table_data` give its mask.
    model : LatentBlockModel
        The generating model (true parameters).
    design : ModelDesign
        Its scale-free part; ``model == design.model(scale)``.
    scale : float
        Calibrated scale.
    truth_rows, truth_cols : ndarray of shape (n_rows,), (n_cols,)
        Generating labels.
    map_rows, map_cols : ndarray of shape (n_rows,), (n_cols,)
        X-only MAP labels (Algorithm 1).
    gibbs : GibbsSamples
        Label sets drawn from ``p(z, w | X)``.
    risk : RiskEstimate
        Gibbs estimate of the conditional risk of the MAP labels (the paper's
        certificate).
    target_risk : float
        Requested conditional risk.
    seed : int
        Seed that reproduces the table with :func:`lbm_bench.generate_table`.
    calibration : CalibrationResult
    rejection : RejectionRecord
    options : dict
        Generation options (model options, Gibbs settings), for the record.
    bayes_rows, bayes_cols : ndarray of shape (n_rows,), (n_cols,), or None
        The Bayes labels for ``l_item`` chosen on all Gibbs sets
        (:func:`~lbm_bench.floor_certificate`); None for a format 1.0 file.
    bayes_risk : RiskEstimate or None
        Their cross-fitted conditional risk: the floor no labelling beats beyond
        Monte Carlo error; None for a format 1.0 file.
    criterion : {"bayes", "map"}
        Which risk the target and the rejection step applied to ("map" for
        format 1.0 files, made by the paper's protocol).
    timings : dict
        Seconds spent per stage (calibration, rejection, gibbs). Not stored in
        files: they would make rebuilt files differ.
    format_version : str or None
        The format version (``"1.3"``) of the file the table was read from; None for a
        table made in memory. Not compared: a table and its file are the same table.

    Examples
    --------
    >>> from lbm_bench import load_table
    >>> table = load_table("tests/data/table_v1_1.h5")   # a small table of the test suite
    >>> table.kind, table.shape, table.seed, table.target_risk, table.criterion
    ('poisson', (12, 10), 2, 0.1, 'bayes')
    >>> table.certified_risk is table.bayes_risk, table.bayes_rows.shape, table.gibbs.n_samples
    (True, (12,), 50)
    >>> print(table.summary())
    poisson table 12x10, 2x2 clusters, seed 2
    target risk 0.1000 (criterion: bayes)
    floor (Bayes labels for l_item, cross-fitted) 0.0815 +- 0.0148 (MCSE), R-hat 0.995; ...
    ...
    rejection sampling: 3 attempt(s), acceptance rate 0.333
    """

    data: np.ndarray
    model: LatentBlockModel
    design: ModelDesign
    scale: float
    truth_rows: np.ndarray
    truth_cols: np.ndarray
    map_rows: np.ndarray
    map_cols: np.ndarray
    gibbs: GibbsSamples
    risk: RiskEstimate
    target_risk: float
    seed: int
    calibration: CalibrationResult
    rejection: RejectionRecord
    options: dict = field(default_factory=dict)
    bayes_rows: np.ndarray | None = None
    bayes_cols: np.ndarray | None = None
    bayes_risk: RiskEstimate | None = None
    criterion: str = "map"
    timings: dict = field(default_factory=dict, compare=False, repr=False)
    format_version: str | None = field(default=None, compare=False)

    @property
    def family(self) -> Family:
        """The family of the table's model."""
        return self.model.family

    @property
    def kind(self) -> str:
        """The name of the table's family."""
        return self.model.kind

    def header_values(self) -> dict[str, Any]:
        """The values of the family's header attributes for this table (``{"categories": 5}``
        for categorical tables; files store them)."""
        return self.model.family.storage.header_values(self.model)

    def table_data(self) -> TableData:
        """The table in the family's dtype with 0 at its missing entries, and its mask
        (:class:`~lbm_bench.models.data.TableData`), as the inference functions take it."""
        data = TableData.incomplete(self.data, name="data")
        if not data.has_missing:
            return data
        table = self.model.check_table(data.table, name="data")
        dtype = self.model.table_dtype
        return data.with_table(table.astype(dtype, copy=False) if not data.is_sparse else table)

    @property
    def missing_mechanism(self) -> str | None:
        """``"random"`` or ``"block"`` when the table has missing entries, else None."""
        missing = self.design.missing if self.design is not None else None
        return None if missing is None else missing.mechanism

    @property
    def missing_rate(self) -> float:
        """The requested fraction of missing entries (0.0 for a complete table)."""
        missing = self.design.missing if self.design is not None else None
        return 0.0 if missing is None else missing.rate

    @property
    def observed(self) -> np.ndarray | None:
        """The observed mask (bool, True: observed) of a dense table with missing entries;
        None for a complete table (a sparse table's missing set: ``table_data().missing``)."""
        data = self.table_data()
        return getattr(data, "observed", None) if data.has_missing else None

    def masked_data(self) -> np.ma.MaskedArray:
        """The table as a NumPy masked array in the family's dtype (masked: missing; 0 underneath).

        Raises
        ------
        ValueError
            For a sparse table (its missing entries are explicit NaN values of ``data``).
        """
        data = self.table_data()
        if data.is_sparse:
            raise ValueError("a sparse table has no masked-array form: its missing entries are "
                             "explicit "
                             "NaN values of table.data")
        return data.masked()

    @property
    def shape(self) -> tuple[int, int]:
        return self.data.shape  # type: ignore[return-value]

    @property
    def n_row_clusters(self) -> int:
        return self.model.n_row_clusters

    @property
    def n_col_clusters(self) -> int:
        return self.model.n_col_clusters

    @property
    def settings(self) -> GenerationSettings:
        """The generation settings, read back from the stored options record.

        Files store the record's own serialisation; those written by earlier versions
        store fewer fields (the others take their defaults; the rejection tolerance and
        the calibration method come from the rejection and calibration records).
        """
        known = {"tolerance": self.rejection.tolerance, "balance": self.rejection.balance,
                 "calibration_method": self.calibration.method}
        return GenerationSettings.from_record({**known, **self.options})

    @property
    def request(self) -> TableRequest:
        """The request the table answers: family and design options, shape, clusters, target,
        criterion."""
        options = ModelOptions.from_record(self.options.get("model_options", {}))
        return TableRequest(self.model.family, *self.shape, self.n_row_clusters,
                            self.n_col_clusters, self.target_risk, model_options=options,
                            criterion=self.criterion)

    @property
    def certified_risk(self) -> RiskEstimate:
        """The risk the target applied to: ``bayes_risk`` (criterion "bayes") or ``risk``."""
        if self.criterion == "bayes" and self.bayes_risk is not None:
            return self.bayes_risk
        return self.risk

    def posterior_marginals(self) -> tuple[np.ndarray, np.ndarray]:
        """Share of the Gibbs sets giving each row each row class, each column each column class.

        Returns
        -------
        rows : ndarray of shape (n_rows, n_row_clusters), float32
        cols : ndarray of shape (n_cols, n_col_clusters), float32
        """
        g, m = self.model.block_shape
        return (
            label_frequencies(self.gibbs.rows, g).astype(np.float32),
            label_frequencies(self.gibbs.cols, m).astype(np.float32),
        )

    def summary(self) -> str:
        """A few lines describing the table and its certificate."""
        n, d = self.shape
        g, m = self.model.block_shape
        r = self.risk
        stored = ""
        # explicit NaN (missing) are not stored entries
        data = TableData.incomplete(self.data, name="data")
        if data.is_sparse:
            density = data.n_stored / (n * d)
            stored = f", sparse: {data.n_stored} non-zero entries (density {density:.4g})"
        header = "".join(f", {name} {value}" for name, value in self.header_values().items())
        lines = [
            f"{self.kind} table {n}x{d}, {g}x{m} clusters{header}, seed {self.seed}{stored}",
            f"target risk {self.target_risk:.4f} (criterion: {self.criterion})",
        ]
        lines += self._missing_lines()
        if self.design is not None and self.design.path is not None:
            source = f", design file sha256 {self.design.digest}" if self.design.digest else ""
            lines.append(f"design fitted to a table (scale 1: the fitted model){source}")
        if self.bayes_risk is not None:
            b = self.bayes_risk
            lines.append(
                f"floor (Bayes labels for l_item, cross-fitted) {b.risk:.4f} +- {b.mcse:.4f} "
                "(MCSE), "
                f"R-hat {b.rhat:.3f}; row loss {b.row_loss:.4f}, column loss {b.col_loss:.4f}"
            )
        else:
            lines.append(f"floor: not stored ({self.origin}); the MAP's risk is the reference")
        return "\n".join(
            lines + [
                f"Gibbs risk of the MAP labels "
                f"{r.risk:.4f} +- {r.mcse:.4f} (MCSE), R-hat {r.rhat:.3f}",
                f"row loss {r.row_loss:.4f}, column loss {r.col_loss:.4f}; "
                f"{r.n_samples} Gibbs label sets in {r.n_chains} chains",
                self._calibration_line(),
                f"rejection sampling: {self.rejection.attempts} attempt(s), "
                f"acceptance rate {self.rejection.acceptance_rate:.3f}",
            ]
        )

    @property
    def origin(self) -> str:
        """Where the table comes from, for messages: ``"format 1.3 file"``, or ``"table in
        memory"``."""
        if self.format_version is None:
            return "table in memory"
        return f"format {self.format_version} file"

    def _missing_lines(self) -> list[str]:
        """One line on the missing entries (none for a complete table)."""
        data = TableData.incomplete(self.data, name="data")
        if not data.has_missing and self.missing_mechanism is None:
            return []
        n, d = self.shape
        empty_rows = int(np.count_nonzero(data.missing_row_counts() == d))
        empty_cols = int(np.count_nonzero(data.missing_col_counts() == n))
        line = (f"missing entries: {data.n_missing} of {n * d} "
                f"({describe_percent(data.missing_fraction)}; mechanism "
                f"{self.missing_mechanism}, rate {self.missing_rate:g}); the risks are given the "
                "observed entries")
        if empty_rows or empty_cols:
            line += (f"; {empty_rows} row(s) and {empty_cols} column(s) have no observed entry" +
                     (": their labels' posterior is the prior"
                      if self.missing_mechanism == "random" else ""))
        return [line]

    def _calibration_line(self) -> str:
        c = self.calibration
        short_run = c.criterion == "bayes" and c.gap_history is None
        measure = "short-run floor" if short_run else "MAP apparent error"
        text = (f"scale {self.scale:.6g} after {c.n_steps} evaluations ({measure} "
                f"{c.mean_error + c.gap:.4f} +- {c.error_std:.4f} over {c.n_tables} tables")
        if c.gap_history is None:
            return text + ")"
        tables = int(c.gap_history[-1, 3])
        return text + f"; minus the gap to the floor {c.gap:.4f} over {tables} tables)"
