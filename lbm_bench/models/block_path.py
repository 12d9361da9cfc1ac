"""The path of a design fitted to a table: one scale through the fitted model.

A design fitted to a user's table (:func:`lbm_bench.fit_design`) keeps the fitted
proportions and block parameters, and its scale moves every block along a straight
line in the family's natural parameter, through the table's overall level:

    eta_kl(scale) = centre + scale * (eta_kl - centre)

where ``eta_kl`` are the fitted blocks' natural parameters (the model class's
``natural_parameters``, shape ``(n_stats, g, m)``) and ``centre`` those of the
one-block model of the whole table. Scale 1 is the fitted model; smaller scales shrink
every block towards the table's overall level (scale 0: every block is that level, the
risk is that of guessing); larger ones separate them. How natural parameters become a
model is the family's (its designs facet,
:meth:`~lbm_bench.models.family.Designs.model_from_natural`); the row and column
effects and the density of a sparse design are kept as fitted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["BlockPath"]


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

    @classmethod
    def of(cls, model: Any, centre_model: Any) -> BlockPath:
        """The path through ``model`` from ``centre_model`` (a 1x1 model of the same family)."""
        return cls(model.natural_parameters, centre_model.natural_parameters[:, 0, 0])
