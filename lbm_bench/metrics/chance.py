"""The chance level of the conditional risk: the mean ``r_item`` of labels drawn at random
from the proportions, scored as any labelling is (:func:`chance_risk`)."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from lbm_bench._validation import check_count, check_proportions
from lbm_bench.metrics.risk import check_gibbs_sets, conditional_risk_of_sets

__all__ = ["CHANCE_DRAWS", "CHANCE_SETS", "chance_risk", "chance_risk_of_sets"]


#: Labellings drawn, and Gibbs sets used (evenly spaced), by :func:`chance_risk` by default:
#: 20 x 100 set scorings, the cost of scoring one labelling against 2,000 sets.
CHANCE_DRAWS, CHANCE_SETS = 20, 100


def chance_risk(
    gibbs_rows: ArrayLike,
    gibbs_cols: ArrayLike,
    row_proportions: ArrayLike,
    col_proportions: ArrayLike,
    *,
    n_draws: int = CHANCE_DRAWS,
    max_sets: int = CHANCE_SETS,
    rng: np.random.Generator | int | None = None,
) -> tuple[float, float]:
    """The chance level of the conditional risk: the mean ``r_item`` of labels drawn from
    the proportions, independently of the table, scored as any labelling is.

    Monte Carlo: ``n_draws`` labellings are drawn (each row label from
    ``row_proportions``, each column label from ``col_proportions``, all independent
    and independent of X), and each is scored like a submission, its conditional risk
    under its own optimal label matching (:func:`~lbm_bench.metrics.risk.conditional_risk`), against
    at most ``max_sets`` of the label sets, evenly spaced. The matching fitted to each random
    labelling is what a random submission gets: on small tables it gains from chance
    agreements, so the chance level is a few hundredths below the risk under a
    matching fixed in advance (``1 - 1/g`` per side for equal proportions).

    Parameters
    ----------
    gibbs_rows : array-like of shape (n_sets, n_rows)
        Row label sets.
    gibbs_cols : array-like of shape (n_sets, n_cols)
        Column label sets, as many as the row sets.
    row_proportions : array-like of shape (g,)
        Proportions of the row classes (the model's prior), positive, summing to 1.
    col_proportions : array-like of shape (m,)
        Proportions of the column classes.
    n_draws : int, default=20
        Random labellings scored.
    max_sets : int, default=100
        Label sets each labelling is scored against (all of them when fewer).
    rng : None, int or numpy.random.Generator
        Seed of the draws (``lbm_bench.evaluate`` uses 0, so its report is reproducible).

    Returns
    -------
    risk : float
        The mean conditional risk of the random labellings.
    standard_error : float
        Its Monte Carlo standard error (standard deviation over the draws / sqrt(n_draws)).

    Examples
    --------
    >>> sets = np.random.default_rng(0).integers(0, 2, size=(50, 40))
    >>> risk, se = chance_risk(sets, sets, [0.5, 0.5], [0.5, 0.5], rng=0)
    >>> 0.6 < risk < 0.75, se < 0.02   # 1 - 1/4 = 0.75 under a fixed matching
    (True, True)
    """
    rng = np.random.default_rng(rng)
    rows, cols = check_gibbs_sets(gibbs_rows, gibbs_cols)
    pi = check_proportions("row_proportions", row_proportions)
    rho = check_proportions("col_proportions", col_proportions)
    n_draws = check_count("n_draws", n_draws, minimum=2)
    max_sets = check_count("max_sets", max_sets)
    return chance_risk_of_sets(rows, cols, pi, rho, n_draws=n_draws, max_sets=max_sets, rng=rng)


def chance_risk_of_sets(
    rows: np.ndarray, cols: np.ndarray, pi: np.ndarray, rho: np.ndarray, *,
    n_draws: int = CHANCE_DRAWS, max_sets: int = CHANCE_SETS, rng: np.random.Generator,
) -> tuple[float, float]:
    """:func:`chance_risk` of validated arrays and a Generator."""
    n_sets = rows.shape[0]
    keep = np.unique(np.linspace(0, n_sets - 1, min(n_sets, max_sets)).round().astype(np.int64))
    rows, cols = rows[keep], cols[keep]
    risks = np.array([
        conditional_risk_of_sets(rows, cols, rng.choice(pi.shape[0], size=rows.shape[1], p=pi),
                          rng.choice(rho.shape[0], size=cols.shape[1], p=rho), [keep.shape[0]]).risk
        for _ in range(n_draws)
    ])
    return float(risks.mean()), float(risks.std(ddof=1) / math.sqrt(n_draws))
