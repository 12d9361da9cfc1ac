"""Step 4 of the protocol: rejection sampling of tables whose conditional risk meets a target.

Tables are drawn from the calibrated model. For each candidate, the X-only MAP
labels are computed and label sets are drawn from ``p(z, w | X)`` by Gibbs
sampling. The risk judged is set by ``criterion``:

- ``"bayes"`` (default): the floor, the cross-fitted conditional risk of the
  Bayes labels for ``l_item`` (:func:`~lbm_bench.floor_certificate`, its
  descent started from the marginal modes, the MAP labels and some of the
  sets: X-only inputs);
- ``"map"``: the conditional risk of the MAP labels (the paper's protocol).

A short screening run rejects the candidates that are clearly off target
(sequential rule: ``|risk - target| > tolerance + 3 MCSE``); the full run (2,000
label sets by default) decides for the others. Chains start half at the
generating labels (an exact posterior draw) and half at the MAP labels, so
R-hat compares chains from two different starting points. Whatever the
criterion, the kept table records both risks and the Bayes labels.

**Missing entries.** With ``missing=`` (every family) each candidate's mask is
drawn with it, from its own stream (the ``"mask"`` child of the candidate's seed,
:mod:`lbm_bench._seeds`; random or by block, :mod:`lbm_bench.models.missing`); the
MAP, the Gibbs sampler and the floor see the observed entries only (and, by block,
the mask), so the certified risk is the risk given what a user sees. The kept table's
``data`` holds NaN at its missing entries (a sparse table: explicit NaN values).

**Sparse tables.** With ``density=`` (Bernoulli and Poisson) the design is
sparse (:mod:`lbm_bench.models.design`) and the table's ``data`` is a
``scipy.sparse.csr_array``; the calibration, the MAP, the Gibbs sampler and
the floor run on it without densifying (:mod:`lbm_bench.inference.engine`).
Without ``density``, ``data`` is a dense ndarray as before.
"""

from __future__ import annotations

import os
import time
from typing import Any

import numpy as np

from lbm_bench._docstrings import fill_doc
from lbm_bench._seeds import resolve_seed, stream
from lbm_bench.inference.classifier import map_labels
from lbm_bench.inference.floor import FloorCertificate, floor_certificate
from lbm_bench.inference.gibbs import GibbsSamples, RiskEstimate, gibbs_labels
from lbm_bench.inference.kernel_choice import use_kernel
from lbm_bench.models.data import TableData
from lbm_bench.models.design import ModelDesign
from lbm_bench.models.family import Family
from lbm_bench.models.missing import mask_table
from lbm_bench.models.registry import as_family
from lbm_bench.protocol.calibration import calibrate
from lbm_bench.protocol.from_design import design_request, load_design
from lbm_bench.protocol.memory import check_memory, estimate_request_memory
from lbm_bench.protocol.request import TableRequest, request_from_arguments
from lbm_bench.protocol.settings import GenerationSettings
from lbm_bench.protocol.table import CalibrationResult, RejectionRecord, Table
from lbm_bench.protocol.table_draws import draw_candidate
from lbm_bench.tasks.backends import check_backend, worker_backend
from lbm_bench.tasks.heap import release_free_memory

__all__ = ["RejectionError", "generate_table", "stored_options"]


#: Entries from which every Gibbs run of the rejection step is followed by a full
#: garbage collection (40 ms: negligible against such a table's run, a third of the
#: Gibbs time of a release of small tables).
_COLLECT_ENTRIES = 10**7


class RejectionError(RuntimeError):
    """No candidate table met the target within the allowed number of attempts
    (``max_attempts`` of :class:`~lbm_bench.GenerationSettings`)."""


def _balanced(estimate: RiskEstimate, balance: float | None) -> bool:
    if balance is None:
        return True
    low, high = sorted((estimate.row_loss, estimate.col_loss))
    return high == 0 or low >= balance * high


def _progress_bar(enabled: bool, total: int | None, desc: str):
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, disable=not enabled, leave=False, unit="step")


@fill_doc
def generate_table(
    kind: Family | str | TableRequest | None = None,
    n_rows: int | None = None,
    n_cols: int | None = None,
    n_row_clusters: int | None = None,
    n_col_clusters: int | None = None,
    target_risk: float | None = None,
    *,
    settings: GenerationSettings | None = None,
    calibration: CalibrationResult | None = None,
    design: ModelDesign | str | os.PathLike | None = None,
    max_memory: int | str | None = None,
    jobs: int | None = None,
    backend: str | None = None,
    scheduler: str | None = None,
    kernel: str | None = None,
    progress: bool = False,
    rng: np.random.Generator | int | None = None,
    **options: Any,
) -> Table:
    """Generate a table whose Gibbs-estimated conditional risk meets a target.

    Parameters
    ----------
    {{table_request}}
    target_risk : float
        Target conditional risk ``r_item``, in (0, 1): of the Bayes labels for
        ``l_item`` (the floor; ``criterion="bayes"``, the default) or of the
        X-only MAP labels (``criterion="map"``, the paper's protocol).
        Instead of ``kind`` and the five sizes, a
        :class:`~lbm_bench.TableRequest` may be given alone.
    settings : GenerationSettings, optional
        Generation settings (tolerance, Gibbs run, screening, attempts,
        calibration, MAP starts); the defaults of
        :class:`~lbm_bench.GenerationSettings` when omitted.
    calibration : CalibrationResult, optional
        A calibration to reuse (its design and scale); computed when omitted.
    design : ModelDesign, str or os.PathLike, optional
        Calibrate this design's scale instead of drawing a random design: a design, or the
        path of a design file (:func:`~lbm_bench.fit_design`, docs/design-files.md: tables
        like a user's). It fixes the family, the clusters and the design options; give
        ``target_risk`` and, unless the design has a shape of its own (a design file's source
        table, or effects), ``n_rows`` and ``n_cols``. Another shape keeps the proportions
        and draws row and column effects from the design's. See
        :mod:`lbm_bench.protocol.from_design`.
    max_memory : int or str, optional
        Refuse the request up front (:class:`~lbm_bench.protocol.memory.MemoryLimitError`,
        a ValueError, one line with the estimate and what to change) when its
        estimated peak memory exceeds this many bytes (or a size such as
        ``"8G"``); default: the memory available (the smallest of ``MemAvailable``, the
        control group's limit and ``ulimit -v``:
        :mod:`lbm_bench.protocol.memory_limits`). See :mod:`lbm_bench.protocol.memory`.
    jobs : int, optional
        Worker processes over which the calibration spreads its tables and the Gibbs
        runs of a large table (:func:`~lbm_bench.tasks.large.is_large`) their chains;
        the settings' ``jobs`` when omitted. The table
        does not depend on it (same bytes for any number of workers and either backend).
        The memory guard counts the workers' copies, except those of a Dask cluster at a
        ``scheduler`` address (on the cluster's machines; the estimate says so).
    backend : {"loky", "dask"}, optional
        Where the workers run (:func:`~lbm_bench.tasks.backends.worker_backend`): local
        processes, or a Dask cluster (``scheduler``, or a local cluster of ``jobs``
        workers). Default: the backend the caller configured (loky unless told
        otherwise).
    scheduler : str, optional
        Address of a running Dask scheduler (``backend="dask"`` only).
    {{kernel}}
    progress : bool, default=False
        Show tqdm progress bars.
    rng : None or int
        Seed; the table records it and the same seed reproduces the same bytes.
        A Generator is accepted and a seed drawn from it.
    **options
        Any field of :class:`~lbm_bench.GenerationSettings` (``tolerance=0.02``,
        ``n_samples=500``, ... override ``settings``); with a kind and sizes, also
        ``criterion`` (``"bayes"`` or ``"map"``) and the options of
        :class:`~lbm_bench.protocol.settings.ModelOptions` (options of
        :func:`~lbm_bench.random_design`). Unknown names are refused. Among the
        latter: ``density`` (Bernoulli, Poisson: expected fraction of non-zero
        entries; the table is then sparse), ``effects=True`` (Poisson row and
        column effects for this table's shape) and ``effects_spread``; and, for every
        family, ``missing`` (the fraction of entries missing, or
        ``{"rate": 0.3, "mechanism": "block"}``), ``missing_mechanism`` and
        ``missing_spread`` (:mod:`lbm_bench.models.missing`).

    Returns
    -------
    Table
        ``data`` is a ``scipy.sparse.csr_array`` when ``density`` is given,
        an ndarray otherwise; with missing entries, a float64 table with NaN
        there (explicit NaN values of a sparse table).

    Raises
    ------
    RejectionError
        When no candidate meets the target in ``max_attempts`` attempts.

    Examples
    --------
    >>> table = generate_table("bernoulli", 40, 30, 2, 2, 0.1, tolerance=0.03, n_samples=200, rng=3)
    >>> abs(table.bayes_risk.risk - 0.1) <= 0.03, table.criterion
    (True, 'bayes')
    >>> table.bayes_risk.risk <= table.risk.risk + 3 * table.bayes_risk.mcse  # the floor
    True
    """
    seed = resolve_seed(rng)
    sizes = (n_rows, n_cols, n_row_clusters, n_col_clusters, target_risk)
    if jobs is not None:
        options = {**options, "jobs": jobs}
    root = np.random.SeedSequence(seed)
    if design is not None:
        if calibration is not None:
            raise TypeError("generate_table() takes a design or a calibration, not both")
        request, settings, design = _design_arguments(design, kind, sizes, settings, options)
        effects = stream(stream(root, "generate_table", "calibration"), "calibration", "effects")
        design = design.at_shape(*request.shape, rng=np.random.default_rng(effects))
    else:
        request, settings = request_from_arguments(kind, sizes, settings, options,
                                                   caller="generate_table")
    if backend is not None or scheduler is not None:
        check_backend("loky" if backend is None else backend, settings.jobs, scheduler)
    estimate = estimate_request_memory(request, settings, calibrated=calibration is not None,
                                       remote_workers=backend == "dask" and scheduler is not None,
                                       design=design)
    check_memory(estimate, max_memory)
    with use_kernel(kernel):
        if backend is None:
            return _generate(request, settings, calibration, design, progress, root, seed)
        with worker_backend(backend, settings.jobs, scheduler):
            return _generate(request, settings, calibration, design, progress, root, seed)


def _generate(request: TableRequest, settings: GenerationSettings,
              calibration: CalibrationResult | None, design: ModelDesign | None, progress: bool,
              root: np.random.SeedSequence, seed: int) -> Table:
    """The calibration and the rejection step of a checked request (:func:`generate_table`)."""
    timings = {"calibration": 0.0, "rejection": 0.0, "gibbs": 0.0, "floor": 0.0}
    start = time.perf_counter()
    if calibration is None:
        with _progress_bar(progress, None, "calibration") as bar:
            calibration = calibrate(
                request, settings, design=design,
                rng=np.random.default_rng(stream(root, "generate_table", "calibration")),
                callback=lambda scale, error: (
                    bar.update(), bar.set_postfix(scale=f"{scale:.4g}", error=f"{error:.4f}")
                ),
            )
    elif calibration.design is None:
        raise ValueError("calibration must carry its design (as returned by calibrate_scale)")
    # what the calibration's tables used; cycles collected for large tables only (a full
    # collection costs ~70 ms in a building process: 7 s of the paper release's 108 tables)
    release_free_memory(collect=request.shape[0] * request.shape[1] >= _COLLECT_ENTRIES)
    timings["calibration"] = time.perf_counter() - start
    sampler = _RejectionSampler(calibration, request, settings)
    s = settings
    start = time.perf_counter()
    with _progress_bar(progress, s.max_attempts, "rejection sampling") as bar:
        for attempt in range(s.max_attempts):
            bar.update()
            kept = sampler.try_candidate(stream(root, "generate_table", "candidate", attempt))
            if kept is not None:
                break
            bar.set_postfix(last_risk=f"{sampler.risks[-1]:.4f}")
        else:
            raise RejectionError(sampler.failure_message(s.max_attempts))
    timings["rejection"] = time.perf_counter(
    ) - start - sampler.gibbs_seconds - sampler.floor_seconds
    timings["gibbs"] = sampler.gibbs_seconds
    timings["floor"] = sampler.floor_seconds
    X, z, w, map_result, samples, estimate, floor = kept
    if isinstance(X, TableData):  # a table with missing entries: NaN there
        X = X.with_nan()
    rejection = RejectionRecord(
        attempts=len(sampler.risks), screened_out=sampler.screened_out,
        acceptance_rate=1.0 / len(sampler.risks), tolerance=s.tolerance,
        candidate_risks=np.array(sampler.risks), balance=s.balance,
    )
    return Table(data=X, model=calibration.design.model(calibration.scale),
                 design=calibration.design, scale=calibration.scale, truth_rows=z, truth_cols=w,
                 map_rows=map_result.rows, map_cols=map_result.cols, gibbs=samples, risk=estimate,
                 target_risk=request.target_risk, seed=seed, calibration=calibration,
                 rejection=rejection, options=stored_options(request, settings), timings=timings,
                 bayes_rows=floor.rows, bayes_cols=floor.cols, bayes_risk=floor.risk,
                 criterion=request.criterion,
                 )


def _design_arguments(design, kind, sizes, settings,
                      options) -> tuple[TableRequest, GenerationSettings, ModelDesign]:
    """The request, settings and design of ``generate_table(design=...)`` (with a request made
    by :func:`~lbm_bench.protocol.from_design.design_request`: the calibration checks they
    agree)."""
    if isinstance(kind, TableRequest):
        request, settings = request_from_arguments(kind, sizes, settings, options,
                                                   caller="generate_table")
        return request, settings, load_design(design)[0]
    n_rows, n_cols, g, m, target = sizes
    if target is None:
        raise TypeError("generate_table(design=...) needs target_risk")
    options = dict(options)
    given = {
        name: options.pop(name)
        for name in list(options) if name in GenerationSettings.names()
    }
    criterion = options.pop("criterion", "bayes")
    family = None if kind is None else as_family(kind)  # generate_table's kind=, a name or a family
    request, design = design_request(design, target, n_rows, n_cols, kind=family, clusters=(g, m),
                                     criterion=criterion, options=options)
    request, settings = request_from_arguments(request, (None,) * 5, settings, given,
                                               caller="generate_table")
    return request, settings, design


def stored_options(request: TableRequest, settings: GenerationSettings) -> dict[str, Any]:
    """The options record a table file stores (``@options_json``): the settings record's
    own serialisation and the request's model options (those that differ from their
    defaults). :attr:`~lbm_bench.Table.settings` and :attr:`~lbm_bench.Table.request`
    read them back."""
    return {**settings.to_record(), "model_options": request.model_options.design_options()}


class _RejectionSampler:
    """Draws and judges candidate tables; keeps the record of the attempts."""

    def __init__(self, calibration: CalibrationResult, request: TableRequest,
                 settings: GenerationSettings):
        self.design = calibration.design
        self.model = calibration.design.model(calibration.scale)
        self.missing_probs = calibration.design.missing_probs(calibration.scale)
        self.n_rows, self.n_cols = request.shape
        self.target, self.criterion = request.target_risk, request.criterion
        self.settings = settings
        self.gibbs_options = settings.gibbs_options()
        self.risks: list[float] = []
        self.screened_out = 0
        self.gibbs_seconds = 0.0
        self.floor_seconds = 0.0

    def _gibbs(self, X, starts, n_samples, rng) -> GibbsSamples:
        start = time.perf_counter()
        n_chains = min(self.gibbs_options["n_chains"], n_samples)
        options = dict(self.gibbs_options, n_chains=n_chains)
        samples = gibbs_labels(self.model, X, n_samples=n_samples, init=starts, rng=rng, **options)
        # the sweeps' buffers, before the floor's; cycles collected for large tables only
        release_free_memory(collect=self.n_rows * self.n_cols >= _COLLECT_ENTRIES)
        self.gibbs_seconds += time.perf_counter() - start
        return samples

    def _floor(self, samples: GibbsSamples, map_start) -> FloorCertificate:
        """The Bayes labels and their cross-fitted risk (X-only starts: the MAP, no truth)."""
        start = time.perf_counter()
        g, m = self.model.block_shape
        floor = floor_certificate(samples, starts=[map_start], n_row_clusters=g, n_col_clusters=m,
                                  jobs=self.settings.jobs)
        self.floor_seconds += time.perf_counter() - start
        return floor

    def _judged(self, samples: GibbsSamples,
                map_start) -> tuple[RiskEstimate, FloorCertificate | None]:
        """The risk the criterion applies to, and the floor when it was computed."""
        if self.criterion == "bayes":
            floor = self._floor(samples, map_start)
            return floor.risk, floor
        return samples.risk(*map_start), None

    def _plausible(self, estimate: RiskEstimate) -> bool:
        margin = self.settings.tolerance + 3 * estimate.mcse
        return abs(estimate.risk - self.target) <= margin

    def try_candidate(self, seed):
        s = self.settings
        # labels, noise and the MAP's starts from the candidate's stream (its Gibbs runs after
        # them), the mask from its own child
        (z, w), noise, mask, rng = draw_candidate(self.model, self.n_rows, self.n_cols, seed,
                                                  "candidate", self.design.missing)
        X = self.model.table_from_noise(noise, z, w)
        del noise  # before the MAP's and the sweeps' buffers
        if mask is not None:  # X-only inference sees what is left
            X = mask_table(X, mask, self.missing_probs, z, w, copy=False)
        result = map_labels(self.model, X, n_init=s.n_init, jobs=s.jobs, rng=rng)
        map_start = (result.rows, result.cols)
        starts = [(z, w), map_start]  # chain starts only: the truth never enters a classifier
        if s.screen_samples:
            screen, _ = self._judged(self._gibbs(X, starts, s.screen_samples, rng), map_start)
            if not self._plausible(screen):
                self.risks.append(screen.risk)
                self.screened_out += 1
                return None
        samples = self._gibbs(X, starts, s.n_samples, rng)
        judged, floor = self._judged(samples, map_start)
        self.risks.append(judged.risk)
        if abs(judged.risk - self.target) <= s.tolerance and _balanced(judged, s.balance):
            if floor is None:
                floor = self._floor(samples, map_start)
            return X, z, w, result, samples, samples.risk(*map_start), floor
        return None

    def failure_message(self, max_attempts: int) -> str:
        risks = np.array(self.risks)
        return (
            f"no table within {self.settings.tolerance} of target risk {self.target} after "
            f"{max_attempts} "
            f"attempts (risks seen: min {risks.min():.4f}, median {np.median(risks):.4f}, "
            f"max {risks.max():.4f}); raise the tolerance or max_attempts, or use larger tables"
        )
