"""Tables from a given design: a request made from a design (a fitted design file or a
:class:`~lbm_bench.models.design.ModelDesign`), so that :func:`~lbm_bench.generate_table`
(``design=``), ``lbm-bench generate --design`` and release specs (``design = "path.toml"``)
calibrate its scale instead of drawing a random design.

The design fixes the family, the numbers of clusters, the proportions, the blocks (its
path, for a fitted design: :mod:`lbm_bench.models.block_path`), the effects, the density
and how entries go missing; the request adds the shape (by default the source table's,
for a design file) and the target risk. A shape other than the design's keeps the
proportions and draws row and column effects from the design's own
(:meth:`~lbm_bench.models.design.ModelDesign.at_shape`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from lbm_bench.models.design import ModelDesign
from lbm_bench.models.design_file import read_design_file
from lbm_bench.models.family import Family
from lbm_bench.protocol.request import TableRequest

__all__ = ["check_fitted_density", "design_request", "load_design"]


def load_design(design: Any) -> tuple[ModelDesign, tuple[int, int] | None]:
    """The design and its default shape: a :class:`ModelDesign` as given (its effects' shape,
    if any), or a design file read (:func:`~lbm_bench.read_design_file`: the source's shape).

    Raises
    ------
    TypeError
        For anything else.
    FileNotFoundError, DesignFileError
        For a design file that is missing or not one.
    """
    if isinstance(design, ModelDesign):
        shape = None if design.row_effects is None else (len(design.row_effects),
                                                         len(design.col_effects))
        return design, shape
    if isinstance(design, (str, os.PathLike)):
        record = read_design_file(design)
        check_fitted_density(record.design, record.source_shape, os.fspath(design))
        return record.design, record.source_shape
    raise TypeError("design must be a ModelDesign or the path of a design file, got "
                    f"{type(design).__name__}")


def check_fitted_density(design: ModelDesign, source_shape: tuple[int, int] | None,
                         where: str) -> None:
    """Refuse a fitted design (one with a path) whose ``density`` no source could have: below
    one non-zero entry of its source's shape, or, for a design without effects or missing
    entries, above the mean entry of its blocks at scale 1 (a fraction of non-zero counts or
    binaries never exceeds their mean). A fitted design's density records its source's; its
    tables' density follows from its blocks, whose level the path keeps at every scale, so an
    edited density did nothing (1e-300 and 0.5 gave the same tables) but mislead the memory
    guard, which sizes a sparse table by it.

    Raises
    ------
    ValueError
        Naming ``where`` (the design file) and the key.
    """
    density = design.density
    if density is None or design.path is None:
        return
    if source_shape is not None and density * source_shape[0] * source_shape[1] < 1:
        raise ValueError(f"{where}: design.density {density:g} is below one non-zero entry of its "
                         f"{source_shape[0]}x{source_shape[1]} source: a fitted design's density "
                         "is its source's fraction of non-zero entries")
    if design.row_effects is None and design.missing is None:
        model = design.model(1.0)
        mean = float(model.row_proportions @ model.entry_means() @ model.col_proportions)
        if density > mean * (1 + 1e-9):
            raise ValueError(f"{where}: design.density {density:g} is more than the mean entry of "
                             f"its blocks ({mean:.4g}), which a fraction of non-zero entries never "
                             "exceeds: a fitted design's density is its source's, and its tables' "
                             "follows from its blocks")


def design_request(
    design: Any,
    target_risk: float,
    n_rows: int | None = None,
    n_cols: int | None = None,
    *,
    kind: Family | None = None,
    clusters: tuple[Any, Any] = (None, None),
    criterion: str = "bayes",
    options: Mapping[str, Any] | None = None,
) -> tuple[TableRequest, ModelDesign]:
    """The request for tables of ``design`` at ``target_risk``, and the design (loaded).

    Parameters
    ----------
    design : ModelDesign, str or os.PathLike
        A design, or the path of a design file.
    target_risk : float
    n_rows, n_cols : int, optional
        The shape; default: the design file's source shape (or the design's effects').
    kind : Family, optional
        When given, it must be the design's family.
    clusters : (int, int), optional
        When given, they must be the design's numbers of clusters.
    criterion : {"bayes", "map"}
    options : mapping, optional
        Design options, refused: the design fixes them.

    Raises
    ------
    ValueError
        For a kind, clusters or option the design contradicts, or no shape.
    """
    where = str(design) if isinstance(design, (str, os.PathLike)) else "the design"
    design, shape = load_design(design)
    if min(design.block_shape) < 2:
        g, m = design.block_shape
        raise ValueError(f"{where}: a design of {g}x{m} clusters (a side of one cluster: no block "
                         "structure) cannot generate tables, which need at least 2 clusters on "
                         "each side")
    if options:
        raise ValueError(f"{', '.join(sorted(options))}: the design fixes its design options; drop "
                         "them")
    if kind is not None and kind is not design.family:
        raise ValueError(f"kind={kind.kind!r} but the design is of {design.kind} blocks")
    if any(c is not None for c in clusters) and tuple(clusters) != design.block_shape:
        raise ValueError(f"the design has {design.block_shape[0]}x{design.block_shape[1]} "
                         "clusters, "
                         f"not {clusters[0]}x{clusters[1]}")
    if (n_rows is None) != (n_cols is None):
        raise ValueError("give both n_rows and n_cols (the shape), or neither")
    if n_rows is None:
        if shape is None:
            raise ValueError("this design has no shape of its own: give n_rows and n_cols")
        n_rows, n_cols = shape
    model_options: dict[str, Any] = dict(design.family.designs.options_of(design))
    if design.missing is not None:
        model_options.update(missing=design.missing.rate,
                             missing_mechanism=design.missing.mechanism)
        if design.missing.informative:
            model_options["missing_spread"] = design.missing.spread
    g, m = design.block_shape
    request = TableRequest(design.family, n_rows, n_cols, g, m, target_risk,
                           model_options=model_options, criterion=criterion)
    return request, design
