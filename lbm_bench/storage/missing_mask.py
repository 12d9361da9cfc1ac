"""Missing entries in files (format 1.3): what a table with missing entries stores, and its checks.

A dense table stores its **observed mask** as the dataset ``observed`` (uint8 of the
table's shape, 1: observed, 0: missing), chunked and compressed like ``data`` (one
byte per entry before compression); its missing entries hold 0 in ``data``. A sparse
table stores its **missing set** instead, as the group ``missing`` (``missing/indptr``
and ``missing/indices``: the canonical CSR positions of the missing entries, without
values, ``missing@encoding = "csr"`` and ``missing@shape``), none of them a stored
entry of ``data``. The root attributes ``@missing_rate``, ``@missing_mechanism`` and
``@n_missing`` say how many went missing and how; the block mechanism adds
``params/missing_probs`` (its probabilities at ``@scale``), and
``params/design/missing_pattern`` with ``params/design@missing_spread``
(:mod:`lbm_bench.models.missing`). ``docs/format.md`` ("Missing entries") is the
normative text. This module has no HDF5 code: :func:`missing_layout` gives the
writer its arrays and attributes, :func:`read_missing` checks them through the
reader of :mod:`lbm_bench.storage.validate`.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import numpy as np
import scipy.sparse as sp

from lbm_bench._validation import describe_value
from lbm_bench.models.data import DenseTableData, SparseTableData, TableData
from lbm_bench.models.missing import MECHANISMS, MissingDesign
from lbm_bench.storage.format import MISSING_ATTRIBUTES, MISSING_DATA, added_in, optional_items
from lbm_bench.storage.sparse import CSR_ENCODING, csr_problems

__all__ = ["BLOCK_ITEMS", "missing_layout", "read_missing"]

#: The items of the block mechanism (its probabilities, pattern and spread).
BLOCK_ITEMS = ("params/missing_probs", "params/design/missing_pattern",
               "params/design@missing_spread")
_INT32_MAX = np.iinfo(np.int32).max


def missing_layout(table: Any,
                   data: TableData) -> tuple[dict[str, np.ndarray], dict[str, dict[str, Any]]]:
    """The datasets and attributes (by object path; ``""`` the root) a table with missing
    entries adds, as plain values; empty for a complete table.

    Raises
    ------
    ValueError
        For a table whose data holds missing entries but whose design has no mechanism.
    """
    missing = table.design.missing if table.design is not None else None
    if missing is None:
        if data.has_missing and data.n_missing:
            raise ValueError(
                "data holds missing entries (NaN) but the design records no mechanism "
                "(design.missing is None);"
                " a table with missing entries is made by generate_table(..., missing=...)"
            )
        return {}, {}
    datasets: dict[str, np.ndarray] = {}
    attrs: dict[str, dict[str, Any]] = {
        "": {
            "missing_rate": missing.rate, "missing_mechanism": missing.mechanism,
            "n_missing": data.n_missing
        }
    }
    if data.is_sparse:
        positions = data.missing_indicator(np.uint8)
        positions.sum_duplicates()
        index = np.int32 if max(positions.nnz, data.n_cols) <= _INT32_MAX else np.int64
        datasets["missing/indptr"] = positions.indptr.astype(index)
        datasets["missing/indices"] = positions.indices.astype(index)
        attrs["missing"] = {
            "encoding": CSR_ENCODING, "shape": np.asarray(data.shape, dtype=np.int64)
        }
    else:
        datasets["observed"] = np.ascontiguousarray(data.observed_mask(), dtype=np.uint8)
    if missing.informative:
        datasets["params/missing_probs"] = np.asarray(table.model.missing_probs, dtype=np.float64)
        datasets["params/design/missing_pattern"] = np.asarray(missing.pattern, dtype=np.float64)
        attrs["params/design"] = {"missing_spread": missing.spread}
    return datasets, attrs


def _present(reader: Any) -> list[str]:
    items = list(MISSING_ATTRIBUTES)
    present = [f"@{name}" for name in items if reader.has_attr("", name)]
    present += [
        path for path in ("observed", *MISSING_DATA, "params/missing_probs",
                          "params/design/missing_pattern") if reader.has_dataset(path)
    ]
    if reader.has_attr("params/design", "missing_spread"):
        present.append("params/design@missing_spread")
    return present


def read_missing(reader: Any, data: Any, model: Any, design: Any,
                 scale: float | None) -> dict[str, Any] | None:
    """The missing entries of a file: ``{"data", "model", "design"}`` with NaN at the missing
    entries of ``data``, the block probabilities on ``model`` and the mechanism on ``design``;
    ``{}`` for a complete table (or a file older than the version that adds them: its
    unknown items are ignored); None when a problem was recorded."""
    if "@missing_mechanism" not in optional_items(reader.version):
        return {}
    present = _present(reader)
    if not present:
        return {}
    values = reader.attrs("", MISSING_ATTRIBUTES)
    if values is None:
        return None
    rate, mechanism, n_missing = values["missing_rate"], values["missing_mechanism"], values[
        "n_missing"]
    if mechanism not in MECHANISMS:
        reader.problem(f"attribute @missing_mechanism must be one of {', '.join(MECHANISMS)}, "
                       f"got {describe_value(mechanism)}")
        return None
    if not 0 < rate < 1:
        reader.problem(f"attribute @missing_rate must lie in (0, 1), got {describe_value(rate)}")
        return None
    block = [item for item in BLOCK_ITEMS if item in present]
    if mechanism == "block" and len(block) != len(BLOCK_ITEMS):
        absent = ", ".join(item for item in BLOCK_ITEMS if item not in present)
        reader.problem(f"{absent} is missing (the block mechanism's items must come together)")
        return None
    if mechanism == "random" and block:
        reader.problem(f"{', '.join(block)} belong to the block mechanism, not to "
                       "@missing_mechanism 'random'")
        return None
    if data is None:
        return None
    table = _read_mask(reader, data, n_missing)
    if table is None:
        return None
    out = {"data": table.with_nan()}
    if mechanism == "block":
        return _block(reader, out, model, design, scale, rate)
    if model is None or design is None:
        return None
    out.update(model=model, design=replace(design, missing=MissingDesign(rate, "random")))
    return out


def _read_mask(reader: Any, data: Any, n_missing: int) -> TableData | None:
    """The table with its mask: the ``observed`` dataset (dense) or the ``missing`` group
    (sparse)."""
    sparse = TableData.of(data).is_sparse
    wanted, other = (("missing", "observed") if sparse else ("observed", "missing"))
    if reader.has_dataset(other) or reader.has_dataset(f"{other}/indptr") or reader.has_attr(
            other, "encoding"):
        kind = "sparse" if sparse else "dense"
        reader.problem(f"a {kind} table stores its missing entries as {wanted!r}, but the file has "
                       f"{describe_value(other)}")
        return None
    if not sparse:
        observed = reader.dataset("observed")
        if observed is None:
            return None
        if observed.size and observed.max() > 1:
            reader.problem(f"dataset observed must hold 0 and 1 only, got {int(observed.max())}")
            return None
        mask = observed.astype(bool)
        count = int(mask.size - np.count_nonzero(mask))
        if count != n_missing:
            reader.problem(f"dataset observed has {count} missing entries but @n_missing is "
                           f"{n_missing}")
            return None
        if np.any(data[~mask]):
            reader.problem("dataset data holds a non-zero value at a missing entry (observed is 0 "
                           "there)")
            return None
        return DenseTableData(data, mask)
    n_rows, n_cols = data.shape
    encoding, shape = reader.attr("missing", "encoding",
                                  "str"), reader.attr("missing", "shape", "ints")
    indptr, indices = (reader.dataset(path) for path in MISSING_DATA)
    if encoding is None or shape is None or indptr is None or indices is None:
        return None
    if encoding != CSR_ENCODING:
        reader.problem(f"attribute missing@encoding must be {CSR_ENCODING!r}, got "
                       f"{describe_value(encoding)}")
        return None
    if tuple(shape.tolist()) != (n_rows, n_cols):
        reader.problem(f"attribute missing@shape {tuple(shape.tolist())} differs from ({n_rows}, "
                       f"{n_cols})")
        return None
    problems = csr_problems((n_rows, n_cols), indptr, indices,
                            np.ones(indices.size, dtype=np.uint8))
    for problem in problems:
        reader.problem(problem.replace("data/", "missing/"))
    if problems:
        return None
    positions = sp.csr_array((np.ones(indices.size, dtype=np.uint8), indices, indptr),
                             shape=(n_rows, n_cols))
    if data.multiply(positions).nnz:
        reader.problem("a missing entry (missing/indices) is also a stored entry of data")
        return None
    return SparseTableData(data, positions)


def _block(reader: Any, out: dict, model: Any, design: Any, scale: float | None,
           rate: float) -> dict | None:
    """The block mechanism's probabilities, pattern and spread, checked against each other."""
    probs = reader.dataset("params/missing_probs")
    pattern = reader.dataset("params/design/missing_pattern")
    spread = reader.attr("params/design", "missing_spread", "float")
    if probs is None or pattern is None or spread is None or model is None or design is None:
        return None
    try:
        missing = MissingDesign(rate, "block", pattern, spread)
        model = model.with_missing_probs(probs)
    except (TypeError, ValueError) as exc:
        reader.problem(f"params/missing_probs or params/design/missing_pattern: {exc}")
        return None
    design = replace(design, missing=missing)
    if scale is not None and math.isfinite(scale) and scale > 0:
        expected = design.missing_probs(scale)
        if not np.allclose(probs, expected, rtol=1e-9, atol=1e-12):
            reader.problem(f"dataset params/missing_probs differs from the design's at @scale "
                           "(missing_pattern and missing_spread, "
                           f"{added_in('params/missing_probs')})")
            return None
    out.update(model=model, design=design)
    return out
