"""Design files: a design fitted to a table, as TOML (docs/design-files.md).

A design file holds what :func:`lbm_bench.fit_design` estimated, readable by a person
and by any TOML reader: the family, the proportions, the block parameters under their
model-class names (``rates``, ``probs``, ``means`` and ``stds``), the one-block model
of the whole table (the path's centre, :mod:`lbm_bench.models.block_path`), row and
column effects, the density of a sparse design, how entries go missing; and where it
comes from: the source table's name, SHA-256 and shape, the counts and their criterion
beside the runner-up cells, the package version. It is versioned
(``format = "lbm-bench-design/1.1"``: 1.1 adds ``design.path_knee``, the scale from which
up the path keeps the classes' margins; a 1.0 file's path is the straight line), written
atomically (:mod:`lbm_bench._atomic`), and its digest is the SHA-256 of its bytes (a table
generated from it records it).

:func:`read_design_file` refuses a file edited into a state no design has, in one line
naming the file and the key: a wrong shape, a negative rate, proportions not summing to
one, a newer format, an unknown key.
"""

from __future__ import annotations

import hashlib
import math
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
from scipy import special

from lbm_bench._atomic import atomic_path
from lbm_bench.models.block_path import BlockPath
from lbm_bench.models.design import ModelDesign
from lbm_bench.models.missing import MissingDesign
from lbm_bench.models.registry import family_names, get_family

try:  # pragma: no cover - the standard library's from Python 3.11
    import tomllib
except ModuleNotFoundError:  # pragma: no cover
    import tomli as tomllib

__all__ = [
    "DESIGN_FORMAT", "DesignFile", "DesignFileError", "block_missing_design", "read_design_file",
    "write_design_file"
]

#: The format name and version a design file declares (``format = ...``).
DESIGN_FORMAT = "lbm-bench-design/1.1"
_FORMAT_NAME, _FORMAT_VERSION = DESIGN_FORMAT.split("/")
#: Proportions must sum to one within this.
_SUM_TOLERANCE = 1e-6


class DesignFileError(ValueError):
    """A design file that is not one (a ValueError: one line naming the file and what is wrong)."""


@dataclass(frozen=True)
class DesignFile:
    """What a design file holds.

    Attributes
    ----------
    design : ModelDesign
        The fitted design (its ``path`` set: scale 1 is the fitted model).
    source_name, source_sha256 : str
        The source table's name and the SHA-256 of its file (of its values, for a table given
        in memory).
    source_shape : (int, int)
    criterion : str
        The criterion that chose the counts (``"exact-icl"``, ``"bic-icl"``).
    criterion_value : float
    runners_up : tuple of (int, int, float)
        The next best cells ``(g, m, criterion)``.
    max_clusters : (int, int)
    package_version : str
        The lbm-bench version that fitted it.
    digest : str or None
        SHA-256 of the file's bytes (None until written or when not read from a file).
    """

    design: ModelDesign
    source_name: str
    source_sha256: str
    source_shape: tuple[int, int]
    criterion: str
    criterion_value: float
    runners_up: tuple[tuple[int, int, float], ...]
    max_clusters: tuple[int, int]
    package_version: str
    digest: str | None = None


def block_missing_design(probs: np.ndarray, row_proportions: np.ndarray, col_proportions: np.ndarray
                         ) -> MissingDesign:
    """The block mechanism (:mod:`lbm_bench.models.missing`) whose blocks miss entries with
    probabilities ``probs`` (g, m) at scale 1: the rate is their mean under the proportions,
    the pattern their logits' deviations, scaled to a largest deviation of one."""
    mass = np.outer(row_proportions, col_proportions)
    logits = special.logit(probs)
    deviation = logits - float(np.sum(mass * logits))
    spread = float(np.abs(deviation).max())
    rate = float(np.sum(mass * probs))
    if spread == 0.0:
        return MissingDesign(rate)
    return MissingDesign(rate, "block", deviation / spread, spread)


# ---------------------------------------------------------------------------
# Writing
# ---------------------------------------------------------------------------
def _toml_value(value: Any) -> str:
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        number = float(value)
        return repr(number) if math.isfinite(number) else (
            "nan" if number != number else repr(number))
    array = np.asarray(value)
    if array.ndim == 0:
        return _toml_value(array.item())
    return "[" + ", ".join(
        _toml_value(item) for item in (array if array.ndim > 1 else array.tolist())) + "]"


def _table(name: str, values: dict[str, Any]) -> list[str]:
    lines = [f"[{name}]"]
    lines += [f"{key} = {_toml_value(value)}" for key, value in values.items() if value is not None]
    return lines + [""]


def design_file_text(record: DesignFile) -> str:
    """The TOML text of a design file (what :func:`write_design_file` writes)."""
    d = record.design
    if d.path is None:
        raise ValueError("only a fitted design (with its path) can be written to a design file")
    family = d.family
    model = d.model(1.0)
    params = model.block_parameters()
    centre = family.model([1.0], [1.0], **_natural_centre_parameters(d))
    lines = [
        "# A design fitted by lbm-bench (docs/design-files.md): tables like the source, at any "
        "risk.",
        f"format = {_toml_value(DESIGN_FORMAT)}",
        f"kind = {_toml_value(d.kind)}",
        f"created_by = {_toml_value('lbm-bench ' + record.package_version)}",
        "",
    ]
    lines += _table("source", {"name": record.source_name, "sha256": record.source_sha256,
                               "shape": list(record.source_shape)})
    lines += _table(
        "selection", {
            "criterion": record.criterion, "value": record.criterion_value, "counts": list(
                d.block_shape), "max_clusters": list(record.max_clusters)
        })
    if record.runners_up:
        cells = ", ".join(f"[{int(g)}, {int(m)}, {_toml_value(float(v))}]"
                          for g, m, v in record.runners_up)
        lines[-1:] = [f"runners_up = [{cells}]", ""]
    lines += _table(
        "design", {
            "row_proportions": d.row_proportions, "col_proportions": d.col_proportions,
            "density": d.density, "path_knee": d.path.knee
        })
    lines += _table("design.blocks",
                    {name: params[name]
                     for name in family.storage.parameter_names})
    lines += _table(
        "design.overall", {
            name: np.asarray(value)[0, 0]
            for name, value in centre.block_parameters().items()
            if name in family.storage.parameter_names
        })
    if d.row_effects is not None:
        lines += _table("design.effects", {"rows": d.row_effects, "cols": d.col_effects})
    if d.missing is not None:
        probs = d.missing_probs(1.0)
        values = {"mechanism": d.missing.mechanism, "rate": d.missing.rate}
        if d.missing.informative:
            values["probs"] = probs
        lines += _table("design.missing", values)
    return "\n".join(lines)


def _natural_centre_parameters(design: ModelDesign) -> dict[str, Any]:
    """The block parameters of the path's centre, as a 1x1 model's keyword arguments."""
    probe = replace(design, row_proportions=np.ones(1), col_proportions=np.ones(1),
                    row_effects=None, col_effects=None, missing=None, path=None)
    model = design.family.designs.model_from_natural(probe, design.path.centre[:, None, None])
    return {name: value for name, value in model.block_parameters().items()
            if name in design.family.storage.parameter_names}


def write_design_file(path: str | os.PathLike[str], record: DesignFile, *,
                      overwrite: bool = True) -> str:
    """Write ``record`` to ``path`` (TOML, atomically; an existing file is replaced only with
    ``overwrite``, FileExistsError otherwise); returns the file's SHA-256 (its digest)."""
    data = design_file_text(record).encode("utf-8")
    with atomic_path(Path(path), overwrite=overwrite) as temporary:
        temporary.write_bytes(data)
    return hashlib.sha256(data).hexdigest()


# ---------------------------------------------------------------------------
# Reading
# ---------------------------------------------------------------------------
_KEYS = {
    "": {"format", "kind", "created_by", "source", "selection",
         "design"}, "source": {"name", "sha256", "shape"},
    "selection": {"criterion", "value", "counts", "max_clusters", "runners_up"}, "design": {
        "row_proportions", "col_proportions", "density", "path_knee", "blocks", "overall",
        "effects", "missing"
    }, "design.effects": {"rows", "cols"}, "design.missing": {"mechanism", "rate", "probs"},
}


def read_design_file(path: str | os.PathLike[str]) -> DesignFile:
    """Read a design file written by :func:`write_design_file` (or by hand, in its format).

    Raises
    ------
    FileNotFoundError
    DesignFileError
        A ValueError, one line naming the file and the first problem: not TOML, another
        format or a newer version, a missing or unknown key, a wrong shape, a value out of
        its family's domain (a negative rate, a probability above one), proportions not
        summing to one.
    """
    where = str(path)
    data = Path(path).read_bytes()
    try:
        source = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise DesignFileError(f"{where}: not a TOML design file ({exc})") from None
    try:
        record = _parse(source)
    except (KeyError, TypeError, ValueError) as exc:
        message = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
        raise DesignFileError(f"{where}: {message}") from None
    digest = hashlib.sha256(data).hexdigest()
    return replace(record, digest=digest, design=replace(record.design, digest=digest))


def _get(table: dict, name: str, key: str, kind: type | tuple[type, ...]) -> Any:
    if key not in table:
        raise KeyError(f"{name + '.' if name else ''}{key} is missing")
    value = table[key]
    if not isinstance(value, kind) or isinstance(value, bool) and bool not in np.atleast_1d(kind):
        raise TypeError(f"{name + '.' if name else ''}{key} must be {_kind_name(kind)}, got "
                        f"{value!r}")
    return value


def _kind_name(kind: Any) -> str:
    names = {
        str: "a string", int: "an integer", float: "a number", list: "an array", dict: "a table"
    }
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join(names.get(k, k.__name__) for k in kinds)


def _check_keys(table: dict, name: str) -> None:
    unknown = sorted(set(table) - _KEYS[name])
    if unknown:
        raise ValueError(f"unknown key {name + '.' if name else ''}{unknown[0]}")


def _array(table: dict, name: str, key: str, shape: tuple[int, ...]) -> np.ndarray:
    value = _get(table, name, key, list)
    try:
        array = np.array(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name}.{key} must be an array of numbers of shape {shape}") from None
    if array.shape != shape:
        raise ValueError(f"{name}.{key} must have shape {shape}, got {array.shape}")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name}.{key} must hold finite numbers")
    return array


def _proportions(table: dict, key: str, size: int) -> np.ndarray:
    values = _array(table, "design", key, (size,))
    if values.min() <= 0:
        raise ValueError(f"design.{key} must be positive, got {values.min():g}")
    if abs(values.sum() - 1.0) > _SUM_TOLERANCE:
        raise ValueError(f"design.{key} must sum to one, got {values.sum():.6g}")
    return values / values.sum()


def _parse(source: dict) -> DesignFile:
    _check_keys(source, "")
    fmt = _get(source, "", "format", str)
    name, _, version = fmt.partition("/")
    if name != _FORMAT_NAME:
        raise ValueError(f"format must be {DESIGN_FORMAT!r}, got {fmt!r}")
    try:
        major, minor = (int(part) for part in version.split("."))
    except ValueError:
        raise ValueError(f"format must be {DESIGN_FORMAT!r}, got {fmt!r}") from None
    ours = tuple(int(part) for part in _FORMAT_VERSION.split("."))
    if (major, minor) > ours:
        raise ValueError(f"format {version} is newer than this lbm-bench reads "
                         f"({_FORMAT_VERSION}): upgrade lbm-bench")
    kind = _get(source, "", "kind", str)
    if kind not in family_names():
        raise ValueError(f"kind must be one of {', '.join(family_names())}, got {kind!r}")
    family = get_family(kind)
    src, sel, des = (_get(source, "", key, dict) for key in ("source", "selection", "design"))
    for key, table in (("source", src), ("selection", sel), ("design", des)):
        _check_keys(table, key)
    shape = tuple(_get(src, "source", "shape", list))
    if len(shape) != 2 or not all(
            isinstance(s, int) and not isinstance(s, bool) and s >= 1 for s in shape):
        raise ValueError(f"source.shape must be two positive integers, got {list(shape)}")
    counts = tuple(_get(sel, "selection", "counts", list))
    if len(counts) != 2 or not all(
            isinstance(c, int) and not isinstance(c, bool) and c >= 1 for c in counts):
        raise ValueError(f"selection.counts must be two positive integers, got {list(counts)}")
    g, m = counts
    row_props = _proportions(des, "row_proportions", g)
    col_props = _proportions(des, "col_proportions", m)
    blocks = _get(des, "design", "blocks", dict)
    overall = _get(des, "design", "overall", dict)
    names = family.storage.parameter_names
    for key, table in (("design.blocks", blocks), ("design.overall", overall)):
        unknown = sorted(set(table) - set(names))
        if unknown:
            raise ValueError(f"unknown key {key}.{unknown[0]} (a {kind} design has "
                             f"{', '.join(names)})")
    params = {}
    for key in names:
        value = np.array(_get(blocks, "design.blocks", key, list), dtype=np.float64)
        if value.shape[:2] != (g, m):
            raise ValueError(f"design.blocks.{key} must have {g}x{m} blocks (selection.counts), "
                             "got shape "
                             f"{value.shape}")
        params[key] = value
    effects = des.get("effects")
    row_effects = col_effects = None
    if effects is not None:
        _check_keys(_get(des, "design", "effects", dict), "design.effects")
        row_effects = _array(effects, "design.effects", "rows", (shape[0],))
        col_effects = _array(effects, "design.effects", "cols", (shape[1],))
    try:
        effect_params = {} if row_effects is None else {
            "row_effects": row_effects, "col_effects": col_effects
        }
        model = family.model(row_props, col_props, **params, **effect_params)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"design.blocks: {exc}") from None
    centre_params = {
        key: np.array([[_get(overall, "design.overall", key, (int, float, list))]],
                      dtype=np.float64)
        for key in names
    }
    try:
        centre = family.model([1.0], [1.0], **centre_params)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"design.overall: {exc}") from None
    density = des.get("density")
    if density is not None:
        density = _get(des, "design", "density", (int, float))
        if not family.model.can_be_sparse:
            raise ValueError(f"design.density: {kind} designs are never sparse")
        if not 0 < density < 1:
            raise ValueError(f"design.density must lie in (0, 1), got {density!r}")
    missing = _read_missing(des.get("missing"), row_props, col_props)
    knee = _path_knee(des, (major, minor))
    first = params[names[0]]
    design = ModelDesign(family, row_props, col_props, first, np.ones(
        (g, m)), row_effects=model.row_weights(shape[0]), col_effects=model.col_weights(shape[1]),
                         density=None if density is None else float(density), missing=missing,
                         path=BlockPath.of(model, centre, knee))
    runners = _get(sel, "selection", "runners_up", list) if "runners_up" in sel else []
    runners_up = []
    for cell in runners:
        if not (isinstance(cell, list) and len(cell) == 3):
            raise ValueError(f"selection.runners_up must hold [g, m, value] cells, got {cell!r}")
        runners_up.append((int(cell[0]), int(cell[1]), float(cell[2])))
    max_clusters = tuple(_get(sel, "selection", "max_clusters", list))
    if len(max_clusters) != 2:
        raise ValueError(f"selection.max_clusters must be two integers, got {list(max_clusters)}")
    created_by = source.get("created_by", "")
    return DesignFile(design=design, source_name=_get(src, "source", "name", str),
                      source_sha256=_get(src, "source", "sha256",
                                         str), source_shape=(int(shape[0]), int(shape[1])),
                      criterion=_get(sel, "selection", "criterion", str),
                      criterion_value=float(_get(sel, "selection", "value",
                                                 (int, float))), runners_up=tuple(runners_up),
                      max_clusters=(int(max_clusters[0]), int(max_clusters[1])),
                      package_version=str(created_by).removeprefix("lbm-bench "),
                      )


def _path_knee(des: dict, version: tuple[int, int]) -> float | None:
    """``design.path_knee`` (1.1; absent: the straight line, as every 1.0 file's path)."""
    if "path_knee" not in des:
        return None
    if version < (1, 1):
        raise ValueError("design.path_knee is a format 1.1 key; this file declares 1.0")
    knee = _get(des, "design", "path_knee", (int, float))
    if not 0 < knee < 1:
        raise ValueError(f"design.path_knee must lie in (0, 1), got {knee!r}")
    return float(knee)


def _read_missing(table: Any, row_props: np.ndarray, col_props: np.ndarray) -> MissingDesign | None:
    if table is None:
        return None
    if not isinstance(table, dict):
        raise TypeError(f"design.missing must be a table, got {table!r}")
    _check_keys(table, "design.missing")
    mechanism = _get(table, "design.missing", "mechanism", str)
    if mechanism == "random":
        rate = _get(table, "design.missing", "rate", (int, float))
        if not 0 < rate < 1:
            raise ValueError(f"design.missing.rate must lie in (0, 1), got {rate!r}")
        return MissingDesign(float(rate))
    if mechanism != "block":
        raise ValueError(f"design.missing.mechanism must be 'random' or 'block', got {mechanism!r}")
    probs = _array(table, "design.missing", "probs", (row_props.size, col_props.size))
    if probs.min() <= 0 or probs.max() >= 1:
        raise ValueError("design.missing.probs must lie in (0, 1)")
    return block_missing_design(probs, row_props, col_props)
