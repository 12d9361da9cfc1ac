"""The items of a fitted design in table files (format 1.5, the knee 1.6; docs/format.md "Fitted
designs").

A table generated from a design fitted to a user's table (:func:`lbm_bench.fit_design`,
:mod:`lbm_bench.models.block_path`) stores the path its scale moved along,
``params/design/path_natural`` (n_stats, g, m) and ``params/design/path_centre``
(n_stats,), and the knee from which up it keeps the classes' margins,
``params/design/path_knee`` (shape (1,); absent: the straight line), so that a loaded table's
``design.model(scale)`` is its ``model``; and a table generated from a design file names
it by its SHA-256, ``params/design@digest``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lbm_bench.models.block_path import BlockPath

__all__ = ["PATH_DATASETS", "PATH_KNEE", "design_path_layout", "read_design_path"]

#: The datasets of a fitted design's path, stored together or not at all...
PATH_DATASETS = ("params/design/path_natural", "params/design/path_centre")
#: ... and the knee of a path that keeps the classes' margins (absent: the straight line).
PATH_KNEE = "params/design/path_knee"


def design_path_layout(design: Any) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """The datasets and ``params/design`` attributes (name to value) of a design's path and
    digest."""
    datasets, attrs = {}, {}
    if design.path is not None:
        datasets = dict(
            zip(PATH_DATASETS, (np.asarray(design.path.natural, dtype=np.float64),
                                np.asarray(design.path.centre, dtype=np.float64)), strict=True))
        if design.path.knee is not None:
            datasets[PATH_KNEE] = np.array([design.path.knee], dtype=np.float64)
    if design.digest is not None:
        attrs["digest"] = design.digest
    return datasets, attrs


def read_design_path(reader: Any) -> dict[str, Any] | bool:
    """The ``path`` and ``digest`` fields of the design of a 1.5 file (``{}`` for a random design),
    or False when they are bad (the reader's problem said why)."""
    out: dict[str, Any] = {}
    if reader.has_attr("params/design", "digest"):
        digest = reader.attr("params/design", "digest", "str")
        if digest is None:
            return False
        out["digest"] = digest
    present = [reader.has_dataset(path) for path in PATH_DATASETS]
    if not any(present):
        return out
    if not all(present):
        reader.problem("params/design/path_natural and path_centre must come together")
        return False
    natural, centre = (reader.dataset(path) for path in PATH_DATASETS)
    if natural is None or centre is None:
        return False
    knee = None
    if reader.has_dataset(PATH_KNEE):
        knee = reader.dataset(PATH_KNEE)
        if knee is None:
            return False
        knee = float(knee[0])
    try:
        out["path"] = BlockPath(natural, centre, knee)
    except ValueError as exc:
        reader.problem(f"params/design/path_natural or path_centre: {exc}")
        return False
    g, m = out["path"].block_shape
    try:  # the family turns the path into a model, whose natural parameters have the path's shape
        # (a path outside the family's domain, such as a Gaussian precision of zero, is a problem
        # of the file, not a floating-point warning of the family's formulas)
        with np.errstate(divide="raise", invalid="raise", over="raise"):
            model = reader.family.designs.model_from_natural(_Probe(g, m), out["path"].natural)
        shape = model.natural_parameters.shape
        problem = None if shape == out[
            "path"].natural.shape else f"its model's natural parameters are {shape}"
    except (IndexError, TypeError, ValueError, FloatingPointError) as exc:
        problem = str(exc)
    if problem is not None:
        reader.problem(f"params/design/path_natural is not a path of {reader.family.kind} blocks "
                       f"({problem})")
        return False
    return out


class _Probe:
    """What ``model_from_natural`` reads of a design, for checking a stored path alone."""

    def __init__(self, g: int, m: int) -> None:
        self.row_proportions, self.col_proportions = np.full(g, 1.0 / g), np.full(m, 1.0 / m)
        self.row_effects = self.col_effects = self.density = None
