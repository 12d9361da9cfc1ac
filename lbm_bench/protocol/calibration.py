"""Step 3 of the protocol: calibrate the scale so that a risk is centred on a target.

For a fixed design (proportions, pattern, dispersions), the tables drawn at a
scale have a mean conditional risk that decreases with the scale; the
calibration finds the scale at which the mean of the risk the rejection step
certifies (``criterion``) meets the target. It measures that risk on each of
its tables:

- ``criterion="map"`` (the paper's protocol): the apparent error
  ``l_item((z0, w0), h(X))`` of the X-only MAP ``h`` (Algorithm 1). Since, given
  ``X``, the generating labels are one exact posterior draw, its mean over tables
  equals their mean conditional risk ``E[r_item(h(X) | X)]`` for any ``h`` that
  uses ``X`` alone (``CommonRandomNumbers.apparent_errors``,
  :mod:`lbm_bench.protocol.common_random_numbers`);
- ``criterion="bayes"`` (the default): the floor, estimated by the certificate's
  own estimator (the cross-fitted risk of the Bayes labels) on a short Gibbs run
  of 200 sets whose chains start at the table's generating labels, an exact
  posterior draw, so no burn-in and no MAP (:func:`short_run_floors`,
  :mod:`lbm_bench.protocol.short_run`).

**Common random numbers.** The tables are the same at every scale
(:mod:`lbm_bench.protocol.common_random_numbers`): the mean risk is a smooth, nearly
monotone function of the scale, and a table's risk, once computed, is kept.

**Root finding** (``method="secant"``, default): from a first guess of the
scale from the design (:func:`lbm_bench.protocol.separation.first_guess`),
steps on ``logit(mean risk)`` against ``log(scale)`` over a few tables, which
are completed, once the mean is within reach, to the number that a cost rule
weighs against the candidates of the rejection step (``n_tables="auto"``).
``method="bisection"`` is the paper's dichotomy (start at 1, halve or double,
then geometric midpoints) on a fixed number of tables, kept as the benchmark's
baseline. Both are in :mod:`lbm_bench.protocol.scale_search`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from lbm_bench._docstrings import fill_doc
from lbm_bench._seeds import draw_seed
from lbm_bench._validation import check_choice, check_count, check_positive_float
from lbm_bench.models.design import ModelDesign, random_design
from lbm_bench.models.family import Family
from lbm_bench.protocol.common_random_numbers import CommonRandomNumbers
from lbm_bench.protocol.request import TableRequest, check_criterion, request_from_arguments
from lbm_bench.protocol.scale_search import (
    AUTO_MAX_TABLES,
    AUTO_SE_FRACTION,
    CANDIDATE_COST,
    search_scale,
)
from lbm_bench.protocol.separation import check_target
from lbm_bench.protocol.settings import GenerationSettings
from lbm_bench.protocol.table import CalibrationResult

__all__ = [
    "calibrate",
    "calibrate_scale",
    "METHODS",
]

#: Root-finding methods.
METHODS = ("secant", "bisection")


def _missing_of(item: Any) -> tuple[float, str]:
    """(rate, mechanism) of a design or a request's options ((0.0, "random"): complete)."""
    if isinstance(item, ModelDesign):
        return (0.0, "random") if item.missing is None else (item.missing.rate,
                                                             item.missing.mechanism)
    options = item.model_options
    return (0.0, "random") if options.missing == 0 else (options.missing, options.missing_mechanism)


def calibrate(
    request: TableRequest,
    settings: GenerationSettings | None = None,
    *,
    design: ModelDesign | None = None,
    callback: Callable[[float, float], Any] | None = None,
    max_steps: int = 40,
    max_tables: int = AUTO_MAX_TABLES,
    se_fraction: float = AUTO_SE_FRACTION,
    candidate_cost: float = CANDIDATE_COST,
    rng: np.random.Generator | int | None = None,
) -> CalibrationResult:
    """:func:`calibrate_scale` of a request, with the calibration settings of ``settings``.

    The settings' ``n_calibration_tables``, ``calibration_tolerance``, ``n_init``,
    ``calibration_method`` and ``jobs`` are the ``n_tables``, ``tolerance``, ``n_init``,
    ``method`` and ``jobs`` of :func:`calibrate_scale`, and its ``tolerance`` (the
    rejection step's) is the ``rejection_tolerance`` there; the request's criterion is
    the risk calibrated. Other arguments as there.
    """
    rng = np.random.default_rng(rng)
    if not isinstance(request, TableRequest):
        raise TypeError(f"request must be a TableRequest, got {type(request).__name__}")
    s = GenerationSettings() if settings is None else settings
    target = request.target_risk
    tolerance = s.calibration_tolerance
    tolerance = min(0.005, target / 10) if tolerance is None else tolerance
    n_tables = s.n_calibration_tables
    auto = n_tables == "auto"
    max_tables = check_count("max_tables", max_tables)
    se_fraction = check_positive_float("se_fraction", se_fraction)
    candidate_cost = _check_cost(candidate_cost)
    max_steps = check_count("max_steps", max_steps, minimum=2)
    g, m = request.clusters
    if design is None:
        design = random_design(request.family, g, m, rng=rng, **request.design_options())
    elif design.family is not request.family or design.block_shape != (g, m):
        raise ValueError(f"design is a {design.kind} {design.block_shape} design, not "
                         f"{request.kind} {(g, m)}")
    elif _missing_of(design) != _missing_of(request):
        raise ValueError(f"design has missing entries {_missing_of(design)}, the request "
                         f"{_missing_of(request)}")
    check_target(target, design, request.n_rows, request.n_cols)
    if auto and s.calibration_method == "bisection":
        n_tables, auto = 200, False
    capacity = max_tables if auto else n_tables
    crn = CommonRandomNumbers(design, request.n_rows, request.n_cols, capacity,
                              np.random.SeedSequence(draw_seed(rng)), criterion=request.criterion,
                              jobs=s.jobs)
    return search_scale(crn, target, tolerance, s.n_init, max_steps, callback, s.calibration_method,
                        auto, se_fraction, candidate_cost, s.tolerance)


@fill_doc
def calibrate_scale(
    kind: Family | str | TableRequest,
    n_rows: int | None = None,
    n_cols: int | None = None,
    n_row_clusters: int | None = None,
    n_col_clusters: int | None = None,
    target_risk: float | None = None,
    *,
    n_tables: int | str = "auto",
    tolerance: float | None = None,
    n_init: int = 10,
    max_steps: int = 40,
    criterion: str | None = None,
    method: str = "secant",
    max_tables: int = AUTO_MAX_TABLES,
    se_fraction: float = AUTO_SE_FRACTION,
    candidate_cost: float = CANDIDATE_COST,
    rejection_tolerance: float = 0.01,
    jobs: int = 1,
    design: ModelDesign | None = None,
    callback: Callable[[float, float], Any] | None = None,
    rng: np.random.Generator | int | None = None,
    **model_options: Any,
) -> CalibrationResult:
    """Find the scale at which the tables' mean risk (the floor's or the MAP's) meets a target.

    Parameters
    ----------
    {{table_request}}
    target_risk : float
        Target conditional risk, in (0, 1).
    n_tables : int or "auto", default="auto"
        Tables per evaluated scale. ``"auto"``: the search evaluates 10 tables
        (fewer above 4 million entries per table); once their mean is within reach
        of the target, tables are added at that scale up to the number that
        minimises their cost plus the candidates they save the rejection step
        (``candidate_cost``), or that makes the standard error of the mean
        ``se_fraction * tolerance``, whichever is fewer (at most 16, and
        ``max_tables``), and the search goes on corrected by them. An integer
        fixes the number (the paper: 200).
    tolerance : float, optional
        Stop when ``|mean risk - target| <= tolerance`` (with ``"auto"`` tables, or
        within half the standard error of the mean when that is larger). Default:
        ``min(0.005, target_risk / 10)``.
    n_init : int, default=10
        Random starts of the MAP.
    max_steps : int, default=40
        Maximum number of evaluations (a scale re-evaluated on more tables counts).
    criterion : {"bayes", "map"}, default="bayes"
        The risk calibrated: the floor (the Bayes rule for ``l_item``), measured on
        each table by a short Gibbs run (:func:`short_run_floors`), or the X-only
        MAP's, measured by its apparent error (the paper). Part of the request
        when ``kind`` is a :class:`~lbm_bench.TableRequest`.
    method : {"secant", "bisection"}, default="secant"
        Root finding (see the module documentation). ``"bisection"`` is the
        paper's dichotomy, from scale 1, on ``n_tables`` tables (200 when "auto").
    max_tables, se_fraction, candidate_cost :
        Bounds of the sequential number of tables (``n_tables="auto"``): the
        most tables, the tolerance's rule, and what a candidate of the rejection
        step costs in calibration tables (``math.inf``: the tolerance's rule
        alone, up to ``max_tables``). Why a cost decides the precision worth
        paying for: :mod:`lbm_bench.protocol.scale_search`.
    rejection_tolerance : float, default=0.01
        The rejection step's tolerance that the calibrated tables will meet (the
        window of the cost rule; ``generate_table``'s ``tolerance``).
    jobs : int, default=1
        Worker processes over which the tables of an evaluation are spread
        (:mod:`lbm_bench.tasks`: loky unless another backend is set). The result does not
        depend on it.
    design : ModelDesign, optional
        Design to calibrate; drawn with :func:`~lbm_bench.random_design` and
        ``model_options`` when omitted.
    callback : callable, optional
        Called as ``callback(scale, mean_error)`` after every evaluation (progress).
    rng : None, int or numpy.random.Generator
        Source of randomness.
    **model_options
        Options of :func:`~lbm_bench.random_design` (``equal_proportions``, ...;
        ``effects=True`` for this table's shape).

    Returns
    -------
    CalibrationResult
        With the design in its ``design`` attribute; its ``history`` holds every
        evaluation ``(scale, mean risk, risk sd, n_tables)`` of the tables' apparent
        errors (``"map"``) or short-run floors (``"bayes"``).

    Raises
    ------
    ValueError
        For a target that cannot be reached (not below the risk of guessing,
        or below ``1/(n_rows n_cols)``), or when the search cannot bracket it.

    Examples
    --------
    >>> result = calibrate_scale("gaussian", 30, 30, 2, 2, 0.1, rng=0)
    >>> abs(result.mean_error - 0.1) <= result.tolerance
    True
    """
    rng = np.random.default_rng(rng)
    _check_n_tables(n_tables)
    if tolerance is not None:
        check_positive_float("tolerance", tolerance)
    check_count("n_init", n_init)
    check_choice("method", method, METHODS)
    check_count("jobs", jobs)
    if criterion is not None:
        model_options = {**model_options, "criterion": check_criterion(criterion)}
    sizes = (n_rows, n_cols, n_row_clusters, n_col_clusters, target_risk)
    request, _ = request_from_arguments(kind, sizes, None, model_options, caller="calibrate_scale")
    settings = GenerationSettings(
        n_calibration_tables=n_tables, calibration_tolerance=tolerance, n_init=n_init,
        calibration_method=method, jobs=jobs, tolerance=rejection_tolerance,
    )
    return calibrate(request, settings, design=design, callback=callback, max_steps=max_steps,
                     max_tables=max_tables, se_fraction=se_fraction, candidate_cost=candidate_cost,
                     rng=rng)


def _check_cost(candidate_cost: Any) -> float:
    """``candidate_cost`` as a float if it is a non-negative number (``inf`` allowed), else
    ValueError."""
    if isinstance(candidate_cost, bool) or not isinstance(candidate_cost,
                                                          (int, float, np.integer, np.floating)):
        raise TypeError(f"candidate_cost must be a number, got {type(candidate_cost).__name__}")
    if not candidate_cost >= 0:
        raise ValueError(f"candidate_cost must be >= 0, got {candidate_cost}")
    return float(candidate_cost)


def _check_n_tables(n_tables: Any) -> bool:
    """True for "auto"; ValueError unless a positive integer."""
    if isinstance(n_tables, str):
        if n_tables != "auto":
            raise ValueError(f"n_tables must be a positive integer or 'auto', got {n_tables!r}")
        return True
    check_count("n_tables", n_tables)
    return False
