"""Step 4 of the protocol: rejection sampling of tables whose conditional risk meets a target.

Tables are drawn from the calibrated model. For each candidate, the X-only MAP
labels are computed and their conditional risk ``r_item`` is estimated by Gibbs
sampling. A short screening run rejects the candidates that are clearly off
target (sequential rule: ``|risk - target| > tolerance + 3 MCSE``); the full
run (2,000 label sets by default) decides for the others. Chains start half at
the generating labels (an exact posterior draw) and half at the MAP labels, so
R-hat compares chains from two different starting points.

**Sparse tables.** With ``density=`` (Bernoulli and Poisson) the design is
sparse (:mod:`lbm_bench.models.design`) and the table's ``data`` is a
``scipy.sparse.csr_array``; the calibration, the MAP and the Gibbs sampler run
on it without densifying (:mod:`lbm_bench.inference.engine`). Without
``density``, ``data`` is a dense ndarray as before.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from lbm_bench._validation import check_count, check_kind, check_positive_float, check_probability
from lbm_bench.models.design import resolve_effects
from lbm_bench.protocol.calibration import calibrate_scale, child_seed
from lbm_bench.inference.classifier import map_labels
from lbm_bench.inference.gibbs import GibbsSamples, RiskEstimate, gibbs_labels
from lbm_bench.protocol.table import CalibrationResult, RejectionRecord, Table

__all__ = ["generate_table", "RejectionError", "resolve_seed"]


class RejectionError(RuntimeError):
    """No candidate table met the target within the allowed number of attempts."""


def resolve_seed(rng: np.random.Generator | int | None) -> int:
    """An integer seed that reproduces the run: ``rng`` itself when it is an int,
    else one drawn from ``rng`` (or from fresh OS entropy when None)."""
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool):
        if rng < 0:
            raise ValueError(f"rng must be a non-negative seed, got {rng}")
        return int(rng)
    if rng is None:
        return int(np.random.SeedSequence().generate_state(2, np.uint32).view(np.uint64)[0] >> 1)
    if isinstance(rng, np.random.Generator):
        return int(rng.integers(2**63))
    raise TypeError(f"rng must be None, an int or a numpy Generator, got {type(rng).__name__}")


def _balanced(estimate: RiskEstimate, balance: float | None) -> bool:
    if balance is None:
        return True
    low, high = sorted((estimate.row_loss, estimate.col_loss))
    return high == 0 or low >= balance * high


def _progress_bar(enabled: bool, total: int | None, desc: str):
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, disable=not enabled, leave=False, unit="step")


def generate_table(
    kind: str,
    n_rows: int,
    n_cols: int,
    n_row_clusters: int,
    n_col_clusters: int,
    target_risk: float,
    *,
    tolerance: float = 0.01,
    n_samples: int = 2000,
    n_chains: int = 8,
    burn_in: int = 50,
    thin: int = 1,
    screen_samples: int = 200,
    max_attempts: int = 100,
    balance: float | None = None,
    n_calibration_tables: int = 200,
    calibration_tolerance: float | None = None,
    n_init: int = 10,
    gibbs_method: str = "incremental",
    calibration: CalibrationResult | None = None,
    progress: bool = False,
    rng: np.random.Generator | int | None = None,
    **model_options: Any,
) -> Table:
    """Generate a table whose Gibbs-estimated conditional risk meets a target.

    Parameters
    ----------
    kind : {"gaussian", "poisson", "bernoulli"}
    n_rows, n_cols : int
        Table shape.
    n_row_clusters, n_col_clusters : int
        Cluster numbers.
    target_risk : float
        Target conditional risk ``r_item`` of the MAP labels, in (0, 1).
    tolerance : float, default=0.01
        A table is kept when ``|risk - target| <= tolerance`` (absolute).
    n_samples, n_chains, burn_in, thin : int
        Gibbs settings of the full run (see :func:`~lbm_bench.gibbs_labels`).
    screen_samples : int, default=200
        Label sets of the screening run (0 disables screening).
    max_attempts : int, default=100
        Candidates drawn before giving up with :class:`RejectionError`.
    balance : float, optional
        Also require ``min(l_row, l_col) >= balance * max(l_row, l_col)`` (the
        paper's section 4.6: row and column losses of the same order).
    n_calibration_tables : int, default=200
        Tables per dichotomy step of the calibration.
    calibration_tolerance : float, optional
        Tolerance of the calibration (see :func:`~lbm_bench.calibrate_scale`).
    n_init : int, default=10
        Random starts of the MAP.
    gibbs_method : {"incremental", "full"}, default="incremental"
        How the Gibbs sampler updates its block sums (see
        :func:`~lbm_bench.gibbs_labels`); "full" is the slower reference.
    calibration : CalibrationResult, optional
        A calibration to reuse (its design and scale); computed when omitted.
    progress : bool, default=False
        Show tqdm progress bars.
    rng : None or int
        Seed; the table records it and the same seed reproduces the same bytes.
        A Generator is accepted and a seed drawn from it.
    **model_options
        Options of :func:`~lbm_bench.random_design`, among them
        ``density`` (Bernoulli, Poisson: expected fraction of non-zero entries;
        the table is then a ``scipy.sparse.csr_array``), ``effects=True``
        (Poisson row and column effects for this table's shape) and
        ``effects_spread``.

    Returns
    -------
    Table
        ``data`` is a ``scipy.sparse.csr_array`` when ``density`` is given,
        an ndarray otherwise.

    Raises
    ------
    RejectionError
        When no candidate meets the target in ``max_attempts`` attempts.

    Examples
    --------
    >>> table = generate_table("bernoulli", 40, 30, 2, 2, 0.1, tolerance=0.03, n_samples=200,
    ...                        n_calibration_tables=20, rng=3)
    >>> abs(table.risk.risk - 0.1) <= 0.03
    True
    """
    seed = resolve_seed(rng)
    kind = check_kind(kind)
    target = check_probability("target_risk", target_risk)
    tolerance = check_positive_float("tolerance", tolerance)
    n_samples = check_count("n_samples", n_samples)
    n_chains = check_count("n_chains", n_chains)
    screen_samples = check_count("screen_samples", screen_samples, minimum=0)
    max_attempts = check_count("max_attempts", max_attempts)
    if balance is not None:
        balance = check_probability("balance", balance, open_interval=False)
    design_options = resolve_effects(model_options, n_rows, n_cols)
    root = np.random.SeedSequence(seed)
    timings = {"calibration": 0.0, "rejection": 0.0, "gibbs": 0.0}
    start = time.perf_counter()
    if calibration is None:
        with _progress_bar(progress, None, "calibration") as bar:
            calibration = calibrate_scale(
                kind, n_rows, n_cols, n_row_clusters, n_col_clusters, target,
                n_tables=n_calibration_tables, tolerance=calibration_tolerance, n_init=n_init,
                callback=lambda scale, error: (bar.update(), bar.set_postfix(scale=f"{scale:.4g}", error=f"{error:.4f}")),
                rng=np.random.default_rng(child_seed(root, 0)), **design_options,
            )
    elif calibration.design is None:
        raise ValueError("calibration must carry its design (as returned by calibrate_scale)")
    timings["calibration"] = time.perf_counter() - start
    gibbs_options = dict(n_chains=n_chains, burn_in=burn_in, thin=thin, method=gibbs_method)
    sampler = _RejectionSampler(calibration, n_rows, n_cols, target, tolerance, balance, n_init, gibbs_options)
    start = time.perf_counter()
    with _progress_bar(progress, max_attempts, "rejection sampling") as bar:
        for attempt in range(max_attempts):
            bar.update()
            kept = sampler.try_candidate(child_seed(root, attempt + 1), screen_samples, n_samples)
            if kept is not None:
                break
            bar.set_postfix(last_risk=f"{sampler.risks[-1]:.4f}")
        else:
            raise RejectionError(sampler.failure_message(max_attempts))
    timings["rejection"] = time.perf_counter() - start - sampler.gibbs_seconds
    timings["gibbs"] = sampler.gibbs_seconds
    X, z, w, map_result, samples, estimate = kept
    options = {
        "model_options": {k: model_options[k] for k in sorted(model_options)},
        "n_samples": n_samples, "n_chains": n_chains, "burn_in": burn_in, "thin": thin,
        "screen_samples": screen_samples, "max_attempts": max_attempts, "n_init": n_init,
        "n_calibration_tables": calibration.n_tables,
    }
    rejection = RejectionRecord(
        attempts=len(sampler.risks), screened_out=sampler.screened_out,
        acceptance_rate=1.0 / len(sampler.risks), tolerance=tolerance,
        candidate_risks=np.array(sampler.risks), balance=balance,
    )
    return Table(
        data=X, model=calibration.design.model(calibration.scale), design=calibration.design,
        scale=calibration.scale, truth_rows=z, truth_cols=w, map_rows=map_result.rows,
        map_cols=map_result.cols, gibbs=samples, risk=estimate, target_risk=target, seed=seed,
        calibration=calibration, rejection=rejection, options=options, timings=timings,
    )


class _RejectionSampler:
    """Draws and judges candidate tables; keeps the record of the attempts."""

    def __init__(self, calibration, n_rows, n_cols, target, tolerance, balance, n_init, gibbs_options):
        self.model = calibration.design.model(calibration.scale)
        self.n_rows, self.n_cols = n_rows, n_cols
        self.target, self.tolerance, self.balance = target, tolerance, balance
        self.n_init = n_init
        self.gibbs_options = gibbs_options
        self.risks: list[float] = []
        self.screened_out = 0
        self.gibbs_seconds = 0.0

    def _gibbs(self, X, starts, n_samples, rng) -> tuple[GibbsSamples, RiskEstimate]:
        start = time.perf_counter()
        n_chains = min(self.gibbs_options["n_chains"], n_samples)
        options = dict(self.gibbs_options, n_chains=n_chains)
        samples = gibbs_labels(self.model, X, n_samples=n_samples, init=starts, rng=rng, **options)
        self.gibbs_seconds += time.perf_counter() - start
        return samples, samples.risk(*starts[1])

    def _plausible(self, estimate: RiskEstimate) -> bool:
        margin = self.tolerance + 3 * estimate.mcse
        return abs(estimate.risk - self.target) <= margin

    def try_candidate(self, seed, screen_samples, n_samples):
        rng = np.random.default_rng(seed)
        z, w = self.model.sample_labels(self.n_rows, self.n_cols, rng=rng)
        X = self.model.table_from_noise(self.model.draw_noise(self.n_rows, self.n_cols, rng=rng), z, w)
        result = map_labels(self.model, X, n_init=self.n_init, rng=rng)
        starts = [(z, w), (result.rows, result.cols)]
        if screen_samples:
            _, screen = self._gibbs(X, starts, screen_samples, rng)
            if not self._plausible(screen):
                self.risks.append(screen.risk)
                self.screened_out += 1
                return None
        samples, estimate = self._gibbs(X, starts, n_samples, rng)
        self.risks.append(estimate.risk)
        if abs(estimate.risk - self.target) <= self.tolerance and _balanced(estimate, self.balance):
            return X, z, w, result, samples, estimate
        return None

    def failure_message(self, max_attempts: int) -> str:
        risks = np.array(self.risks)
        return (
            f"no table within {self.tolerance} of target risk {self.target} after {max_attempts} "
            f"attempts (risks seen: min {risks.min():.4f}, median {np.median(risks):.4f}, "
            f"max {risks.max():.4f}); raise the tolerance or max_attempts, or use larger tables"
        )
