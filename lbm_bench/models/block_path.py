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

How natural parameters become a model is the family's (its designs facet,
:meth:`~lbm_bench.models.family.Designs.model_from_natural`); the row and column
effects and the density of a sparse design are kept as fitted.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["BlockPath"]

#: The shift is solved until the expected statistics are within this relative tolerance of
#: the fitted model's...
LEVEL_TOLERANCE = 1e-10
#: ... in at most this many Newton steps (each halved until the mismatch falls).
_NEWTON_STEPS = 50
#: Step of the finite differences of the expected statistics in the natural parameters.
_DIFFERENCE_STEP = 1e-6


@dataclass(frozen=True)
class BlockPath:
    """The natural parameters a fitted design's scale moves along.

    Attributes
    ----------
    natural : ndarray of shape (n_stats, g, m)
        The fitted blocks' natural parameters (scale 1).
    centre : ndarray of shape (n_stats,)
        The natural parameters of the table's overall level (scale 0).
    """

    natural: np.ndarray
    centre: np.ndarray

    def __post_init__(self) -> None:
        natural = np.array(self.natural, dtype=np.float64)
        centre = np.array(self.centre, dtype=np.float64).reshape(-1)
        if natural.ndim != 3:
            raise ValueError(f"the path's natural parameters must have shape (n_stats, g, m), got {natural.shape}")
        if centre.shape != natural.shape[:1]:
            raise ValueError(
                f"the path's centre must have shape ({natural.shape[0]},) (one value per statistic),"
                f" got {centre.shape}"
            )
        if not (np.all(np.isfinite(natural)) and np.all(np.isfinite(centre))):
            raise ValueError("the path's natural parameters must be finite")
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
        target = build(self.natural).expected_statistics()
        return build(self.at(scale) + self.level_shift(scale, build, target)[:, None, None])

    def level_shift(self, scale: float, build: Callable[[np.ndarray], Any], target: np.ndarray) -> np.ndarray:
        """The shift ``delta`` (n_stats,) of every block at ``scale`` that gives the table the
        expected statistics ``target``: Newton steps on ``E[T](delta) - target`` (its Jacobian,
        the blocks' weighted covariance of ``T``, by finite differences), each halved until the
        mismatch falls. Where no shift reaches ``target`` (Gaussian blocks separated far past
        scale 1, whose means alone spread wider than the table's variance, their precisions
        floored by the family), the nearest shift the steps reach."""
        natural = self.at(scale)
        n_stats = natural.shape[0]
        tolerance = LEVEL_TOLERANCE * (1.0 + np.abs(target))

        def mismatch(shift: np.ndarray) -> np.ndarray:
            # a trial step out of the family's domain (a negative Gaussian precision) is no better
            with np.errstate(all="ignore"):
                try:
                    gap = build(natural + shift[:, None, None]).expected_statistics() - target
                except ValueError:
                    return np.full(n_stats, np.inf)
            return gap if np.all(np.isfinite(gap)) else np.full(n_stats, np.inf)

        shift = np.zeros(n_stats)
        gap = mismatch(shift)
        for _ in range(_NEWTON_STEPS):
            if np.all(np.abs(gap) <= tolerance):
                return shift
            jacobian = np.empty((n_stats, n_stats))
            for q in range(n_stats):
                step = np.zeros(n_stats)
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

    @classmethod
    def of(cls, model: Any, centre_model: Any) -> BlockPath:
        """The path through ``model`` from ``centre_model`` (a 1x1 model of the same family)."""
        return cls(model.natural_parameters, centre_model.natural_parameters[:, 0, 0])
