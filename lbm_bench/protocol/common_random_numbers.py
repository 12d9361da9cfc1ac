"""The calibration's tables as common random numbers, and their risks at a scale.

**Common random numbers.** The tables share, at every scale, the same
generating labels, the same underlying noise (standard normals or uniforms,
turned into entries by :meth:`~lbm_bench.models.base.LatentBlockModel.table_from_noise`),
the same mask of missing entries (its uniforms: the same mask at every scale when
entries go missing at random, thresholded by the scale's block probabilities
when they go missing by block; :class:`~lbm_bench.models.missing.MaskNoise`),
the same random starts of the MAP and the same uniforms of the short run (both on the
observed entries only). The mean risk is then a smooth, nearly monotone function of the
scale; a table's risk at a scale, once computed, is kept: more tables cost only the new ones.
What a table draws from its seed is kept across scales too, within :data:`NOISE_CACHE_BYTES`:
by the parent, or with ``jobs`` above 1 by each worker for the tables it evaluates (its share
of the budget; what is evicted is drawn again from the same seed, so nothing depends on it).

A :class:`CommonRandomNumbers` measures its tables' statistic at a scale (the MAP's apparent
error, or the floor on a short Gibbs run: :mod:`lbm_bench.protocol.table_risks`) in batches
of about :data:`BATCH_BYTES`, or over ``jobs`` workers of the task service, each keeping what
it draws across scales for the tables it evaluates.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

import numpy as np

from lbm_bench._seeds import stream
from lbm_bench._validation import check_count
from lbm_bench.models.design import ModelDesign
from lbm_bench.models.missing import MaskNoise
from lbm_bench.models.observed import EntryFamily
from lbm_bench.protocol.request import check_criterion
from lbm_bench.protocol.table_draws import draw_table, keep_draws, worker_draws
from lbm_bench.protocol.table_risks import BATCH_STATISTICS
from lbm_bench.tasks.heap import release_free_memory
from lbm_bench.tasks.pool import run_tasks
from lbm_bench.tasks.shipping import shipped

__all__ = ["BATCH_BYTES", "FLOOR_BATCH_BYTES", "NOISE_CACHE_BYTES", "CommonRandomNumbers"]


#: Bytes of noise kept in memory across evaluations; beyond, it is re-drawn from seeds.
NOISE_CACHE_BYTES = 512 * 2**20


#: Entries of a table from which a calibration worker gives the heap's free pages back after
#: each batch (``malloc_trim``: milliseconds, against seconds of such a table's batch).
_TRIM_ENTRIES = 10**7


#: Bytes of sufficient statistics (both layouts) per batch of tables run through the
#: MAP together. Batching pays for small tables (fewer, larger array operations:
#: 1.3x on 50x50) and loses for large ones once a batch falls out of the caches
#: (0.7x for 4 tables of 1000x1000), so batches are kept about L2-sized; tables
#: larger than this run one by one. Measured in docs/performance.md.
BATCH_BYTES = 2 * 2**20


#: The same for the short runs of ``criterion="bayes"`` when the tables' entries are integers
#: (their block sums exact: :func:`~lbm_bench.protocol.short_run.exact_sums`): tables that run
#: together share the Python work of every half-sweep (about a fifth of the short runs'
#: CPU seconds on Poisson 500x500 tables with 10x10 blocks, none on Bernoulli 2000x1000 with
#: 3x3: docs/performance.md), so they are batched up to this much, which the memory
#: estimate's working set of 8 tables covers. Other tables run one by one whatever the batch.
FLOOR_BATCH_BYTES = 32 * 2**20


class CommonRandomNumbers:
    """Labels, noise and classifier starts of up to ``n_tables`` tables, identical at every scale.

    Table ``t`` has its own seed, child ``t`` of ``seed``; its children 0, 1, 2,
    3 and 4 draw its labels, its noise, its MAP's random starts, the uniforms of
    its short Gibbs run (the floor, ``criterion="bayes"``) and its mask of missing
    entries (when the design has some). Everything about table ``t`` at a scale is
    a function of that seed and the scale: its error and its floor do not depend
    on which other tables are evaluated with it, in which batch or on which worker.

    Parameters
    ----------
    design : ModelDesign
    n_rows, n_cols : int
    n_tables : int
        Largest number of tables (the first ``n`` are used when fewer are asked).
    seed : numpy.random.SeedSequence
        Root of the per-table streams.
    batch_bytes : int, optional
        Memory for the statistics of the tables run through the MAP (and the short
        runs) together (1 runs them one by one: the benchmark's baseline).
    floor_batch_bytes : int, optional
        The same for the short runs of tables of integers (:data:`FLOOR_BATCH_BYTES`);
        the floors do not depend on it.
    incremental : bool, default=True
        Update the MAP's block sums for the labels that changed (default) or
        recompute them at every step (the benchmark's baseline).
    criterion : {"map", "bayes"}, default="map"
        The risk calibrated (:func:`calibrate_scale`), what :meth:`risks` measures:
        the MAP's apparent errors (``"map"``) or the short-run floors (``"bayes"``).
    jobs : int, default=1
        Workers (:mod:`lbm_bench.tasks`) over which the tables of one evaluation are
        spread; the errors and floors do not depend on it.
    """

    def __init__(
        self,
        design: ModelDesign,
        n_rows: int,
        n_cols: int,
        n_tables: int,
        seed: np.random.SeedSequence,
        batch_bytes: int = BATCH_BYTES,
        incremental: bool = True,
        criterion: str = "map",
        jobs: int = 1,
        floor_batch_bytes: int = FLOOR_BATCH_BYTES,
    ) -> None:
        self.design = design
        self.batch_bytes = batch_bytes
        self.floor_batch_bytes = floor_batch_bytes
        self.incremental = incremental
        self.criterion = check_criterion(criterion)
        self.jobs = check_count("jobs", jobs)
        self.n_rows, self.n_cols, self.n_tables = n_rows, n_cols, n_tables
        self.seed = seed
        self.table_seeds = [stream(seed, "calibration tables", "calibration table", t)
                            for t in range(n_tables)]
        #: Bytes of one table's statistics in the MAP (both layouts), the unit of ``batch_bytes``.
        self.bytes_per_table = 2 * _channels(design) * n_rows * n_cols * 8
        self._labels: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self._draws: dict[int, tuple] = {}
        #: noise bytes of one table per entry: float64, plus the mask (random) or its uniforms
        #: (block)
        per_entry = 8 + (0
                         if design.missing is None else 1 if not design.missing.informative else 8)
        self._cache_tables = max(0, NOISE_CACHE_BYTES // (n_rows * n_cols * per_entry))
        self._known: dict[tuple[str, float, int], list[float]] = {}
        #: Names these tables in the workers' caches (:func:`_worker`): an identity, not randomness.
        self.token = uuid.uuid4().hex

    @property
    def labels(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """Generating labels ``(z, w)`` of every table."""
        return [self.table_labels(t) for t in range(self.n_tables)]

    def table_labels(self, t: int) -> tuple[np.ndarray, np.ndarray]:
        """Generating labels ``(z, w)`` of table ``t``."""
        return self._labels[t] if t in self._labels else self.table_draws(t)[0]

    def noise(self, t: int) -> np.ndarray:
        """Noise of table ``t``, ndarray of shape (n_rows, n_cols)."""
        return self.table_draws(t)[1]

    def mask_noise(self, t: int) -> MaskNoise | None:
        """The mask's randomness of table ``t`` (None for complete tables)."""
        return self.table_draws(t)[2]

    def table_draws(self, t: int) -> tuple:
        """Table ``t``'s labels, noise and mask noise (:func:`draw_table`, from its seed):
        its labels kept, the rest kept for the first tables (those whose noise fits in
        :data:`NOISE_CACHE_BYTES`), drawn again for the others."""
        if t in self._draws:
            return self._draws[t]
        draws = draw_table(self.design, self.n_rows, self.n_cols, self.table_seeds[t])
        self._labels.setdefault(t, draws[0])
        if t < self._cache_tables:
            self._draws[t] = draws
        return draws

    def batches(self, tables: Sequence[int] | None = None,
                statistic: str = "error") -> list[list[int]]:
        """Lists of table indices run through the MAP (or the short runs, ``"floor"``) together."""
        tables = list(range(self.n_tables)) if tables is None else list(tables)
        size = max(
            1,
            min(
                len(tables),
                _batch_budget(statistic, self.design, self.batch_bytes, self.floor_batch_bytes) //
                self.bytes_per_table))
        return [tables[s:s + size] for s in range(0, len(tables), size)]

    def apparent_errors(self, scale: float, n_init: int,
                        tables: Sequence[int] | None = None) -> np.ndarray:
        """Apparent error ``l_item((z0, w0), h(X))`` of the X-only MAP on tables
        ``tables`` (default: all) at ``scale``: ndarray (len(tables),). Not cached."""
        return self._statistic("error", scale, n_init, tables)

    def floors(self, scale: float, n_init: int, tables: Sequence[int] | None = None) -> np.ndarray:
        """Floor :func:`short_run_floors` of tables ``tables`` (default: all) at ``scale``:
        ndarray (len(tables),). Not cached."""
        return self._statistic("floor", scale, n_init, tables)

    def errors(self, scale: float, n: int, n_init: int) -> np.ndarray:
        """Errors of the first ``n`` tables at ``scale``, computing only those not seen
        at that scale yet (the errors of a table at a scale never change)."""
        return self._first("error", scale, n, n_init)

    def risks(self, scale: float, n: int, n_init: int) -> np.ndarray:
        """What the search measures on the first ``n`` tables at ``scale`` (cached): the
        criterion's risk, estimated by the MAP's apparent errors (``"map"``) or the
        short-run floors (``"bayes"``)."""
        return self._first("floor" if self.criterion == "bayes" else "error", scale, n, n_init)

    def _first(self, statistic: str, scale: float, n: int, n_init: int) -> np.ndarray:
        if not 1 <= n <= self.n_tables:
            raise ValueError(f"n must be in [1, {self.n_tables}], got {n}")
        known = self._known.setdefault((statistic, float(scale), n_init), [])
        if len(known) < n:
            known.extend(self._statistic(statistic, scale, n_init, range(len(known), n)).tolist())
        return np.array(known[:n])

    def _statistic(self, statistic: str, scale: float, n_init: int,
                   tables: Sequence[int] | None) -> np.ndarray:
        tables = list(range(self.n_tables)) if tables is None else list(tables)
        if self.jobs > 1 and len(tables) > 1:
            return self._parallel(statistic, scale, n_init, tables)
        model = self.design.model(scale)
        probs = self.design.missing_probs(scale)
        values = []
        for batch in self.batches(tables, statistic):
            draws = [self.table_draws(t) for t in batch]
            values.append(BATCH_STATISTICS[statistic](
                model, [d[0] for d in draws], [d[1] for d in draws],
                [self.table_seeds[t] for t in batch], n_init, self.incremental,
                missing=None if probs is None else ([d[2] for d in draws], probs),
            ))
            del draws
        return np.concatenate(values) if values else np.empty(0)

    def _parallel(self, statistic: str, scale: float, n_init: int, tables: list[int]) -> np.ndarray:
        chunks = [
            list(c) for c in np.array_split(np.array(tables), min(self.jobs, len(tables))) if c.size
        ]
        # a design of large tables (row and column effects) crosses to a Dask cluster once
        args = (statistic, shipped(self.design), self.n_rows, self.n_cols, scale, n_init,
                self.incremental,
                _batch_budget(statistic, self.design, self.batch_bytes, self.floor_batch_bytes))
        # the workers keep what they draw across scales, within the parent's noise budget in all
        # (the parent's own cache stays empty while the workers evaluate)
        cache = (self.token, NOISE_CACHE_BYTES // self.jobs)
        # No backend named here: loky by default, or the one the caller configured
        # (``lbm-bench generate --backend dask``, see lbm_bench.tasks.backends); each task on
        # one BLAS thread, so that workers do not oversubscribe
        calls = [(*args, [self.table_seeds[t] for t in chunk], cache) for chunk in chunks]
        parts = run_tasks(_worker, calls, self.jobs, pin=True)
        return np.concatenate(parts)


def _batch_budget(statistic: str, design: ModelDesign, batch_bytes: int,
                  floor_batch_bytes: int) -> int:
    """Bytes of statistics per batch of tables: ``floor_batch_bytes`` for the short runs of
    tables of integers (see :data:`FLOOR_BATCH_BYTES`), else ``batch_bytes``."""
    integers = np.issubdtype(design.model(1.0).table_dtype, np.integer)
    return floor_batch_bytes if statistic == "floor" and integers else batch_bytes


def _channels(design: ModelDesign) -> int:
    """Statistic channels of the design's tables in the engine (the missing ones included)."""
    return EntryFamily(design.model(1.0), design.missing is not None).n_stats


def _worker(statistic, design, n_rows, n_cols, scale, n_init, incremental, batch_bytes, seeds,
            cache=None):
    """A statistic of the tables of ``seeds`` in a worker process (a task of
    :func:`~lbm_bench.tasks.pool.run_tasks`, on one BLAS thread). Labels and noise come from
    the seeds; with ``cache`` (``(token, bytes)``), those of the calibration ``token`` are kept
    across its scales."""
    model = design.model(scale)
    per_batch = max(1, batch_bytes // (2 * _channels(design) * n_rows * n_cols * 8))
    out = []
    for s in range(0, len(seeds), per_batch):
        batch = seeds[s:s + per_batch]
        if cache is None:
            draws = [draw_table(design, n_rows, n_cols, seed) for seed in batch]
        else:
            draws = [worker_draws(design, n_rows, n_cols, seed, cache[0]) for seed in batch]
        labels = [d[0] for d in draws]
        noise = [d[1] for d in draws]
        missing = None
        if design.missing is not None:
            missing = ([d[2] for d in draws], design.missing_probs(scale))
        out.append(BATCH_STATISTICS[statistic](model, labels, noise, batch, n_init, incremental,
                                                missing=missing))
        if cache is not None:
            for seed, d in zip(batch, draws, strict=True):
                keep_draws(cache[0], seed, d, cache[1])
        del draws, labels, noise, missing
        if n_rows * n_cols >= _TRIM_ENTRIES:  # the batch's temporaries, before the next batch's
            release_free_memory(collect=False)
    return np.concatenate(out)
