"""Step 3 of the protocol: calibrate the scale so an X-only classifier's error is centred on a target.

For a fixed design (proportions, pattern, dispersions), the mean apparent error
``l_item((z0, w0), h(X))`` of an X-only classifier ``h`` over tables drawn at a
scale decreases with the scale. Since, given ``X``, the generating labels are
one exact posterior draw, that mean equals the tables' mean conditional risk
``E[r_item(h(X) | X)]`` for any ``h`` that uses ``X`` alone: calibrating the
mean apparent error calibrates the mean risk. ``h`` is the MAP (Algorithm 1,
``criterion="map"``) or the Bayes rule for ``l_item`` approximated from a
short Gibbs run (``criterion="bayes"``, the floor).

**Common random numbers.** The tables share, at every scale, the same
generating labels, the same underlying noise (standard normals or uniforms,
turned into entries by :meth:`~lbm_bench.models.families.LatentBlockModel.table_from_noise`)
and the same random starts. The mean error is then a smooth, nearly monotone
function of the scale, and the error of a table at a scale, once computed, is
kept: adding tables at a scale costs only the new ones.

**Root finding** (``method="secant"``, default). The first scale is guessed
from the design (:func:`lbm_bench.protocol.separation.first_guess`); then
secant steps on ``logit(mean error)`` against ``log(scale)``, inside the
bracket found so far (regula falsi once the target is bracketed, geometric
bisection when a step leaves the bracket). With ``n_tables="auto"`` the number
of tables is sequential: few (:func:`first_tables`: 10, down to 2 for tables
of more than ten million entries) while the mean error is clearly off target, and
grown, once it is within reach, until the standard error of the mean is below
``se_fraction * tolerance`` (at most ``max_tables``). ``method="bisection"``
is the paper's dichotomy (start at 1, halve or double, then geometric
midpoints) on a fixed number of tables, kept as the benchmark's baseline.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from lbm_bench._validation import check_count, check_kind, check_positive_float, check_probability
from lbm_bench.inference.classifier import alternate, best_of_starts, initial_column_labels
from lbm_bench.inference.engine import Sweeper
from lbm_bench.models.design import ModelDesign, random_design
from lbm_bench.protocol.separation import first_guess
from lbm_bench.protocol.table import CalibrationResult

__all__ = [
    "calibrate_scale",
    "first_tables",
    "check_criterion",
    "classifier_labels",
    "CommonRandomNumbers",
    "child_seed",
    "guessing_risk",
    "CRITERIA",
    "METHODS",
]

#: Classifiers whose error can be calibrated.
CRITERIA = ("bayes", "map")
#: Root-finding methods.
METHODS = ("secant", "bisection")
#: Bytes of noise kept in memory across evaluations; beyond, it is re-drawn from seeds.
_NOISE_CACHE_BYTES = 512 * 2**20
#: Bytes of sufficient statistics (both layouts) per batch of tables run through the
#: MAP together. Batching pays for small tables (fewer, larger array operations:
#: 1.3x on 50x50) and loses for large ones once a batch falls out of the caches
#: (0.7x for 4 tables of 1000x1000), so batches are kept about L2-sized; tables
#: larger than this run one by one. Measured in docs/performance.md.
_BATCH_BYTES = 2 * 2**20
#: Short Gibbs run of the "bayes" criterion's classifier, per calibration table.
BAYES_SAMPLES = 200
BAYES_CHAINS = 4
BAYES_BURN_IN = 20
#: Sequential number of tables (``n_tables="auto"``): tables of the first evaluations,
#: the most tables, and the standard error of the mean error aimed at, as a fraction
#: of the calibration tolerance.
AUTO_FIRST_TABLES = 10
#: Large tables start with fewer tables (their apparent error varies little from table
#: to table): ``AUTO_FIRST_TABLES`` up to this many entries per table in all, then
#: proportionally fewer, never below ``AUTO_MIN_FIRST_TABLES`` (issue 16: a
#: 100000x10000 table starts with 2). The sequential rule still grows the number.
AUTO_FIRST_ENTRIES = 10 * 1000 * 1000
AUTO_MIN_FIRST_TABLES = 2
AUTO_MAX_TABLES = 200
AUTO_SE_FRACTION = 0.5


def child_seed(seed: np.random.SeedSequence, index: int) -> np.random.SeedSequence:
    """The ``index``-th child of ``seed``, without the state that ``spawn`` keeps."""
    return np.random.SeedSequence(seed.entropy, spawn_key=tuple(seed.spawn_key) + (index,))


def guessing_risk(row_proportions: np.ndarray, col_proportions: np.ndarray) -> float:
    """``l_item`` of the best label-blind guess (every row and column in its largest class)."""
    row = 1.0 - float(np.max(row_proportions))
    col = 1.0 - float(np.max(col_proportions))
    return row + col - row * col


class CommonRandomNumbers:
    """Labels, noise and classifier starts of up to ``n_tables`` tables, identical at every scale.

    Table ``t`` has its own seed, child ``t`` of ``seed``; its children 0, 1, 2
    and 3 draw its labels, its noise, its MAP's random starts and (criterion
    ``"bayes"``) its short Gibbs run. Everything about table ``t`` at a scale
    is a function of that seed and the scale: its error does not depend on
    which other tables are evaluated with it, in which batch or on which worker.

    Parameters
    ----------
    design : ModelDesign
    n_rows, n_cols : int
    n_tables : int
        Largest number of tables (the first ``n`` are used when fewer are asked).
    seed : numpy.random.SeedSequence
        Root of the per-table streams.
    batch_bytes : int, optional
        Memory for the statistics of the tables run through the MAP together
        (1 runs them one by one: the benchmark's baseline).
    incremental : bool, default=True
        Update the MAP's block sums for the labels that changed (default) or
        recompute them at every step (the benchmark's baseline).
    criterion : {"map", "bayes"}, default="map"
        The X-only classifier whose apparent error is measured: the MAP
        (Algorithm 1), or the Bayes rule for ``l_item`` approximated from a
        short Gibbs run started at the table's MAP
        (:func:`lbm_bench.inference.bayes.bayes_labels`).
    jobs : int, default=1
        Worker processes (joblib) over which the tables of one evaluation are
        spread; the errors do not depend on it.
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
        criterion: str = "map",
        jobs: int = 1,
    ) -> None:
        self.design = design
        self.batch_bytes = batch_bytes
        self.incremental = incremental
        self.criterion = check_criterion(criterion)
        self.jobs = check_count("jobs", jobs)
        self.n_rows, self.n_cols, self.n_tables = n_rows, n_cols, n_tables
        self.seed = seed
        self.table_seeds = [child_seed(seed, t) for t in range(n_tables)]
        reference = design.model(1.0)
        #: Bytes of one table's statistics in the MAP (both layouts), the unit of ``batch_bytes``.
        self.bytes_per_table = 2 * reference.n_stats * n_rows * n_cols * 8
        self._labels: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self._noise: dict[int, np.ndarray] = {}
        self._cache_tables = max(0, _NOISE_CACHE_BYTES // (n_rows * n_cols * 8))
        self._errors: dict[tuple[float, int], list[float]] = {}

    @property
    def labels(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """Generating labels ``(z, w)`` of every table."""
        return [self.table_labels(t) for t in range(self.n_tables)]

    def table_labels(self, t: int) -> tuple[np.ndarray, np.ndarray]:
        """Generating labels ``(z, w)`` of table ``t``."""
        if t not in self._labels:
            self._labels[t] = _draw_labels(self.design, self.n_rows, self.n_cols, self.table_seeds[t])
        return self._labels[t]

    def noise(self, t: int) -> np.ndarray:
        """Noise of table ``t``, ndarray of shape (n_rows, n_cols)."""
        if t in self._noise:
            return self._noise[t]
        noise = _draw_noise(self.design, self.n_rows, self.n_cols, self.table_seeds[t])
        if t < self._cache_tables:
            self._noise[t] = noise
        return noise

    def batches(self, tables: Sequence[int] | None = None) -> list[list[int]]:
        """Lists of table indices run through the MAP together."""
        tables = list(range(self.n_tables)) if tables is None else list(tables)
        size = max(1, min(len(tables), self.batch_bytes // self.bytes_per_table))
        return [tables[s:s + size] for s in range(0, len(tables), size)]

    def apparent_errors(self, scale: float, n_init: int, tables: Sequence[int] | None = None) -> np.ndarray:
        """Apparent error ``l_item((z0, w0), h(X))`` of the classifier on tables
        ``tables`` (default: all) at ``scale``: ndarray (len(tables),). Not cached."""
        tables = list(range(self.n_tables)) if tables is None else list(tables)
        if self.jobs > 1 and len(tables) > 1:
            return self._parallel_errors(scale, n_init, tables)
        model = self.design.model(scale)
        errors = [
            _batch_errors(model, [self.table_labels(t) for t in batch], [self.noise(t) for t in batch],
                          [self.table_seeds[t] for t in batch], n_init, self.incremental, self.criterion)
            for batch in self.batches(tables)
        ]
        return np.concatenate(errors) if errors else np.empty(0)

    def errors(self, scale: float, n: int, n_init: int) -> np.ndarray:
        """Errors of the first ``n`` tables at ``scale``, computing only those not seen
        at that scale yet (the errors of a table at a scale never change)."""
        if not 1 <= n <= self.n_tables:
            raise ValueError(f"n must be in [1, {self.n_tables}], got {n}")
        known = self._errors.setdefault((float(scale), n_init), [])
        if len(known) < n:
            known.extend(self.apparent_errors(scale, n_init, range(len(known), n)).tolist())
        return np.array(known[:n])

    def _parallel_errors(self, scale: float, n_init: int, tables: list[int]) -> np.ndarray:
        from joblib import Parallel, delayed

        chunks = [list(c) for c in np.array_split(np.array(tables), min(self.jobs, len(tables))) if c.size]
        args = (self.design, self.n_rows, self.n_cols, scale, n_init, self.incremental, self.criterion,
                self.batch_bytes)
        # No backend named here: loky by default, or the one the caller configured
        # (``lbm-bench generate --backend dask``, see lbm_bench.protocol.backends).
        parts = Parallel(n_jobs=self.jobs)(
            delayed(_worker_errors)(*args, [self.table_seeds[t] for t in chunk]) for chunk in chunks
        )
        return np.concatenate(parts)


def check_criterion(criterion: str) -> str:
    """``criterion`` if it is ``"bayes"`` or ``"map"``, else ValueError."""
    if criterion not in CRITERIA:
        raise ValueError(f"criterion must be one of {', '.join(map(repr, CRITERIA))}, got {criterion!r}")
    return criterion


def _draw_labels(design, n_rows, n_cols, table_seed):
    rng = np.random.default_rng(child_seed(table_seed, 0))
    return design.model(1.0).sample_labels(n_rows, n_cols, rng=rng)


def _draw_noise(design, n_rows, n_cols, table_seed):
    rng = np.random.default_rng(child_seed(table_seed, 1))
    return design.model(1.0).draw_noise(n_rows, n_cols, rng=rng)


def _worker_errors(design, n_rows, n_cols, scale, n_init, incremental, criterion, batch_bytes, seeds):
    """Errors of the tables of ``seeds`` in a worker process (labels and noise re-drawn
    from the seeds, BLAS on one thread so that workers do not oversubscribe)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - threadpoolctl comes with scikit-learn/joblib extras
        limits = contextlib.nullcontext()
    else:
        limits = threadpool_limits(limits=1, user_api="blas")
    with limits:
        model = design.model(scale)
        per_batch = max(1, batch_bytes // (2 * model.n_stats * n_rows * n_cols * 8))
        out = []
        for s in range(0, len(seeds), per_batch):
            batch = seeds[s:s + per_batch]
            labels = [_draw_labels(design, n_rows, n_cols, seed) for seed in batch]
            noise = [_draw_noise(design, n_rows, n_cols, seed) for seed in batch]
            out.append(_batch_errors(model, labels, noise, batch, n_init, incremental, criterion))
        return np.concatenate(out)


def _batch_errors(model, labels, noise, seeds, n_init, incremental, criterion) -> np.ndarray:
    """Apparent errors of one batch of tables: the classifier sees the tables only
    (:func:`classifier_labels`); the generating ``labels`` only score it."""
    # a list: sparse tables (scipy.sparse) cannot be stacked; Sweeper stacks dense ones
    tables = [model.table_from_noise(e, z, w) for e, (z, w) in zip(noise, labels, strict=True)]
    found = classifier_labels(model, tables, seeds, n_init, criterion, incremental=incremental)
    errors = np.empty(len(seeds))
    for b, ((z0, w0), (rows, cols)) in enumerate(zip(labels, found, strict=True)):
        row = np.mean(rows != z0)
        col = np.mean(cols != w0)
        errors[b] = row + col - row * col
    return errors


def classifier_labels(
    model: Any,
    tables: np.ndarray,
    seeds: Sequence[np.random.SeedSequence],
    n_init: int,
    criterion: str,
    *,
    incremental: bool = True,
) -> list[tuple[np.ndarray, np.ndarray]]:
    """The X-only classifier of the calibration on a stack of tables.

    Parameters
    ----------
    model : LatentBlockModel
    tables : ndarray of shape (B, n_rows, n_cols), or a list of B tables (dense or scipy.sparse)
    seeds : sequence of B SeedSequence
        Each table's seed: child 2 draws its MAP's random starts, child 3 its
        short Gibbs run. Nothing else (no labels, no other scale) enters.
    n_init : int
        Random starts of the MAP.
    criterion : {"map", "bayes"}
        The MAP, or the Bayes labels for ``l_item`` from a short Gibbs run
        (``BAYES_CHAINS`` chains started at the MAP, ``BAYES_BURN_IN`` sweeps
        dropped, ``BAYES_SAMPLES`` sets kept).

    Returns
    -------
    list of (rows, cols)
    """
    sweeper = Sweeper(model, tables)
    start_rngs = [np.random.default_rng(child_seed(seed, 2)) for seed in seeds]
    w0 = initial_column_labels(sweeper, n_init, start_rngs)
    z, w, _, _ = alternate(sweeper, w0, incremental=incremental)
    best, _ = best_of_starts(sweeper, z, w, base_measure=False)
    out = []
    for b, seed in enumerate(seeds):
        rows, cols = z[b, best[b]], w[b, best[b]]
        if criterion == "bayes":
            rows, cols = _short_bayes(model, tables[b], rows, cols, seed)
        out.append((rows, cols))
    return out


def _short_bayes(model, X, map_rows, map_cols, seed):
    """The Bayes labels for ``l_item`` from a short Gibbs run started at the X-only MAP."""
    from lbm_bench.inference.bayes import bayes_labels
    from lbm_bench.inference.gibbs import gibbs_labels

    samples = gibbs_labels(model, X, n_samples=BAYES_SAMPLES, n_chains=BAYES_CHAINS,
                           burn_in=BAYES_BURN_IN, init=[(map_rows, map_cols)],
                           rng=np.random.default_rng(child_seed(seed, 3)))
    return bayes_labels(samples.rows, samples.cols, starts=[(map_rows, map_cols)],
                        n_row_clusters=model.n_row_clusters, n_col_clusters=model.n_col_clusters)


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
    n_tables: int | str = "auto",
    tolerance: float | None = None,
    n_init: int = 10,
    max_steps: int = 40,
    criterion: str = "bayes",
    method: str = "secant",
    max_tables: int = AUTO_MAX_TABLES,
    se_fraction: float = AUTO_SE_FRACTION,
    jobs: int = 1,
    design: ModelDesign | None = None,
    callback: Callable[[float, float], Any] | None = None,
    rng: np.random.Generator | int | None = None,
    **model_options: Any,
) -> CalibrationResult:
    """Find the scale at which an X-only classifier's mean apparent error meets a target.

    Parameters
    ----------
    kind : {"gaussian", "poisson", "bernoulli"}
    n_rows, n_cols : int
        Table shape.
    n_row_clusters, n_col_clusters : int
        Cluster numbers.
    target_risk : float
        Target conditional risk, in (0, 1).
    n_tables : int or "auto", default="auto"
        Tables per evaluated scale. ``"auto"``: sequential, from 10 tables
        while the mean error is clearly off target up to the number that makes
        its standard error at most ``se_fraction * tolerance`` (at most
        ``max_tables``). An integer fixes it (the paper: 200).
    tolerance : float, optional
        Stop when ``|mean error - target| <= tolerance``. Default:
        ``min(0.005, target_risk / 10)``.
    n_init : int, default=10
        Random starts of the MAP.
    max_steps : int, default=40
        Maximum number of evaluations (a scale re-evaluated on more tables counts).
    criterion : {"bayes", "map"}, default="bayes"
        The classifier whose risk is calibrated: the Bayes rule for ``l_item``
        (the floor) from a short Gibbs run started at the X-only MAP, or the MAP itself
        (``BAYES_SAMPLES`` label sets; see :func:`lbm_bench.inference.bayes.bayes_labels`).
    method : {"secant", "bisection"}, default="secant"
        Root finding (see the module documentation). ``"bisection"`` is the
        paper's dichotomy, from scale 1, on ``n_tables`` tables (200 when "auto").
    max_tables, se_fraction :
        Bounds of the sequential number of tables (``n_tables="auto"``).
    jobs : int, default=1
        Worker processes over which the tables of an evaluation are spread
        (joblib, loky backend). The result does not depend on it.
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
        With the design in its ``design`` attribute; its ``history`` holds every
        evaluation ``(scale, mean error, error sd, n_tables)``.

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
    auto = _check_n_tables(n_tables)
    max_tables = check_count("max_tables", max_tables)
    se_fraction = check_positive_float("se_fraction", se_fraction)
    max_steps = check_count("max_steps", max_steps, minimum=2)
    criterion = check_criterion(criterion)
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(map(repr, METHODS))}, got {method!r}")
    jobs = check_count("jobs", jobs)
    if design is None:
        design = random_design(kind, g, m, rng=rng, **model_options)
    elif design.kind != kind or design.block_shape != (g, m):
        raise ValueError(f"design is a {design.kind} {design.block_shape} design, not {kind} {(g, m)}")
    _check_target(target, design, n_rows, n_cols)
    if auto and method == "bisection":
        n_tables, auto = 200, False
    capacity = max_tables if auto else n_tables
    crn = CommonRandomNumbers(design, n_rows, n_cols, capacity, np.random.SeedSequence(rng.integers(2**63)),
                              criterion=criterion, jobs=jobs)
    if method == "bisection":
        return _dichotomy(crn, target, tolerance, n_init, max_steps, callback)
    search = _Secant(crn, target, tolerance, n_init, max_steps, callback, auto, se_fraction)
    return search.run()


def _check_n_tables(n_tables: Any) -> bool:
    """True for "auto"; ValueError unless a positive integer."""
    if isinstance(n_tables, str):
        if n_tables != "auto":
            raise ValueError(f"n_tables must be a positive integer or 'auto', got {n_tables!r}")
        return True
    check_count("n_tables", n_tables)
    return False


def first_tables(n_rows: int, n_cols: int) -> int:
    """Tables of the first evaluations with ``n_tables="auto"``: :data:`AUTO_FIRST_TABLES`,
    fewer for tables above :data:`AUTO_FIRST_ENTRIES` entries in all."""
    budget = math.ceil(AUTO_FIRST_ENTRIES / (n_rows * n_cols))
    return max(AUTO_MIN_FIRST_TABLES, min(AUTO_FIRST_TABLES, budget))


def _logit(p: float) -> float:
    return math.log(p) - math.log1p(-p)


class _Secant:
    """Secant / regula falsi on ``logit(mean error)`` against ``log(scale)``."""

    def __init__(self, crn, target, tolerance, n_init, max_steps, callback, auto, se_fraction):
        self.crn, self.target, self.tolerance = crn, target, tolerance
        self.n_init, self.max_steps, self.callback = n_init, max_steps, callback
        self.auto, self.se_fraction = auto, se_fraction
        self.n = min(first_tables(crn.n_rows, crn.n_cols), crn.n_tables) if auto else crn.n_tables
        self.history: list[tuple[float, float, float, int]] = []
        #: risk of guessing: mean errors near it carry no slope information
        self.ceiling = guessing_risk(crn.design.row_proportions, crn.design.col_proportions)

    def evaluate(self, x: float) -> tuple[float, float]:
        scale = math.exp(x)
        errors = self.crn.errors(scale, self.n, self.n_init)
        mean, sd = float(errors.mean()), float(errors.std())
        self.history.append((scale, mean, sd, self.n))
        if self.callback is not None:
            self.callback(scale, mean)
        return mean, sd

    def tables_needed(self, sd: float) -> int:
        wanted = math.ceil((sd / (self.se_fraction * self.tolerance)) ** 2)
        return int(min(self.crn.n_tables, max(self.n, wanted)))

    def informative(self, mean: float) -> bool:
        return 0.0 < mean < 0.95 * self.ceiling

    def run(self) -> CalibrationResult:
        scale, slope = first_guess(self.crn.design, self.crn.n_rows, self.crn.n_cols, self.target)
        x = math.log(scale)
        y_target = _logit(self.target)
        jump = math.log(2.0)  # step when the mean error is 0 or saturated
        while len(self.history) < self.max_steps:
            mean, sd = self.evaluate(x)
            se = sd / math.sqrt(self.n)
            if self.auto and abs(mean - self.target) <= max(self.tolerance, 2 * se):
                needed = self.tables_needed(sd)
                if needed > self.n:  # within reach: re-evaluate on more tables
                    self.n = needed
                    continue
            if abs(mean - self.target) <= self.tolerance:
                return self.result(x)
            points = [(math.log(h[0]), h[1]) for h in self.history if h[3] == self.n]
            low = max((p for p in points if p[1] > self.target), default=None)  # too hard
            high = min((p for p in points if p[1] < self.target), default=None)  # too easy
            if low is not None and high is not None and high[0] - low[0] < 1e-7:
                break
            if self.informative(mean):
                slope = self.slope(slope)
                x_new = x + (y_target - _logit(mean)) / slope
                jump = math.log(2.0)
            else:
                x_new = x + (jump if mean > self.target else -jump)
                jump *= 2
            if low is not None and high is not None:
                if self.informative(low[1]) and self.informative(high[1]):
                    ylo, yhi = _logit(low[1]), _logit(high[1])
                    x_rf = low[0] + (ylo - y_target) * (high[0] - low[0]) / (ylo - yhi)
                    # prefer the secant step when it stays well inside, else regula falsi,
                    # else bisection
                    width = high[0] - low[0]
                    if not low[0] + 0.05 * width < x_new < high[0] - 0.05 * width:
                        x_new = x_rf
                    if not low[0] + 0.05 * width < x_new < high[0] - 0.05 * width:
                        x_new = 0.5 * (low[0] + high[0])
                else:
                    x_new = 0.5 * (low[0] + high[0])
            else:
                x_new = max(x - 3.0, min(x + 3.0, x_new))  # at most a factor e^3 per step
            x = x_new
        points = [h for h in self.history if h[3] == self.n]
        if not any(h[1] > self.target for h in points) or not any(h[1] < self.target for h in points):
            raise ValueError(
                f"could not bracket target_risk={self.target} within {self.max_steps} steps "
                f"(errors seen from {min(h[1] for h in self.history):.4f} to "
                f"{max(h[1] for h in self.history):.4f})"
            )
        best = min(points, key=lambda h: abs(h[1] - self.target))
        return self.result(math.log(best[0]))

    def slope(self, previous: float) -> float:
        """Secant slope of logit(mean) in log(scale) from the two latest informative
        evaluations at distinct scales (the latest at the current number of tables),
        else ``previous``."""
        usable = [h for h in self.history if self.informative(h[1])]
        latest = usable[-1]
        for h in reversed(usable[:-1]):
            dx = math.log(latest[0]) - math.log(h[0])
            if abs(dx) > 1e-9 and h[3] == latest[3]:
                slope = (_logit(latest[1]) - _logit(h[1])) / dx
                if slope < -0.05:
                    return slope
                break
        return previous

    def result(self, x: float) -> CalibrationResult:
        scale = math.exp(x)
        entry = [h for h in self.history if h[0] == scale and h[3] == self.n][-1]
        points = [h for h in self.history if h[3] == self.n]
        harder = [h[0] for h in points if h[1] >= self.target]
        easier = [h[0] for h in points if h[1] <= self.target]
        bracket = (max(harder, default=scale), min(easier, default=scale))
        return _record(self.crn, self.history, scale, bracket, self.target, self.tolerance, "secant", entry)


def _dichotomy(
    crn: CommonRandomNumbers,
    target: float,
    tolerance: float,
    n_init: int,
    max_steps: int,
    callback: Callable[[float, float], Any] | None,
) -> CalibrationResult:
    """The paper's dichotomy on ``crn.n_tables`` tables, from scale 1."""
    history: list[tuple[float, float, float, int]] = []

    def evaluate(scale: float) -> float:
        errors = crn.errors(scale, crn.n_tables, n_init)
        history.append((scale, float(errors.mean()), float(errors.std()), crn.n_tables))
        if callback is not None:
            callback(scale, float(errors.mean()))
        return float(errors.mean())

    low, high = None, None  # low: error above target (too hard); high: error below
    scale = 1.0
    while len(history) < max_steps:
        error = evaluate(scale)
        if abs(error - target) <= tolerance:
            return _record(crn, history, scale, (low or scale, high or scale), target, tolerance, "bisection")
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
    return _record(crn, history, best[0], (low, high), target, tolerance, "bisection")


def _record(crn, history, scale, bracket, target, tolerance, method, entry=None) -> CalibrationResult:
    if entry is None:
        entry = next(h for h in history if h[0] == scale)
    return CalibrationResult(
        scale=float(scale),
        bracket=(float(bracket[0]), float(bracket[1])),
        n_steps=len(history),
        mean_error=entry[1],
        error_std=entry[2],
        target_risk=target,
        tolerance=tolerance,
        n_tables=int(entry[3]),
        history=np.array(history, dtype=np.float64).reshape(-1, 4),
        design=crn.design,
        method=method,
        criterion=crn.criterion,
    )
