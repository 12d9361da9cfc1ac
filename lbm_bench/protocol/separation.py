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
equal-variance Gaussian blocks), and a row's error about the sum over the other
classes. Columns likewise with ``n_rows``. The predicted ``l_item`` combines
the two (eq. 3).

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
up to twenty times too steep (issue 33: nine evaluations where two do).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize, special

from lbm_bench._validation import describe_percent
from lbm_bench.models.design import ModelDesign
from lbm_bench.models.missing import unreachable_risk

__all__ = ["block_divergences", "check_target", "predicted_error", "first_guess", "guessing_risk"]

#: The other side's errors attenuate a side's separations by ``(1 - e / e_max) **
#: ATTENUATION_POWER`` (``e_max``: the error of guessing). A uniform confusion of the
#: other side's labels would give the power 2 (the separations are squared mean
#: differences); the labels that the MAP gets wrong are the ambiguous ones, which carry
#: little anyway, and the power that centres the first guess on the calibrated scales
#: of the 63 configurations of ``repository/paper.toml`` is 1/2
#: (``scripts/benchmarks/calibration_cost.py repository/paper.toml`` prints the mean
#: log ratio of the guess to the calibrated scale and its spread: docs/performance.md).
ATTENUATION_POWER = 0.5


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


def _side_error(separation: np.ndarray, proportions: np.ndarray, attenuation: float = 1.0) -> float:
    """Predicted error of one side's labels from the separations ``D`` between its
    classes, each seen through the other side's labels with ``attenuation``."""
    tail = 0.5 * special.erfc(np.sqrt(np.maximum(attenuation * separation, 0.0) / 2) / math.sqrt(2))
    np.fill_diagonal(tail, 0.0)
    return min(float((proportions * tail.sum(axis=1)).sum()), 1.0 - float(np.max(proportions)))


def predicted_error(design: ModelDesign, n_rows: int, n_cols: int, scale: float) -> float:
    """Predicted ``l_item`` of the MAP at ``scale`` (see the module documentation)."""
    J = block_divergences(design, scale)
    if design.missing is not None:  # a row sees (1 - rate) n_cols entries on average
        n_rows, n_cols = n_rows * (1.0 - design.missing.rate), n_cols * (1.0 - design.missing.rate)
    rows = _separations(J, design.col_proportions, n_cols)
    cols = _separations(J.transpose(1, 0, 3, 2), design.row_proportions, n_rows)
    row_ceiling = 1.0 - float(np.max(design.row_proportions))
    col_ceiling = 1.0 - float(np.max(design.col_proportions))
    row = col = 0.0
    for _ in range(100):  # the fixed point reached from error-free labels on the other side
        new_row = _side_error(rows, design.row_proportions, (1.0 - col / col_ceiling) ** ATTENUATION_POWER)
        new_col = _side_error(cols, design.col_proportions, (1.0 - row / row_ceiling) ** ATTENUATION_POWER)
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
        best = unreachable_risk(missing.rate, n_rows, n_cols, design.row_proportions, design.col_proportions)
        if best >= target_risk:
            raise ValueError(
                f"target_risk={target_risk} cannot be reached with {describe_percent(missing.rate, 0)} of the "
                "entries missing: "
                f"rows or columns with no observed entry alone give a risk of at least {best:.4f} at any "
                "scale (the best risk reachable); lower the missing rate or raise the target, or use "
                "larger tables"
            )
