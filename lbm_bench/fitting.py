"""Designs fitted to a user's own table: "tables like mine".

:func:`fit_design` takes a table (an array, a sparse matrix, a
:class:`~lbm_bench.storage.user_data.UserTable` read by :func:`~lbm_bench.read_user_table`),
infers its family (or takes it), chooses the numbers of clusters by the exact ICL
(:func:`~lbm_bench.select_lbm`) and estimates, at the chosen labels, everything a design holds:

- the cluster proportions (the labels' shares);
- the block parameters (the family's M-step,
  :meth:`~lbm_bench.models.family.Estimation.estimate_blocks`, over the observed entries);
- row and column effects, for a family that has them (Poisson: Govaert and Nadif's
  contingency model, :meth:`~lbm_bench.models.family.Estimation.fit_effects`), kept
  when they pay for their parameters by the BIC (``(n_rows + n_cols - 2) log(n_obs) / 2``);
- the density of a sparse table (its fraction of non-zero entries: the design is sparse);
- the missing rate of every block: entries missing at random (one rate) unless the
  blocks' rates differ (a likelihood-ratio test at level :data:`MISSING_TEST_LEVEL`), then
  the block mechanism with the fitted rates.

The result, a :class:`FittedDesign`, holds a :class:`~lbm_bench.models.design.ModelDesign` whose
scale moves along a path through the fitted model (:mod:`lbm_bench.models.block_path`: scale 1
is the fitted model), so that :func:`~lbm_bench.generate_table` can calibrate tables like the
user's to any target risk, and its :meth:`FittedDesign.summary`: the counts, the ICL beside the
runner-up cells, and the fitted model's own floor at the table's shape, certified on a table
drawn from it ("a table like yours, if it followed the model, has a floor of x%").
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import special, stats

from lbm_bench._docstrings import fill_doc
from lbm_bench._dtypes import smallest_uint
from lbm_bench._seeds import check_seed
from lbm_bench._validation import check_count
from lbm_bench._version import __version__
from lbm_bench.algorithms.inputs import infer_family
from lbm_bench.algorithms.selection import LBMSelection, check_max_clusters, select_lbm
from lbm_bench.inference.classifier import map_labels
from lbm_bench.inference.floor import FloorCertificate, floor_certificate
from lbm_bench.inference.gibbs import gibbs_labels
from lbm_bench.inference.kernel_choice import check_kernel, use_kernel
from lbm_bench.models.block_path import BlockPath
from lbm_bench.models.data import TableData
from lbm_bench.models.design import ModelDesign
from lbm_bench.models.design_file import DesignFile, block_missing_design, write_design_file
from lbm_bench.models.family import Family
from lbm_bench.models.missing import MaskNoise, MissingDesign, mask_table
from lbm_bench.protocol.memory import (
    BASELINE_BYTES,
    BYTES_PER_NONZERO,
    MemoryEstimate,
    MemoryLimitError,
    parse_memory_size,
)
from lbm_bench.protocol.memory_limits import memory_limit
from lbm_bench.storage.user_data import UserTable, check_user_values, user_table

__all__ = ["MISSING_TEST_LEVEL", "CertificationLimitError", "FittedDesign",
           "check_certification_memory", "degree_ks", "design_labels", "fit_design"]

#: The blocks' missing rates are fitted one by one (the block mechanism) when the
#: likelihood-ratio test of equal rates rejects at this level; else entries go missing at random.
MISSING_TEST_LEVEL = 1e-3
#: Runner-up cells of the criterion table shown beside the chosen one.
_RUNNERS_UP = 3


@dataclass(frozen=True)
class FittedDesign:
    """A design fitted to a table by :func:`fit_design`.

    Attributes
    ----------
    design : ModelDesign
        The fitted design (``design.model(1.0)`` is the fitted model; its ``path`` moves
        one scale through it).
    file : DesignFile
        What a design file holds: the design, the source (name, SHA-256, shape), the counts
        and criterion, the package version (:meth:`save` writes it).
    selection : LBMSelection
        The model selection that chose the counts.
    floor : FloorCertificate or None
        The fitted model's floor at the table's shape, certified on one table drawn from it
        (None when not asked, or with one cluster on a side: no co-clustering to score).
    effects_kept : bool or None
        Whether row and column effects were kept (None: the family has none).

    Examples
    --------
    >>> from lbm_bench import random_model
    >>> X = random_model("poisson", 2, 2, scale=2.0, rng=0).sample(60, 40, rng=1)[0]
    >>> fitted = fit_design(X, (3, 3), certify=False, rng=0)
    >>> fitted.counts, fitted.floor is None   # certify=False: no floor measured
    ((2, 2), True)
    """

    design: ModelDesign
    file: DesignFile
    selection: LBMSelection = field(repr=False)
    floor: FloorCertificate | None = field(default=None, repr=False)
    effects_kept: bool | None = None

    @property
    def counts(self) -> tuple[int, int]:
        """The chosen numbers of row and column clusters."""
        return self.design.block_shape

    @property
    def model(self):
        """The fitted model (the design at scale 1)."""
        return self.design.model(1.0)

    @property
    def limit_reached(self) -> tuple[str, ...]:
        """The sides (``"rows"``, ``"columns"``) whose count stopped at ``max_clusters``."""
        reached = [c >= limit for c, limit in zip(self.counts, self.file.max_clusters,
                                                   strict=True)]
        return tuple(side for side, hit in zip(("rows", "columns"), reached, strict=True) if hit)

    @property
    def no_structure(self) -> str | None:
        """Why the design cannot generate tables (a side of one cluster: the table shows no
        block structure there), or None."""
        sides = [side for side, count in zip(("rows", "columns"), self.counts, strict=True)
                 if count < 2]
        if not sides:
            return None
        g, m = self.counts
        return (f"{self.file.criterion} chose {g}x{m} clusters: the table shows no block "
                f"structure on its {' and '.join(sides)} (a design needs at least 2 clusters "
                "on each side to generate tables)")

    def save(self, path: Any, *, overwrite: bool = True) -> str:
        """Write the design file (TOML, atomically; docs/design-files.md); returns its SHA-256.
        An existing file is replaced only with ``overwrite`` (FileExistsError otherwise)."""
        return write_design_file(path, self.file, overwrite=overwrite)

    def _limit_line(self) -> str:
        f, (g, m) = self.file, self.counts
        sides = self.limit_reached
        table = self.selection.criterion_table
        gains = "".join(_below(table, g, m, 0 if side == "rows" else 1) for side in sides)
        return (f"the counts stopped at the limit on the {' and '.join(sides)}: {f.criterion} "
                f"{f.criterion_value:.2f} at {g}x{m}{gains}; the criterion may rise past it: raise "
                f"max_clusters past {f.max_clusters[0]}x{f.max_clusters[1]} for a finer design")

    def summary(self) -> str:
        """The fit in a few lines: family, counts, criterion beside the runner-up cells, what was
        estimated, and the fitted model's own floor at the table's shape."""
        f, d = self.file, self.design
        g, m = d.block_shape
        lines = [f"{f.source_name}: {f.source_shape[0]}x{f.source_shape[1]} table, {d.kind} blocks"]
        lines.append(f"counts {g}x{m} by {f.criterion} {f.criterion_value:.2f}"
                     f" ({self.selection.search} search, {self.selection.n_runs} EM runs, up to "
                     f"{f.max_clusters[0]}x{f.max_clusters[1]})")
        runners = ", ".join(f"{rg}x{rm} {value - f.criterion_value:+.2f}"
                            for rg, rm, value in f.runners_up)
        if runners:
            lines.append(f"runner-up cells: {runners}")
        if self.limit_reached:
            lines.append(self._limit_line())
        if self.no_structure:
            lines.append(self.no_structure)
        lines.append("row proportions " + " ".join(f"{p:.3f}" for p in d.row_proportions))
        lines.append("column proportions " + " ".join(f"{p:.3f}" for p in d.col_proportions))
        extras = []
        if self.effects_kept is not None:
            extras.append("row and column effects " +
                          ("kept (BIC)" if self.effects_kept else "dropped (BIC)"))
        if d.density is not None:
            extras.append(f"sparse, density {d.density:.4g}")
        if d.missing is not None:
            extras.append(f"missing {d.missing.rate:.4g} ({d.missing.mechanism})")
        if extras:
            lines.append("; ".join(extras))
        if self.floor is not None:
            risk = self.floor.risk
            lines.append("a table like yours, if it followed the model, has a floor of "
                         f"{100 * risk.risk:.1f}% (MCSE {100 * risk.mcse:.1f}%, one table drawn at "
                         f"{f.source_shape[0]}x{f.source_shape[1]})")
        return "\n".join(lines)


def _below(table: np.ndarray, g: int, m: int, side: int) -> str:
    """`` (+x over GxM)``: the gain of the cell ``(g, m)`` over the one with a cluster less on
    ``side``, when the search fitted it."""
    cell = (g - 1, m) if side == 0 else (g, m - 1)
    if min(cell) < 1 or not np.isfinite(table[cell[0] - 1, cell[1] - 1]):
        return ""
    gain = table[g - 1, m - 1] - table[cell[0] - 1, cell[1] - 1]
    return f", {gain:+.2f} over {cell[0]}x{cell[1]}"


@fill_doc
def fit_design(
    X: Any,
    max_clusters: tuple[int, int] = (8, 8),
    *,
    kind: Any = None,
    certify: bool = True,
    n_samples: int = 1000,
    search: str = "path",
    n_init: int = 10,
    jobs: int = 1,
    kernel: str | None = None,
    max_memory: int | str | None = None,
    rng: np.random.Generator | int | None = None,
) -> FittedDesign:
    """Fit a design to a table: the family, the counts by exact ICL, and every parameter.

    Parameters
    ----------
    X : array-like, scipy.sparse matrix or UserTable of shape (n_rows, n_cols)
        The table; NaN (or masked, or explicit NaN of a sparse table) entries are missing.
        A sparse table gives a sparse design (its density kept).
    max_clusters : (int, int), default=(8, 8)
        The largest numbers of row and column clusters considered.
    kind : str or Family, optional
        The family; inferred from the table when None (as :func:`~lbm_bench.select_lbm`).
    certify : bool, default=True
        Certify the fitted model's own floor at the table's shape on one table drawn from it
        (``n_samples`` Gibbs label sets).
    n_samples : int, default=1000
    search, n_init, jobs
        As :func:`~lbm_bench.select_lbm`.
    max_memory : int or str, optional
        Refuse, before the work, a certification whose label sets would need more (bytes, or
        a size such as ``"8G"``); default: the memory available
        (:func:`~lbm_bench.protocol.memory.check_memory`).
    {{kernel}}
    rng : None, int or numpy.random.Generator

    Returns
    -------
    FittedDesign

    Examples
    --------
    >>> from lbm_bench import generate_table
    >>> source = generate_table("poisson", 60, 40, 2, 2, 0.05, tolerance=0.03, n_samples=200, rng=1)
    >>> fitted = fit_design(source.data, (4, 4), certify=False, rng=0)
    >>> fitted.counts, fitted.design.kind
    ((2, 2), 'poisson')
    """
    rng = np.random.default_rng(check_seed("rng", rng))
    # before the work
    n_samples, jobs = check_count("n_samples", n_samples), check_count("jobs", jobs)
    if kernel is not None:
        check_kernel(kernel)
    table = X if isinstance(X, UserTable) else user_table(X)
    data = table.data
    if certify:  # sized from n_samples at the largest counts, before the selection runs
        check_certification_memory(data, max_clusters, n_samples, max_memory)
    if data.is_sparse:  # a family of dense tables densifies it (when it fits in memory)
        data = check_user_values(table, kind or table.family or infer_family(data),
                                 max_memory=max_memory)
    selection = select_lbm(data.with_nan() if data.has_missing else data.table, max_clusters,
                           kind=kind if kind is not None else table.family, search=search,
                           n_init=n_init, jobs=jobs, rng=rng)
    family = selection.family
    z, w = selection.rows, selection.cols
    g, m = selection.n_row_clusters, selection.n_col_clusters
    row_props = np.bincount(z, minlength=g) / z.size
    col_props = np.bincount(w, minlength=m) / w.size
    model, centre = _block_model(family, data, z, w, row_props, col_props, selection.fit.model)
    effects_kept = None
    if family.model.has_effects:
        with_effects = family.estimation.fit_effects(data, z, w, model)
        effects_kept = with_effects is not None and _effects_pay(model, with_effects, data, z, w)
        if effects_kept:
            model = with_effects
            _, centre = _block_model(family, data, z, w, row_props, col_props, with_effects)
    params = model.block_parameters()
    first = params[family.storage.parameter_names[0]]
    density = None
    if data.is_sparse and family.model.can_be_sparse:
        observed = data.shape[0] * data.shape[1] - data.n_missing
        density = float(np.count_nonzero(data.stored_values())) / observed
    design = ModelDesign(family, row_props, col_props, np.array(first, dtype=np.float64),
                         np.ones((g, m)), row_effects=params.get("row_effects"),
                         col_effects=params.get("col_effects"), density=density,
                         missing=_missing_design(data, z, w, row_props, col_props),
                         path=BlockPath.of(model, centre, family.designs.path_knee),
                         )
    file = DesignFile(
        design=design, source_name=table.name, source_sha256=table.sha256 or _array_sha256(data),
        source_shape=tuple(int(s) for s in data.shape), criterion=selection.criterion,
        criterion_value=selection.value, runners_up=_runners_up(selection), max_clusters=tuple(
            int(c) for c in selection.criterion_table.shape), package_version=__version__,
        row_names=table.row_names, col_names=table.col_names, row_classes=np.asarray(z),
        col_classes=np.asarray(w),
    )
    floor = None
    if certify and g >= 2 and m >= 2:
        with use_kernel(kernel):
            floor = _certified_floor(design, data.shape, n_samples, rng)
    return FittedDesign(design=design, file=file, selection=selection, floor=floor,
                        effects_kept=effects_kept)


def degree_ks(source: Any, generated: Any) -> dict[str, float]:
    """How far a generated table's degree distributions are from the source's: the two-sample
    Kolmogorov-Smirnov statistics of their row means and column means (over the observed
    entries: means, not sums, so that tables of other shapes or other missing entries compare).

    Parameters
    ----------
    source, generated : array-like, scipy.sparse matrix or TableData
        NaN (or explicit NaN of a sparse table) entries are missing.

    Returns
    -------
    dict
        ``{"rows": D_rows, "cols": D_cols}``, each in [0, 1] (0: the same distribution).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(0).poisson(3.0, size=(200, 100))
    >>> ks = degree_ks(X, np.random.default_rng(1).poisson(3.0, size=(150, 80)))
    >>> ks["rows"] < 0.2 and ks["cols"] < 0.25
    True
    """
    out = {}
    tables = [
        TableData.incomplete(t) if not isinstance(t, TableData) else t for t in (source, generated)
    ]
    for side, totals, missing in (("rows", "row_totals", "missing_row_counts"),
                                  ("cols", "col_totals", "missing_col_counts")):
        means = []
        for data in tables:
            size = data.shape[1] if side == "rows" else data.shape[0]
            seen = size - (getattr(data, missing)() if data.has_missing else 0)
            means.append(getattr(data, totals)() / np.maximum(seen, 1))
        out[side] = float(stats.ks_2samp(*means).statistic)
    return out


def design_labels(design: ModelDesign, X: Any, *, rng: np.random.Generator | int | None = None,
                  ) -> tuple[np.ndarray, np.ndarray]:
    """The MAP labels of a table under a design's fitted model (scale 1): how ``lbm-bench show
    DATA --design design.toml`` groups a table other than the design's source (its source is
    grouped by the fitted classes the design file keeps, format 1.2; these are the fitted
    model's own reading of the table).

    Parameters
    ----------
    design : ModelDesign
    X : array-like, scipy.sparse matrix or UserTable of shape (n_rows, n_cols)
        A table of the design's family; NaN entries are missing. With row and column effects
        the design fixes the shape (its source's).
    rng : None, int or numpy.random.Generator

    Returns
    -------
    rows : ndarray of shape (n_rows,)
    cols : ndarray of shape (n_cols,)

    Raises
    ------
    ValueError
        For a table whose values are not of the design's family, or whose shape its effects refuse.
    """
    table = X if isinstance(X, UserTable) else user_table(X)
    model = design.model(1.0)
    fixed = model.fixed_shape()
    if fixed is not None and tuple(table.shape) != tuple(fixed):
        raise ValueError(f"{table.path or table.name}: the design's row and column effects are "
                         f"those of a {fixed[0]}x{fixed[1]} table, this one is "
                         f"{table.shape[0]}x{table.shape[1]}")
    data = check_user_values(table, design.family)
    found = map_labels(model, data.with_nan() if data.has_missing else data.table, rng=rng)
    return np.asarray(found.rows), np.asarray(found.cols)


def _block_model(family: Family, data: TableData, z, w, row_props, col_props, fitted):
    """The fitted blocks at the labels (the family's M-step over the observed entries, with
    ``fitted``'s effects), and the one-block model of the whole table (the path's centre)."""
    totals, exposure = fitted.block_totals(data, z, w)
    values = np.asarray(data.stored_values(), dtype=np.float64)
    values = values[np.isfinite(values)]
    variance = float(np.var(values)) if values.size else 1.0
    floor = max(variance, 1e-12) * 1e-10
    params = family.estimation.estimate_blocks(totals, np.maximum(exposure, 1e-300), floor,
                                               variance)
    effects = {name: value for name, value in fitted.block_parameters().items()
               if name in ("row_effects", "col_effects")}
    model = family.model(row_props, col_props, **params, **effects)
    whole = family.estimation.estimate_blocks(totals.sum(axis=(1, 2))[:, None, None],
                                              np.array([[exposure.sum()]]), floor)
    return model, family.model([1.0], [1.0], **whole)


def _effects_pay(model, with_effects, data: TableData, z, w) -> bool:
    """Whether the effects raise the log-likelihood at the labels by more than their BIC cost."""
    n_rows, n_cols = data.shape
    n_obs = n_rows * n_cols - data.n_missing
    gain = with_effects.log_likelihood(data, z, w) - model.log_likelihood(data, z, w)
    return bool(gain > 0.5 * (n_rows + n_cols - 2) * math.log(max(n_obs, 2)))


def _missing_design(data: TableData, z, w, row_props, col_props) -> MissingDesign | None:
    """Entries missing at random, or by block when the blocks' fitted rates differ."""
    if not data.has_missing:
        return None
    g, m = row_props.size, col_props.size
    missing = data.missing_indicator()
    counts = np.eye(g)[z].T @ (missing @ np.eye(m)[w])
    sizes = np.outer(np.bincount(z, minlength=g), np.bincount(w, minlength=m)).astype(np.float64)
    rate = float(counts.sum() / sizes.sum())
    q = np.clip(counts / sizes, 1e-6, 1 - 1e-6)
    statistic = 2.0 * float(
        np.sum(
            special.xlogy(counts, q / rate) + special.xlogy(sizes - counts, (1 - q) / (1 - rate))))
    if g * m == 1 or stats.chi2.sf(statistic, g * m - 1) >= MISSING_TEST_LEVEL:
        return MissingDesign(rate)
    return block_missing_design(q, row_props, col_props)


def _runners_up(selection: LBMSelection) -> tuple[tuple[int, int, float], ...]:
    table = selection.criterion_table
    cells = [(g + 1, m + 1, float(table[g, m]))
             for g, m in zip(*np.nonzero(np.isfinite(table)), strict=True)
             if (g + 1, m + 1) != (selection.n_row_clusters, selection.n_col_clusters)]
    return tuple(sorted(cells, key=lambda cell: -cell[2])[:_RUNNERS_UP])


def _array_sha256(data: TableData) -> str:
    """SHA-256 of a table given in memory: its dense values (NaN at missing entries) in C order."""
    values = data.with_nan()
    dense = values.toarray() if hasattr(values, "toarray") else np.asarray(values)
    return hashlib.sha256(np.ascontiguousarray(dense, dtype=np.float64).tobytes()).hexdigest()


class CertificationLimitError(MemoryLimitError):
    """A certification whose estimated peak exceeds the memory available or ``max_memory``: a
    :class:`~lbm_bench.protocol.memory.MemoryLimitError` (a ValueError, one line)."""

    def _message(self) -> str:
        return (f"certifying the fitted design's floor on a {self.estimate.what} needs about "
                f"{self._over()}; use fewer Gibbs label sets (n_samples=)")

    def __reduce__(self) -> tuple:
        return (CertificationLimitError, (self.estimate, self.limit, self.given, self.source))


def check_certification_memory(data: TableData, max_clusters: Any, n_samples: int,
                               max_memory: int | str | None = None) -> None:
    """Refuse, before the work, a certification (:func:`fit_design`'s ``certify``) that would
    not fit: its ``n_samples`` Gibbs label sets at the table's shape, held twice (the sampler's
    array and the floor's working set, as the generation's guard counts them) with labels as
    wide as ``max_clusters`` need, one table drawn at the source's shape, its statistics and
    the interpreter. ``fit --samples 100000000`` allocated 7.45 GiB after the whole model
    selection had run.

    Raises
    ------
    CertificationLimitError
        One line with the estimate by part.
    """
    n, d = data.shape
    g, m = check_max_clusters("max_clusters", max_clusters, data.shape)
    labels = 2 * n_samples * (n * smallest_uint(g).itemsize + d * smallest_uint(m).itemsize)
    stored = data.n_stored if data.is_sparse else n * d
    estimate = MemoryEstimate(what=f"{n}x{d} table with {n_samples} Gibbs label sets", parts={
        "label sets": labels, "table": stored * (BYTES_PER_NONZERO if data.is_sparse else 64),
        "baseline": BASELINE_BYTES})
    if max_memory is not None:
        limit = parse_memory_size(max_memory)
        if estimate.total > limit:
            raise CertificationLimitError(estimate, limit, True)
        return
    available = memory_limit()
    if available is not None and estimate.total > available.bytes:
        raise CertificationLimitError(estimate, available.bytes, False, available.source)


def _certified_floor(design: ModelDesign, shape: tuple[int, int], n_samples: int,
                     rng: np.random.Generator) -> FloorCertificate:
    """The floor of one table drawn from the design at scale 1 (the fitted model), certified as
    a generated table's: Gibbs sets started at the truth and at an X-only MAP, cross-fitted."""
    model = design.model(1.0)
    n_rows, n_cols = shape
    z, w = model.sample_labels(n_rows, n_cols, rng=rng)
    X = model.table_from_noise(model.draw_noise(n_rows, n_cols, rng=rng), z, w)
    if design.missing is not None:
        mask = MaskNoise(n_rows, n_cols, design.missing, model.sparse, rng=rng)
        X = mask_table(X, mask, design.missing_probs(1.0), z, w, copy=False)
    start = map_labels(model, X, rng=rng)
    samples = gibbs_labels(model, X, n_samples=n_samples, init=[(z, w), (start.rows, start.cols)],
                           rng=rng)
    g, m = model.block_shape
    return floor_certificate(samples, starts=[(start.rows, start.cols)], n_row_clusters=g,
                             n_col_clusters=m)
