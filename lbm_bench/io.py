"""Benchmark tables as HDF5 files: format ``lbm-bench-table``, version 1.0.

The normative description of the layout is ``docs/format.md``. In short, a
file holds the table (``data``), its generating labels (``truth/``), the
X-only MAP labels (``map/``), the Gibbs label sets (``gibbs/``), the true
parameters and their scale-free design (``params/``, ``params/design/``), the
records of calibration and rejection sampling (``calibration/``,
``rejection/``) and, as root attributes, the certificate (risk, MCSE, R-hat...).

Writing is atomic (temporary file in the same directory, fsync, rename) and
byte-stable: the same :class:`~lbm_bench.protocol.table.Table` always gives the same
bytes (no timestamps, chunk shapes computed from the array shapes only, fixed
compression, fixed creation order, fixed library-version bounds), for a given
build of h5py, HDF5 and zlib.

Reading validates everything before building a Table: a file that is not
HDF5, truncated, of another format, of a newer major version, incomplete or
inconsistent is refused with :class:`FormatError`, whose one-line message
starts with the file name. Nothing is ever unpickled.
"""

from __future__ import annotations

import contextlib
import json
import math
import numbers
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping

import h5py
import numpy as np

from lbm_bench.inference.engine import smallest_uint
from lbm_bench._validation import KINDS, check_label_sets, check_labels
from lbm_bench.models.design import ModelDesign
from lbm_bench.inference.gibbs import GibbsSamples, RiskEstimate
from lbm_bench.models.families import LatentBlockModel, model_from_parameters
from lbm_bench.protocol.table import CalibrationResult, RejectionRecord, Table

__all__ = [
    "save_table",
    "load_table",
    "read_info",
    "check_file",
    "FormatError",
    "FORMAT_NAME",
    "FORMAT_VERSION",
]

#: Value of the root attribute ``format``.
FORMAT_NAME = "lbm-bench-table"
#: Version written by :func:`save_table`; readers accept any ``1.x``.
FORMAT_VERSION = "1.0"
#: Major version this reader understands.
_MAJOR = 1

#: Data dtype by family.
_DATA_DTYPES = {
    "gaussian": np.dtype(np.float64),
    "poisson": np.dtype(np.int64),
    "bernoulli": np.dtype(np.uint8),
}
#: Block parameter datasets by family (Poisson effects are optional, see below).
_BLOCK_PARAMETERS = {"gaussian": ("means", "stds"), "poisson": ("rates",), "bernoulli": ("probs",)}
#: Optional per-row/column parameters (Poisson contingency model), stored together or not at all.
_EFFECTS = ("row_effects", "col_effects")
#: Datasets stored chunked and compressed; every other dataset is contiguous.
_COMPRESSED = ("data", "gibbs/cols", "gibbs/rows")
#: Compression of the chunked datasets (gzip level, with the shuffle filter).
_GZIP_LEVEL = 4
#: Upper bound on the bytes of one chunk.
_CHUNK_BYTES = 1 << 20
#: Upper bound on the Gibbs label sets per chunk.
_GIBBS_SETS_PER_CHUNK = 256
#: Longest string attribute, in UTF-8 bytes (version-1 object headers cap a message near 64 KiB).
_MAX_STRING_BYTES = 64_000

_VERSION_PATTERN = re.compile(r"^(\d+)\.(\d+)$")


class FormatError(ValueError):
    """A file is not a valid lbm-bench table file (message: ``"<path>: <problem>"``)."""


class _Fatal(Exception):
    """A problem after which the rest of the file cannot be checked."""


# ---------------------------------------------------------------------------
# In-memory layout and the two sources the checks read from
# ---------------------------------------------------------------------------
@dataclass
class _Layout:
    """Every item of a file: attributes by object path ("" is the root), datasets by path."""

    attrs: dict[str, dict[str, Any]] = field(default_factory=dict)
    datasets: dict[str, np.ndarray] = field(default_factory=dict)


class _FileSource:
    """Items of an open HDF5 file (datasets are read only when asked)."""

    def __init__(self, file: h5py.File) -> None:
        self.file = file

    def _get(self, path: str) -> Any:
        """The object at ``path`` ("" is the root group), None when there is none."""
        try:
            return self.file[path or "/"]
        except KeyError:
            # h5py also raises KeyError for a damaged object: tell it from a missing one.
            if path and not self._exists(path):
                return None
            raise

    def _exists(self, path: str) -> bool:
        try:
            return path in self.file
        except Exception:  # a damaged link on the way: treat as present and unreadable
            return True

    def attrs(self, path: str) -> Mapping[str, Any] | None:
        obj = self._get(path)
        return _SafeAttributes(obj.attrs) if isinstance(obj, h5py.Group) else None

    def dataset(self, path: str) -> Any:
        obj = self._get(path)
        return obj if isinstance(obj, h5py.Dataset) else None


class _SafeAttributes(Mapping[str, Any]):
    """Attributes of an HDF5 object, reading only numbers and strings.

    h5py can crash the interpreter on some other attribute types found in
    damaged files (a string whose type was corrupted into a variable-length
    sequence): such values raise TypeError instead of being read.
    """

    def __init__(self, attrs: h5py.AttributeManager) -> None:
        self.attrs = attrs

    def __getitem__(self, name: str) -> Any:
        dtype = self.attrs.get_id(name).dtype
        if dtype.kind in "biuf" or h5py.check_string_dtype(dtype) is not None:
            return self.attrs[name]
        raise TypeError(f"attribute {name} has an unsupported type ({dtype})")

    def __iter__(self) -> Iterator[str]:
        return iter(list(self.attrs))

    def __len__(self) -> int:
        return len(self.attrs)


class _MemorySource:
    """Items of a layout about to be written (validated before touching the disk)."""

    def __init__(self, layout: _Layout) -> None:
        self.layout = layout

    def attrs(self, path: str) -> Mapping[str, Any] | None:
        return self.layout.attrs.get(path)

    def dataset(self, path: str) -> Any:
        return self.layout.datasets.get(path)


# ---------------------------------------------------------------------------
# Writing
# ---------------------------------------------------------------------------
def _int64(name: str, value: Any) -> np.int64:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an integer, got {value!r}")
    if not -(2**63) <= int(value) < 2**63:
        raise ValueError(f"{name} must fit in a signed 64-bit integer, got {int(value)}")
    return np.int64(value)


def _f64(name: str, value: Any) -> np.float64:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {value!r}")
    return np.float64(value)


def _json_default(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"table.options holds a value JSON cannot store: {value!r}")


def _root_attrs(table: Table) -> dict[str, Any]:
    from lbm_bench import __version__  # lazy: lbm_bench/__init__ may import this module

    n_rows, n_cols = table.data.shape
    risk = table.risk
    return {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "lbm_bench_version": str(__version__),
        "kind": table.model.kind,
        "n_rows": _int64("n_rows", n_rows),
        "n_cols": _int64("n_cols", n_cols),
        "n_row_clusters": _int64("n_row_clusters", table.model.n_row_clusters),
        "n_col_clusters": _int64("n_col_clusters", table.model.n_col_clusters),
        "target_risk": _f64("target_risk", table.target_risk),
        "risk": _f64("risk.risk", risk.risk),
        "risk_mcse": _f64("risk.mcse", risk.mcse),
        "risk_rhat": _f64("risk.rhat", risk.rhat),
        "risk_ess": _f64("risk.ess", risk.ess),
        "row_loss": _f64("risk.row_loss", risk.row_loss),
        "col_loss": _f64("risk.col_loss", risk.col_loss),
        "seed": _int64("seed", table.seed),
        "scale": _f64("scale", table.scale),
        "options_json": _options_json(table.options),
    }


def _options_json(options: dict) -> str:
    text = json.dumps(options, sort_keys=True, default=_json_default)
    size = len(text.encode("utf-8"))
    if size > _MAX_STRING_BYTES:
        raise ValueError(
            f"table.options take {size} bytes as JSON, more than the {_MAX_STRING_BYTES} an attribute holds"
        )
    return text


def _label_items(table: Table, layout: _Layout) -> None:
    n_rows, n_cols = table.data.shape
    g, m = table.model.block_shape
    row_dtype, col_dtype = smallest_uint(g), smallest_uint(m)
    for group, rows, cols in (
        ("truth", table.truth_rows, table.truth_cols),
        ("map", table.map_rows, table.map_cols),
    ):
        layout.datasets[f"{group}/rows"] = check_labels(
            f"{group}_rows", rows, length=n_rows, n_clusters=g
        ).astype(row_dtype)
        layout.datasets[f"{group}/cols"] = check_labels(
            f"{group}_cols", cols, length=n_cols, n_clusters=m
        ).astype(col_dtype)
    gibbs = table.gibbs
    layout.datasets["gibbs/rows"] = check_label_sets(
        "gibbs.rows", gibbs.rows, length=n_rows, n_clusters=g
    ).astype(row_dtype)
    layout.datasets["gibbs/cols"] = check_label_sets(
        "gibbs.cols", gibbs.cols, length=n_cols, n_clusters=m
    ).astype(col_dtype)
    layout.attrs["gibbs"] = {
        "burn_in": _int64("gibbs.burn_in", gibbs.burn_in),
        "chain_lengths": np.asarray(gibbs.chain_lengths, dtype=np.int64),
        "n_chains": _int64("gibbs.n_chains", gibbs.n_chains),
        "thin": _int64("gibbs.thin", gibbs.thin),
    }


def _param_items(table: Table, layout: _Layout) -> None:
    model, design = table.model, table.design
    layout.attrs["params"] = {"scale": _f64("scale", table.scale)}
    layout.datasets["params/row_proportions"] = np.asarray(model.row_proportions, dtype=np.float64)
    layout.datasets["params/col_proportions"] = np.asarray(model.col_proportions, dtype=np.float64)
    for name, values in model.block_parameters().items():
        layout.datasets[f"params/{name}"] = np.asarray(values, dtype=np.float64)
    layout.attrs["params/design"] = {"base_rate": _f64("design.base_rate", design.base_rate)}
    design_arrays = {
        "row_proportions": design.row_proportions,
        "col_proportions": design.col_proportions,
        "pattern": design.pattern,
        "dispersion": design.dispersion,
        "row_effects": design.row_effects,
        "col_effects": design.col_effects,
    }
    for name, values in design_arrays.items():
        if values is not None:
            layout.datasets[f"params/design/{name}"] = np.asarray(values, dtype=np.float64)


def _record_items(table: Table, layout: _Layout) -> None:
    cal, rej = table.calibration, table.rejection
    layout.attrs["calibration"] = {
        "bracket": np.asarray(cal.bracket, dtype=np.float64),
        "error_std": _f64("calibration.error_std", cal.error_std),
        "mean_error": _f64("calibration.mean_error", cal.mean_error),
        "n_steps": _int64("calibration.n_steps", cal.n_steps),
        "n_tables": _int64("calibration.n_tables", cal.n_tables),
        "scale": _f64("calibration.scale", cal.scale),
        "target_risk": _f64("calibration.target_risk", cal.target_risk),
        "tolerance": _f64("calibration.tolerance", cal.tolerance),
    }
    layout.datasets["calibration/history"] = np.asarray(cal.history, dtype=np.float64)
    layout.attrs["rejection"] = {
        "acceptance_rate": _f64("rejection.acceptance_rate", rej.acceptance_rate),
        "attempts": _int64("rejection.attempts", rej.attempts),
        "balance": _f64("rejection.balance", math.nan if rej.balance is None else rej.balance),
        "screened_out": _int64("rejection.screened_out", rej.screened_out),
        "tolerance": _f64("rejection.tolerance", rej.tolerance),
    }
    layout.datasets["rejection/candidate_risks"] = np.asarray(rej.candidate_risks, dtype=np.float64)


def _layout(table: Table) -> _Layout:
    """Every item of the file of ``table`` (raises TypeError/ValueError on unstorable values)."""
    if table.risk.n_samples != table.gibbs.n_samples or table.risk.n_chains != table.gibbs.n_chains:
        raise ValueError(
            f"risk was estimated from {table.risk.n_samples} sets in {table.risk.n_chains} chains,"
            f" but gibbs holds {table.gibbs.n_samples} sets in {table.gibbs.n_chains} chains"
        )
    if table.design.kind != table.model.kind:
        kinds = f"{table.design.kind!r} and {table.model.kind!r}"
        raise ValueError(f"the design and the model are of different kinds ({kinds})")
    layout = _Layout()
    layout.attrs[""] = _root_attrs(table)
    model = table.model
    data = model.check_table(table.data, name="data")
    layout.datasets["data"] = np.ascontiguousarray(data, dtype=_DATA_DTYPES[model.kind])
    _label_items(table, layout)
    _param_items(table, layout)
    _record_items(table, layout)
    return layout


def _chunk_shape(
    shape: tuple[int, int], itemsize: int, max_rows: int | None = None
) -> tuple[int, int]:
    """Chunk shape of a compressed 2-D dataset: whole rows when they fit, at most 1 MiB.

    Parameters
    ----------
    shape : (n_rows, n_cols)
        Dataset shape (both at least 1).
    itemsize : int
        Bytes per element.
    max_rows : int, optional
        Cap on the rows per chunk (``_GIBBS_SETS_PER_CHUNK`` for Gibbs sets).

    Returns
    -------
    (chunk_rows, chunk_cols) : tuple of int
    """
    n_rows, n_cols = shape
    cols = min(n_cols, max(1, _CHUNK_BYTES // itemsize))
    rows = min(n_rows, max(1, _CHUNK_BYTES // (cols * itemsize)))
    if max_rows is not None:
        rows = min(rows, max_rows)
    return rows, cols


def _create_file(path: Path) -> h5py.File:
    """Create (truncate) an HDF5 file with fixed library-version bounds and no timestamps."""
    fapl = h5py.h5p.create(h5py.h5p.FILE_ACCESS)
    fapl.set_libver_bounds(h5py.h5f.LIBVER_EARLIEST, h5py.h5f.LIBVER_V18)
    fapl.set_fclose_degree(h5py.h5f.CLOSE_STRONG)
    fcpl = h5py.h5p.create(h5py.h5p.FILE_CREATE)
    fcpl.set_obj_track_times(False)
    fid = h5py.h5f.create(os.fsencode(path), h5py.h5f.ACC_TRUNC, fcpl=fcpl, fapl=fapl)
    return h5py.File(fid)


def _create_group(file: h5py.File, path: str) -> None:
    """Create a group without timestamps (h5py's create_group offers no track_times)."""
    gcpl = h5py.h5p.create(h5py.h5p.GROUP_CREATE)
    gcpl.set_obj_track_times(False)
    h5py.h5g.create(file.id, path.encode("utf-8"), gcpl=gcpl).close()


def _write_dataset(file: h5py.File, path: str, array: np.ndarray) -> None:
    """Write one dataset; those of :data:`_COMPRESSED` chunked, gzip level 4 and shuffle."""
    options: dict[str, Any] = {"track_times": False}
    if path in _COMPRESSED:
        max_rows = _GIBBS_SETS_PER_CHUNK if path.startswith("gibbs/") else None
        options.update(
            chunks=_chunk_shape(array.shape, array.dtype.itemsize, max_rows),
            compression="gzip",
            compression_opts=_GZIP_LEVEL,
            shuffle=True,
        )
    file.create_dataset(path, data=array, **options)
    if "chunks" in options:
        # HDF5 allocates a chunk's file space when the chunk cache is flushed. Left to
        # the file's close, the datasets' caches are flushed in an order that varies
        # from process to process (it follows memory addresses), so the same table
        # could be laid out in two ways. Flushing here writes this dataset's chunks
        # now, in creation order: the same bytes every time.
        file.flush()


def _groups(layout: _Layout) -> list[str]:
    """Every group path of the layout (root excluded), parents first."""
    paths = {p for p in layout.attrs if p}
    for dataset in layout.datasets:
        parts = dataset.split("/")[:-1]
        paths.update("/".join(parts[: k + 1]) for k in range(len(parts)))
    return sorted(paths)


def _write_layout(layout: _Layout, path: Path) -> None:
    """Write every item, in a fixed order, to a new file at ``path``."""
    with _create_file(path) as file:
        for group in _groups(layout):
            _create_group(file, group)
        for name in sorted(layout.datasets):
            _write_dataset(file, name, layout.datasets[name])
        for obj in sorted(layout.attrs):
            target = file[obj] if obj else file
            for name, value in sorted(layout.attrs[obj].items()):
                _write_attribute(target, name, value)


def _write_attribute(obj: h5py.Group, name: str, value: Any) -> None:
    """Numbers and arrays as they are; strings as fixed-length UTF-8 (no global heap)."""
    if isinstance(value, str):
        data = value.encode("utf-8")
        dtype = h5py.string_dtype("utf-8", max(1, len(data)))
        obj.attrs.create(name, np.array(data, dtype=dtype.str), dtype=dtype)
    else:
        obj.attrs[name] = value


def _fsync(path: Path, *, directory: bool = False) -> None:
    flags = os.O_RDONLY | (getattr(os, "O_DIRECTORY", 0) if directory else 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        if directory:  # not supported on every platform: best effort
            return
        raise
    try:
        os.fsync(fd)
    except OSError:
        if not directory:
            raise
    finally:
        os.close(fd)


def save_table(table: Table, path: str | os.PathLike[str]) -> Path:
    """Write a table to an HDF5 file, atomically and byte-stably.

    The file is first written to ``.<name>.tmp-<pid>`` in the same directory,
    flushed to disk, then renamed over ``path``: an interrupted run never
    leaves a file (partial or not) under the final name, and an existing
    file there is replaced only by a complete one. Writing the same table
    twice gives byte-identical files.

    Parameters
    ----------
    table : Table
        The table and its records; checked with the same rules as
        :func:`load_table` before anything is written.
    path : str or os.PathLike
        Destination (conventionally ``*.h5``); its directory must exist.

    Returns
    -------
    pathlib.Path
        The path written.

    Raises
    ------
    ValueError
        When the table cannot be stored or would not load back (message
        ``"cannot save table to <path>: <problem>"``).
    OSError
        When the file cannot be written.
    """
    path = Path(path)
    try:
        layout = _layout(table)
    except (TypeError, ValueError, OverflowError) as exc:
        raise ValueError(f"cannot save table to {path}: {exc}") from exc
    problems: list[str] = []
    _read_table(_MemorySource(layout), problems)
    if problems:
        raise ValueError(f"cannot save table to {path}: {_summary(problems)}")
    if not path.parent.is_dir():
        raise FileNotFoundError(f"cannot save table to {path}: no directory {path.parent}")
    temporary = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        _write_layout(layout, temporary)
        _fsync(temporary)
        os.replace(temporary, path)
    except BaseException:  # KeyboardInterrupt included: never leave the temporary file
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise
    _fsync(path.parent, directory=True)
    return path


# ---------------------------------------------------------------------------
# Reading and checking
# ---------------------------------------------------------------------------
def _item(path: str, name: str | None = None) -> str:
    """Item name in messages: ``gibbs/rows`` (dataset), ``gibbs@thin`` or ``@kind`` (attribute)."""
    return path if name is None else f"{path}@{name}"


def _as_int(value: Any) -> int | None:
    if isinstance(value, (bool, np.bool_)):
        return None
    if isinstance(value, (int, np.integer)):
        return int(value)
    return None


def _as_float(value: Any) -> float | None:
    if isinstance(value, (bool, np.bool_)):
        return None
    if isinstance(value, (int, float, np.integer, np.floating)):
        return float(value)
    return None


def _as_str(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            return None
    return None


def _as_vector(value: Any, kinds: str, dtype: type) -> np.ndarray | None:
    if isinstance(value, np.ndarray) and value.ndim == 1 and value.dtype.kind in kinds:
        return value.astype(dtype)
    return None


def _as_ints(value: Any) -> np.ndarray | None:
    return _as_vector(value, "iu", np.int64)


def _as_floats(value: Any) -> np.ndarray | None:
    return _as_vector(value, "iuf", np.float64)


#: Attribute converters by expected kind, with the description used in messages.
_CONVERTERS: dict[str, tuple[Callable[[Any], Any], str]] = {
    "int": (_as_int, "an integer"),
    "float": (_as_float, "a real number"),
    "str": (_as_str, "a UTF-8 string"),
    "ints": (_as_ints, "a 1-D integer array"),
    "floats": (_as_floats, "a 1-D real array"),
}
#: Dataset dtype kinds by name, for messages.
_KIND_NAMES = {"u": "unsigned integer", "f": "float"}
#: What h5py raises on damaged or exotic content (a missing item is not an error: see _FileSource).
_HDF5_ERRORS = (KeyError, OSError, RuntimeError, TypeError, ValueError)


def _shape_text(shape: tuple[int | None, ...]) -> str:
    """``(12, *)`` for an expected shape (None: any extent)."""
    inner = ", ".join("*" if e is None else str(e) for e in shape)
    return f"({inner},)" if len(shape) == 1 else f"({inner})"


def _any_none(*values: Any) -> bool:
    """True when one of ``values`` is None (safe with arrays, unlike ``None in values``)."""
    return any(value is None for value in values)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


@dataclass
class _Reader:
    """Reads items from a source, recording a one-line problem per bad item."""

    source: Any
    problems: list[str]

    def problem(self, message: str) -> None:
        self.problems.append(message)

    def attr(self, path: str, name: str, kind: str, *, fatal: bool = False) -> Any:
        """Attribute ``name`` of group ``path`` converted by ``kind``; None on a problem."""
        convert, description = _CONVERTERS[kind]
        try:
            attrs = self.source.attrs(path)
            raw = None if attrs is None else attrs.get(name)
        except _HDF5_ERRORS as exc:
            attrs, raw = {}, exc
        value = None if raw is None or isinstance(raw, Exception) else convert(raw)
        if value is not None:
            return value
        if attrs is None:
            message = f"group {path} is missing"
        elif raw is None:
            message = f"attribute {_item(path, name)} is missing"
        elif isinstance(raw, Exception):
            message = f"attribute {_item(path, name)} is unreadable ({_one_line(raw)})"
        else:
            message = f"attribute {_item(path, name)} must be {description}, got {_short(raw)}"
        if fatal:
            raise _Fatal(message)
        if message not in self.problems:  # a missing group is reported once
            self.problem(message)
        return None

    def has_dataset(self, path: str) -> bool:
        try:
            return self.source.dataset(path) is not None
        except _HDF5_ERRORS:
            return True  # present but damaged: array() reports it

    def array(
        self, path: str, shape: tuple[int | None, ...], kinds: str, *, dtype: np.dtype | None = None
    ) -> np.ndarray | None:
        """Dataset ``path`` if its shape (None: any extent) and dtype fit; None on a problem."""
        try:
            return self._array(path, shape, kinds, dtype)
        except _HDF5_ERRORS as exc:
            self.problem(f"dataset {path} is unreadable ({_one_line(exc)})")
            return None

    def _array(
        self, path: str, shape: tuple[int | None, ...], kinds: str, dtype: np.dtype | None
    ) -> np.ndarray | None:
        dataset = self.source.dataset(path)
        if dataset is None:
            self.problem(f"dataset {path} is missing")
            return None
        actual = tuple(dataset.shape)
        fits = len(actual) == len(shape) and all(e in (None, a) for e, a in zip(shape, actual))
        if not fits:
            self.problem(f"dataset {path} has shape {actual}, expected {_shape_text(shape)}")
            return None
        if (dtype is not None and dataset.dtype != dtype) or dataset.dtype.kind not in kinds:
            wanted = str(dtype) if dtype is not None else _KIND_NAMES[kinds]
            self.problem(f"dataset {path} has dtype {dataset.dtype}, expected {wanted}")
            return None
        values = np.asarray(dataset[()])
        return values.astype(np.float64, copy=False) if kinds == "f" else values


@dataclass(frozen=True)
class _Header:
    kind: str
    n_rows: int
    n_cols: int
    g: int
    m: int


def _check_format(reader: _Reader) -> None:
    """Raise _Fatal unless the root says ``lbm-bench-table`` with a supported major version."""
    name = reader.attr("", "format", "str", fatal=True)
    if name != FORMAT_NAME:
        raise _Fatal(f"not an {FORMAT_NAME} file (@format is {name!r})")
    version = reader.attr("", "format_version", "str", fatal=True)
    match = _VERSION_PATTERN.match(version)
    if match is None:
        raise _Fatal(f"@format_version must look like MAJOR.MINOR, got {version!r}")
    major = int(match.group(1))
    if major > _MAJOR:
        raise _Fatal(
            f"format version {version} is newer than this reader (supports {_MAJOR}.x);"
            " upgrade lbm-bench"
        )
    if major < _MAJOR:
        raise _Fatal(f"format version {version} is not supported (this reader reads {_MAJOR}.x)")


def _read_header(reader: _Reader) -> _Header:
    _check_format(reader)
    kind = reader.attr("", "kind", "str", fatal=True)
    if kind not in KINDS:
        raise _Fatal(f"@kind must be one of {', '.join(KINDS)}, got {kind!r}")
    sizes = []
    for name in ("n_rows", "n_cols", "n_row_clusters", "n_col_clusters"):
        value = reader.attr("", name, "int", fatal=True)
        if value < 1:
            raise _Fatal(f"@{name} must be >= 1, got {value}")
        sizes.append(value)
    return _Header(kind, *sizes)


def _read_data(reader: _Reader, h: _Header) -> np.ndarray | None:
    dtype = _DATA_DTYPES[h.kind]
    data = reader.array("data", (h.n_rows, h.n_cols), dtype.kind, dtype=dtype)
    if data is None:
        return None
    if h.kind == "gaussian" and not np.all(np.isfinite(data)):
        reader.problem("dataset data holds non-finite values")
    elif h.kind == "poisson" and data.min() < 0:
        reader.problem(f"dataset data holds a negative count ({int(data.min())})")
    elif h.kind == "bernoulli" and data.max() > 1:
        reader.problem(f"dataset data holds a value other than 0/1 ({int(data.max())})")
    else:
        return data
    return None


def _check_range(
    reader: _Reader, path: str, labels: np.ndarray | None, n_clusters: int
) -> np.ndarray | None:
    if labels is not None and labels.size and labels.max() >= n_clusters:
        reader.problem(f"dataset {path} holds label {int(labels.max())}, outside [0, {n_clusters})")
        return None
    return labels


def _read_labels(reader: _Reader, group: str, h: _Header) -> tuple[np.ndarray, np.ndarray] | None:
    rows = reader.array(f"{group}/rows", (h.n_rows,), "u")
    cols = reader.array(f"{group}/cols", (h.n_cols,), "u")
    rows = _check_range(reader, f"{group}/rows", rows, h.g)
    cols = _check_range(reader, f"{group}/cols", cols, h.m)
    if rows is None or cols is None:
        return None
    return rows.astype(np.int64), cols.astype(np.int64)


def _check_chains(
    reader: _Reader, sets: dict[str, np.ndarray | None], lengths: np.ndarray, n_chains: int | None
) -> None:
    """Record the problems of ``gibbs@chain_lengths`` against ``gibbs@n_chains`` and the sets."""
    if lengths.size == 0 or lengths.min() < 0 or lengths.sum() < 1:
        reader.problem("attribute gibbs@chain_lengths must be non-negative with a positive sum")
        return
    if n_chains is not None and n_chains != lengths.size:
        reader.problem(
            f"attribute gibbs@n_chains is {n_chains} but chain_lengths has {lengths.size} entries"
        )
    total = int(lengths.sum())
    for name, values in sets.items():
        if values is not None and values.shape[0] != total:
            reader.problem(
                f"dataset {name} holds {values.shape[0]} label sets"
                f" but sum(gibbs@chain_lengths) is {total}"
            )


def _read_gibbs(reader: _Reader, h: _Header) -> GibbsSamples | None:
    sets = {
        "gibbs/rows": reader.array("gibbs/rows", (None, h.n_rows), "u"),
        "gibbs/cols": reader.array("gibbs/cols", (None, h.n_cols), "u"),
    }
    rows = _check_range(reader, "gibbs/rows", sets["gibbs/rows"], h.g)
    cols = _check_range(reader, "gibbs/cols", sets["gibbs/cols"], h.m)
    lengths = reader.attr("gibbs", "chain_lengths", "ints")
    n_chains = reader.attr("gibbs", "n_chains", "int")
    burn_in = reader.attr("gibbs", "burn_in", "int")
    thin = reader.attr("gibbs", "thin", "int")
    count = len(reader.problems)
    if burn_in is not None and burn_in < 0:
        reader.problem(f"attribute gibbs@burn_in must be >= 0, got {burn_in}")
    if thin is not None and thin < 1:
        reader.problem(f"attribute gibbs@thin must be >= 1, got {thin}")
    if lengths is not None:
        _check_chains(reader, sets, lengths, n_chains)
    if len(reader.problems) > count or _any_none(rows, cols, lengths, n_chains, burn_in, thin):
        return None
    return GibbsSamples(rows=rows, cols=cols, chain_lengths=lengths, burn_in=burn_in, thin=thin)


def _read_effects(reader: _Reader, group: str, h: _Header) -> dict[str, np.ndarray] | None:
    """Poisson effects of ``group`` ({} when absent, None on a problem)."""
    present = [reader.has_dataset(f"{group}/{name}") for name in _EFFECTS]
    if not any(present):
        return {}
    if h.kind != "poisson" or not all(present):
        reader.problem(
            f"{group}/row_effects and {group}/col_effects must come together,"
            " for the poisson kind only"
        )
        return None
    arrays = {
        "row_effects": reader.array(f"{group}/row_effects", (h.n_rows,), "f"),
        "col_effects": reader.array(f"{group}/col_effects", (h.n_cols,), "f"),
    }
    return None if _any_none(*arrays.values()) else arrays


def _read_model(reader: _Reader, h: _Header) -> LatentBlockModel | None:
    row_props = reader.array("params/row_proportions", (h.g,), "f")
    col_props = reader.array("params/col_proportions", (h.m,), "f")
    blocks = {
        name: reader.array(f"params/{name}", (h.g, h.m), "f") for name in _BLOCK_PARAMETERS[h.kind]
    }
    effects = _read_effects(reader, "params", h)
    if _any_none(row_props, col_props, effects, *blocks.values()):
        return None
    try:
        model = model_from_parameters(h.kind, row_props, col_props, **blocks, **effects)
    except (TypeError, ValueError) as exc:
        reader.problem(f"params: {exc}")
        return None
    # The constructor renormalises the proportions, which may move them by an
    # ulp; keep the stored values so that a round trip is exact.
    model.row_proportions, model.col_proportions = row_props, col_props
    return model


def _read_design(reader: _Reader, h: _Header) -> ModelDesign | None:
    arrays = {
        "row_proportions": reader.array("params/design/row_proportions", (h.g,), "f"),
        "col_proportions": reader.array("params/design/col_proportions", (h.m,), "f"),
        "pattern": reader.array("params/design/pattern", (h.g, h.m), "f"),
        "dispersion": reader.array("params/design/dispersion", (h.g, h.m), "f"),
    }
    effects = _read_effects(reader, "params/design", h)
    base_rate = reader.attr("params/design", "base_rate", "float")
    if _any_none(effects, base_rate, *arrays.values()):
        return None
    return ModelDesign(kind=h.kind, base_rate=base_rate, **arrays, **effects)


def _read_attrs(reader: _Reader, path: str, kinds: dict[str, str]) -> dict[str, Any] | None:
    values = {name: reader.attr(path, name, kind) for name, kind in kinds.items()}
    return None if _any_none(*values.values()) else values


def _read_calibration(reader: _Reader, design: ModelDesign | None) -> CalibrationResult | None:
    kinds = {
        "scale": "float", "bracket": "floats", "n_steps": "int", "mean_error": "float",
        "error_std": "float", "target_risk": "float", "tolerance": "float", "n_tables": "int",
    }  # fmt: skip
    values = _read_attrs(reader, "calibration", kinds)
    n_steps = None if values is None else values["n_steps"]
    history = reader.array("calibration/history", (n_steps, None), "f")
    if values is None or history is None:
        return None
    if history.shape[1] == 3:  # format 1.0: no n_tables column, every step used n_tables
        history = np.column_stack([history, np.full(n_steps, float(values["n_tables"]))])
    elif history.shape[1] != 4:
        reader.problem(f"dataset calibration/history has shape {history.shape}, expected ({n_steps}, 4)")
        return None
    if values["bracket"].shape != (2,):
        size = values["bracket"].size
        reader.problem(f"attribute calibration@bracket must hold 2 values, got {size}")
        return None
    values["bracket"] = (float(values["bracket"][0]), float(values["bracket"][1]))
    return CalibrationResult(history=history, design=design, **values)


def _read_rejection(reader: _Reader) -> RejectionRecord | None:
    kinds = {
        "attempts": "int", "screened_out": "int", "acceptance_rate": "float",
        "tolerance": "float", "balance": "float",
    }  # fmt: skip
    values = _read_attrs(reader, "rejection", kinds)
    attempts = None if values is None else values["attempts"]
    risks = reader.array("rejection/candidate_risks", (attempts,), "f")
    if values is None or risks is None:
        return None
    if math.isnan(values["balance"]):
        values["balance"] = None
    return RejectionRecord(candidate_risks=risks, **values)


def _read_risk(reader: _Reader, gibbs: GibbsSamples | None) -> RiskEstimate | None:
    names = {"risk": "risk", "mcse": "risk_mcse", "rhat": "risk_rhat", "ess": "risk_ess",
             "row_loss": "row_loss", "col_loss": "col_loss"}  # fmt: skip
    values = {field_: reader.attr("", name, "float") for field_, name in names.items()}
    if _any_none(gibbs, *values.values()):
        return None
    return RiskEstimate(**values, n_samples=gibbs.n_samples, n_chains=gibbs.n_chains)


def _read_options(reader: _Reader) -> dict | None:
    text = reader.attr("", "options_json", "str")
    if text is None:
        return None
    try:
        options = json.loads(text)
    except ValueError as exc:
        reader.problem(f"attribute @options_json is not valid JSON ({exc})")
        return None
    if not isinstance(options, dict):
        reader.problem("attribute @options_json must hold a JSON object")
        return None
    return options


def _read_scalars(reader: _Reader) -> dict[str, Any] | None:
    reader.attr("", "lbm_bench_version", "str")  # required, for information only
    values = _read_attrs(reader, "", {"scale": "float", "target_risk": "float", "seed": "int"})
    params_scale = reader.attr("params", "scale", "float")
    if values is None or params_scale is None:
        return None
    if not (math.isfinite(values["scale"]) and values["scale"] > 0):
        reader.problem(f"attribute @scale must be finite and > 0, got {values['scale']!r}")
        return None
    if params_scale != values["scale"]:
        reader.problem(
            f"attribute params@scale ({params_scale!r}) differs from @scale ({values['scale']!r})"
        )
        return None
    return values


def _read_table(source: Any, problems: list[str]) -> Table | None:
    """Check every item of ``source`` and build the Table (None when ``problems`` is not empty).

    Raises
    ------
    _Fatal
        When the file is not a table of a supported version, or lacks the header.
    """
    reader = _Reader(source, problems)
    h = _read_header(reader)
    parts = {
        "data": _read_data(reader, h),
        "truth": _read_labels(reader, "truth", h),
        "map": _read_labels(reader, "map", h),
        "gibbs": _read_gibbs(reader, h),
        "model": _read_model(reader, h),
        "design": _read_design(reader, h),
        "rejection": _read_rejection(reader),
        "options": _read_options(reader),
        "scalars": _read_scalars(reader),
    }
    parts["calibration"] = _read_calibration(reader, parts["design"])
    parts["risk"] = _read_risk(reader, parts["gibbs"])
    if problems or _any_none(*parts.values()):
        if not problems:  # pragma: no cover - every None above records a problem
            problems.append("incomplete file")
        return None
    (truth_rows, truth_cols), (map_rows, map_cols) = parts["truth"], parts["map"]
    return Table(
        data=parts["data"],
        model=parts["model"],
        design=parts["design"],
        truth_rows=truth_rows,
        truth_cols=truth_cols,
        map_rows=map_rows,
        map_cols=map_cols,
        gibbs=parts["gibbs"],
        risk=parts["risk"],
        calibration=parts["calibration"],
        rejection=parts["rejection"],
        options=parts["options"],
        **parts["scalars"],
    )


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def _require_file(path: Path) -> None:
    if not path.exists():
        raise FileNotFoundError(2, "No such file or directory", str(path))


@contextlib.contextmanager
def _open(path: Path) -> Iterator[h5py.File]:
    """Open a file read-only; a non-HDF5, truncated or unreadable file is _Fatal."""
    try:
        file = h5py.File(path, "r")
    except OSError as exc:
        raise _Fatal(f"not a readable HDF5 file ({_one_line(exc)})") from exc
    with file:
        yield file


def _summary(problems: list[str]) -> str:
    extra = len(problems) - 1
    return problems[0] + (f" (and {extra} more problem{'s' if extra > 1 else ''})" if extra else "")


def _inspect(path: Path) -> tuple[Table | None, list[str]]:
    _require_file(path)
    problems: list[str] = []
    try:
        with _open(path) as file:
            table = _read_table(_FileSource(file), problems)
    except _Fatal as exc:
        return None, problems + [str(exc)]
    except OSError as exc:  # a damaged chunk or heap, met while reading
        return None, problems + [f"unreadable HDF5 content ({_one_line(exc)})"]
    return table, problems


def load_table(path: str | os.PathLike[str]) -> Table:
    """Read a table written by :func:`save_table` (any format version 1.x).

    Parameters
    ----------
    path : str or os.PathLike
        An lbm-bench table file.

    Returns
    -------
    Table
        With ``data`` as float64 (Gaussian), int64 (Poisson) or uint8
        (Bernoulli), truth and MAP labels as int64, Gibbs label sets in the
        stored unsigned dtype, the risk estimate rebuilt from the stored
        attributes (``n_samples`` and ``n_chains`` from the Gibbs sets),
        ``calibration.design`` set to the table's design and empty
        ``timings`` (not stored).

    Raises
    ------
    FileNotFoundError
        When ``path`` does not exist.
    FormatError
        When the file is not a valid table file; the one-line message starts
        with the path and names the first problem found.
    """
    path = Path(path)
    table, problems = _inspect(path)
    if problems or table is None:
        raise FormatError(f"{path}: {_summary(problems or ['invalid file'])}")
    return table


def check_file(path: str | os.PathLike[str]) -> list[str]:
    """All the problems :func:`load_table` would refuse a file for.

    Parameters
    ----------
    path : str or os.PathLike
        A file supposed to be an lbm-bench table.

    Returns
    -------
    list of str
        One-line descriptions (without the path); empty when the file loads.
        After a problem that makes the rest unreadable (not HDF5, another
        format, a newer major version, a missing header), only that one.

    Raises
    ------
    FileNotFoundError
        When ``path`` does not exist.
    """
    return _inspect(Path(path))[1]


def _python(value: Any) -> Any:
    """An attribute value as plain Python (str, int, float or list)."""
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    return value


#: Group attributes repeated at the top level of :func:`read_info` (names unique in the layout).
_INFO_SHORTCUTS = {
    "gibbs": ("n_chains", "chain_lengths", "burn_in", "thin"),
    "calibration": ("n_steps", "n_tables", "bracket"),
    "rejection": ("attempts", "screened_out", "acceptance_rate", "balance"),
}


def _info_shortcuts(
    groups: dict[str, dict[str, Any]], datasets: dict[str, dict[str, Any]]
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if "data" in datasets:
        out["shape"] = datasets["data"]["shape"]
    if "gibbs/rows" in datasets:
        out["n_samples"] = datasets["gibbs/rows"]["shape"][0]
    for group, names in _INFO_SHORTCUTS.items():
        attrs = groups.get(group, {})
        out.update({name: attrs[name] for name in names if name in attrs})
    return out


def _plain_attributes(obj: h5py.Group) -> dict[str, Any]:
    return {key: _python(value) for key, value in _SafeAttributes(obj.attrs).items()}


def read_info(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Attributes and dataset shapes of a table file, without reading the datasets.

    Only the format name and major version are checked (use
    :func:`check_file` for a full check).

    Parameters
    ----------
    path : str or os.PathLike
        An lbm-bench table file.

    Returns
    -------
    dict
        Plain Python values (str, int, float, list, tuple):

        - every root attribute by name (``kind``, ``n_rows``, ``seed``,
          ``risk``, ``risk_mcse``, ``format_version``...);
        - ``path``: the path as given;
        - shortcuts: ``shape`` (of ``data``), ``n_samples`` (Gibbs sets),
          ``n_chains``, ``chain_lengths``, ``burn_in``, ``thin`` (``gibbs``),
          ``n_steps``, ``n_tables``, ``bracket`` (``calibration``),
          ``attempts``, ``screened_out``, ``acceptance_rate``, ``balance``
          (``rejection``; NaN balance means none);
        - ``groups``: ``{group path: {attribute: value}}`` for every group;
        - ``datasets``: ``{dataset path: {"shape": tuple, "dtype": str}}``.

    Raises
    ------
    FileNotFoundError
        When ``path`` does not exist.
    FormatError
        When the file is not HDF5, of another format or of a newer major version.

    Examples
    --------
    >>> info = read_info("tests/data/table_v1.h5")  # doctest: +SKIP
    >>> info["kind"], info["shape"], info["n_samples"]  # doctest: +SKIP
    ('poisson', (12, 10), 50)
    """
    path = Path(path)
    groups: dict[str, dict[str, Any]] = {}
    datasets: dict[str, dict[str, Any]] = {}

    def visit(name: str, obj: Any) -> None:
        if isinstance(obj, h5py.Dataset):
            datasets[name] = {"shape": tuple(obj.shape), "dtype": str(obj.dtype)}
        elif isinstance(obj, h5py.Group):
            groups[name] = _plain_attributes(obj)

    _require_file(path)
    try:
        with _open(path) as file:
            _check_format(_Reader(_FileSource(file), []))
            attributes = _plain_attributes(file)
            file.visititems(visit)
    except _Fatal as exc:
        raise FormatError(f"{path}: {exc}") from None
    except _HDF5_ERRORS as exc:
        raise FormatError(f"{path}: unreadable HDF5 content ({_one_line(exc)})") from None
    info: dict[str, Any] = {"path": str(path), **_info_shortcuts(groups, datasets)}
    info.update(groups=groups, datasets=datasets)
    info.update(attributes)  # root attributes win (none of version 1.x uses the names above)
    return info
