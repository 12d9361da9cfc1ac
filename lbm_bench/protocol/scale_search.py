"""Root finding of the calibration: the scale at which the tables' mean risk meets a target.

Used by :func:`lbm_bench.protocol.calibration.calibrate_scale` on its
:class:`~lbm_bench.protocol.common_random_numbers.CommonRandomNumbers`, which measures
each table's risk at a scale (the X-only MAP's apparent error for
``criterion="map"``, the short-run floor for ``"bayes"``); this module decides
where, and on how many tables.

**Secant** (default). From the design's first guess
(:func:`lbm_bench.protocol.separation.first_guess`), steps on
``logit(mean risk)`` against ``log(scale)`` with the slope of the least-squares
line through the evaluations so far (the design's slope until they span
:data:`SLOPE_SPAN`); once the target is bracketed, regula falsi when a step
would leave the bracket, and geometric bisection when that fails too.

**How many tables** (``auto``). The search evaluates ``k`` tables
(:func:`first_tables`: 10, fewer for large tables). Once their mean is within
reach of the target (within the tolerance or two standard errors), the tables
are added at that scale, at most doubling at a time, up to the number
:func:`cost_optimal_tables` asks for (or the number that makes the standard
error ``se_fraction * tolerance``, whichever is fewer). That scale is the
*anchor*: the search goes on over the ``k`` tables, their mean corrected by
the difference between all the anchor's tables and them (common random
numbers: the difference carries over to nearby scales); if the search moves
more than :data:`ANCHOR_REACH` tolerances from the anchor's mean, it goes on
over all the anchor's tables instead. It stops when the estimated mean is
within the tolerance of the target, or within :data:`STOP_SE_FRACTION` of its
standard error (closer, the search would follow the noise of the tables).

Why a cost rule decides the precision: the calibration only centres the tables'
risks, and the rejection step keeps each table whose own risk lies within its
window (the rejection tolerance). With the risks spread as ``N(centre,
sd^2)`` and the centre measured on ``n`` tables, a candidate is kept with
probability ``A(n) = erf(window / (sqrt(2) sd sqrt(1 + 1/n)))``, so each kept
table costs ``1 / A(n)`` candidates; ``n`` minimises ``n + candidate_cost /
A(n)``, a candidate counted as :data:`CANDIDATE_COST` calibration tables.
Large tables (a spread comparable to the window) get few tables, small tables
(many candidates per kept table) more; see docs/protocol.md for the numbers.

**Bisection.** The paper's dichotomy, from scale 1, halving or doubling, then
geometric midpoints, on a fixed number of tables: the benchmark's baseline.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import special

from lbm_bench._validation import describe_percent
from lbm_bench.protocol.separation import first_guess, guessing_risk
from lbm_bench.protocol.table import CalibrationResult

__all__ = [
    "search_scale",
    "first_tables",
    "AUTO_FIRST_TABLES",
    "AUTO_MAX_TABLES",
    "AUTO_SE_FRACTION",
    "AUTO_MOST_TABLES",
    "CANDIDATE_COST",
    "cost_optimal_tables",
    "ANCHOR_REACH",
    "STOP_SE_FRACTION",
    "SLOPE_SPAN",
    "SLOPE_FACTOR",
]

#: Sequential number of tables (``n_tables="auto"``): tables of the search's evaluations
#: (``k``), the most tables with a fixed number (``"bisection"``: 200, the paper's), and
#: the standard error aimed at by the tolerance's rule, as a fraction of the calibration
#: tolerance (``AUTO_SE_FRACTION``; the cost rule's number is taken when it is fewer).
AUTO_FIRST_TABLES = 10
#: Large tables start with fewer tables (their apparent error varies little from table
#: to table): ``AUTO_FIRST_TABLES`` up to this many entries per table in all, then
#: proportionally fewer, never below ``AUTO_MIN_FIRST_TABLES`` (issue 16: a
#: 100000x10000 table starts with 2). The sequential rule still grows the number.
AUTO_FIRST_ENTRIES = 4 * 1000 * 1000
AUTO_MIN_FIRST_TABLES = 2
AUTO_MAX_TABLES = 200
AUTO_SE_FRACTION = 0.5
#: What a candidate of the rejection step costs, counted in calibration tables, in the
#: cost rule (:func:`cost_optimal_tables`). A setting, not a fit: docs/performance.md
#: gives the ratio measured on the paper release (smaller: 16 leans towards more tables).
CANDIDATE_COST = 16.0
#: Most tables the cost rule asks for at one scale (the bound of the spread's rule it
#: replaces; with the default costs and a 0.01 window it asks for at most 11 when the
#: risks spread by up to 0.2).
AUTO_MOST_TABLES = 16
#: Width of a bracket, in log(scale), below which the search stops at the evaluation
#: closest to the goal (0.1% of the scale: a few tables whose MAP jumps between modes
#: can make the mean error step over the tolerance there).
SCALE_RESOLUTION = 1e-3
#: How far (in tolerances of the mean risk) the search may move from the anchor
#: before the mean is measured on ``n`` tables again at the new scale (the anchor's
#: correction is the difference between two sets of tables at one scale: it carries
#: over to nearby scales, not to far ones).
ANCHOR_REACH = 2.0
#: The fitted slope of logit(mean) in log(scale) is used once the evaluations span this
#: much of log(scale) (closer scales differ by the tables' noise more than by the slope),
#: and kept within this factor of the design's slope (:func:`first_guess`).
SLOPE_SPAN = 0.05
SLOPE_FACTOR = 3.0
#: With ``auto`` tables the search also stops when the estimated mean is within this
#: fraction of its standard error of the target (see ``_Secant.close_enough``).
STOP_SE_FRACTION = 0.5


def first_tables(n_rows: int, n_cols: int, most: int = AUTO_FIRST_TABLES) -> int:
    """Tables of the first evaluations with ``n_tables="auto"``: ``most``
    (:data:`AUTO_FIRST_TABLES`), fewer for tables above :data:`AUTO_FIRST_ENTRIES`
    entries in all, never below :data:`AUTO_MIN_FIRST_TABLES`.

    Examples
    --------
    >>> first_tables(1000, 1000), first_tables(100_000, 10_000)
    (4, 2)
    """
    budget = math.ceil(AUTO_FIRST_ENTRIES / (n_rows * n_cols))
    return max(AUTO_MIN_FIRST_TABLES, min(most, budget))


def cost_optimal_tables(sd: float, window: float, candidate_cost: float,
                        most: int = AUTO_MOST_TABLES) -> int:
    """Tables that minimise the calibration's tables plus the candidates they save.

    With the tables' risks spread as ``N(centre, sd^2)`` and the centre measured on
    ``n`` tables (off by ``N(0, sd^2 / n)``), a candidate lands within ``window`` of
    the target with probability ``A(n) = erf(window / (sqrt(2) sd sqrt(1 + 1/n)))``
    and a table takes ``1 / A(n)`` candidates: ``n`` minimises
    ``n + candidate_cost / A(n)`` over ``1 .. most``.

    Examples
    --------
    >>> cost_optimal_tables(0.001, 0.01, 16.0), cost_optimal_tables(0.08, 0.01, 16.0)
    (1, 9)
    """
    if sd <= 0 or not math.isfinite(candidate_cost):
        return 1 if sd <= 0 else most
    n = np.arange(1, most + 1)
    accept = special.erf(window / (math.sqrt(2) * sd * np.sqrt(1 + 1 / n)))
    with np.errstate(divide="ignore"):
        cost = n + candidate_cost / accept
    return int(n[np.argmin(cost)])


def _logit(p: float) -> float:
    return math.log(p) - math.log1p(-p)


class _Evaluations:
    """The MAP's mean error at (scale, tables), in order of evaluation. A scale already
    evaluated on as many tables is looked up, not re-run nor counted again."""

    def __init__(self, crn, n_init: int, callback: Callable[[float, float], Any] | None) -> None:
        self.crn, self.n_init, self.callback = crn, n_init, callback
        self.history: list[tuple[float, float, float, int]] = []

    def __call__(self, scale: float, n: int) -> tuple[float, float]:
        for h in self.history:
            if h[0] == scale and h[3] == n:
                return h[1], h[2]
        risks = self.crn.risks(scale, n, self.n_init)
        mean, sd = float(risks.mean()), float(risks.std())
        self.history.append((scale, mean, sd, n))
        if self.callback is not None:
            self.callback(scale, mean)
        return mean, sd

    def bracket(self, scale: float, n: int, goal: float) -> tuple[float, float]:
        """``(low, high)``: the easiest scale too hard and the hardest too easy, at ``n`` tables."""
        points = [h for h in self.history if h[3] == n]
        harder = [h[0] for h in points if h[1] >= goal]
        easier = [h[0] for h in points if h[1] <= goal]
        return max(harder, default=scale), min(easier, default=scale)

    def unbracketed(self, goal: float, max_steps: int) -> ValueError:
        seen = [h[1] for h in self.history]
        missing = getattr(self.crn.design, "missing", None)
        if missing is not None and min(seen) > goal:
            best = min(self.history, key=lambda h: h[1])
            return ValueError(
                f"target_risk={goal} is not reached with {describe_percent(missing.rate, 0)} of "
                f"the entries missing: the best risk reachable seen is {best[1]:.4f} (at scale "
                f"{best[0]:.4g}, {max_steps} steps); lower the missing rate or raise the target, "
                "or use larger tables"
            )
        return ValueError(
            f"could not bracket target_risk={goal} within {max_steps} steps "
            f"(errors seen from {min(seen):.4f} to {max(seen):.4f})"
        )


class _Secant:
    """Secant / regula falsi on ``logit(mean risk)`` against ``log(scale)`` over the first
    ``k`` tables, with the anchor's correction to the mean of ``n`` tables (see the
    module documentation)."""

    def __init__(self, crn, evaluations: _Evaluations, tolerance, max_steps, auto, se_fraction,
                 candidate_cost, window):
        self.crn, self.evaluate = crn, evaluations
        self.tolerance, self.max_steps = tolerance, max_steps
        self.auto, self.se_fraction = auto, se_fraction
        self.candidate_cost, self.window = candidate_cost, window
        #: tables of the search's evaluations
        self.k = min(first_tables(crn.n_rows, crn.n_cols), crn.n_tables) if auto else crn.n_tables
        #: risk of guessing: mean risks near it carry no slope information
        self.ceiling = guessing_risk(crn.design.row_proportions, crn.design.col_proportions)
        self.anchor: _Anchor | None = None
        self.slope = -3.0
        self._sd_k = 0.0  # spread of the k tables at the latest scale

    def tables_needed(self, sd: float, n: int) -> int:
        """Tables for the standard error aimed at, given the spread ``sd`` seen on ``n``
        tables: at most twice ``n`` at a time (a spread seen on few tables is rough)."""
        precise = math.ceil((sd / (self.se_fraction * self.tolerance)) ** 2)
        # else the tolerance's rule alone, up to the tables there are
        if math.isfinite(self.candidate_cost):
            precise = min(precise, cost_optimal_tables(sd, self.window, self.candidate_cost))
        wanted = precise
        return int(min(self.crn.n_tables, 2 * n, max(n, wanted)))

    def informative(self, mean: float) -> bool:
        return 0.0 < mean < 0.95 * self.ceiling

    def correction(self) -> float:
        return 0.0 if self.anchor is None else self.anchor.correction

    def _more_tables(self, x: float, mean_k: float, sd_k: float) -> float:
        """Measure the mean at ``x`` on as many tables as :meth:`tables_needed` asks (the
        anchor, when that is more than ``k``); returns the estimate of the mean there."""
        n, mean, sd = self.k, mean_k, sd_k
        while (needed := self.tables_needed(sd, n)) > n and len(
                self.evaluate.history) < self.max_steps:
            n = needed
            mean, sd = self.evaluate(math.exp(x), n)
        if n > self.k:
            self.anchor = _Anchor(x, n, mean, sd, mean - mean_k)
        return mean

    def close_enough(self, estimate: float, target: float) -> bool:
        """Within the tolerance of the target, or (``auto``) within half the standard error
        of the estimate, when the spread's rule left that larger than the tolerance:
        closer, the search would follow the noise of the tables, not the mean."""
        if abs(estimate - target) <= self.tolerance:
            return True
        if not self.auto:
            return False
        n, sd = (self.anchor.n, self.anchor.sd) if self.anchor is not None else (self.k, self._sd_k)
        return abs(estimate - target) <= STOP_SE_FRACTION * sd / math.sqrt(n)

    def converge(self, target: float) -> tuple[float, float, float, int]:
        """``(scale, mean, sd, n)``: a scale whose estimated mean risk (over ``n`` tables, of
        standard deviation ``sd``) is within the tolerance of ``target``; the closest
        bracketed one when the steps run out."""
        scale, self.slope = first_guess(self.crn.design, self.crn.n_rows, self.crn.n_cols, target)
        self.design_slope = self.slope
        x = math.log(scale)
        jump = math.log(2.0)  # step when the mean risk is 0 or saturated
        history = self.evaluate.history
        for _ in range(10 * self.max_steps):  # looked-up evaluations do not count as steps
            if len(history) >= self.max_steps:
                break
            mean_k, self._sd_k = self.evaluate(math.exp(x), self.k)
            estimate = mean_k + self.correction()
            if self.anchor is not None and abs(estimate -
                                               self.anchor.mean) > ANCHOR_REACH * self.tolerance:
                # far from the anchor: over all its tables
                self.k, self.anchor = self.anchor.n, None
                continue
            within_reach = abs(estimate - target) <= max(self.tolerance,
                                                         2 * self._sd_k / math.sqrt(self.k))
            if self.auto and self.anchor is None and within_reach:
                estimate = self._more_tables(x, mean_k, self._sd_k)
            if self.close_enough(estimate, target):
                return self._result(x, mean_k)
            goal = target - self.correction()  # what the mean of the k tables must meet
            points = [(math.log(h[0]), h[1]) for h in history if h[3] == self.k]
            low = max((p for p in points if p[1] > goal), default=None)  # too hard
            high = min((p for p in points if p[1] < goal), default=None)  # too easy
            if low is not None and high is not None and high[0] - low[0] < SCALE_RESOLUTION:
                break
            if self.informative(mean_k) and 0 < goal < 1:
                self.slope = self._fitted_slope(self.slope)
                x_new = x + (_logit(goal) - _logit(mean_k)) / self.slope
                jump = math.log(2.0)
            else:
                x_new = x + (jump if mean_k > goal else -jump)
                jump *= 2
            if low is not None and high is not None:
                x_new = self._inside(x_new, low, high, goal)
            else:
                x_new = max(x - 3.0, min(x + 3.0, x_new))  # at most a factor e^3 per step
            x = x_new
        goal = target - self.correction()
        points = [h for h in history if h[3] == self.k]
        if not any(h[1] > goal for h in points) or not any(h[1] < goal for h in points):
            raise self.evaluate.unbracketed(target, self.max_steps)
        best = min(points, key=lambda h: abs(h[1] - goal))
        return self._result(math.log(best[0]), best[1])

    def _result(self, x: float, mean_k: float) -> tuple[float, float, float, int]:
        """The scale, the estimated mean there, the spread and number of its tables."""
        a = self.anchor
        if a is not None:
            return math.exp(x), mean_k + a.correction, a.sd, a.n
        for h in reversed(self.evaluate.history):  # the most tables evaluated at the scale
            if h[0] == math.exp(x):
                return h[0], h[1], h[2], int(h[3])
        raise AssertionError("the result's scale was evaluated")  # pragma: no cover

    def _inside(self, x_new: float, low, high, goal: float) -> float:
        """Keep a step inside the bracket: the secant step when inside, else regula falsi,
        else the geometric midpoint."""
        if low[0] < x_new < high[0]:
            return x_new
        if not (self.informative(low[1]) and self.informative(high[1]) and 0 < goal < 1):
            return 0.5 * (low[0] + high[0])
        ylo, yhi, yg = _logit(low[1]), _logit(high[1]), _logit(goal)
        x_rf = low[0] + (ylo - yg) * (high[0] - low[0]) / (ylo - yhi)
        return x_rf if low[0] < x_rf < high[0] else 0.5 * (low[0] + high[0])

    def _fitted_slope(self, previous: float) -> float:
        """Slope of logit(mean) in log(scale): the least-squares line through the
        informative evaluations of the ``k`` tables (a secant from two nearby scales
        follows the tables' noise; a line through all of them, over the range the
        search has covered, does not), within a factor :data:`SLOPE_FACTOR` of the
        design's slope; ``previous`` while they span less than :data:`SLOPE_SPAN`."""
        usable = [(math.log(h[0]), _logit(h[1])) for h in self.evaluate.history
                  if self.informative(h[1]) and h[3] == self.k]
        xs = np.array([u[0] for u in usable])
        ys = np.array([u[1] for u in usable])
        if xs.size < 2 or np.ptp(xs) < SLOPE_SPAN:
            return previous
        dx = xs - xs.mean()  # least squares in closed form: np.polyfit's LAPACK rounds by the CPU
        slope = float((dx * (ys - ys.mean())).sum() / (dx * dx).sum())
        return min(max(slope, SLOPE_FACTOR * self.design_slope), self.design_slope / SLOPE_FACTOR)


@dataclass(frozen=True)
class _Anchor:
    """The mean risk measured on ``n`` tables at ``log(scale) = x``, its standard deviation,
    and ``correction``: that mean minus the mean of the search's ``k`` tables there."""

    x: float
    n: int
    mean: float
    sd: float
    correction: float


class _Bisection:
    """The paper's dichotomy on ``crn.n_tables`` tables, from scale 1 for every goal."""

    def __init__(self, crn, evaluations: _Evaluations, tolerance, max_steps):
        self.crn, self.evaluate = crn, evaluations
        self.tolerance, self.max_steps = tolerance, max_steps
        self.n = self.k = crn.n_tables

    def correction(self) -> float:
        return 0.0

    def converge(self, goal: float) -> tuple[float, float, float, int]:
        low, high = None, None  # low: error above the goal (too hard); high: below
        scale = 1.0
        for _ in range(4 * self.max_steps):
            if len(self.evaluate.history) >= self.max_steps:
                break
            mean, sd = self.evaluate(scale, self.n)
            if abs(mean - goal) <= self.tolerance:
                return scale, mean, sd, self.n
            if mean > goal:
                low = scale
            else:
                high = scale
            if low is None:
                scale /= 2.0
            elif high is None:
                scale *= 2.0
            else:
                if high / low - 1.0 < 1e-6:
                    break
                scale = math.sqrt(low * high)
        if low is None or high is None:
            raise self.evaluate.unbracketed(goal, self.max_steps)
        best = min(self.evaluate.history, key=lambda h: abs(h[1] - goal))
        return best[0], best[1], best[2], self.n


def search_scale(
    crn,
    target: float,
    tolerance: float,
    n_init: int,
    max_steps: int,
    callback: Callable[[float, float], Any] | None,
    method: str,
    auto: bool,
    se_fraction: float,
    candidate_cost: float = CANDIDATE_COST,
    window: float = 0.01,
) -> CalibrationResult:
    """The calibrated scale for ``crn`` (see the module documentation).

    Parameters
    ----------
    crn : CommonRandomNumbers
        Tables and their risks (``crn.risks``: the MAP's apparent errors, or the
        short-run floors when ``crn.criterion`` is ``"bayes"``).
    target, tolerance : float
        Target risk and tolerance on the calibrated mean.
    n_init, max_steps : int
        MAP starts; most evaluations of the MAP's mean error.
    callback : callable or None
        ``callback(scale, mean_error)`` after every evaluation.
    method : {"secant", "bisection"}
    auto : bool
        Sequential number of tables (secant only).
    se_fraction : float
        Standard error aimed at by the tolerance's rule with ``auto``, as a fraction
        of ``tolerance``.
    candidate_cost, window : float
        The cost rule's price of a candidate, in calibration tables, and the
        rejection step's tolerance (:func:`cost_optimal_tables`).

    Returns
    -------
    CalibrationResult
    """
    evaluations = _Evaluations(crn, n_init, callback)
    if method == "secant":
        search = _Secant(crn, evaluations, tolerance, max_steps, auto, se_fraction, candidate_cost,
                         window)
    else:
        search = _Bisection(crn, evaluations, tolerance, max_steps)
    scale, mean, sd, n = search.converge(target)
    return CalibrationResult(
        scale=float(scale), bracket=tuple(
            float(b) for b in evaluations.bracket(scale, search.k, target - search.correction())),
        n_steps=len(evaluations.history), mean_error=float(mean), error_std=float(sd),
        target_risk=target, tolerance=tolerance, n_tables=int(n),
        history=np.array(evaluations.history, dtype=np.float64).reshape(-1, 4), design=crn.design,
        method=method, criterion=crn.criterion,
    )
