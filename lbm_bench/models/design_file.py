"""Design files: a design fitted to a table, as TOML (docs/design-files.md).

A design file holds what :func:`lbm_bench.fit_design` estimated, readable by a person and by
any TOML reader: the family, the proportions, the block parameters under their model-class
names (``rates``, ``probs``, ``means`` and ``stds``), the one-block model of the whole table
(the path's centre, :mod:`lbm_bench.models.block_path`), row and column effects, the density
of a sparse design, how entries go missing; and where it comes from: the source table's name,
SHA-256 and shape (and its rows' and columns' names, when it has them), the fitted classes of
its rows and columns, the counts and their criterion beside the runner-up cells, the package
version. It is versioned (``format = "lbm-bench-design/1.2"``: 1.1 added
``design.path_knee``, the scale from which up the path keeps the classes' margins, a 1.0
file's path being the straight line; 1.2 the source's names and the fitted classes), written
atomically (:mod:`lbm_bench._atomic`), and its digest is the SHA-256 of its bytes.

:func:`read_design_file` refuses a file edited into a state no design has, in one line
naming the file and the key (:mod:`lbm_bench.models.design_keys`): not a regular file or too
large, a wrong shape, a negative rate, values no table can be drawn from, proportions not
summing to one, an unknown or newer format, an unknown key.
"""

from __future__ import annotations

import hashlib
import math
import os
import stat
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
from scipy import special

from lbm_bench._atomic import atomic_path
from lbm_bench.models.block_path import BlockPath
from lbm_bench.models.design import ModelDesign
from lbm_bench.models.design_keys import (
    KEYS,
    check_keys,
    count_pair,
    effect_array,
    finite_number,
    fitted_classes,
    get_key,
    key_name,
    number_array,
    runners_up,
    string_array,
)
from lbm_bench.models.missing import MissingDesign
from lbm_bench.models.registry import family_names, get_family

try:  # pragma: no cover - the standard library's from Python 3.11
    import tomllib
except ModuleNotFoundError:  # pragma: no cover
    import tomli as tomllib

__all__ = [
    "DESIGN_FORMAT", "DESIGN_VERSIONS", "KNEE_RANGE", "LARGEST_COUNT", "LARGEST_STATISTIC",
    "MAX_DESIGN_BYTES", "DesignFile", "DesignFileError", "block_missing_design",
    "read_design_file", "write_design_file"
]

#: The format name and version a design file declares (``format = ...``).
DESIGN_FORMAT = "lbm-bench-design/1.2"
_FORMAT_NAME, _FORMAT_VERSION = DESIGN_FORMAT.split("/")
#: The versions this package reads (1.0: no ``design.path_knee``; 1.1: no names nor classes).
DESIGN_VERSIONS = ((1, 0), (1, 1), (1, 2))
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
    row_names, col_names : tuple of str or None
        The source's rows' and columns' names, when it has them (format 1.2).
    row_classes, col_classes : ndarray of int64 or None
        The fitted class of each row and column of the source, ``0 .. g - 1`` and
        ``0 .. m - 1`` (format 1.2; None in an older file).

    Examples
    --------
    >>> read_design_file("tests/data/design_v1_1_poisson.toml").source_shape
    (24, 16)
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
    row_names: tuple[str, ...] | None = None
    col_names: tuple[str, ...] | None = None
    row_classes: np.ndarray | None = None
    col_classes: np.ndarray | None = None


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
#: TOML's escapes of a basic string (other control characters as \\uXXXX).
_ESCAPES = {"\\": "\\\\", '"': '\\"', "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f",
            "\r": "\\r"}


def _toml_string(text: str) -> str:
    return '"' + "".join(_ESCAPES.get(c, f"\\u{ord(c):04x}" if ord(c) < 32 or ord(c) == 127
                                      else c) for c in text) + '"'


def _toml_value(value: Any) -> str:
    if isinstance(value, str):
        return _toml_string(value)
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        number = float(value)
        return repr(number) if math.isfinite(number) else (
            "nan" if number != number else repr(number))
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return "[" + ", ".join(map(_toml_string, value)) + "]"
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
                               "shape": list(record.source_shape),
                               "row_names": _names(record.row_names),
                               "col_names": _names(record.col_names)})
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
    if record.row_classes is not None:
        lines += _table("classes", {"rows": np.asarray(record.row_classes, dtype=np.int64),
                                    "cols": np.asarray(record.col_classes, dtype=np.int64)})
    return "\n".join(lines)


def _names(names: tuple[str, ...] | None) -> list[str] | None:
    return None if names is None else list(names)


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
#: Design files larger than this are refused before they are read (the effects of a table of
#: ten million rows take about 250 MB of TOML).
MAX_DESIGN_BYTES = 1 << 30
#: The range of ``design.path_knee`` (scales nearer 0 or 1 divide the path by almost nothing).
KNEE_RANGE = (0.01, 0.99)
#: The largest expected entry of a design of counts (beyond, counts lose their units in float64
#: sums), and the largest expected statistic of a design of reals (beyond, their squares
#: overflow).
LARGEST_COUNT = 1e15
LARGEST_STATISTIC = 1e200


def read_design_file(path: str | os.PathLike[str]) -> DesignFile:
    """Read a design file written by :func:`write_design_file` (or by hand, in its format).

    Formats 1.0 to 1.2 are read (``DESIGN_VERSIONS``); a UTF-8 byte-order mark is skipped.

    Parameters
    ----------
    path : str or os.PathLike
        The design file (TOML), as :meth:`~lbm_bench.FittedDesign.save` writes it.

    Returns
    -------
    DesignFile

    Raises
    ------
    FileNotFoundError
    DesignFileError
        A ValueError, one line naming the file and the first problem: not a regular file (a
        pipe, a device), larger than :data:`MAX_DESIGN_BYTES`, not TOML, another format or an
        unknown version, a missing or unknown key, a wrong shape, a value out of its family's
        domain (a negative rate, a probability above one) or too large to draw tables from,
        proportions not summing to one.

    Examples
    --------
    >>> read_design_file("tests/data/design_v1_1_poisson.toml").design.kind
    'poisson'
    """
    where = str(path)
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):
            raise DesignFileError(f"{where}: not a regular file (a design file is a TOML file)")
        if info.st_size > MAX_DESIGN_BYTES:
            raise DesignFileError(f"{where}: {info.st_size} bytes, larger than a design file can "
                                  f"be ({MAX_DESIGN_BYTES >> 20} MiB)")
        with open(path, "rb") as handle:
            data = handle.read(MAX_DESIGN_BYTES + 1)
    except IsADirectoryError:
        raise DesignFileError(f"{where}: is a folder, not a design file") from None
    try:
        source = tomllib.loads(data.decode("utf-8-sig"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise DesignFileError(f"{where}: not a TOML design file ({exc})") from None
    try:
        record = _parse(source)
    except (KeyError, TypeError, ValueError, OverflowError) as exc:
        message = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
        raise DesignFileError(f"{where}: {message}") from None
    digest = hashlib.sha256(data).hexdigest()
    return replace(record, digest=digest, design=replace(record.design, digest=digest))


def _version(source: dict) -> tuple[int, int]:
    fmt = get_key(source, "", "format", str)
    name, _, version = fmt.partition("/")
    if name != _FORMAT_NAME:
        raise ValueError(f"'format' must be {DESIGN_FORMAT!r}, got {fmt!r:.80}")
    parts = version.split(".")
    if len(parts) != 2 or not all(part.isdigit() and part.isascii() for part in parts):
        raise ValueError(f"'format' must be {DESIGN_FORMAT!r}, got {fmt!r:.80}")
    found = (int(parts[0]), int(parts[1]))
    if found > DESIGN_VERSIONS[-1]:
        raise ValueError(f"format {version} is newer than this lbm-bench reads "
                         f"({_FORMAT_VERSION}): upgrade lbm-bench")
    if found not in DESIGN_VERSIONS:
        known = ", ".join(".".join(map(str, v)) for v in DESIGN_VERSIONS)
        raise ValueError(f"format {version} is not a version of design files ({known})")
    return found


def _proportions(table: dict, key: str, size: int) -> np.ndarray:
    values = number_array(table, "design", key, (size,))
    if values.min() <= 0:
        raise ValueError(f"design.{key} must be positive, got {values.min():g}")
    if abs(values.sum() - 1.0) > _SUM_TOLERANCE:
        raise ValueError(f"design.{key} must sum to one, got {values.sum():.6g}")
    return values / values.sum()


def _parse(source: dict) -> DesignFile:
    for key in source:  # an unknown key first, then the version
        if key not in KEYS[""]:
            raise ValueError(f"unknown key {key_name('', key)}")
    version = _version(source)
    check_keys(source, "", version)
    kind = get_key(source, "", "kind", str)
    if kind not in family_names():
        raise ValueError(f"'kind' must name a family ({', '.join(family_names())}), got "
                         f"{kind!r:.40}")
    family = get_family(kind)
    src, sel, des = (get_key(source, "", key, dict) for key in ("source", "selection", "design"))
    for key, table in (("source", src), ("selection", sel), ("design", des)):
        check_keys(table, key, version)
    shape = count_pair(src, "source", "shape")
    g, m = count_pair(sel, "selection", "counts")
    row_props = _proportions(des, "row_proportions", g)
    col_props = _proportions(des, "col_proportions", m)
    model, centre, effects = _models(family, des, (g, m), shape, row_props, col_props, version)
    density = None
    if "density" in des:
        density = finite_number(des, "design", "density")
        if not family.model.can_be_sparse:
            raise ValueError(f"design.density: {kind} designs are never sparse")
        if not 0 < density < 1:
            raise ValueError(f"design.density must lie in (0, 1), got {density!r}")
    missing = _read_missing(des.get("missing"), row_props, col_props, version)
    knee = _path_knee(des)
    first = model.block_parameters()[family.storage.parameter_names[0]]
    design = ModelDesign(family, row_props, col_props, np.asarray(first, dtype=np.float64),
                         np.ones((g, m)), row_effects=effects[0], col_effects=effects[1],
                         density=density, missing=missing,
                         path=BlockPath.of(model, centre, knee))
    max_clusters = count_pair(sel, "selection", "max_clusters")
    if max_clusters[0] < g or max_clusters[1] < m:
        raise ValueError(f"selection.max_clusters {list(max_clusters)} must be at least "
                         f"selection.counts {[g, m]}")
    names = [string_array(src, "source", key, size) if key in src else None
             for key, size in (("row_names", shape[0]), ("col_names", shape[1]))]
    classes = fitted_classes(source, version, shape, (g, m))
    return DesignFile(design=design, source_name=get_key(src, "source", "name", str),
                      source_sha256=get_key(src, "source", "sha256", str), source_shape=shape,
                      criterion=get_key(sel, "selection", "criterion", str),
                      criterion_value=finite_number(sel, "selection", "value"),
                      runners_up=runners_up(sel), max_clusters=max_clusters,
                      package_version=str(source.get("created_by", "")).removeprefix("lbm-bench "),
                      row_names=names[0], col_names=names[1], row_classes=classes[0],
                      col_classes=classes[1])


def _models(family: Any, des: dict, counts: tuple[int, int], shape: tuple[int, int],
            row_props: np.ndarray, col_props: np.ndarray, version: tuple[int, int]) -> tuple:
    """The fitted model (scale 1), the path's centre and the effects, checked drawable."""
    blocks = get_key(des, "design", "blocks", dict)
    overall = get_key(des, "design", "overall", dict)
    names = family.storage.parameter_names
    for key, table in (("design.blocks", blocks), ("design.overall", overall)):
        unknown = sorted(set(table) - set(names))
        if unknown:
            raise ValueError(f"unknown key {key}.{unknown[0]} (a {family.kind} design has "
                             f"{', '.join(names)})")
    params = {}
    for key in names:
        value = number_array(blocks, "design.blocks", key, None)
        if value.shape[:2] != counts:
            raise ValueError(f"design.blocks.{key} must have {counts[0]}x{counts[1]} blocks "
                             f"(selection.counts), got shape {value.shape}")
        params[key] = value
    effects = (None, None)
    if "effects" in des:
        table = get_key(des, "design", "effects", dict)
        check_keys(table, "design.effects", version)
        effects = tuple(effect_array(table, key, size) for key, size in (("rows", shape[0]),
                                                                     ("cols", shape[1])))
    extra = {} if effects[0] is None else {"row_effects": effects[0], "col_effects": effects[1]}
    try:
        model = family.model(row_props, col_props, **params, **extra)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"design.blocks: {exc}") from None
    centre_params = {}
    for key in names:
        value = overall.get(key)
        centre_params[key] = (number_array(overall, "design.overall", key, None)
                              if isinstance(value, list) else
                              finite_number(overall, "design.overall", key))
    try:
        centre = family.model([1.0], [1.0], **{k: np.array([[v]], dtype=np.float64)
                                                for k, v in centre_params.items()})
    except (TypeError, ValueError) as exc:
        raise ValueError(f"design.overall: {exc}") from None
    _check_drawable(family, model, shape)
    return model, centre, (model.row_weights(shape[0]), model.col_weights(shape[1]))


def _check_drawable(family: Any, model: Any, shape: tuple[int, int]) -> None:
    """The fitted model's expected statistics, times the largest exposure of its effects, within
    what a table can be drawn from: :data:`LARGEST_COUNT` for a family of counts (integers),
    :data:`LARGEST_STATISTIC` for one of reals."""
    stats = np.abs(np.asarray(model.mean_statistics, dtype=np.float64))
    rows, cols = model.row_weights(shape[0]), model.col_weights(shape[1])
    exposure = 1.0 if rows is None else float(rows.max() * cols.max())
    integer = np.dtype(family.model.table_dtype).kind in "iu"
    bound = LARGEST_COUNT if integer else LARGEST_STATISTIC
    with np.errstate(over="ignore", invalid="ignore"):
        largest = float(stats.max()) * exposure
    if not np.isfinite(largest) or largest > bound:
        name = family.storage.parameter_names[0]
        raise ValueError(f"design.blocks.{name}: an entry's expected value reaches {largest:.3g} "
                         f"(with the effects), beyond the {bound:.0e} a table can be drawn at")


def _path_knee(des: dict) -> float | None:
    """``design.path_knee`` (1.1; absent: the straight line, as every 1.0 file's path)."""
    if "path_knee" not in des:
        return None
    knee = finite_number(des, "design", "path_knee")
    low, high = KNEE_RANGE
    if not low <= knee <= high:
        raise ValueError(f"design.path_knee must lie in [{low}, {high}], got {knee!r}")
    return float(knee)


def _read_missing(table: Any, row_props: np.ndarray, col_props: np.ndarray,
                  version: tuple[int, int]) -> MissingDesign | None:
    if table is None:
        return None
    if not isinstance(table, dict):
        raise TypeError(f"design.missing must be a table, got {table!r:.80}")
    check_keys(table, "design.missing", version)
    mechanism = get_key(table, "design.missing", "mechanism", str)
    if mechanism == "random":
        rate = finite_number(table, "design.missing", "rate")
        if not 0 < rate < 1:
            raise ValueError(f"design.missing.rate must lie in (0, 1), got {rate!r}")
        return MissingDesign(float(rate))
    if mechanism != "block":
        raise ValueError(f"design.missing.mechanism must be 'random' or 'block', got "
                         f"{mechanism!r:.40}")
    probs = number_array(table, "design.missing", "probs", (row_props.size, col_props.size))
    if probs.min() <= 0 or probs.max() >= 1:
        raise ValueError("design.missing.probs must lie in (0, 1)")
    return block_missing_design(probs, row_props, col_props)
