"""What a user's own table is, in words: the family its values suggest and why, how it is stored
and why, its density, missing entries, range, names and the memory reading it takes.

:func:`table_info` gathers it as a plain dictionary (what ``lbm-bench info DATA --json``
prints), :func:`info_text` as lines (``lbm-bench info DATA``), and :func:`kind_and_storage`
as the one line ``lbm-bench fit`` prints before it fits: the family inferred from the values,
whatever the dtype (0/1: binary, non-negative whole numbers: counts, else reals), and the
storage, dense or sparse, with the reason (the file stores a sparse table; the family needs a
dense one).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lbm_bench.algorithms.inputs import infer_family
from lbm_bench.models.family import Family
from lbm_bench.protocol.memory import format_bytes
from lbm_bench.storage.user_data import UserTable

__all__ = ["family_reason", "info_text", "kind_and_storage", "storage_reason", "table_info"]

#: Names shown at most per side in the text of :func:`info_text`.
_SHOWN_NAMES = 5


def family_reason(table: UserTable, family: Family | None = None) -> tuple[Family, str]:
    """The family of a table and why: the one given, the one its file declares, or the one its
    observed values suggest (:func:`~lbm_bench.algorithms.infer_kind`, whatever the dtype)."""
    if family is not None:
        return family, "given"
    if table.family is not None:
        return table.family, "declared by the file"
    family = infer_family(table.data)
    values = table.data.observed_values(implicit_zero=True)
    low, high = (values.min().item(), values.max().item()) if values.size else (0, 0)
    whole = values.dtype.kind != "f" or bool(np.all(values == np.round(values)))
    return family, (f"inferred from the values: {family.presentation.entries}, {low:.6g} to "
                    f"{high:.6g}{', whole numbers' if whole else ''}")


def storage_reason(table: UserTable, family: Family | None = None) -> str:
    """How the table is held and why (``"sparse: the file stores a sparse table"``); with
    ``family``, the storage its fit takes (a family of dense tables densifies a sparse one)."""
    data = table.data
    if data.is_sparse and family is not None and not family.model.can_be_sparse:
        return f"dense ({family.kind} blocks need a dense table: the file's sparse one densified)"
    if data.is_sparse:
        return f"sparse (the {table.format} file stores a sparse table)"
    if table.source_dtype == "text":
        return "dense (a text file)"
    return f"dense (the {table.format} file stores a dense table)"


def kind_and_storage(table: UserTable, family: Family | None = None) -> str:
    """One line: the table, its family and why, its storage and why, its density."""
    family, why = family_reason(table, family)
    n, d = table.shape
    return (f"{table.path or table.name}: {n}x{d} table, {family.kind} blocks ({why}); "
            f"{storage_reason(table, family)}; {_density(table):.2%} non-zero")


def _density(table: UserTable) -> float:
    data = table.data
    observed = data.shape[0] * data.shape[1] - data.n_missing
    values = data.observed_values()
    return float(np.count_nonzero(values)) / max(observed, 1)


def table_info(table: UserTable) -> dict[str, Any]:
    """What :func:`info_text` says, as a dictionary of plain values (JSON-ready but for NaN)."""
    family, why = family_reason(table)
    values = table.data.observed_values(implicit_zero=True)
    n, d = table.shape
    return {
        "file": table.path or table.name, "format": table.format, "shape": [n, d],
        "source_dtype": table.source_dtype, "dtype": np.dtype(table.data.table.dtype).name,
        "kind": family.kind, "kind_reason": why,
        "storage": "sparse" if table.is_sparse else "dense",
        "storage_reason": storage_reason(table), "density": _density(table),
        "n_missing": table.n_missing, "missing_fraction": table.data.missing_fraction,
        "min": values.min().item() if values.size else None,
        "max": values.max().item() if values.size else None,
        "row_names": None if table.row_names is None else list(table.row_names),
        "col_names": None if table.col_names is None else list(table.col_names),
        "read_memory": table.read_memory, "sha256": table.sha256, "notes": list(table.notes),
    }


def _names(names: list[str] | None) -> str:
    if names is None:
        return "none"
    shown = ", ".join(repr(name[:30]) for name in names[:_SHOWN_NAMES])
    return f"{len(names)} ({shown}{', ...' if len(names) > _SHOWN_NAMES else ''})"


def info_text(info: dict[str, Any]) -> str:
    """The lines ``lbm-bench info DATA`` prints of :func:`table_info`'s dictionary."""
    n, d = info["shape"]
    source = "" if info["source_dtype"] in ("", info["dtype"]) else f" from {info['source_dtype']}"
    lines = [
        f"{info['file']}: {n}x{d} table of {info['dtype']}{source} ({info['format']} file)",
        f"kind: {info['kind']} ({info['kind_reason']})",
        f"storage: {info['storage_reason']}; {info['density']:.2%} non-zero",
        f"missing entries: {info['n_missing']} ({info['missing_fraction']:.2%})",
        f"values: {info['min']:.6g} to {info['max']:.6g}" if info["min"] is not None else
        "values: none observed",
        f"row names: {_names(info['row_names'])}",
        f"column names: {_names(info['col_names'])}",
    ]
    if info["read_memory"] is not None:
        lines.append(f"memory: about {format_bytes(info['read_memory'])} to read it")
    return "\n".join(lines)
