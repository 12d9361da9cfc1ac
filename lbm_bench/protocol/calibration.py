"""Step 3 of the protocol: calibrate the scale so the MAP's error is centred on a target.

For a fixed design (proportions, pattern, dispersions), the mean apparent error
``l_item((z0, w0), MAP(X))`` over ``n_tables`` tables decreases with the scale.
A dichotomy on the (log) scale finds the scale where it meets the target.

**Common random numbers.** The ``n_tables`` tables share, at every scale, the
same generating labels, the same underlying noise (standard normals or
uniforms, turned into entries by :meth:`~lbm_bench.models.families.LatentBlockModel.table_from_noise`)
and the same random starts of the MAP. The mean error is then a deterministic,
nearly monotone function of the scale, so the bisection converges instead of
chasing Monte Carlo noise. The MAP is the X-only classifier: started from the
generating labels, its error would be biased low.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from lbm_bench.inference.engine import Sweeper
from lbm_bench._validation import check_count, check_kind, check_positive_float, check_probability
from lbm_bench.inference.classifier import alternate, best_of_starts, initial_column_labels
from lbm_bench.models.design import ModelDesign, random_design
from lbm_bench.protocol.table import CalibrationResult

__all__ = ["calibrate_scale", "CommonRandomNumbers", "child_seed", "guessing_risk"]

#: Bytes of noise kept in memory across dichotomy steps; beyond, it is re-drawn from seeds.
_NOISE_CACHE_BYTES = 512 * 2**20
#: Bytes of sufficient statistics (both layouts) per batch of tables run through the
#: MAP together. Batching pays for small tables (fewer, larger array operations:
#: 1.3x on 50x50) and loses for large ones once a batch falls out of the caches
#: (0.7x for 4 tables of 1000x1000), so batches are kept about L2-sized; tables
#: larger than this run one by one. Measured in docs/performance.md.
_BATCH_BYTES = 2 * 2**20


def child_seed(seed: np.random.SeedSequence, index: int) -> np.random.SeedSequence:
    """The ``index``-th child of ``seed``, without the state that ``spawn`` keeps."""
    return np.random.SeedSequence(seed.entropy, spawn_key=tuple(seed.spawn_key) + (index,))


def guessing_risk(row_proportions: np.ndarray, col_proportions: np.ndarray) -> float:
    """``l_item`` of the best label-blind guess (every row and column in its largest class)."""
    row = 1.0 - float(np.max(row_proportions))
    col = 1.0 - float(np.max(col_proportions))
    return row + col - row * col


class CommonRandomNumbers:
    """Labels, noise and MAP starts of ``n_tables`` tables, identical at every scale.

    Table ``t`` has its own seed, child ``t`` of ``seed``; its children 0, 1
    and 2 draw its labels, its noise and its MAP's random starts.

    Parameters
    ----------
    design : ModelDesign
    n_rows, n_cols : int
    n_tables : int
    seed : numpy.random.SeedSequence
        Root of the per-table streams.
    batch_bytes : int, optional
        Memory for the statistics of the tables run through the MAP together
        (1 runs them one by one: the benchmark's baseline). Every table draws
        its MAP starts from its own stream, so the errors do not depend on it.
    incremental : bool, default=True
        Update the MAP's block sums for the labels that changed (default) or
        recompute them at every step (the benchmark's baseline).
    """

    def __init__(
        self,
        design: ModelDesign,
        n_rows: int,
        n_cols: int,
        n_tables: int,
        seed: np.random.SeedSequence,
        batch_bytes: int = _BATCH_BYTES,
        incremental: bool = True,
    ) -> None:
        self.design = design
        self.batch_bytes = batch_bytes
        self.incremental = incremental
        self.n_rows, self.n_cols, self.n_tables = n_rows, n_cols, n_tables
        self.table_seeds = [child_seed(seed, t) for t in range(n_tables)]
        reference = design.model(1.0)
        #: Bytes of one table's statistics in the MAP (both layouts), the unit of ``batch_bytes``.
        self.bytes_per_table = 2 * reference.n_stats * n_rows * n_cols * 8
        self.labels = [
            reference.sample_labels(n_rows, n_cols, rng=np.random.default_rng(child_seed(s, 0)))
            for s in self.table_seeds
        ]
        self._cache = n_tables * n_rows * n_cols * 8 <= _NOISE_CACHE_BYTES
        self._noise = [self._draw_noise(t) for t in range(n_tables)] if self._cache else None

    def _draw_noise(self, t: int) -> np.ndarray:
        rng = np.random.default_rng(child_seed(self.table_seeds[t], 1))
        return self.design.model(1.0).draw_noise(self.n_rows, self.n_cols, rng=rng)

    def noise(self, t: int) -> np.ndarray:
        """Noise of table ``t``, ndarray of shape (n_rows, n_cols)."""
        return self._noise[t] if self._noise is not None else self._draw_noise(t)

    def batches(self) -> list[range]:
        """Ranges of table indices run through the MAP together."""
        size = max(1, min(self.n_tables, self.batch_bytes // self.bytes_per_table))
        return [range(s, min(s + size, self.n_tables)) for s in range(0, self.n_tables, size)]

    def apparent_errors(self, scale: float, n_init: int) -> np.ndarray:
        """``l_item((z0, w0), MAP(X))`` of every table at ``scale``: ndarray (n_tables,)."""
        model = self.design.model(scale)
        errors = np.empty(self.n_tables)
        for batch in self.batches():
            tables = [model.table_from_noise(self.noise(t), *self.labels[t]) for t in batch]
            sweeper = Sweeper(model, tables)
            start_rngs = [np.random.default_rng(child_seed(self.table_seeds[t], 2)) for t in batch]
            w0 = initial_column_labels(sweeper, n_init, start_rngs)
            z, w, _, _ = alternate(sweeper, w0, incremental=self.incremental)
            best, _ = best_of_starts(sweeper, z, w, base_measure=False)
            for b, t in enumerate(batch):
                row = np.mean(z[b, best[b]] != self.labels[t][0])
                col = np.mean(w[b, best[b]] != self.labels[t][1])
                errors[t] = row + col - row * col
        return errors


def _check_target(target_risk: float, design: ModelDesign, n_rows: int, n_cols: int) -> None:
    guess = guessing_risk(design.row_proportions, design.col_proportions)
    if target_risk >= guess:
        raise ValueError(
            f"target_risk={target_risk} cannot be reached: guessing without the table already "
            f"has risk {guess:.4f} for these proportions"
        )
    if target_risk < 1.0 / (n_rows * n_cols):
        raise ValueError(
            f"target_risk={target_risk} cannot be reached: below 1/(n_rows*n_cols) = "
            f"{1.0 / (n_rows * n_cols):.3g}"
        )


def calibrate_scale(
    kind: str,
    n_rows: int,
    n_cols: int,
    n_row_clusters: int,
    n_col_clusters: int,
    target_risk: float,
    *,
    n_tables: int = 200,
    tolerance: float | None = None,
    n_init: int = 10,
    max_steps: int = 40,
    design: ModelDesign | None = None,
    callback: Callable[[float, float], Any] | None = None,
    rng: np.random.Generator | int | None = None,
    **model_options: Any,
) -> CalibrationResult:
    """Find the scale at which the X-only MAP's mean apparent error meets a target.

    Parameters
    ----------
    kind : {"gaussian", "poisson", "bernoulli"}
    n_rows, n_cols : int
        Table shape.
    n_row_clusters, n_col_clusters : int
        Cluster numbers.
    target_risk : float
        Target conditional risk, in (0, 1).
    n_tables : int, default=200
        Tables per evaluated scale (the paper's 200).
    tolerance : float, optional
        Stop when ``|mean error - target| <= tolerance``. Default:
        ``min(0.005, target_risk / 10)``.
    n_init : int, default=10
        Random starts of the MAP.
    max_steps : int, default=40
        Maximum number of evaluated scales (bracketing included).
    design : ModelDesign, optional
        Design to calibrate; drawn with :func:`~lbm_bench.random_design` and
        ``model_options`` when omitted.
    callback : callable, optional
        Called as ``callback(scale, mean_error)`` after every evaluation (progress).
    rng : None, int or numpy.random.Generator
        Source of randomness.
    **model_options
        Options of :func:`~lbm_bench.random_design` (``equal_proportions``, ...).

    Returns
    -------
    CalibrationResult
        With the design in its ``design`` attribute.

    Raises
    ------
    ValueError
        For a target that cannot be reached (not below the risk of guessing,
        or below ``1/(n_rows n_cols)``), or when the dichotomy cannot bracket it.

    Examples
    --------
    >>> result = calibrate_scale("gaussian", 30, 30, 2, 2, 0.1, n_tables=20, rng=0)
    >>> abs(result.mean_error - 0.1) <= result.tolerance or result.n_steps == 40
    True
    """
    rng = np.random.default_rng(rng)
    kind = check_kind(kind)
    n_rows = check_count("n_rows", n_rows)
    n_cols = check_count("n_cols", n_cols)
    g = check_count("n_row_clusters", n_row_clusters, minimum=2)
    m = check_count("n_col_clusters", n_col_clusters, minimum=2)
    if g > n_rows or m > n_cols:
        raise ValueError(
            f"more clusters than rows or columns: {g}x{m} clusters for a {n_rows}x{n_cols} table"
        )
    target = check_probability("target_risk", target_risk)
    tolerance = min(0.005, target / 10) if tolerance is None else check_positive_float("tolerance", tolerance)
    n_tables = check_count("n_tables", n_tables)
    max_steps = check_count("max_steps", max_steps, minimum=2)
    if design is None:
        design = random_design(kind, g, m, rng=rng, **model_options)
    elif design.kind != kind or design.block_shape != (g, m):
        raise ValueError(f"design is a {design.kind} {design.block_shape} design, not {kind} {(g, m)}")
    _check_target(target, design, n_rows, n_cols)
    crn = CommonRandomNumbers(design, n_rows, n_cols, n_tables, np.random.SeedSequence(rng.integers(2**63)))
    return _dichotomy(crn, target, tolerance, n_init, max_steps, callback)


def _dichotomy(
    crn: CommonRandomNumbers,
    target: float,
    tolerance: float,
    n_init: int,
    max_steps: int,
    callback: Callable[[float, float], Any] | None,
) -> CalibrationResult:
    history: list[tuple[float, float, float]] = []

    def evaluate(scale: float) -> float:
        errors = crn.apparent_errors(scale, n_init)
        history.append((scale, float(errors.mean()), float(errors.std())))
        if callback is not None:
            callback(scale, float(errors.mean()))
        return float(errors.mean())

    low, high = None, None  # low: error above target (too hard); high: error below
    scale = 1.0
    while len(history) < max_steps:
        error = evaluate(scale)
        if abs(error - target) <= tolerance:
            return _result(crn, history, scale, (low or scale, high or scale), target, tolerance)
        if error > target:
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
        raise ValueError(
            f"could not bracket target_risk={target} within {max_steps} steps "
            f"(errors seen from {min(h[1] for h in history):.4f} to {max(h[1] for h in history):.4f})"
        )
    best = min(history, key=lambda h: abs(h[1] - target))
    return _result(crn, history, best[0], (low, high), target, tolerance)


def _result(crn, history, scale, bracket, target, tolerance) -> CalibrationResult:
    entry = next(h for h in history if h[0] == scale)
    return CalibrationResult(
        scale=float(scale),
        bracket=(float(bracket[0]), float(bracket[1])),
        n_steps=len(history),
        mean_error=entry[1],
        error_std=entry[2],
        target_risk=target,
        tolerance=tolerance,
        n_tables=crn.n_tables,
        history=np.array(history, dtype=np.float64).reshape(-1, 3),
        design=crn.design,
    )
