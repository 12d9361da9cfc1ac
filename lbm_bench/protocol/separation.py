"""A first guess of the calibrated scale from the design alone.

Before any table is drawn, the scale at which a target risk is met can be
guessed from how far apart the blocks' distributions are. For two row classes
``k`` and ``k'``, a row is informed by its ``n_cols`` entries; when the column
labels are known, telling the classes apart from those entries is a test
between two products of exponential-family densities whose log-likelihood ratio
has mean ``n_cols * sum_l rho_l KL(kl || k'l)``. With the symmetrised
Kullback-Leibler divergence ``J`` per entry (for Gaussian blocks of equal
variance ``J = delta^2 / (2 sigma^2)``) the error of that test is about
``Phi(-sqrt(D / 2))`` with ``D = n_cols sum_l rho_l J(kl, k'l)`` (exact for
equal-variance Gaussian blocks). A row errs when any other class wins: the
ratios against the other classes are correlated (they share the row's noise),
and a row's error is the probability that one of them is positive, the ratios
taken as jointly normal (:class:`SideError`). Columns likewise with ``n_rows``. The
predicted ``l_item`` combines the two (eq. 3).

With missing entries, a row is informed by its observed entries only: ``n_cols``
becomes ``(1 - rate) n_cols`` (and the block mechanism's mask, which also
informs, is left out of the guess).

The other side's labels are themselves uncertain: each side's separations are
attenuated by the other side's predicted error (:data:`ATTENUATION_POWER`), the
two errors solved as a fixed point. The prediction only starts the root finding
of :mod:`lbm_bench.protocol.calibration`, which corrects it with the tables'
risks. It needs nothing family-specific: the divergences come from the
exponential-family interface (natural parameters, log-partition and the mean
sufficient statistics, each family's closed form). Until 2026-11 the mean statistics were
estimated on a fixed sample of 48 x 48 entries per block: a sparse design's blocks (rates
near its density, 0.001 for a million-row table) held a few non-zeros there, so the predicted
error jumped with the scale, and its slope, which sizes the search's first steps, came out
up to twenty times too steep (a million-row table's search took nine evaluations where two do).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize, special

import lbm_bench._portable as portable
from lbm_bench._validation import describe_percent
from lbm_bench.models.design import ModelDesign
from lbm_bench.models.missing import unreachable_risk

__all__ = [
    "SideError", "block_divergences", "check_target", "first_guess", "guessing_risk",
    "predicted_error"
]

#: The other side's errors attenuate a side's separations by ``(1 - e / e_max) **
#: ATTENUATION_POWER`` (``e_max``: the error of guessing). A uniform confusion of the
#: other side's labels would give the power 2 (the separations are squared mean
#: differences); the labels that the MAP gets wrong are the ambiguous ones, which carry
#: little anyway. With each side's error from jointly normal ratios (:class:`SideError`), the
#: power 1 centres the first guess on the calibrated scales of the 63 configurations of
#: ``repository/paper.toml`` (1/2 did with the union bound used until 2026-11;
#: ``scripts/benchmarks/calibration_cost.py repository/paper.toml`` prints the mean log
#: ratio of the guess to the calibrated scale and its spread: docs/performance.md).
ATTENUATION_POWER = 1.0
#: Closest classes whose likelihood ratios :class:`SideError` takes as jointly normal (one
#: factor); farther classes add their errors. Their mean correlation is kept below
#: ``MOST_CORRELATION`` (nearly identical classes), where the grid still resolves the integral.
COMPETITORS = 8
MOST_CORRELATION = 0.9
#: Standard normal factor's grid and weights (trapezoid, 0.1 apart within 7 standard
#: deviations): the integrands are smooth on it. The weights come from the portable ``exp``,
#: so the first guess has the same bits on every CPU.
FACTOR_NODES = np.linspace(-7.0, 7.0, 141)
FACTOR_WEIGHTS = portable.exp(-0.5 * FACTOR_NODES * FACTOR_NODES)
FACTOR_WEIGHTS = FACTOR_WEIGHTS / FACTOR_WEIGHTS.sum()


def guessing_risk(row_proportions: np.ndarray, col_proportions: np.ndarray) -> float:
    """``l_item`` of the best label-blind guess (every row and column in its largest class).

    Examples
    --------
    >>> guessing_risk(np.array([0.5, 0.5]), np.array([0.25, 0.75]))
    0.625
    """
    row = 1.0 - float(np.max(row_proportions))
    col = 1.0 - float(np.max(col_proportions))
    return row + col - row * col


def block_divergences(design: ModelDesign, scale: float) -> np.ndarray:
    """Symmetrised Kullback-Leibler divergences between block distributions.

    ``J[k, l, k', l'] = (KL(kl || k'l') + KL(k'l' || kl)) / 2`` per entry, from the
    exponential-family form ``KL(a || b) = (eta_a - eta_b) . E_a[T] - A_a + A_b``, with
    each family's mean sufficient statistics ``E_a[T]``
    (:attr:`~lbm_bench.models.base.LatentBlockModel.mean_statistics`): exact, and smooth in
    the scale however sparse the blocks. Poisson row and column effects are left out (they
    average one).

    Returns
    -------
    ndarray of shape (g, m, g, m)
    """
    model = design.without_effects().model(scale)
    mean_t = model.mean_statistics  # (p, g, m)
    eta = model.natural_parameters  # (p, g, m)
    A = model.log_partition  # (g, m)
    # cross[a, b] = eta_b . E_a[T], summed over the statistics in order by elementwise
    # products: einsum's and BLAS's sums round by the CPU's vector width (issue 35)
    cross = (mean_t[:, :, :, None, None] * eta[:, None, None]).sum(axis=0)
    own = (mean_t * eta).sum(axis=0)
    kl = own[:, :, None, None] - cross - A[:, :, None, None] + A[None, None]
    return np.maximum(0.5 * (kl + kl.transpose(2, 3, 0, 1)), 0.0)


def _separations(divergence: np.ndarray, other: np.ndarray, n_other: int) -> np.ndarray:
    """``D[a, b] = n_other sum_o other_o J(ao, bo)`` between the classes of one side, from
    ``divergence`` (k, o, k, o) and the other side's proportions ``other``."""
    diagonal = np.einsum("aobo->abo", divergence)  # a view: no sum
    return (n_other * diagonal * other).sum(axis=-1)


class SideError:
    """Predicted error of one side's labels from the separations ``D`` between its classes
    (:meth:`error`, at each attenuation of the fixed point).

    An item of class ``a`` is mistaken when another class's log-likelihood ratio against ``a``
    is positive. The ratios are taken as jointly normal, as they are for Gaussian blocks of
    equal variance: against class ``b`` of mean ``-D_ab`` and variance ``2 D_ab``, so that it
    errs with probability ``Phi(-sqrt(D_ab / 2))``, and against ``b`` and ``c`` of correlation
    ``(D_ab + D_ac - D_bc) / (2 sqrt(D_ab D_ac))`` (an attenuation scales every ``D`` alike and
    leaves it). The :data:`COMPETITORS` closest classes share one factor, their mean
    correlation weighted by their pairs' errors (at most :data:`MOST_CORRELATION`), and the
    probability that one of them wins is integrated over that factor on a fixed grid
    (:data:`FACTOR_NODES`); the farther classes add their own errors (the union bound). The
    sum over all the classes used until 2026-11 counts twice the items that several close
    classes would take: with ten classes it overstated a side's error by about a third and
    the first guess's scale by 2-3% (``scripts/checks/first_guess_error.py``).
    """

    def __init__(self, separation: np.ndarray, proportions: np.ndarray) -> None:
        D = np.maximum(separation, 0.0)
        g = D.shape[0]
        self.proportions = proportions
        self.ceiling = 1.0 - float(np.max(proportions))
        order = np.argsort(D + np.diag(np.full(g, np.inf)), axis=1, kind="stable")  # closest first
        k = min(g - 1, COMPETITORS)
        near, far = order[:, :k], order[:, k:g - 1]
        rows = np.arange(g)[:, None]
        self.d_near, self.d_far = D[rows, near], D[rows, far]
        pair = np.sqrt(self.d_near[:, :, None] * self.d_near[:, None, :])
        inner = self.d_near[:, :, None] + self.d_near[:, None, :] - D[near[:, :, None],
                                                                      near[:, None, :]]
        correlation = np.divide(inner, 2 * pair, out=np.zeros_like(pair), where=pair > 0)
        p_near = _tail(self.d_near)
        weight = p_near[:, :, None] * p_near[:, None, :]
        weight[:, np.arange(k), np.arange(k)] = 0.0
        total = weight.sum(axis=(1, 2))
        rho = np.divide((weight * correlation).sum(axis=(1, 2)), total, out=np.zeros(g), where=total
                        > 0)
        rho = np.clip(rho, 0.0, MOST_CORRELATION)
        # q_j(u) = P(class j wins | factor u) = Phi((sqrt(rho) u - t_j) / sqrt(1 - rho)), t_j =
        # sqrt(D_aj / 2)
        self.shift = (np.sqrt(rho)[:, None] * FACTOR_NODES) / np.sqrt(2.0 * (1.0 - rho))[:, None]
        self.width = np.sqrt(2.0 * (1.0 - rho))[:, None]

    def error(self, attenuation: float = 1.0) -> float:
        """The side's error with every separation multiplied by ``attenuation``."""
        return min(float((self.proportions * self.class_errors(attenuation)).sum()), self.ceiling)

    def class_errors(self, attenuation: float = 1.0) -> np.ndarray:
        """Each class's error (ndarray of shape (g,)) with every separation multiplied by
        ``attenuation``."""
        a = max(attenuation, 0.0)
        error = np.zeros(self.shift.shape)  # P(one of the close classes wins | factor)
        none_yet = np.ones(self.shift.shape)
        for j in range(self.d_near.shape[1]):  # 1 - prod(1 - q_j) as sum_j q_j prod_{i<j} (1 - q_i)
            q = 0.5 * special.erfc(
                np.sqrt(a * self.d_near[:, j, None] / 2) / self.width - self.shift)
            error += none_yet * q
            none_yet *= 1.0 - q
        return (error * FACTOR_WEIGHTS).sum(axis=1) + _tail(a * self.d_far).sum(axis=1)


def _tail(separation: np.ndarray) -> np.ndarray:
    """``Phi(-sqrt(D / 2))``: a pairwise test's error at separation ``D``."""
    return 0.5 * special.erfc(np.sqrt(separation / 2) / math.sqrt(2))


def predicted_error(design: ModelDesign, n_rows: int, n_cols: int, scale: float) -> float:
    """Predicted ``l_item`` of the MAP at ``scale`` (see the module documentation)."""
    J = block_divergences(design, scale)
    if design.missing is not None:  # a row sees (1 - rate) n_cols entries on average
        n_rows, n_cols = n_rows * (1.0 - design.missing.rate), n_cols * (1.0 - design.missing.rate)
    rows = _separations(J, design.col_proportions, n_cols)
    cols = _separations(J.transpose(1, 0, 3, 2), design.row_proportions, n_rows)
    row_ceiling = 1.0 - float(np.max(design.row_proportions))
    col_ceiling = 1.0 - float(np.max(design.col_proportions))
    row_side, col_side = SideError(rows,
                                   design.row_proportions), SideError(cols, design.col_proportions)
    row = col = 0.0
    for _ in range(100):  # the fixed point reached from error-free labels on the other side
        new_row = row_side.error((1.0 - col / col_ceiling) ** ATTENUATION_POWER)
        new_col = col_side.error((1.0 - row / row_ceiling) ** ATTENUATION_POWER)
        done = abs(new_row - row) < 1e-9 and abs(new_col - col) < 1e-9
        row, col = new_row, new_col
        if done:
            break
    return row + col - row * col


def first_guess(
    design: ModelDesign, n_rows: int, n_cols: int, target_risk: float
) -> tuple[float, float]:
    """The scale whose :func:`predicted_error` is ``target_risk``, and the slope of
    ``logit(predicted error)`` against ``log(scale)`` there.

    Bracketed from scale 1 by factors of 4 within ``[1e-4, 1e3]``, then found by
    Brent's method on ``log(scale)`` (to 1e-3); the slope is a central difference.
    Returns ``(1.0, -3.0)`` when the prediction does not cross the target in that range.

    Examples
    --------
    >>> from lbm_bench import random_design
    >>> scale, slope = first_guess(random_design("gaussian", 3, 3, rng=0), 200, 100, 0.1)
    >>> 0 < scale and slope < 0
    True
    """
    def f(x: float) -> float:
        return predicted_error(design, n_rows, n_cols, math.exp(x)) - target_risk

    # bracket from scale 1 by factors of 4 (a wide fixed range overflows Poisson rates)
    step = math.log(4.0)
    try:
        low = high = 0.0
        f_low = f_high = f(0.0)
        if f_low > 0:
            while f_high > 0:
                if high > math.log(1e3):
                    return 1.0, -3.0
                low, f_low = high, f_high
                high += step
                f_high = f(high)
        else:
            while f_low <= 0:
                if low < math.log(1e-4):
                    return 1.0, -3.0
                high, f_high = low, f_low
                low -= step
                f_low = f(low)
        x = optimize.brentq(f, low, high, xtol=1e-3) if f_high < 0 else high
    except (ValueError, OverflowError, FloatingPointError):
        return 1.0, -3.0
    h = 0.05
    up, down = f(x + h) + target_risk, f(x - h) + target_risk
    if not 0 < up < 1 or not 0 < down < 1:
        return math.exp(x), -3.0
    slope = (special.logit(up) - special.logit(down)) / (2 * h)
    return math.exp(x), float(slope) if slope < -0.1 else -3.0


def check_target(target_risk: float, design: ModelDesign, n_rows: int, n_cols: int) -> None:
    """Refuse a target no scale can reach (ValueError, one line): not below the risk of
    guessing, or, entries missing at random, below the risk of the rows and columns with no
    observed entry (:func:`~lbm_bench.models.missing.unreachable_risk`)."""
    guess = guessing_risk(design.row_proportions, design.col_proportions)
    if target_risk >= guess:
        raise ValueError(
            f"target_risk={target_risk} cannot be reached: guessing without the table already "
            f"has risk {guess:.4f} for these proportions"
        )
    missing = design.missing
    if missing is not None and not missing.informative:
        best = unreachable_risk(missing.rate, n_rows, n_cols, design.row_proportions,
                                design.col_proportions)
        if best >= target_risk:
            raise ValueError(
                f"target_risk={target_risk} cannot be reached with "
                f"{describe_percent(missing.rate, 0)} of the entries missing: rows or columns with "
                f"no observed entry alone give a risk of at least {best:.4f} at any scale (the "
                "best risk reachable); lower the missing rate or raise the target, or use larger "
                "tables"
            )
