"""The table ``X`` of an AnnData file (``.h5ad``), read with h5py: no anndata dependency.

After the AnnData on-disk specification (anndata 0.8 and later; docs/guide/your-data.md cites it):
the root group says ``encoding-type: anndata``; ``X`` is a dense array (a dataset) or a
sparse array (a group with ``encoding-type`` ``csr_matrix`` or ``csc_matrix``, its
``shape`` attribute and the datasets ``data``, ``indices`` and ``indptr``); ``obs`` and
``var`` are dataframes (groups) whose ``_index`` attribute names the dataset of their
index, a string array: the rows' and columns' names. Files of anndata before 0.8 are read
too: a root without encoding attributes but with ``X`` and ``obs``, a sparse ``X`` named
by ``h5sparse_format`` and ``h5sparse_shape``, and ``obs``/``var`` as compound datasets
whose ``index`` field holds the names.

A CSC ``X`` is converted to CSR (a sparse copy); a sparse ``X`` is never densified.
Everything wrong with the file is an :class:`AnnDataError` (one line, without the file
name): no ``X``, an encoding it does not know, an inconsistent sparse group, names of
the wrong length.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import h5py
import numpy as np
from scipy import sparse as sp

from lbm_bench._validation import one_line

__all__ = ["AnnDataError", "AnnDataX", "is_anndata", "read_anndata_x"]

#: Sparse encodings of ``X`` and the scipy constructor of each.
_SPARSE = {"csr_matrix": sp.csr_array, "csc_matrix": sp.csc_array}
#: Legacy (anndata < 0.8) names of the same, in ``h5sparse_format``.
_LEGACY_SPARSE = {"csr": "csr_matrix", "csc": "csc_matrix"}

#: The memory check called before the table is read: ``(shape, nnz, itemsize, index_size)``,
#: ``nnz`` None for a dense ``X``.
Guard = Callable[[tuple[int, int], "int | None", int, int], None]


class AnnDataError(ValueError):
    """An AnnData file whose ``X`` cannot be read (one-line message, without the file name)."""


@dataclass(frozen=True)
class AnnDataX:
    """``X`` of an AnnData file and the names of its rows and columns.

    Attributes
    ----------
    table : ndarray or scipy.sparse.csr_array of shape (n_obs, n_vars)
    dtype : numpy.dtype
        As stored.
    row_names, col_names : tuple of str or None
        The ``obs`` and ``var`` indexes.
    """

    table: Any
    dtype: np.dtype
    row_names: tuple[str, ...] | None
    col_names: tuple[str, ...] | None


def is_anndata(file: h5py.File) -> bool:
    """Whether an open HDF5 file is an AnnData file (0.8+: its root's ``encoding-type``; before
    0.8: a root holding ``X`` and ``obs``)."""
    encoding = _text(file.attrs.get("encoding-type"))
    return encoding == "anndata" or (encoding is None and "X" in file and "obs" in file)


def read_anndata_x(file: h5py.File, *, guard: Guard | None = None) -> AnnDataX:
    """``X`` of an open AnnData file, and the names of its rows and columns.

    Parameters
    ----------
    file : h5py.File
    guard : callable, optional
        Called before the table is read with ``(shape, nnz, itemsize, index_size)``
        (``nnz`` None for a dense ``X``): the caller's memory check, which may raise.

    Raises
    ------
    AnnDataError
    """
    item = _resolved(file, "X")
    if item is None:
        raise AnnDataError("an AnnData file without X (its table)")
    try:
        table, dtype = _dense(item, guard) if isinstance(item, h5py.Dataset) else _sparse(
            item, guard)
        rows = _names(_resolved(file, "obs"), "obs", table.shape[0])
        cols = _names(_resolved(file, "var"), "var", table.shape[1])
    except (OSError, KeyError, TypeError) as exc:
        raise AnnDataError(f"damaged AnnData file ({one_line(exc)})") from None
    return AnnDataX(table, dtype, rows, cols)


def _resolved(file: h5py.Group, name: str) -> Any:
    """The item ``name`` of a group, or None when there is none; a link that does not resolve
    (a dangling soft link, an external link to a missing file or object) is an
    :class:`AnnDataError` naming its target."""
    link = file.get(name, getlink=True)
    if link is None:
        return None
    try:
        return file[name]
    except (KeyError, OSError):
        target = (f"the soft link {link.path!r}" if isinstance(link, h5py.SoftLink) else
                  f"the external link {link.path!r} of {link.filename!r}"
                  if isinstance(link, h5py.ExternalLink) else "a link")
        raise AnnDataError(f"{name} is {target}, which does not resolve") from None


def _dense(item: h5py.Dataset, guard: Guard | None) -> tuple[np.ndarray, np.dtype]:
    if item.ndim != 2:
        raise AnnDataError(f"X has shape {item.shape}, not a 2-D table")
    dtype = _numeric(item.dtype)
    if guard is not None:
        guard(item.shape, None, dtype.itemsize, 0)
    return item[()], dtype


def _sparse(group: h5py.Group, guard: Guard | None) -> tuple[sp.csr_array, np.dtype]:
    encoding = _text(group.attrs.get("encoding-type"))
    shape = group.attrs.get("shape")
    if encoding is None and "h5sparse_format" in group.attrs:  # anndata < 0.8
        encoding = _LEGACY_SPARSE.get(_text(group.attrs["h5sparse_format"]) or "")
        shape = group.attrs.get("h5sparse_shape")
    if encoding not in _SPARSE:
        raise AnnDataError(f"X is a group of encoding {encoding!r}, not a dense, csr_matrix or "
                           "csc_matrix array")
    missing = [
        name for name in ("data", "indices", "indptr")
        if not isinstance(group.get(name), h5py.Dataset)
    ]
    if missing:
        raise AnnDataError(f"X ({encoding}) lacks {', '.join(missing)}")
    shape = _shape(shape, encoding)
    dtype = _numeric(group["data"].dtype)
    nnz = int(group["data"].shape[0]) if group["data"].ndim == 1 else -1
    if nnz < 0 or group["indices"].shape != (nnz,):
        raise AnnDataError(f"X ({encoding}): data and indices of lengths {group['data'].shape} and "
                           f"{group['indices'].shape}, not one length")
    for name in ("indices", "indptr"):
        if group[name].dtype.kind not in "iu":
            raise AnnDataError(f"X ({encoding}): {name} hold {group[name].dtype} values, not "
                               "integers")
    major = shape[0] if encoding == "csr_matrix" else shape[1]
    if group["indptr"].shape != (major + 1,):
        raise AnnDataError(f"X ({encoding}): indptr has shape {group['indptr'].shape}, its shape "
                           f"{shape} needs {major + 1} entries")
    if guard is not None:
        guard(shape, nnz, dtype.itemsize, group["indices"].dtype.itemsize)
    try:
        table = _SPARSE[encoding]((group["data"][()], group["indices"][()], group["indptr"][()]),
                                  shape=shape)
        table.check_format(full_check=True)
    except ValueError as exc:
        raise AnnDataError(f"X ({encoding}) is inconsistent ({one_line(exc)})") from None
    table = sp.csr_array(table)
    table.eliminate_zeros()
    return table, dtype


def _shape(shape: Any, encoding: str) -> tuple[int, int]:
    """A sparse group's ``shape`` attribute as two sizes (non-negative integers below 2^63)."""
    values = None if shape is None else np.asarray(shape)
    if (values is None or values.shape != (2,) or values.dtype.kind not in "iu"
            or values.min() < 0):
        shown = None if values is None else values.tolist()
        raise AnnDataError(f"X ({encoding}) has no shape of two sizes (got {shown!r})")
    return int(values[0]), int(values[1])


def _numeric(dtype: np.dtype) -> np.dtype:
    if dtype.kind not in "biuf":
        raise AnnDataError(f"X holds {dtype} values, not numbers")
    return np.dtype(dtype)


def _names(item: Any, where: str, size: int) -> tuple[str, ...] | None:
    """A dataframe's index (0.8+: the dataset its ``_index`` attribute names; before: the
    ``index`` field of a compound dataset), or None when it has none."""
    if isinstance(item, h5py.Group):
        key = _text(item.attrs.get("_index"))
        values = None if key is None else _resolved(item, key)
        if not isinstance(values, h5py.Dataset):
            return None
        field = None
    elif isinstance(item, h5py.Dataset) and item.dtype.names and "index" in item.dtype.names:
        values, field = item, "index"
    else:
        return None
    if values.shape != (size,):  # before reading: a declared index of 300M names is not read
        raise AnnDataError(f"{where} has {values.shape[0] if values.ndim == 1 else values.shape} "
                           f"names for the {size} {'rows' if where == 'obs' else 'columns'} of X")
    try:
        names = values[field] if field else values[()]  # bytes decoded below, as UTF-8
        return tuple(v.decode("utf-8") if isinstance(v, bytes) else str(v)
                     for v in np.ravel(names))
    except UnicodeDecodeError as exc:
        raise AnnDataError(f"{where} names are not UTF-8 text ({exc.reason} at byte "
                           f"{exc.start})") from None


def _text(value: Any) -> str | None:
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return None if value is None else str(value)
