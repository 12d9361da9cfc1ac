"""Memory guard: estimate the peak memory of a generation request before allocating.

A request that cannot fit is refused up front with one line that gives the
estimate, the memory available (the smallest of ``MemAvailable``, the control group's
limit and ``ulimit -v``: :mod:`lbm_bench.protocol.memory_limits`, named in the line) and
what to change, instead of dying later with
a ``MemoryError`` traceback (or being killed by the kernel) after minutes of
work, possibly with a partial file.

The estimate is deliberately simple and conservative; it follows what
:func:`~lbm_bench.protocol.generate.generate_table` holds at its peak:

dense tables (``N = n_rows * n_cols`` entries, ``p`` sufficient statistics:
2 for Gaussian, 1 otherwise)
    the noise (float64) and the table (its dtype), the statistics in both
    layouts (``2 p N`` float64), one entrywise float64 temporary, and during
    calibration the noise cache (up to 512 MiB) and, per worker, a working set
    of ``(24 + 16 p) (3 + min(n_tables, 8))`` bytes per entry (measured);
sparse tables (``nnz = density * N`` expected non-zeros)
    ``BYTES_PER_NONZERO`` bytes per non-zero, per process that holds a table: its draw
    (the bands' positions, 8 bytes a candidate, about 2-3 candidates a stored entry, and
    the CSR table; a large noise keeps no uniforms), its MAP's statistics (the table in
    float64 CSR and its transpose) and the chains' sums, whichever is larger, with what
    glibc keeps of the temporaries; and the per-row and per-column block sums of the
    chains (``n_chains (n_rows m + n_cols g) p`` float64); during the calibration the
    noise its workers keep across scales (:data:`NOISE_CACHE_BYTES` in all);
missing entries (``missing`` rate ``q``)
    one or two more statistic channels in ``p`` (the missing entries' exposures;
    and the mask's indicator by block), the mask (one byte per entry; eight for the
    block mechanism's uniforms, kept across scales like the noise), and for a sparse
    table ``BYTES_PER_NONZERO`` bytes per expected missing entry (``q N``: the missing
    set is held like the non-zeros);
chains as tasks (``jobs`` above 1, a large table: :func:`~lbm_bench.tasks.large.is_large`)
    each of the ``min(jobs, n_chains) - 1`` workers beyond the main process builds its
    own statistics of the memory-mapped table (dense: both layouts, ``2 p N`` float64;
    sparse: ``BYTES_PER_NONZERO`` bytes per non-zero and its chains' block sums). The
    calibration's workers, which never run at the same time, hold at least as much
    (dense: their working set per worker; sparse: the same copy per worker beyond the
    first), so the part ``"calibration"`` counts the workers' copies of both, and a
    refusal where it weighs a quarter of the estimate advises fewer workers;
workers on a Dask cluster (``backend="dask"`` with a ``scheduler`` address)
    the workers' copies live on the cluster's machines, whose memory this process can
    neither see nor use: the guard counts this process only (the parts above with no
    worker's copy: ``"calibration"`` is 0 when ``jobs`` is above 1) and says so in its
    estimate and refusals ("not counted: ..."), so that a request is never refused
    locally for memory the cluster holds (Dask's own worker memory limits apply there). A
    local Dask cluster (no address) runs on this machine: its workers count as loky's.
    Whenever workers are counted, the estimate says how many copies it holds;
both
    the Gibbs label sets, ``n_samples (n_rows + n_cols)`` labels in the
    smallest unsigned dtype, twice (the sampler's array, and the floor's
    working set: its sparse indicators of the labels that differ from the
    modal ones and the temporaries of building them a chain at a time), and
    ``BASELINE_BYTES`` for the interpreter and libraries.

``tests/protocol/test_memory.py`` checks the estimate against the peak RSS of
real runs (it must not be below it); ``docs/performance.md`` lists the large
sparse runs measured with ``/usr/bin/time -v``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from lbm_bench._validation import check_count
from lbm_bench.inference.code_sums import words_per_entry
from lbm_bench.models.design import check_family_options
from lbm_bench.models.family import Family
from lbm_bench.models.registry import as_family
from lbm_bench.protocol.common_random_numbers import NOISE_CACHE_BYTES
from lbm_bench.protocol.memory_limits import memory_limit
from lbm_bench.protocol.scale_search import AUTO_MOST_TABLES
from lbm_bench.protocol.settings import GenerationSettings
from lbm_bench.tasks.backends import worker_count

__all__ = [
    "BASELINE_BYTES",
    "BYTES_PER_NONZERO",
    "WEIGHTED_BYTES_PER_NONZERO",
    "MemoryEstimate",
    "MemoryLimitError",
    "available_memory",
    "check_memory",
    "estimate_generation_memory",
    "estimate_request_memory",
    "format_bytes",
    "parse_memory_size",
]

#: Interpreter, numpy, scipy, h5py and the package, measured at about 110 MiB RSS.
BASELINE_BYTES = 160 * 2**20
#: Bytes per expected non-zero of a sparse table, per process holding one (see the module
#: docstring). Measured: the largest process's peak RSS less the baseline and the workers'
#: kept noise, per non-zero, in the phase trace of ``generate`` at ``--jobs 2``
#: (scripts/benchmarks/bench_million_phases.py): 56 for Bernoulli 100000x10000 at 1%
#: (docs/performance.md, issue 33's million rows); with a margin. (It was 144 while a
#: table's draw kept its candidates and the MAP's first scores took whole-table
#: temporaries: 101 measured for the same table.)
BYTES_PER_NONZERO = 64
#: The same for a table with row and column effects (Poisson: its int64 counts, and its
#: bands thinned over bins of rows, bin by bin). Measured the same way (docs/performance.md,
#: "Poisson with effects"): Poisson with effects 100000x10000 at 1%, ``--jobs 2``, 1.0e7
#: stored entries; its largest process per stored entry is a MAP worker, 74 bytes less the
#: baseline (the calibration's workers 47 less the baseline and kept noise; the parent 70
#: less the baseline and the label sets); 84 with the same margin as above (a seventh). (It
#: was 144 while each band held its bins' candidates, thinning uniforms and per-entry
#: probabilities at once: 134 measured for 50000x5000 at 2%.)
WEIGHTED_BYTES_PER_NONZERO = 84
#: Most tables ``n_tables="auto"`` evaluates at one scale (16;
#: :mod:`lbm_bench.protocol.scale_search`).
_AUTO_MAX_TABLES = AUTO_MOST_TABLES
_UNITS = {"": 1, "b": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}

#: How a refusal names each setting: the keyword arguments of :func:`~lbm_bench.generate_table`
#: (the command line writes them as its flags).
_NAMES = {
    "density": "density=", "shape": "n_rows and n_cols", "samples": "n_samples=", "jobs": "jobs=",
    "max": "max_memory="
}


class MemoryLimitError(ValueError):
    """A request whose estimated peak memory exceeds the memory available (one-line message).

    Attributes
    ----------
    estimate : MemoryEstimate
    limit : int
        The bytes allowed.
    given : bool
        Whether the limit was given (``max_memory``), else the memory available.
    """

    def __init__(self, estimate: MemoryEstimate, limit: int, given: bool,
                 source: str | None = None) -> None:
        self.estimate, self.limit, self.given = estimate, limit, given
        if source is None and not given:  # the limit that binds now (memory_limits)
            source = getattr(memory_limit(), "source", "MemAvailable")
        self.source = source
        super().__init__(self._message())

    def _message(self) -> str:
        """The one line (a subclass that refuses another kind of request words its own subject
        and advice here)."""
        advice = _advice(self.estimate, _NAMES)
        return f"the {self.estimate.what} needs about {self._over()}; {advice}"

    def _over(self) -> str:
        """``'1.2 GiB (table ...), more than the 1 GiB allowed by max_memory='``."""
        source = f"allowed by {_NAMES['max']}" if self.given else f"available ({self.source})"
        return f"{self.estimate.describe()}, more than the {format_bytes(self.limit)} {source}"

    def __reduce__(self) -> tuple:
        return (MemoryLimitError, (self.estimate, self.limit, self.given, self.source))


def format_bytes(n: float) -> str:
    """``1536 -> '1.5 KiB'``: binary units, three significant digits."""
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            value = n / size
            return f"{value:.3g} {unit}" if value < 1000 else f"{value:.0f} {unit}"
    return f"{int(n)} B"


def parse_memory_size(text: str | int) -> int:
    """Bytes from ``"8G"``, ``"512MiB"``, ``"1.5 GB"``, ``"2000000"`` (binary units).

    Raises
    ------
    ValueError
        When ``text`` is not a positive size.
    """
    if isinstance(text, int) and not isinstance(text, bool):
        value, unit = float(text), ""
    else:
        match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([kmgtKMGT]?)(i?[bB])?\s*", str(text))
        if match is None:
            raise ValueError(f"memory size must look like 8G, 512MiB or 2000000, got {text!r}")
        value, unit = float(match.group(1)), match.group(2).lower()
    size = int(value * _UNITS[unit])
    if size <= 0:
        raise ValueError(f"memory size must be > 0, got {text!r}")
    return size


def available_memory() -> int | None:
    """Bytes this process may still take: the smallest of ``MemAvailable``, its control group's
    limit and ``RLIMIT_AS`` (:func:`~lbm_bench.protocol.memory_limits.memory_limit`); None when
    none is known (then no check is made)."""
    limit = memory_limit()
    return None if limit is None else limit.bytes


@dataclass(frozen=True)
class MemoryEstimate:
    """Estimated peak memory of a generation request, by part.

    Attributes
    ----------
    what : str
        The request, e.g. ``"dense gaussian 100000x100000 table"``.
    parts : dict of str to int
        Bytes by part (``"table"``, ``"calibration"``, ``"label sets"``, ``"baseline"``...).
    sparse : bool
        Whether the table is sparse (``density`` given).
    can_be_sparse : bool
        Whether the table's family can hold sparse tables (a density can be advised).
    workers : str
        What the estimate says of the workers' copies (counted, or held by a Dask cluster
        and not counted); empty with one worker.
    """

    what: str
    parts: dict[str, int] = field(default_factory=dict)
    sparse: bool = False
    can_be_sparse: bool = False
    workers: str = ""

    @property
    def total(self) -> int:
        """The estimated peak, in bytes."""
        return int(sum(self.parts.values()))

    def describe(self) -> str:
        """``'559 GiB (table 559 GiB, label sets 381 MiB, ...)'``, largest parts first."""
        parts = sorted(self.parts.items(), key=lambda kv: -kv[1])
        detail = ", ".join(f"{name} {format_bytes(size)}" for name, size in parts if size)
        return f"{format_bytes(self.total)} ({detail}{'; ' + self.workers if self.workers else ''})"


def estimate_generation_memory(
    kind: Family | str,
    n_rows: int,
    n_cols: int,
    n_row_clusters: int,
    n_col_clusters: int,
    *,
    density: float | None = None,
    n_samples: int = 2000,
    n_chains: int = 8,
    n_calibration_tables: int = 200,
    jobs: int = 1,
    options: Mapping[str, Any] | None = None,
    missing: float = 0.0,
    missing_mechanism: str = "random",
    remote_workers: bool = False,
) -> MemoryEstimate:
    """Estimated peak memory of :func:`~lbm_bench.protocol.generate.generate_table`.

    Parameters
    ----------
    kind : Family or str
        The family, or its name (its stored dtype and number of statistics count).
    n_rows, n_cols, n_row_clusters, n_col_clusters : int
    density : float, optional
        Expected fraction of non-zero entries of a sparse table; None for a dense one.
    n_samples, n_chains : int
        Gibbs settings of the full run.
    n_calibration_tables : int
        Tables per dichotomy step.
    jobs : int
        Workers of the calibration (each holds its own tables) and of a large table's
        chains (each holds its own statistics of the table).
    options : mapping, optional
        Design options (the family's own are read: the number of statistics of
        categorical blocks follows ``categories``; another family's are refused).
    missing : float, default=0.0
        Expected fraction of missing entries (0: a complete table).
    missing_mechanism : {"random", "block"}, default="random"
    remote_workers : bool, default=False
        The ``jobs`` workers run on a Dask cluster at a scheduler's address: their copies
        are not counted, and the estimate says so (the module docstring).

    Returns
    -------
    MemoryEstimate

    Examples
    --------
    >>> estimate = estimate_generation_memory("gaussian", 100_000, 100_000, 3, 2)
    >>> estimate.total > 500 * 2**30
    True
    """
    family = as_family(kind)
    n, d = check_count("n_rows", n_rows), check_count("n_cols", n_cols)
    g, m = check_count("n_row_clusters", n_row_clusters), check_count("n_col_clusters",
                                                                      n_col_clusters)
    own = check_family_options(family, options or {}, (n, d))
    return _estimate(family, own, n, d, g, m, density=density,
                     n_samples=check_count("n_samples",
                                           n_samples), n_chains=check_count("n_chains", n_chains),
                     n_tables=check_count("n_calibration_tables", n_calibration_tables),
                     n_jobs=worker_count(jobs, max(n_calibration_tables, n_chains),
                                         local=not remote_workers), missing=missing,
                     missing_mechanism=missing_mechanism, remote_workers=remote_workers,
                     )


def _estimate(family: Family, options: dict[str, Any], n: int, d: int, g: int, m: int, *,
              density: float | None, n_samples: int, n_chains: int, n_tables: int, n_jobs: int,
              missing: float, missing_mechanism: str, remote_workers: bool = False,
              ) -> MemoryEstimate:
    """The estimate of a checked request: a family with its checked own ``options`` (the
    module docstring)."""
    entries, p = n * d, family.options.count_statistics(options)
    block = missing > 0 and missing_mechanism == "block"
    mask_bytes = 0 if missing == 0 else 8 if block else 1
    # dense statistics with the missing channels (models/missing.py; codes are not packed)
    if missing > 0:
        p += 2 if block else 1
    # the codes packed, several statistics to a word (inference.code_sums)
    elif family.model.code_statistics:
        p = words_per_entry(p)
    label_bytes = _uint_bytes(g) * n + _uint_bytes(m) * d
    parts = {"label sets": 2 * n_samples * label_bytes, "baseline": BASELINE_BYTES}
    if density is None:
        one_table = entries * (24 + family.model.table_dtype.itemsize + 6 * p * 8 + 2 * mask_bytes)
        cache = min(n_tables * entries * (8 + mask_bytes), NOISE_CACHE_BYTES)
        # The calibration's working set grows with the tables evaluated together (measured:
        # Gaussian 1200x800, 250 bytes per entry with 2 tables, 540 with 8 or 16; Bernoulli
        # 385 with 8), on each worker.
        per_worker = entries * (24 + 16 * p) * (3 + min(n_tables, 8))
        parts["table"] = one_table
        parts["calibration"] = cache + n_jobs * per_worker
        what = f"dense {family.kind} {n}x{d} table"
    else:
        nonzeros = math.ceil((float(density) + float(missing)) * entries)
        per_nonzero = WEIGHTED_BYTES_PER_NONZERO if options.get("effects") else BYTES_PER_NONZERO
        chains = n_chains * (n * m + d * g) * p * 8 + 4 * (n * g + d * m) * 8
        parts["table"] = per_nonzero * nonzeros + 2 * (n + d) * 8
        parts["block sums"] = chains
        parts["calibration"] = (n_jobs - 1) * (per_nonzero * nonzeros + chains) + NOISE_CACHE_BYTES
        what = f"sparse {family.kind} {n}x{d} table at density {float(density):g}"
    if missing > 0:
        what += f" with {float(missing):g} of its entries missing"
    workers = ""
    if n_jobs > 1 and remote_workers:
        parts["calibration"] = 0
        workers = f"not counted: the copies of the {n_jobs} workers, held by the Dask cluster"
    elif n_jobs > 1:
        workers = f"counting the copies of {n_jobs} workers"
    return MemoryEstimate(what=what, parts=parts, sparse=density is not None,
                          can_be_sparse=family.model.can_be_sparse, workers=workers)


def _uint_bytes(n_clusters: int) -> int:
    return 1 if n_clusters <= 256 else 2 if n_clusters <= 65536 else 4


def check_memory(
    estimate: MemoryEstimate,
    max_memory: int | str | None = None,
) -> None:
    """Refuse a request whose estimate exceeds ``max_memory`` (default: the available memory).

    Parameters
    ----------
    estimate : MemoryEstimate
    max_memory : int or str, optional
        Bytes (or a size such as ``"8G"``); default :func:`available_memory`
        (no check when unknown).

    Raises
    ------
    MemoryLimitError
        One line: the estimate by part, the limit and what to change.
    """
    if max_memory is not None:
        limit = parse_memory_size(max_memory)
        if estimate.total > limit:
            raise MemoryLimitError(estimate, limit, True)
        return
    available = memory_limit()
    if available is not None and estimate.total > available.bytes:
        raise MemoryLimitError(estimate, available.bytes, False, available.source)


def _advice(estimate: MemoryEstimate, names: dict[str, str]) -> str:
    parts, total = estimate.parts, estimate.total
    options = []
    if parts.get("label sets", 0) >= total / 2:
        options.append(f"fewer Gibbs label sets ({names['samples']})")
    if not estimate.sparse and estimate.can_be_sparse:
        options.append(f"a sparse table ({names['density']}, e.g. 0.01)")
    elif estimate.sparse:
        options.append(f"a lower {names['density']}")
    options.append(f"a smaller {names['shape']}")
    if parts.get("calibration", 0) >= total / 4:
        options.append(f"fewer workers ({names['jobs']}: each holds its own copy)")
    if total / 10 <= parts.get("label sets", 0) < total / 2:
        options.append(f"fewer Gibbs label sets ({names['samples']})")
    if parts.get("baseline", 0) >= total / 2:
        options.append(f"a larger {names['max']}")
    return "use " + ", or ".join(options)


def estimate_request_memory(
    request: Any,
    settings: Any = None,
    *,
    calibrated: bool = False,
    jobs: int | None = None,
    remote_workers: bool = False,
    design: Any = None,
) -> MemoryEstimate:
    """:func:`estimate_generation_memory` of a request and its settings.

    Parameters
    ----------
    request : TableRequest
        Its family and family options, sizes, ``density`` (a sparse table) and missing entries.
    settings : GenerationSettings, optional
        The Gibbs run and the calibration (defaults when omitted).
    calibrated : bool, default=False
        A calibration is reused: no calibration tables are drawn.
    jobs : int, optional
        Workers of the calibration and of a large table's chains; default: ``settings.jobs``.
    remote_workers : bool, default=False
        The workers run on a Dask cluster at a scheduler's address: their copies are not
        counted (the module docstring).
    design : ModelDesign, optional
        The design the request was made from. A fitted design's tables have the density of
        its blocks (their mean entry bounds it; the path keeps it at every scale), which its
        recorded density may understate: a sparse table is sized from the larger.
    """
    settings = GenerationSettings() if settings is None else settings
    tables = settings.n_calibration_tables
    if not isinstance(tables, int):  # "auto": sequential, at most this many tables
        tables = _AUTO_MAX_TABLES
    options = request.model_options
    density = getattr(options, "density", None)
    if density is not None and getattr(design, "path", None) is not None:
        model = design.model(1.0)
        blocks = float(model.row_proportions @ model.entry_means() @ model.col_proportions)
        density = max(float(density), min(1.0, blocks))
    return _estimate(request.family, request.family_options(), *request.shape, *request.clusters,
                     density=density, n_samples=settings.n_samples,
                     n_chains=settings.n_chains, n_tables=1 if calibrated else tables,
                     n_jobs=worker_count(settings.jobs if jobs is None else jobs,
                                         max(tables, settings.n_chains), local=not remote_workers),
                     missing=getattr(options, "missing", 0.0),
                     missing_mechanism=getattr(options, "missing_mechanism",
                                               "random"), remote_workers=remote_workers,
                     )
