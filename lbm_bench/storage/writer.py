"""Writing a :class:`~lbm_bench.protocol.table.Table` to an ``lbm-bench-table`` file.

Writing is atomic (temporary file in the same directory, fsync, then the final
name) and byte-stable: the same Table always gives the same bytes (no
timestamps, chunk shapes computed from the array shapes only, fixed
compression, fixed creation order, fixed library-version bounds, each chunked
dataset flushed as soon as it is written), for a given build of h5py, HDF5 and
zlib. Before anything is written, the table's layout is checked by the reader's
own checks (:func:`lbm_bench.storage.validate.read_table`), so that no file is
written that would not load back.

HDF5 builds the file in memory (its ``core`` driver, without a backing store:
the same bytes as a file written directly), and Python writes those bytes to
disk. A full disk or a file-size limit then fails one ``write`` with an
``errno`` that :func:`save_table` reports in words, instead of failing inside
HDF5, whose error leaves the library in a state that prints its internals and
can crash the interpreter at exit. The image costs about the file's size in
memory, twice while it is copied out: the table's data are about that size,
far below the peak of generating the table.
"""

from __future__ import annotations

import json
import math
import numbers
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import h5py
import numpy as np

from lbm_bench._atomic import atomic_path, write_error
from lbm_bench._dtypes import smallest_uint
from lbm_bench._validation import check_choice, check_label_sets, check_labels, describe_value
from lbm_bench.models.data import TableData
from lbm_bench.models.family import Family
from lbm_bench.protocol.request import RISK_CRITERIA
from lbm_bench.protocol.table import Table
from lbm_bench.storage.chunking import dataset_options
from lbm_bench.storage.design_path import design_path_layout
from lbm_bench.storage.format import (
    BAYES_RISK_ATTRIBUTES,
    DESIGN_ARRAYS,
    FLOOR_ATTRIBUTES,
    FORMAT_NAME,
    GROUP_ATTRIBUTES,
    MAX_STRING_BYTES,
    MISSING_ATTRIBUTES,
    RISK_ATTRIBUTES,
    ROOT_ATTRIBUTES,
    data_dtype,
    header_attributes,
    version_for,
)
from lbm_bench.storage.item_reader import summary
from lbm_bench.storage.missing_mask import missing_layout
from lbm_bench.storage.sources import Layout, MemorySource
from lbm_bench.storage.sparse import CSR_ENCODING, csr_arrays
from lbm_bench.storage.validate import read_table

__all__ = ["save_table"]


# ---------------------------------------------------------------------------
# Values as stored
# ---------------------------------------------------------------------------
def _int64(name: str, value: Any) -> np.int64:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an integer, got {describe_value(value)}")
    if not -(2**63) <= int(value) < 2**63:
        raise ValueError(f"{name} must fit in a signed 64-bit integer, got {int(value)}")
    return np.int64(value)


def _f64(name: str, value: Any) -> np.float64:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {describe_value(value)}")
    return np.float64(value)


def _string(name: str, value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string, got {describe_value(value)}")
    return value


#: How a value of each attribute kind of :mod:`~lbm_bench.storage.format` is stored.
_STORE = {
    "int": _int64,
    "float": _f64,
    "str": _string,
    "ints": lambda name, value: np.asarray(value, dtype=np.int64),
    "floats": lambda name, value: np.asarray(value, dtype=np.float64),
}


def _attributes(kinds: Mapping[str, str], values: Mapping[str, Any], where: str) -> dict[str, Any]:
    """Every attribute of ``kinds`` from ``values``, as stored (``where`` names them in errors)."""
    missing = set(kinds) ^ set(values)
    if missing:  # pragma: no cover - a writer out of step with storage.format
        raise RuntimeError(f"{where or 'root'} attributes out of step with the format: "
                           f"{sorted(missing)}")
    prefix = f"{where}." if where else ""
    return {name: _STORE[kind](prefix + name, values[name]) for name, kind in kinds.items()}


def _record(group: str, record: Any, **values: Any) -> dict[str, Any]:
    """Attributes of ``group``: the fields of ``record`` of the same names, unless in ``values``."""
    kinds = GROUP_ATTRIBUTES[group]
    values = {name: values[name] if name in values else getattr(record, name) for name in kinds}
    return _attributes(kinds, values, group)


def _json_default(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"table.options holds a value JSON cannot store: {describe_value(value)}")


def _options_json(options: dict) -> str:
    text = json.dumps(options, sort_keys=True, default=_json_default)
    size = len(text.encode("utf-8"))
    if size > MAX_STRING_BYTES:
        raise ValueError(
            f"table.options take {size} bytes as JSON, more than the {MAX_STRING_BYTES} an "
            "attribute holds"
        )
    return text


# ---------------------------------------------------------------------------
# The layout of a table
# ---------------------------------------------------------------------------
def _root_attrs(table: Table) -> dict[str, Any]:
    from lbm_bench._version import __version__

    n_rows, n_cols = table.data.shape
    values = {
        "format": FORMAT_NAME,
        "format_version": "",  # set by _layout once every item is known
        "lbm_bench_version": str(__version__),
        "kind": table.model.kind,
        "n_rows": n_rows,
        "n_cols": n_cols,
        "n_row_clusters": table.model.n_row_clusters,
        "n_col_clusters": table.model.n_col_clusters,
        "target_risk": table.target_risk,
        "seed": table.seed,
        "scale": table.scale,
        "options_json": _options_json(table.options),
    }
    values.update({attr: getattr(table.risk, name) for name, attr in RISK_ATTRIBUTES.items()})
    attrs = _attributes(ROOT_ATTRIBUTES, values, "")
    # 1.2
    attrs.update(_attributes(header_attributes(table.model.family), table.header_values(), ""))
    return attrs


def _label_items(table: Table, layout: Layout) -> None:
    n_rows, n_cols = table.data.shape
    g, m = table.model.block_shape
    row_dtype, col_dtype = smallest_uint(g), smallest_uint(m)
    gibbs = table.gibbs
    labelings = (
        ("truth", "truth_", check_labels, table.truth_rows, table.truth_cols),
        ("map", "map_", check_labels, table.map_rows, table.map_cols),
        ("gibbs", "gibbs.", check_label_sets, gibbs.rows, gibbs.cols),
    )
    for group, prefix, check, rows, cols in labelings:
        rows = check(f"{prefix}rows", rows, length=n_rows, n_clusters=g)
        cols = check(f"{prefix}cols", cols, length=n_cols, n_clusters=m)
        layout.datasets[f"{group}/rows"] = rows.astype(row_dtype, copy=False)
        layout.datasets[f"{group}/cols"] = cols.astype(col_dtype, copy=False)
    layout.attrs["gibbs"] = _record("gibbs", gibbs)


def _param_items(table: Table, layout: Layout) -> None:
    model, design = table.model, table.design
    layout.attrs["params"] = _record("params", table)
    layout.datasets["params/row_proportions"] = np.asarray(model.row_proportions, dtype=np.float64)
    layout.datasets["params/col_proportions"] = np.asarray(model.col_proportions, dtype=np.float64)
    for name, values in model.block_parameters().items():
        layout.datasets[f"params/{name}"] = np.asarray(values, dtype=np.float64)
    layout.attrs["params/design"] = _record("params/design", design)
    if design.density is not None:  # 1.4: a sparse design
        layout.attrs["params/design"].update(
            _attributes({"density": "float"}, {"density": design.density}, "params/design"))
    for name in DESIGN_ARRAYS:
        values = getattr(design, name)
        if values is not None:
            layout.datasets[f"params/design/{name}"] = np.asarray(values, dtype=np.float64)
    datasets, attrs = design_path_layout(design)  # 1.5: a fitted design, a design file's digest
    layout.datasets.update(datasets)
    layout.attrs["params/design"].update(
        _attributes({"digest": "str"}, attrs, "params/design") if attrs else {})


def _record_items(table: Table, layout: Layout) -> None:
    cal, rej = table.calibration, table.rejection
    layout.attrs["calibration"] = _record("calibration", cal)
    history = np.asarray(cal.history, dtype=np.float64)
    if cal.method == "bisection" and np.all(history[:, 3] == cal.n_tables):
        # what the 1.0 layout expresses (a dichotomy on a fixed number of tables): written
        # as 1.0 wrote it, so a 1.0 table keeps its bytes
        history = history[:, :3]
    else:  # 1.1: the method, and n_tables per evaluation in a fourth column
        layout.attrs["calibration"].update(
            _attributes({"method": "str"}, {"method": cal.method}, "calibration"))
    layout.datasets["calibration/history"] = history
    # 1.1, criterion "bayes": the gap between the MAP's risk and the floor
    if cal.gap_history is not None:
        layout.attrs["calibration"].update(
            _attributes({"gap": "float"}, {"gap": cal.gap}, "calibration"))
        layout.datasets["calibration/gaps"] = np.asarray(cal.gap_history,
                                                         dtype=np.float64).reshape(-1, 4)
    balance = math.nan if rej.balance is None else rej.balance
    layout.attrs["rejection"] = _record("rejection", rej, balance=balance)
    layout.datasets["rejection/candidate_risks"] = np.asarray(rej.candidate_risks, dtype=np.float64)


def _sparse_data_items(data: Any, family: Family, layout: Layout) -> None:
    """``data`` of a sparse table: the group of its canonical CSR arrays (version 1.1).

    The values are checked by the reader's checks on the layout (see :func:`save_table`).
    """
    if len(data.shape) != 2:
        raise ValueError(f"data must be 2-D, got shape {data.shape}")
    for name, array in csr_arrays(data, data_dtype(family)).items():
        layout.datasets[f"data/{name}"] = array
    layout.attrs["data"] = {
        "encoding": CSR_ENCODING, "shape": np.asarray(data.shape, dtype=np.int64)
    }


def _floor_items(table: Table, layout: Layout) -> None:
    """Version 1.1 items: the Bayes labels, their risk, the criterion, the posterior marginals."""
    floor = (table.bayes_rows, table.bayes_cols, table.bayes_risk)
    if all(item is None for item in floor):
        if table.criterion != "map":
            raise ValueError(f"criterion {table.criterion!r} needs the Bayes labels and their risk")
        return  # a table without the floor is written as before (format 1.0)
    if any(item is None for item in floor):
        raise ValueError("bayes_rows, bayes_cols and bayes_risk must be given together")
    check_choice("criterion", table.criterion, RISK_CRITERIA)
    risk = table.bayes_risk
    if risk.n_samples != table.gibbs.n_samples or risk.n_chains != table.gibbs.n_chains:
        raise ValueError(
            f"bayes_risk was estimated from {risk.n_samples} sets in {risk.n_chains} chains,"
            f" but gibbs holds {table.gibbs.n_samples} sets in {table.gibbs.n_chains} chains"
        )
    n_rows, n_cols = table.data.shape
    g, m = table.model.block_shape
    rows = check_labels("bayes_rows", table.bayes_rows, length=n_rows, n_clusters=g)
    cols = check_labels("bayes_cols", table.bayes_cols, length=n_cols, n_clusters=m)
    layout.datasets["bayes/rows"] = rows.astype(smallest_uint(g))
    layout.datasets["bayes/cols"] = cols.astype(smallest_uint(m))
    layout.datasets["posterior/rows"], layout.datasets[
        "posterior/cols"] = table.posterior_marginals()
    values = {attr: getattr(risk, name) for name, attr in BAYES_RISK_ATTRIBUTES.items()}
    values["criterion"] = table.criterion
    layout.attrs[""].update(_attributes(FLOOR_ATTRIBUTES, values, ""))


def _missing_items(table: Table, data: TableData, layout: Layout) -> None:
    """Version 1.3 items of a table with missing entries (:mod:`lbm_bench.storage.missing_mask`)."""
    datasets, attrs = missing_layout(table, data)
    layout.datasets.update(datasets)
    kinds = {"": MISSING_ATTRIBUTES, "missing": {"encoding": "str", "shape": "ints"},
             "params/design": {"missing_spread": "float"}}
    for path, values in attrs.items():
        layout.attrs.setdefault(path, {}).update(_attributes(kinds[path], values, path))


def _layout(table: Table) -> Layout:
    """Every item of the file of ``table`` (raises TypeError/ValueError on unstorable values)."""
    if table.risk.n_samples != table.gibbs.n_samples or table.risk.n_chains != table.gibbs.n_chains:
        raise ValueError(
            f"risk was estimated from {table.risk.n_samples} sets in {table.risk.n_chains} chains,"
            f" but gibbs holds {table.gibbs.n_samples} sets in {table.gibbs.n_chains} chains"
        )
    if table.design.family is not table.model.family:
        kinds = f"{table.design.kind!r} and {table.model.kind!r}"
        raise ValueError(f"the design and the model are of different kinds ({kinds})")
    layout = Layout()
    layout.attrs[""] = _root_attrs(table)
    model = table.model
    data = TableData.incomplete(table.data, name="data")  # NaN: missing entries (format 1.3)
    if data.has_missing:
        data = data.with_table(model.check_table(data.table, name="data"))
    if data.is_sparse:
        _sparse_data_items(data.table, model.family, layout)
    else:
        values = data.table if data.has_missing else model.check_table(table.data, name="data")
        layout.datasets["data"] = np.ascontiguousarray(values, dtype=data_dtype(model.family))
    _label_items(table, layout)
    _param_items(table, layout)
    _record_items(table, layout)
    _floor_items(table, layout)
    _missing_items(table, data, layout)
    layout.attrs[""]["format_version"] = version_for(_item_names(layout))
    return layout


def _item_names(layout: Layout) -> list[str]:
    """Every item of ``layout`` named as in :data:`~lbm_bench.storage.format.MINOR_VERSIONS`."""
    names = list(layout.datasets) + [path for path in layout.attrs if path]
    names += [f"{path}@{name}" for path, attrs in layout.attrs.items() for name in attrs]
    return names


# ---------------------------------------------------------------------------
# Writing the layout
# ---------------------------------------------------------------------------
#: Growth step of the in-memory file (HDF5's core driver); it changes no byte of the file.
_MEMORY_BLOCK = 1 << 20


def _create_file(name: str) -> h5py.File:
    """Create an HDF5 file in memory (``name`` only identifies it) with fixed
    library-version bounds and no timestamps."""
    fapl = h5py.h5p.create(h5py.h5p.FILE_ACCESS)
    fapl.set_libver_bounds(h5py.h5f.LIBVER_EARLIEST, h5py.h5f.LIBVER_V18)
    fapl.set_fclose_degree(h5py.h5f.CLOSE_STRONG)
    fapl.set_fapl_core(block_size=_MEMORY_BLOCK, backing_store=False)
    fcpl = h5py.h5p.create(h5py.h5p.FILE_CREATE)
    fcpl.set_obj_track_times(False)
    fid = h5py.h5f.create(os.fsencode(name), h5py.h5f.ACC_TRUNC, fcpl=fcpl, fapl=fapl)
    return h5py.File(fid)


def _create_group(file: h5py.File, path: str) -> None:
    """Create a group without timestamps (h5py's create_group offers no track_times)."""
    gcpl = h5py.h5p.create(h5py.h5p.GROUP_CREATE)
    gcpl.set_obj_track_times(False)
    h5py.h5g.create(file.id, path.encode("utf-8"), gcpl=gcpl).close()


def _write_dataset(file: h5py.File, path: str, array: np.ndarray) -> None:
    """Write one dataset with the storage of :func:`~lbm_bench.storage.chunking.dataset_options`."""
    options = dataset_options(path, array.shape, array.dtype.itemsize)
    file.create_dataset(path, data=array, **options)
    if "chunks" in options:
        # HDF5 allocates a chunk's file space when the chunk cache is flushed. Left to
        # the file's close, the datasets' caches are flushed in an order that varies
        # from process to process (it follows memory addresses), so the same table
        # could be laid out in two ways. Flushing here writes this dataset's chunks
        # now, in creation order: the same bytes every time.
        file.flush()


def _groups(layout: Layout) -> list[str]:
    """Every group path of the layout (root excluded), parents first."""
    paths = {p for p in layout.attrs if p}
    for dataset in layout.datasets:
        parts = dataset.split("/")[:-1]
        paths.update("/".join(parts[: k + 1]) for k in range(len(parts)))
    return sorted(paths)


def _file_image(layout: Layout, name: str) -> bytes:
    """The bytes of the file of ``layout``: every item written, in a fixed order, to an
    HDF5 file in memory (``name`` identifies it there; nothing is written to disk)."""
    with _create_file(name) as file:
        for group in _groups(layout):
            _create_group(file, group)
        for item in sorted(layout.datasets):
            _write_dataset(file, item, layout.datasets[item])
        for obj in sorted(layout.attrs):
            target = file[obj] if obj else file
            for key, value in sorted(layout.attrs[obj].items()):
                _write_attribute(target, key, value)
        file.flush()
        return file.id.get_file_image()


def _write_image(image: bytes, path: Path) -> None:
    """Write the bytes of a file to the new file ``path``."""
    with open(path, "xb") as handle:
        handle.write(image)


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


def _exists_error(path: Path) -> FileExistsError:
    return FileExistsError(f"cannot save table to {path}: the file exists (overwrite=True replaces "
                           "it)")


def save_table(table: Table, path: str | os.PathLike[str], *, overwrite: bool = True) -> Path:
    """Write a table to an HDF5 file, atomically and byte-stably.

    The file is first written to a hidden temporary file in the same directory
    (``.<name>.tmp-<pid>-<random>``), flushed to disk, then given the name
    ``path``: an interrupted or failed run never leaves a file (partial or not)
    under the final name, and an existing file there is replaced only by a
    complete one. Writing the same table twice gives byte-identical files.

    Parameters
    ----------
    table : Table
        The table and its records; checked with the same rules as
        :func:`~lbm_bench.storage.load_table` before anything is written.
    path : str or os.PathLike
        Destination (conventionally ``*.h5``); its directory must exist.
    overwrite : bool, default=True
        Replace an existing file at ``path`` (atomically: a reader sees the old
        file or the new one). With False an existing file is never replaced,
        not even one that another process creates while this one writes (the
        complete file is hard-linked to ``path``, which fails if the name
        exists): FileExistsError instead. ``lbm-bench generate`` passes False
        unless ``--force``.

    Returns
    -------
    pathlib.Path
        The path written.

    Raises
    ------
    ValueError
        When the table cannot be stored or would not load back (message
        ``"cannot save table to <path>: <problem>"``).
    FileExistsError
        With ``overwrite=False``, when ``path`` exists (before or after the write).
    OSError
        When the file cannot be written, with a one-line message that says why
        in words, e.g. ``"could not write big.h5: no space left on the device"``
        or ``"could not write big.h5: file too large (...)"`` (its ``errno`` is
        the system's: ``ENOSPC``, ``EFBIG``...).

    Examples
    --------
    >>> import tempfile
    >>> from lbm_bench import load_table
    >>> table = load_table("tests/data/table_v1_1.h5")
    >>> path = save_table(table, os.path.join(tempfile.mkdtemp(), "table.h5"))
    >>> bool(np.array_equal(load_table(path).data, table.data)), path.name
    (True, 'table.h5')
    """
    path = Path(path)
    try:
        layout = _layout(table)
    except (TypeError, ValueError, OverflowError) as exc:
        raise ValueError(f"cannot save table to {path}: {exc}") from exc
    problems: list[str] = []
    read_table(MemorySource(layout), problems)
    if problems:
        raise ValueError(f"cannot save table to {path}: {summary(problems)}")
    if not path.parent.is_dir():
        raise FileNotFoundError(f"cannot save table to {path}: no directory {path.parent}")
    if not overwrite and os.path.lexists(path):  # early, before the work; put_in_place decides
        raise _exists_error(path)
    try:
        # KeyboardInterrupt included: nothing left
        with atomic_path(path, overwrite=overwrite) as temporary:
            image = _file_image(layout, str(temporary))
            _write_image(image, temporary)
            del image
            _fsync(temporary)
    except FileExistsError:
        raise _exists_error(path) from None
    except OSError as exc:
        raise write_error(path, exc) from None
    _fsync(path.parent, directory=True)
    return path
