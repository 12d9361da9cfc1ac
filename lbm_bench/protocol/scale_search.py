"""Root finding of the calibration: the scale at which the mean error meets a target.

Used by :func:`lbm_bench.protocol.calibration.calibrate_scale` on its
:class:`~lbm_bench.protocol.calibration.CommonRandomNumbers` (which computes
errors and gaps; this module decides where and on how many tables).

**Secant** (default). From the design's first guess
(:func:`lbm_bench.protocol.separation.first_guess`), secant steps on
``logit(mean error)`` against ``log(scale)``; once the target is bracketed,
regula falsi, and geometric bisection when a step leaves the bracket. With
``auto`` tables, few tables (:func:`first_tables`) while the mean error is
clearly off target, more once it is within reach, until the standard error of
the mean is below ``se_fraction * tolerance`` or a quarter of the tables'
spread (:data:`AUTO_SPREAD_FRACTION`), whichever is looser.

Why the spread bounds the precision worth paying for: the calibration only
centres the tables' risks; the rejection step then keeps each table whose own
risk is within the rejection tolerance. When the risks spread much more than
that window (standard deviation ``sigma``), a centre off by ``delta`` lowers
the acceptance rate by the factor ``exp(-delta**2 / (2 sigma**2))``: with the
mean known to ``sigma / 4``, ``1 / sqrt(1 + 1/16) = 0.97`` on average. A
calibration table costs as much as a rejected candidate (one table, one MAP),
so pinning the mean down further with 50 to 200 tables (the tolerance's rule
where the spread is 0.02 to 0.04: the 1000x1000 tables at 20%) costs more
candidates than it saves. Where the spread is small (large tables at low
risk) the tolerance's rule is the looser one and is kept.

**Bisection.** The paper's dichotomy, from scale 1, halving or doubling, then
geometric midpoints, on a fixed number of tables: the benchmark's baseline.

**The floor as target** (``criterion="bayes"``). The mean error that is
searched is always the X-only MAP's (cheap); the floor's mean is the MAP's mean
minus the mean *gap* between the MAP's conditional risk and the floor, both
estimated from one short Gibbs run per table on a few of the same tables
(:meth:`~lbm_bench.protocol.calibration.CommonRandomNumbers.gaps`). The gap is
small and varies little from table to table (a paired difference), so a few
tables measure it well, while the MAP's mean, whose table-to-table spread is
large, is measured on many cheap tables: a control variate. The search
alternates: find the scale where the MAP's mean meets ``target + gap`` (gap 0
at first), measure the gap there, and stop when ``MAP mean - gap`` is within
the tolerance of the target, or when (from the second round on) the gap differs
from the one the goal allowed for by less than two of its standard errors (on small tables whose MAP
now and then sticks in a poor mode the gap is too spread to be measured to the
tolerance: measured sd 0.06 to 0.09 on Poisson 50x50 3x3 at 10%), at most
:data:`MAX_GAP_ROUNDS` rounds. ``mean_error`` then says how far from the target
the calibrated mean ended; the rejection step judges each table's own floor.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from lbm_bench.protocol.separation import first_guess, guessing_risk
from lbm_bench.protocol.table import CalibrationResult

__all__ = [
    "search_scale",
    "first_tables",
    "AUTO_FIRST_TABLES",
    "AUTO_MAX_TABLES",
    "AUTO_SE_FRACTION",
    "AUTO_SPREAD_FRACTION",
    "GAP_FIRST_TABLES",
    "GAP_SE_FRACTION",
    "GAP_MAP_SE_FRACTION",
    "GAP_MAX_TABLES",
    "MAX_GAP_ROUNDS",
]

#: Sequential number of tables (``n_tables="auto"``): tables of the first evaluations,
#: the most tables, and the standard error of the mean error aimed at, as a fraction
#: of the calibration tolerance (``AUTO_SE_FRACTION``) or of the tables' spread
#: (``AUTO_SPREAD_FRACTION``), whichever is looser: so never more than
#: ``ceil(AUTO_SPREAD_FRACTION ** -2) = 16`` tables (see the module documentation).
AUTO_FIRST_TABLES = 10
#: Large tables start with fewer tables (their apparent error varies little from table
#: to table): ``AUTO_FIRST_TABLES`` up to this many entries per table in all, then
#: proportionally fewer, never below ``AUTO_MIN_FIRST_TABLES`` (issue 16: a
#: 100000x10000 table starts with 2). The sequential rule still grows the number.
AUTO_FIRST_ENTRIES = 4 * 1000 * 1000
AUTO_MIN_FIRST_TABLES = 2
AUTO_MAX_TABLES = 200
AUTO_SE_FRACTION = 0.5
AUTO_SPREAD_FRACTION = 0.25
#: Width of a bracket, in log(scale), below which the search stops at the evaluation
#: closest to the goal (0.1% of the scale: a few tables whose MAP jumps between modes
#: can make the mean error step over the tolerance there).
SCALE_RESOLUTION = 1e-3
#: Gap between the MAP's risk and the floor (``criterion="bayes"``): tables of its
#: first measure at a scale (fewer for large tables, as ``first_tables``), its
#: standard error aimed at, as a fraction of the tolerance (the MAP mean's is
#: ``AUTO_SE_FRACTION``: together about 0.56 of the tolerance) or of the MAP mean's
#: own standard error (``GAP_MAP_SE_FRACTION``), whichever is looser (measuring the
#: gap far more precisely than the mean it corrects buys nothing: with half of it,
#: the floor's mean is known to 1.12 times the MAP mean's standard error), and the most tables
#: (on small tables a MAP stuck in a poor local optimum now and then spreads the
#: gap: sd 0.009 measured on Bernoulli 60x40 at 10%, where 32 tables give a
#: standard error of 0.0016). The number at most doubles from one measure to the
#: next: a spread estimated on 4 tables is rough.
GAP_FIRST_TABLES = 4
GAP_SE_FRACTION = 0.25
GAP_MAP_SE_FRACTION = 0.5
GAP_MAX_TABLES = 32
#: Most rounds of (search for ``target + gap``, measure the gap).
MAX_GAP_ROUNDS = 4


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
        errors = self.crn.errors(scale, n, self.n_init)
        mean, sd = float(errors.mean()), float(errors.std())
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
                f"target_risk={goal} is not reached with {missing.rate:.0%} of the entries missing: the best "
                f"risk reachable seen is {best[1]:.4f} (at scale {best[0]:.4g}, {max_steps} steps); lower the "
                "missing rate or raise the target, or use larger tables"
            )
        return ValueError(
            f"could not bracket target_risk={goal} within {max_steps} steps "
            f"(errors seen from {min(seen):.4f} to {max(seen):.4f})"
        )


class _Secant:
    """Secant / regula falsi on ``logit(mean error)`` against ``log(scale)``; keeps its
    place and slope from one goal to the next."""

    def __init__(self, crn, evaluations: _Evaluations, tolerance, max_steps, auto, se_fraction,
                 spread_fraction):
        self.crn, self.evaluate = crn, evaluations
        self.tolerance, self.max_steps = tolerance, max_steps
        self.auto, self.se_fraction, self.spread_fraction = auto, se_fraction, spread_fraction
        self.n = min(first_tables(crn.n_rows, crn.n_cols), crn.n_tables) if auto else crn.n_tables
        #: risk of guessing: mean errors near it carry no slope information
        self.ceiling = guessing_risk(crn.design.row_proportions, crn.design.col_proportions)
        self.x: float | None = None
        self.slope = 0.0

    def tables_needed(self, sd: float) -> int:
        wanted_se = max(self.se_fraction * self.tolerance, self.spread_fraction * sd)
        wanted = math.ceil((sd / wanted_se) ** 2) if sd > 0 else 0
        return int(min(self.crn.n_tables, max(self.n, wanted)))

    def informative(self, mean: float) -> bool:
        return 0.0 < mean < 0.95 * self.ceiling

    def converge(self, goal: float) -> tuple[float, int]:
        """A scale (and its number of tables) where the mean error is within the
        tolerance of ``goal``; the closest bracketed one when the steps run out."""
        if self.x is None:
            scale, self.slope = first_guess(self.crn.design, self.crn.n_rows, self.crn.n_cols, goal)
            self.x = math.log(scale)
        y_goal = _logit(goal)
        jump = math.log(2.0)  # step when the mean error is 0 or saturated
        history = self.evaluate.history
        for _ in range(10 * self.max_steps):  # looked-up evaluations do not count as steps
            if len(history) >= self.max_steps:
                break
            x = self.x
            mean, sd = self.evaluate(math.exp(x), self.n)
            se = sd / math.sqrt(self.n)
            if self.auto and abs(mean - goal) <= max(self.tolerance, 2 * se):
                needed = self.tables_needed(sd)
                if needed > self.n:  # within reach: re-evaluate on more tables
                    self.n = needed
                    continue
            if abs(mean - goal) <= self.tolerance:
                return math.exp(x), self.n
            points = [(math.log(h[0]), h[1]) for h in history if h[3] == self.n]
            low = max((p for p in points if p[1] > goal), default=None)  # too hard
            high = min((p for p in points if p[1] < goal), default=None)  # too easy
            if low is not None and high is not None and high[0] - low[0] < SCALE_RESOLUTION:
                break
            if self.informative(mean):
                self.slope = self._secant_slope(self.slope)
                x_new = x + (y_goal - _logit(mean)) / self.slope
                jump = math.log(2.0)
            else:
                x_new = x + (jump if mean > goal else -jump)
                jump *= 2
            if low is not None and high is not None:
                x_new = self._inside(x_new, low, high, y_goal)
            else:
                x_new = max(x - 3.0, min(x + 3.0, x_new))  # at most a factor e^3 per step
            self.x = x_new
        points = [h for h in history if h[3] == self.n]
        if not any(h[1] > goal for h in points) or not any(h[1] < goal for h in points):
            raise self.evaluate.unbracketed(goal, self.max_steps)
        best = min(points, key=lambda h: abs(h[1] - goal))
        self.x = math.log(best[0])
        return best[0], self.n

    def _inside(self, x_new: float, low, high, y_goal: float) -> float:
        """Keep a step inside the bracket: the secant step when well inside, else regula
        falsi, else the geometric midpoint."""
        width = high[0] - low[0]
        if not (self.informative(low[1]) and self.informative(high[1])):
            return 0.5 * (low[0] + high[0])
        ylo, yhi = _logit(low[1]), _logit(high[1])
        x_rf = low[0] + (ylo - y_goal) * width / (ylo - yhi)
        if not low[0] + 0.05 * width < x_new < high[0] - 0.05 * width:
            x_new = x_rf
        if not low[0] + 0.05 * width < x_new < high[0] - 0.05 * width:
            x_new = 0.5 * (low[0] + high[0])
        return x_new

    def _secant_slope(self, previous: float) -> float:
        """Secant slope of logit(mean) in log(scale) from the two latest informative
        evaluations at distinct scales (the latest at the current number of tables),
        else ``previous``."""
        usable = [h for h in self.evaluate.history if self.informative(h[1])]
        latest = usable[-1]
        for h in reversed(usable[:-1]):
            dx = math.log(latest[0]) - math.log(h[0])
            if abs(dx) > 1e-9 and h[3] == latest[3]:
                slope = (_logit(latest[1]) - _logit(h[1])) / dx
                if slope < -0.05:
                    return slope
                break
        return previous


class _Bisection:
    """The paper's dichotomy on ``crn.n_tables`` tables, from scale 1 for every goal."""

    def __init__(self, crn, evaluations: _Evaluations, tolerance, max_steps):
        self.crn, self.evaluate = crn, evaluations
        self.tolerance, self.max_steps = tolerance, max_steps
        self.n = crn.n_tables

    def converge(self, goal: float) -> tuple[float, int]:
        low, high = None, None  # low: error above the goal (too hard); high: below
        scale = 1.0
        for _ in range(4 * self.max_steps):
            if len(self.evaluate.history) >= self.max_steps:
                break
            mean, _ = self.evaluate(scale, self.n)
            if abs(mean - goal) <= self.tolerance:
                return scale, self.n
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
        return best[0], self.n


class _Gaps:
    """The mean gap between the MAP's risk and the floor at a scale, on a sequential
    number of tables (the first ones of the common random numbers)."""

    def __init__(self, crn, n_init: int, tolerance: float) -> None:
        self.crn, self.n_init, self.tolerance = crn, n_init, tolerance
        self.first = min(first_tables(crn.n_rows, crn.n_cols, GAP_FIRST_TABLES), crn.n_tables)
        self.history: list[tuple[float, float, float, int]] = []

    def at(self, scale: float, map_se: float) -> tuple[float, float]:
        """The mean gap at ``scale`` and its standard error, measured to the looser of
        ``GAP_SE_FRACTION * tolerance`` and ``GAP_MAP_SE_FRACTION * map_se`` (the
        standard error of the MAP's mean there)."""
        k = self.first
        most = min(GAP_MAX_TABLES, self.crn.n_tables)
        aimed = max(GAP_SE_FRACTION * self.tolerance, GAP_MAP_SE_FRACTION * map_se)
        while True:
            gaps = self.crn.gaps(scale, k, self.n_init)
            sd = float(gaps.std(ddof=1)) if k > 1 else 0.0
            wanted = math.ceil((sd / aimed) ** 2)
            if wanted <= k or k >= most:
                break
            k = min(most, wanted, 2 * k)
        mean = float(gaps.mean())
        self.history.append((scale, mean, float(gaps.std()), k))
        return mean, sd / math.sqrt(k)


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
    spread_fraction: float = AUTO_SPREAD_FRACTION,
) -> CalibrationResult:
    """The calibrated scale for ``crn`` (see the module documentation).

    Parameters
    ----------
    crn : CommonRandomNumbers
        Tables, their MAP errors (``crn.errors``) and, when ``crn.criterion`` is
        ``"bayes"``, their gaps (``crn.gaps``).
    target, tolerance : float
        Target risk and tolerance on the calibrated mean.
    n_init, max_steps : int
        MAP starts; most evaluations of the MAP's mean error.
    callback : callable or None
        ``callback(scale, mean_error)`` after every evaluation.
    method : {"secant", "bisection"}
    auto : bool
        Sequential number of tables (secant only).
    se_fraction, spread_fraction : float
        Standard error aimed at with ``auto``, as a fraction of ``tolerance`` or
        of the errors' standard deviation, whichever is looser (0 for
        ``spread_fraction``: the tolerance's rule alone).

    Returns
    -------
    CalibrationResult
    """
    evaluations = _Evaluations(crn, n_init, callback)
    if method == "secant":
        search = _Secant(crn, evaluations, tolerance, max_steps, auto, se_fraction, spread_fraction)
    else:
        search = _Bisection(crn, evaluations, tolerance, max_steps)
    gaps = _Gaps(crn, n_init, tolerance) if crn.criterion == "bayes" else None
    goal, gap = target, 0.0
    for _ in range(MAX_GAP_ROUNDS):
        scale, n = search.converge(goal)
        if gaps is None:
            break
        mean, sd = evaluations(scale, n)
        gap, gap_se = gaps.at(scale, sd / math.sqrt(n))
        if abs(mean - gap - target) <= tolerance or len(evaluations.history) >= max_steps:
            break
        if goal != target and abs(gap - (goal - target)) <= 2 * gap_se:
            break  # the goal already allowed for this gap, within its noise: searching again chases noise
        goal = target + gap
    mean, sd = evaluations(scale, n)
    return CalibrationResult(
        scale=float(scale),
        bracket=tuple(float(b) for b in evaluations.bracket(scale, n, goal)),
        n_steps=len(evaluations.history),
        mean_error=mean - gap,
        error_std=sd,
        target_risk=target,
        tolerance=tolerance,
        n_tables=int(n),
        history=np.array(evaluations.history, dtype=np.float64).reshape(-1, 4),
        design=crn.design,
        method=method,
        criterion=crn.criterion,
        gap=gap,
        gap_history=None if gaps is None else np.array(gaps.history, dtype=np.float64).reshape(-1, 4),
    )
