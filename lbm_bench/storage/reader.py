"""Reading ``lbm-bench-table`` files: :func:`load_table`, :func:`check_file`, :func:`read_info`.

Reading validates everything before building a Table (the checks are those of
:mod:`lbm_bench.storage.validate`): a file that is not HDF5, truncated, of
another format, of a newer major version, incomplete or inconsistent is
refused with :class:`FormatError`, whose one-line message starts with the
file name. Files of any minor version of the supported major are read (see
:mod:`lbm_bench.storage.format`). Nothing is ever unpickled.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import h5py
import numpy as np

from lbm_bench._validation import one_line
from lbm_bench.protocol.table import Table
from lbm_bench.storage.item_reader import HDF5_ERRORS, Fatal, read_version, summary
from lbm_bench.storage.sources import FileSource, FormatError, SafeAttributes
from lbm_bench.storage.validate import read_table

__all__ = ["FormatError", "load_table", "check_file", "read_info", "inspect_file"]


def _require_file(path: Path) -> None:
    if not path.exists():
        raise FileNotFoundError(2, "No such file or directory", str(path))


@contextlib.contextmanager
def _open(path: Path) -> Iterator[h5py.File]:
    """Open a file read-only; a non-HDF5, truncated or unreadable file is Fatal."""
    try:
        file = h5py.File(path, "r")
    except OSError as exc:
        raise Fatal(f"not a readable HDF5 file ({one_line(exc)})") from exc
    with file:
        yield file


def _memory_problem(file: h5py.File, label_sets: bool) -> str:
    """What reading the file's datasets would need, when it is more than the memory available
    (:func:`~lbm_bench.protocol.memory_limits.memory_limit`), else ``""``: sized from the shapes
    the file declares (a file of 68 KB may declare 20 million compressed label sets, 10 GB to
    read), never from reading them. The label sets count twice (the array, and the check of
    the posterior's shares against them), the other datasets their bytes and a float64 copy
    (the dtypes the reader returns), unless ``label_sets`` is False (left in the file)."""
    from lbm_bench.protocol.memory import BASELINE_BYTES, MemoryEstimate, format_bytes
    from lbm_bench.protocol.memory_limits import memory_limit

    sizes = {"label sets": 0, "datasets": 0}

    def visit(name: str, item: Any) -> None:
        if not isinstance(item, h5py.Dataset):
            return
        entries, stored = int(item.size or 0), int(item.size or 0) * item.dtype.itemsize
        if name.startswith("gibbs/"):
            sizes["label sets"] += 2 * stored if label_sets else 0
        else:
            sizes["datasets"] += stored + 8 * entries

    with contextlib.suppress(*HDF5_ERRORS):  # what cannot be visited, the reader reports
        file.visititems(visit)
    limit = memory_limit()
    estimate = MemoryEstimate(what="table file", parts={**sizes, "baseline": BASELINE_BYTES})
    if limit is None or estimate.total <= limit.bytes:
        return ""
    advice = ("leave its label sets in the file (load_table(path, label_sets=False))"
              if label_sets and sizes["label sets"] >= estimate.total / 2 else
              "read it on a machine with more memory")
    return (f"reading it needs about {estimate.describe()}, more than the "
            f"{format_bytes(limit.bytes)} available ({limit.source}); {advice}")


def _inspect(path: Path, label_sets: bool = True) -> tuple[Table | None, list[str]]:
    """The table and the problems :func:`check_file` reports (the table is None when there are
    any)."""
    table, problems, _ = inspect_file(path, label_sets, attributes=False)
    return table, problems


def inspect_file(
    path: Path, label_sets: bool = True, *, attributes: bool = True
) -> tuple[Table | None, list[str], dict[str, Any] | None]:
    """:func:`_inspect`, and the root attributes of a valid file as :func:`read_info` gives them
    (plain Python values), read from the same open file: one pass over the file where
    :func:`check_file`, :func:`load_table` and :func:`read_info` would take three.

    The attributes are None when the file has problems, when ``attributes`` is False, or
    when they could not be read (the caller may then ask :func:`read_info`, which reports why).
    """
    _require_file(path)
    problems: list[str] = []
    root: dict[str, Any] | None = None
    try:
        with _open(path) as file:
            too_large = _memory_problem(file, label_sets)
            if too_large:  # sized from the shapes the file declares, before reading them
                return None, [too_large], None
            table = read_table(FileSource(file), problems, label_sets=label_sets)
            if attributes and table is not None and not problems:
                with contextlib.suppress(*HDF5_ERRORS):
                    root = _plain_attributes(file)
    except Fatal as exc:
        return None, problems + [str(exc)], None
    except OSError as exc:  # a damaged chunk or heap, met while reading
        return None, problems + [f"unreadable HDF5 content ({one_line(exc)})"], None
    return table, problems, root


def load_table(path: str | os.PathLike[str], *, missing: str = "nan",
               label_sets: bool = True) -> Table:
    """Read a table written by :func:`~lbm_bench.storage.writer.save_table` (any format version
    1.x).

    Parameters
    ----------
    path : str or os.PathLike
        An lbm-bench table file.
    missing : {"nan", "masked"}, default="nan"
        How ``data`` marks the missing entries of a table that has some (format 1.3):
        NaN in a float64 array (scikit-learn's and pandas' convention; a sparse table:
        explicit NaN values), or a NumPy masked array in the kind's dtype (dense tables
        only). A complete table is returned as it is stored either way.
    label_sets : bool, default=True
        Read the Gibbs label sets. ``False`` leaves them in the file (a large table's sets
        take gigabytes): ``table.gibbs.rows`` and ``table.gibbs.cols`` are then
        :class:`~lbm_bench.storage.label_sets.StoredLabelSets`, checked by their shape and
        dtype only (their labels are checked as they are read, and the posterior marginals
        are not compared with them); :func:`~lbm_bench.evaluate` reads them band by band.

    Returns
    -------
    Table
        With ``data`` as float64 (Gaussian), int64 (Poisson) or uint8
        (Bernoulli) (a table with missing entries: see ``missing``), truth and MAP
        labels as int64, Gibbs label sets in the
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

    Examples
    --------
    >>> table = load_table("tests/data/table_v1_3_missing_sparse.h5")   # format 1.3
    >>> table.kind, table.shape, type(table.data).__name__, table.missing_mechanism
    ('poisson', (12, 10), 'csr_array', 'block')
    >>> load_table("tests/data/table_v1_1.h5", label_sets=False).gibbs.rows.shape
    (50, 12)
    """
    from dataclasses import replace

    from lbm_bench._validation import check_choice

    check_choice("missing", missing, ("nan", "masked"))
    path = Path(path)
    if not isinstance(label_sets, bool):
        raise TypeError(f"label_sets must be True or False, got {label_sets!r}")
    table, problems = _inspect(path, label_sets)
    if problems or table is None:
        raise FormatError(f"{path}: {summary(problems or ['invalid file'])}")
    if missing == "masked" and table.missing_mechanism is not None:
        table = replace(table, data=table.masked_data())
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
    """The shortcuts of :func:`read_info`, each given only when the file holds it in its expected
    form (the file is not validated here: a damaged item is left out, never an error)."""
    out: dict[str, Any] = {}
    if "data" in datasets:
        out["shape"] = datasets["data"]["shape"]
        out["sparse"] = False
    elif "shape" in groups.get("data", {}):  # a sparse table (CSR group, version 1.1)
        shape = groups["data"]["shape"]
        if isinstance(shape, (list, tuple)) and len(shape) == 2:
            out["shape"] = tuple(shape)
        out["sparse"] = True
        if len(datasets.get("data/values", {}).get("shape", ())) == 1:
            out["nnz"] = datasets["data/values"]["shape"][0]
    if len(datasets.get("gibbs/rows", {}).get("shape", ())) == 2:
        out["n_samples"] = datasets["gibbs/rows"]["shape"][0]

    for group, names in _INFO_SHORTCUTS.items():
        attrs = groups.get(group, {})
        out.update({name: attrs[name] for name in names if name in attrs})
    return out


def _plain_attributes(obj: h5py.Group) -> dict[str, Any]:
    return {key: _python(value) for key, value in SafeAttributes(obj.attrs).items()}


def read_info(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Attributes and dataset shapes of a table file, without reading the datasets.

    Only the format name and major version are checked (use
    :func:`check_file` for a full check).

    Parameters
    ----------
    path : str or os.PathLike
        An lbm-bench table file of any version ``1.x``; only its attributes
        and the headers of its datasets are read.

    Returns
    -------
    dict
        Plain Python values (str, int, float, list, tuple):

        - every root attribute by name (``kind``, ``n_rows``, ``seed``,
          ``risk``, ``risk_mcse``, ``format_version``...);
        - ``path``: the path as given;
        - shortcuts: ``shape`` (of ``data``), ``sparse`` (whether ``data`` is
          a CSR group) and, for a sparse table, ``nnz`` (stored entries),
          for a table with missing entries (format 1.3) ``missing_fraction``
          (``@n_missing`` over the entries, besides the root attributes
          ``missing_rate``, ``missing_mechanism`` and ``n_missing``),
          ``n_samples`` (Gibbs sets),
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
            read_version(FileSource(file))
            attributes = _plain_attributes(file)
            file.visititems(visit)
    except Fatal as exc:
        raise FormatError(f"{path}: {exc}") from None
    except HDF5_ERRORS as exc:
        raise FormatError(f"{path}: unreadable HDF5 content ({one_line(exc)})") from None
    info: dict[str, Any] = {"path": str(path), **_info_shortcuts(groups, datasets)}
    info.update(groups=groups, datasets=datasets)
    info.update(attributes)  # root attributes win (none of version 1.x uses the names above)
    shape = info.get("shape")
    if isinstance(info.get("n_missing"), int) and isinstance(shape, tuple) and len(shape) == 2:
        info["missing_fraction"] = info["n_missing"] / max(1, int(shape[0]) * int(shape[1]))
    return info
