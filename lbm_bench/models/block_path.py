"""The path of a design fitted to a table: one scale through the fitted model.

A design fitted to a user's table (:func:`lbm_bench.fit_design`) keeps the fitted
proportions and block parameters, and its scale moves every block along a straight
line in the family's natural parameter, through the table's overall level:

    eta_kl(scale) = centre + scale * (eta_kl - centre)

where ``eta_kl`` are the fitted blocks' natural parameters (the model class's
``natural_parameters``, shape ``(n_stats, g, m)``) and ``centre`` those of the
one-block model of the whole table. Scale 1 is the fitted model; smaller scales shrink
every block towards the table's overall level (scale 0: every block is that level, the
risk is that of guessing); larger ones separate them.

**The table's level is kept.** A straight line in the natural parameter does not keep the
mean: shrinking log-rates towards their centre lowers the mean rate (Jensen), so every row
and column of a Poisson table would lose counts at once (on scikit-learn's digits, a fifth
of the ink at the scales of 5-20% risk, and a row-mean KS statistic of 0.7 against the
source). So at every scale the blocks are shifted together, by one value per statistic
``delta(scale)`` (shape ``(n_stats,)``), until the table's expected sufficient statistics
(:meth:`~lbm_bench.models.base.LatentBlockModel.expected_statistics`: ``sum_kl pi_k rho_l
E_kl[T]``) are the fitted model's:

    eta_kl(scale) = centre + delta(scale) + scale * (eta_kl - centre)

with ``delta(1) = 0`` (scale 1 is the fitted model), and ``delta(0) = 0`` when the centre is
the one-block fit of the source (whose level is the fitted model's). The shift moves every
block alike, so only the contrasts between blocks move with the scale: the overall mean
(Poisson, Bernoulli: the density), the mean and the second moment (Gaussian: the overall
mean and variance) and the categories' frequencies (categorical) stay the source's. It
solves a convex problem (the moments of an exponential family: Newton steps on the
gradient of the log-partition), the same for every family.

**The classes' margins can be kept** (a path with a ``knee``, the family's choice:
:attr:`~lbm_bench.models.family.Designs.path_knee`). A table's degrees (its row and column
sums) are mostly the classes' margins: a row class's expected statistics over the columns
``sum_l rho_l E_kl[T]`` (shape ``(n_stats, g)``) and a column class's ``sum_k pi_k E_kl[T]``
``(n_stats, m)``. The straight line shrinks them with everything else, so the degrees of a
table at 5-20% risk narrow (the column classes of a Poisson source at 1.5 and 2.8 counts
come closer; scikit-learn's digits' blank border pixels gain ink). A path with a knee
``k`` in (0, 1) splits the natural parameters into their additive part and their
interaction (weighted by the proportions: ``eta_kl = alpha + a_k + b_l + gamma_kl``, the
weighted means of ``gamma`` over each row and each column zero) and:

- from scale ``k`` up, moves only the interaction, by ``u = (scale - k) / (1 - k)`` (0 at the
  knee, 1 at scale 1), and shifts the blocks by one value per class and statistic
  (``c_k + d_l``) so that every row and column class keeps the fitted model's margins:
  ``eta_kl(scale) = alpha + a_k + b_l + u gamma_kl + c_k(scale) + d_l(scale)``; at the knee
  the classes differ by their totals alone (scikit-learn's digits: a floor of 77%, above the
  targets of 5-20%);
- below the knee, moves the knee's blocks along the straight line to the centre, by
  ``scale / k``, keeping the table's level as above: a target the classes' totals alone
  reach is still reached, and at scale 0 every block is the table's level.

Where the blocks have no interaction (one class on a side, or classes that differ only
by their totals) the knee would be a stretch of equal risk: such a path is the straight
line (:meth:`BlockPath.of`).

How natural parameters become a model is the family's (its designs facet,
:meth:`~lbm_bench.models.family.Designs.model_from_natural`); the row and column
effects and the density of a sparse design are kept as fitted.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["BlockPath", "INTERACTION_FLOOR", "interaction_of"]

#: The shift is solved until the expected statistics are within this relative tolerance of
#: the fitted model's...
LEVEL_TOLERANCE = 1e-10
#: ... in at most this many Newton steps (each halved until the mismatch falls).
_NEWTON_STEPS = 50
#: Step of the finite differences of the expected statistics in the natural parameters.
_DIFFERENCE_STEP = 1e-6
#: An interaction whose largest weighted deviation is below this (in the natural parameter)
#: is none: the path is the straight line.
INTERACTION_FLOOR = 1e-8


@dataclass(frozen=True)
class BlockPath:
    """The natural parameters a fitted design's scale moves along.

    Attributes
    ----------
    natural : ndarray of shape (n_stats, g, m)
        The fitted blocks' natural parameters (scale 1).
    centre : ndarray of shape (n_stats,)
        The natural parameters of the table's overall level (scale 0).
    knee : float or None
        The scale in (0, 1) from which up the classes' margins are kept and only their
        interaction moves; None: the straight line (the table's level kept).
    """

    natural: np.ndarray
    centre: np.ndarray
    knee: float | None = None

    def __post_init__(self) -> None:
        natural = np.array(self.natural, dtype=np.float64)
        centre = np.array(self.centre, dtype=np.float64).reshape(-1)
        if natural.ndim != 3:
            raise ValueError("the path's natural parameters must have shape (n_stats, g, m), got "
                             f"{natural.shape}")
        if centre.shape != natural.shape[:1]:
            raise ValueError(
                f"the path's centre must have shape ({natural.shape[0]},) (one value per "
                f"statistic), got {centre.shape}"
            )
        if not (np.all(np.isfinite(natural)) and np.all(np.isfinite(centre))):
            raise ValueError("the path's natural parameters must be finite")
        if self.knee is not None:
            knee = float(self.knee)
            if not 0.0 < knee < 1.0:
                raise ValueError(f"the path's knee must lie in (0, 1), got {self.knee!r}")
            object.__setattr__(self, "knee", knee)
        natural.flags.writeable = False
        centre.flags.writeable = False
        object.__setattr__(self, "natural", natural)
        object.__setattr__(self, "centre", centre)

    @property
    def block_shape(self) -> tuple[int, int]:
        """``(g, m)``."""
        return self.natural.shape[1:]  # type: ignore[return-value]

    def at(self, scale: float) -> np.ndarray:
        """The natural parameters at ``scale``, shape ``(n_stats, g, m)``."""
        centre = self.centre[:, None, None]
        return centre + scale * (self.natural - centre)

    def model_at(self, scale: float, build: Callable[[np.ndarray], Any]) -> Any:
        """The model at ``scale`` whose table keeps the fitted model's level.

        Parameters
        ----------
        scale : float
        build : callable
            Natural parameters ``(n_stats, g, m)`` to a model (the family's
            :meth:`~lbm_bench.models.family.Designs.model_from_natural` for a design).

        Returns
        -------
        LatentBlockModel
            ``build(self.at(scale) + delta)``, ``delta`` (one value per statistic) such that
            its :meth:`~lbm_bench.models.base.LatentBlockModel.expected_statistics` are those of
            ``build(self.natural)``.
        """
        if scale == 1.0:
            return build(self.natural)
        fitted = build(self.natural)
        if self.knee is None:
            natural = self.at(scale)
        elif scale >= self.knee:
            return build(self.margins_kept((scale - self.knee) / (1.0 - self.knee), build, fitted))
        else:  # below the knee: from the knee's blocks (the classes' totals alone) to the centre
            centre = self.centre[:, None, None]
            natural = centre + (scale / self.knee) * (self.margins_kept(0.0, build, fitted) -
                                                      centre)
        return build(natural +
                     self.level_shift(natural, build, fitted.expected_statistics())[:, None, None])

    def margins_kept(self, interaction: float, build: Callable[[np.ndarray], Any],
                     fitted: Any) -> np.ndarray:
        """The natural parameters (n_stats, g, m) whose interaction is ``interaction`` times the
        fitted one's and whose row and column classes' margins (expected statistics) are those
        of ``fitted`` (``build(self.natural)``): ``alpha + a_k + b_l + interaction gamma_kl``
        shifted by ``c_k + d_l`` per statistic (Newton steps, as :meth:`level_shift`)."""
        additive, gamma = interaction_of(self.natural, fitted.row_proportions,
                                         fitted.col_proportions)
        natural = additive + interaction * gamma
        n_stats, g, m = natural.shape
        target = np.concatenate([part.ravel() for part in _margins(fitted)])

        def statistics(shift: np.ndarray) -> np.ndarray:
            rows, cols = shift[:n_stats * g].reshape(n_stats,
                                                     g), shift[n_stats * g:].reshape(n_stats, m)
            model = build(natural + rows[:, :, None] + cols[:, None, :])
            return np.concatenate([part.ravel() for part in _margins(model)])

        shift = _newton(statistics, np.zeros(n_stats * (g + m)), target)
        rows, cols = shift[:n_stats * g].reshape(n_stats,
                                                 g), shift[n_stats * g:].reshape(n_stats, m)
        return natural + rows[:, :, None] + cols[:, None, :]

    def level_shift(self, natural: np.ndarray, build: Callable[[np.ndarray], Any],
                    target: np.ndarray) -> np.ndarray:
        """The shift ``delta`` (n_stats,) of every block of ``natural`` that gives the table the
        expected statistics ``target``: Newton steps on ``E[T](delta) - target`` (its Jacobian,
        the blocks' weighted covariance of ``T``, by finite differences), each halved until the
        mismatch falls. Where no shift reaches ``target`` (Gaussian blocks separated far past
        scale 1, whose means alone spread wider than the table's variance, their precisions
        floored by the family), the nearest shift the steps reach."""
        n_stats = natural.shape[0]
        return _newton(lambda shift: build(natural + shift[:, None, None]).expected_statistics(),
                       np.zeros(n_stats), target)

    @classmethod
    def of(cls, model: Any, centre_model: Any, knee: float | None = None) -> BlockPath:
        """The path through ``model`` from ``centre_model`` (a 1x1 model of the same family),
        keeping the classes' margins from ``knee`` up (None: the straight line, as it is too
        when the blocks have no interaction: :data:`INTERACTION_FLOOR`)."""
        natural = model.natural_parameters
        if knee is not None:
            gamma = interaction_of(natural, model.row_proportions, model.col_proportions)[1]
            if not np.abs(gamma).max() > INTERACTION_FLOOR:
                knee = None
        return cls(natural, centre_model.natural_parameters[:, 0, 0], knee)


def interaction_of(natural: np.ndarray, row_proportions: np.ndarray, col_proportions: np.ndarray,
                   ) -> tuple[np.ndarray, np.ndarray]:
    """The additive part ``alpha + a_k + b_l`` and the interaction ``gamma_kl`` of natural
    parameters (n_stats, g, m), weighted by the proportions: ``gamma``'s weighted mean over
    each row class and each column class is zero.

    Examples
    --------
    >>> natural = np.array([[[0.0, 1.0], [1.0, 2.0]]])
    >>> additive, gamma = interaction_of(natural, np.full(2, 0.5), np.full(2, 0.5))
    >>> float(np.abs(gamma).max())
    0.0
    """
    natural = np.asarray(natural, dtype=np.float64)
    pi, rho = np.asarray(row_proportions,
                         dtype=np.float64), np.asarray(col_proportions, dtype=np.float64)
    rows = np.einsum("skl,l->sk", natural, rho)[:, :, None]
    cols = np.einsum("k,skl->sl", pi, natural)[:, None, :]
    overall = np.einsum("k,skl,l->s", pi, natural, rho)[:, None, None]
    additive = rows + cols - overall
    return additive, natural - additive


def _margins(model: Any) -> tuple[np.ndarray, np.ndarray]:
    """The row classes' (n_stats, g) and column classes' (n_stats, m) expected statistics."""
    means = model.mean_statistics
    return (np.einsum("skl,l->sk", means, model.col_proportions),
            np.einsum("k,skl->sl", model.row_proportions, means))


def _newton(statistics: Callable[[np.ndarray], np.ndarray], shift: np.ndarray,
            target: np.ndarray) -> np.ndarray:
    """The shift at which ``statistics(shift)`` is ``target`` (within :data:`LEVEL_TOLERANCE`):
    Newton steps (the Jacobian by finite differences, least squares where it is singular, as
    the classes' margins are: their weighted sums are one total), each halved until the
    mismatch falls; where none reaches ``target``, the nearest shift the steps reach."""
    tolerance = LEVEL_TOLERANCE * (1.0 + np.abs(target))

    def mismatch(trial: np.ndarray) -> np.ndarray:
        # a trial step out of the family's domain (a negative Gaussian precision) is no better
        with np.errstate(all="ignore"):
            try:
                gap = statistics(trial) - target
            except ValueError:
                return np.full(target.shape, np.inf)
        return gap if np.all(np.isfinite(gap)) else np.full(target.shape, np.inf)

    gap = mismatch(shift)
    for _ in range(_NEWTON_STEPS):
        if np.all(np.abs(gap) <= tolerance):
            return shift
        jacobian = np.empty((target.size, shift.size))
        for q in range(shift.size):
            step = np.zeros(shift.size)
            step[q] = _DIFFERENCE_STEP
            jacobian[:, q] = (mismatch(shift + step) - gap) / _DIFFERENCE_STEP
        direction = np.linalg.lstsq(jacobian, -gap, rcond=None)[0]
        length = 1.0
        while length > 1e-6:
            trial = shift + length * direction
            trial_gap = mismatch(trial)
            if np.linalg.norm(trial_gap) < np.linalg.norm(gap):
                break
            length /= 2
        else:
            break
        shift, gap = trial, trial_gap
    return shift
