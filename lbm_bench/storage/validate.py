"""The checks of an ``lbm-bench-table`` file's items together, and the Table they build.

:func:`read_table` reads every item of a source (an open file, or the layout
the writer is about to write), records a one-line problem for each bad item
and builds the :class:`~lbm_bench.protocol.table.Table` when there is none.
It walks the format's own tables (:mod:`lbm_bench.storage.format`): each
dataset is read by :meth:`~lbm_bench.storage.item_reader.Reader.dataset` against its
:func:`~lbm_bench.storage.format.dataset_spec` (shape from the header's sizes and
the attributes read before it, dtype, label range), each group's attributes by
:meth:`~lbm_bench.storage.item_reader.Reader.attrs` against ``GROUP_ATTRIBUTES``; what
remains here are the checks between items (chains, the calibration's layout, the floor, the values
of the table for its family). A problem after which nothing else can be checked
(not a table, an unsupported version, no header) raises :class:`Fatal`.

Versions: every file of the supported major is read (``Reader.version`` is its
``(major, minor)``). An item that a later minor adds is optional: read it only
when ``item in optional_items(version)`` and it is present, and build the Table
without it otherwise; items a minor does not list are ignored.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import numpy as np
import scipy.sparse as sp

from lbm_bench._validation import describe_value
from lbm_bench.inference.gibbs import GibbsSamples, RiskEstimate
from lbm_bench.models.base import LatentBlockModel
from lbm_bench.models.design import ModelDesign
from lbm_bench.models.registry import FAMILIES, family_names, get_family
from lbm_bench.protocol.request import RISK_CRITERIA
from lbm_bench.protocol.table import CalibrationResult, RejectionRecord, Table
from lbm_bench.storage.design_path import read_design_path
from lbm_bench.storage.format import (
    BAYES_RISK_ATTRIBUTES,
    EFFECTS,
    FLOOR_ATTRIBUTES,
    FLOOR_DATASETS,
    GROUP_ATTRIBUTES,
    LABEL_GROUPS,
    POSTERIOR_DTYPE,
    RISK_ATTRIBUTES,
    ROOT_ATTRIBUTES,
    SPARSE_DATA,
    block_parameters,
    header_attributes,
    optional_items,
)
from lbm_bench.storage.item_reader import HDF5_ERRORS, Fatal, Reader, any_none, check_format
from lbm_bench.storage.missing_mask import read_missing
from lbm_bench.storage.sparse import CSR_ENCODING, csr_from_arrays, csr_problems

__all__ = ["read_table"]


def _read_header(reader: Reader) -> None:
    """The version, family and sizes every other check needs (Fatal when one is bad)."""
    reader.version = check_format(reader)
    kind = reader.attr("", "kind", ROOT_ATTRIBUTES["kind"], fatal=True)
    if kind not in family_names():
        raise Fatal(f"@kind must be one of {', '.join(family_names())}, got {describe_value(kind)}")
    reader.family = get_family(kind)  # the file's family, looked up once
    for name, size in (("n_rows", "n_rows"), ("n_cols", "n_cols"), ("n_row_clusters", "g"),
                       ("n_col_clusters", "m")):
        value = reader.attr("", name, ROOT_ATTRIBUTES[name], fatal=True)
        if value < 1:
            raise Fatal(f"@{name} must be >= 1, got {value}")
        reader.sizes[size] = value
    reader.sizes["n_rows+1"] = reader.sizes["n_rows"] + 1
    _read_family_header(reader)


def _read_family_header(reader: Reader) -> None:
    """The family's own header attributes (``@categories``), Fatal when one is missing or bad:
    the table's values and parameters are checked against them."""
    attributes = header_attributes(reader.family)
    for name, kind in attributes.items():
        if f"@{name}" not in optional_items(reader.version):
            version = ".".join(map(str, reader.version))
            raise Fatal(f"{reader.family.kind} tables need a format version that has @{name}, not "
                        f"{version}")
        reader.header[name] = reader.attr("", name, kind, fatal=True)
    problem = reader.family.storage.header_problem(reader.header) if attributes else None
    if problem is not None:
        raise Fatal(problem)


def _values_problem(reader: Reader, values: np.ndarray, where: str) -> bool:
    """Record what is wrong with a table's values for its family; True when something is."""
    problem = reader.family.storage.value_problem(values, **reader.header) if values.size else None
    if problem is not None:
        if values.dtype.kind == "f" and np.isnan(values).any():
            problem += (" (NaN: a table with missing entries stores 0 there, under its observed "
                        "mask)")
        reader.problem(f"{where} {problem}")
    return problem is not None


def _read_data(reader: Reader) -> np.ndarray | sp.csr_array | None:
    """The table: the dataset ``data``, or the CSR group ``data`` of a sparse table (1.1)."""
    try:
        # a group (a damaged item counts as a dataset)
        sparse = reader.source.attrs("data") is not None
    except HDF5_ERRORS:
        sparse = False
    if not sparse:
        data = reader.dataset("data")
        return None if data is None or _values_problem(reader, data, "dataset data") else data
    if not set(SPARSE_DATA) <= optional_items(reader.version):
        version = ".".join(map(str, reader.version))
        reader.problem("data is a group (a sparse table), which needs format version 1.1 or "
                       f"later, not {version}")
        return None
    n_rows, n_cols = reader.sizes["n_rows"], reader.sizes["n_cols"]
    encoding, shape = reader.attr("data", "encoding", "str"), reader.attr("data", "shape", "ints")
    indptr, indices, values = (reader.dataset(path) for path in SPARSE_DATA)
    count = len(reader.problems)
    if encoding is not None and encoding != CSR_ENCODING:
        reader.problem(f"attribute data@encoding must be {CSR_ENCODING!r}, got "
                       f"{describe_value(encoding)}")
    if shape is not None and tuple(shape.tolist()) != (n_rows, n_cols):
        reader.problem(f"attribute data@shape {tuple(shape.tolist())} differs from (@n_rows, "
                       "@n_cols) "
                       f"= ({n_rows}, {n_cols})")
    if len(reader.problems) > count or any_none(encoding, shape, indptr, indices, values):
        return None
    problems = csr_problems((n_rows, n_cols), indptr, indices, values)
    for problem in problems:
        reader.problem(problem)
    if problems or _values_problem(reader, values, "dataset data/values"):
        return None
    return csr_from_arrays((n_rows, n_cols), indptr, indices, values)


def _read_labels(reader: Reader, group: str) -> tuple[np.ndarray, np.ndarray] | None:
    rows, cols = reader.dataset(f"{group}/rows"), reader.dataset(f"{group}/cols")
    return None if rows is None or cols is None else (rows.astype(np.int64), cols.astype(np.int64))


def _read_gibbs(reader: Reader) -> GibbsSamples | None:
    sets = {path: reader.dataset(path) for path in ("gibbs/rows", "gibbs/cols")}
    values = {
        name: reader.attr("gibbs", name, kind)
        for name, kind in GROUP_ATTRIBUTES["gibbs"].items()
    }
    lengths, n_chains, burn_in, thin = (values[k]
                                        for k in ("chain_lengths", "n_chains", "burn_in", "thin"))
    count = len(reader.problems)
    if burn_in is not None and burn_in < 0:
        reader.problem(f"attribute gibbs@burn_in must be >= 0, got {burn_in}")
    if thin is not None and thin < 1:
        reader.problem(f"attribute gibbs@thin must be >= 1, got {thin}")
    if lengths is not None and (lengths.size == 0 or lengths.min() < 0 or lengths.sum() < 1):
        reader.problem("attribute gibbs@chain_lengths must be non-negative with a positive sum")
    elif lengths is not None:
        if n_chains is not None and n_chains != lengths.size:
            reader.problem(f"attribute gibbs@n_chains is {n_chains} but chain_lengths has "
                           f"{lengths.size} entries")
        for name, array in sets.items():
            if array is not None and array.shape[0] != int(lengths.sum()):
                reader.problem(f"dataset {name} holds {array.shape[0]} label sets"
                               f" but sum(gibbs@chain_lengths) is {int(lengths.sum())}")
    if len(reader.problems) > count or any_none(*sets.values(), lengths, n_chains, burn_in, thin):
        return None
    return GibbsSamples(rows=sets["gibbs/rows"], cols=sets["gibbs/cols"], chain_lengths=lengths,
                        burn_in=burn_in, thin=thin)


def _read_effects(reader: Reader, group: str) -> dict[str, np.ndarray] | None:
    """Row and column effects of ``group`` ({} when absent, None on a problem)."""
    present = [reader.has_dataset(f"{group}/{name}") for name in EFFECTS]
    if not any(present):
        return {}
    if not reader.family.model.has_effects or not all(present):
        kinds = " and ".join(family.kind for family in FAMILIES if family.model.has_effects)
        reader.problem(f"{group}/row_effects and {group}/col_effects must come together, for the "
                       f"{kinds} kind only")
        return None
    arrays = {name: reader.dataset(f"{group}/{name}") for name in EFFECTS}
    return None if any_none(*arrays.values()) else arrays


def _read_model(reader: Reader) -> LatentBlockModel | None:
    props = [reader.dataset(f"params/{side}_proportions") for side in ("row", "col")]
    blocks = {name: reader.dataset(f"params/{name}") for name in block_parameters(reader.family)}
    effects = _read_effects(reader, "params")
    if any_none(*props, effects, *blocks.values()):
        return None
    try:
        model = reader.family.model(*props, **blocks, **effects)
    except (TypeError, ValueError) as exc:
        reader.problem(f"params: {exc}")
        return None
    # as stored (the constructor may move them by an ulp)
    model.row_proportions, model.col_proportions = props
    return model


def _read_design(reader: Reader) -> ModelDesign | None:
    names = ("row_proportions", "col_proportions", "pattern", "dispersion")
    arrays = {name: reader.dataset(f"params/design/{name}") for name in names}
    effects = _read_effects(reader, "params/design")
    values = reader.attrs("params/design", GROUP_ATTRIBUTES["params/design"])
    if any_none(effects, values, *arrays.values()):
        return None
    if "params/design@density" in optional_items(reader.version) and reader.has_attr(
            "params/design", "density"):
        density = reader.attr("params/design", "density", "float")  # 1.4: a sparse design
        if density is None or not 0 < density < 1:
            reader.problem("attribute params/design@density must lie in (0, 1), got "
                           f"{describe_value(density)}")
            return None
        values["density"] = density
    fitted = read_design_path(reader) if "params/design/path_natural" in optional_items(
        reader.version) else {}
    if fitted is False:  # 1.5: a fitted design's path and its design file's digest
        return None
    return ModelDesign(family=reader.family, **values, **arrays, **effects, **fitted)


def _read_calibration(reader: Reader, design: ModelDesign | None) -> CalibrationResult | None:
    values = reader.attrs("calibration", GROUP_ATTRIBUTES["calibration"])
    history = reader.dataset("calibration/history")
    if values is None or history is None:
        return None
    n_steps = values["n_steps"]
    method = "bisection"  # format 1.0: the paper's dichotomy was the only method
    stored = reader.has_attr("calibration", "method")
    if stored:
        method = reader.attr("calibration", "method", "str")
        if method not in ("secant", "bisection"):
            reader.problem("attribute calibration@method must be 'secant' or 'bisection', "
                           f"got {describe_value(method)}")
            return None
    if (history.shape[1] == 4) != stored:
        reader.problem("attribute calibration@method is missing" if not stored else
                       f"dataset calibration/history has shape {history.shape} with "
                       "calibration@method, "
                       f"expected ({n_steps}, 4)")
        return None
    if history.shape[1] == 3:  # format 1.0: no n_tables column, every step used n_tables
        history = np.column_stack([history, np.full(n_steps, float(values["n_tables"]))])
    elif history.shape[1] != 4:
        reader.problem(f"dataset calibration/history has shape {history.shape}, expected "
                       f"({n_steps}, 4)")
        return None
    if values["bracket"].shape != (2,):
        reader.problem("attribute calibration@bracket must hold 2 values, got "
                       f"{values['bracket'].size}")
        return None
    values["bracket"] = (float(values["bracket"][0]), float(values["bracket"][1]))
    gaps = _read_gaps(reader)
    if gaps is False:
        return None
    if gaps is not None:
        values.update(gap=gaps[0], gap_history=gaps[1], criterion="bayes")
    return CalibrationResult(history=history, design=design, method=method, **values)


def _read_gaps(reader: Reader) -> tuple[float, np.ndarray] | None | bool:
    """``(calibration@gap, calibration/gaps)`` when stored (1.1, criterion "bayes"), None
    when neither is, False (a problem recorded) when one is bad or alone."""
    has_attr, has_data = reader.has_attr("calibration",
                                         "gap"), reader.has_dataset("calibration/gaps")
    if not has_attr and not has_data:
        return None
    if has_attr != has_data:
        reader.problem("calibration@gap and calibration/gaps must come together")
        return False
    gap, history = reader.attr("calibration", "gap", "float"), reader.dataset("calibration/gaps")
    if gap is None or history is None:
        return False
    if history.shape[0] < 1:
        reader.problem("dataset calibration/gaps must hold at least one row")
        return False
    return gap, history


def _read_rejection(reader: Reader) -> RejectionRecord | None:
    values = reader.attrs("rejection", GROUP_ATTRIBUTES["rejection"])
    risks = reader.dataset("rejection/candidate_risks")
    if values is None or risks is None:
        return None
    if math.isnan(values["balance"]):
        values["balance"] = None
    return RejectionRecord(candidate_risks=risks, **values)


def _read_risk(reader: Reader, gibbs: GibbsSamples | None,
               attributes: Mapping[str, str]) -> RiskEstimate | None:
    """A risk estimate stored as root attributes (field -> attribute), with the sets' counts."""
    values = {name: reader.attr("", attr, "float") for name, attr in attributes.items()}
    if any_none(gibbs, *values.values()):
        return None
    return RiskEstimate(**values, n_samples=gibbs.n_samples, n_chains=gibbs.n_chains)


def _has_floor(reader: Reader) -> bool:
    """Whether the file holds the floor (version 1.1 items): all of them, or none."""
    if "@criterion" not in optional_items(reader.version):
        return False
    expected = [f"@{name}" for name in FLOOR_ATTRIBUTES] + list(FLOOR_DATASETS)
    present = [item for item in expected if (reader.has_attr("", item[1:]) if item.startswith("@")
                                             else reader.has_dataset(item))]
    missing = [item for item in expected if item not in present]
    if present and missing:
        reader.problem(f"the floor items (version 1.1) must come together; {', '.join(missing)} "
                       "missing")
    return bool(present)


def _read_floor(reader: Reader, gibbs: GibbsSamples | None) -> dict[str, Any] | None:
    """Version 1.1: the Bayes labels, their risk and the criterion (checked against the sets)."""
    labels = _read_labels(reader, "bayes")
    risk = _read_risk(reader, gibbs, BAYES_RISK_ATTRIBUTES)
    criterion = reader.attr("", "criterion", FLOOR_ATTRIBUTES["criterion"])
    if criterion is not None and criterion not in RISK_CRITERIA:
        reader.problem(f"attribute @criterion must be one of {', '.join(RISK_CRITERIA)}, "
                       f"got {describe_value(criterion)}")
        criterion = None
    marginals = [reader.dataset(f"posterior/{side}") for side in ("rows", "cols")]
    if gibbs is not None and isinstance(gibbs.rows, np.ndarray) and isinstance(
            gibbs.cols, np.ndarray):
        for side, sets, k, stored in (("rows", gibbs.rows, "g", marginals[0]), ("cols", gibbs.cols,
                                                                                "m", marginals[1])):
            if stored is None:
                continue
            counts = np.stack([np.count_nonzero(sets == c, axis=0) for c in range(reader.sizes[k])],
                              axis=1)
            if not np.allclose(stored,
                               (counts / sets.shape[0]).astype(POSTERIOR_DTYPE), rtol=0, atol=1e-6):
                reader.problem(f"dataset posterior/{side} differs from the shares of the Gibbs "
                               "label sets")
    if any_none(labels, criterion, risk, *marginals):
        return None
    return {
        "bayes_rows": labels[0], "bayes_cols": labels[1], "bayes_risk": risk, "criterion": criterion
    }


def _read_options(reader: Reader) -> dict | None:
    text = reader.attr("", "options_json", ROOT_ATTRIBUTES["options_json"])
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


def _read_scalars(reader: Reader) -> dict[str, Any] | None:
    reader.attr("", "lbm_bench_version", ROOT_ATTRIBUTES["lbm_bench_version"])  # information only
    values = reader.attrs(
        "", {name: ROOT_ATTRIBUTES[name]
             for name in ("scale", "target_risk", "seed")})
    params = reader.attrs("params", GROUP_ATTRIBUTES["params"])
    if values is None or params is None:
        return None
    if not (math.isfinite(values["scale"]) and values["scale"] > 0):
        reader.problem("attribute @scale must be finite and > 0, got "
                       f"{describe_value(values['scale'])}")
        return None
    if params["scale"] != values["scale"]:
        reader.problem(f"attribute params@scale ({describe_value(params['scale'])}) differs from "
                       "@scale "
                       f"({describe_value(values['scale'])})")
        return None
    return values


def read_table(source: Any, problems: list[str], *, label_sets: bool = True) -> Table | None:
    """Check every item of ``source`` and build the Table (None when ``problems`` is not empty).

    ``label_sets=False``: the Gibbs sets stay in the file (StoredLabelSets), checked by shape and
    dtype only.

    Raises
    ------
    Fatal
        When the file is not a table of a supported version, or lacks the header.
    """
    reader = Reader(source, problems,
                    left_in_file=frozenset(() if label_sets else ("gibbs/rows", "gibbs/cols")))
    _read_header(reader)
    parts = {
        "data": _read_data(reader),
        **{group: _read_labels(reader, group) for group in LABEL_GROUPS},
        "gibbs": _read_gibbs(reader),
        "model": _read_model(reader),
        "design": _read_design(reader),
        "rejection": _read_rejection(reader),
        "options": _read_options(reader),
        "scalars": _read_scalars(reader),
    }
    scale = parts["scalars"]["scale"] if parts["scalars"] is not None else None
    missing = read_missing(reader, parts["data"], parts["model"], parts["design"], scale)
    # NaN at the missing entries, the mechanism on the design and the model
    parts.update(missing or {})
    if parts["design"] is not None and parts["design"].density is not None and parts[
            "model"] is not None:
        # the model of a sparse design draws sparse tables, as generated
        parts["model"].sparse = True
    parts["calibration"] = _read_calibration(reader, parts["design"])
    parts["risk"] = _read_risk(reader, parts["gibbs"], RISK_ATTRIBUTES)
    floor = _read_floor(reader, parts["gibbs"]) if _has_floor(reader) else {}
    if problems or floor is None or missing is None or any_none(*parts.values()):
        if not problems:  # pragma: no cover - every None above records a problem
            problems.append("incomplete file")
        return None
    (truth_rows, truth_cols), (map_rows, map_cols) = parts["truth"], parts["map"]
    # the risk calibrated is the one the table's criterion names
    if floor.get("criterion") is not None:
        parts["calibration"] = replace(parts["calibration"], criterion=floor["criterion"])
    return Table(
        data=parts["data"], model=parts["model"], design=parts["design"], truth_rows=truth_rows,
        truth_cols=truth_cols, map_rows=map_rows, map_cols=map_cols, gibbs=parts["gibbs"],
        risk=parts["risk"], calibration=parts["calibration"], rejection=parts["rejection"],
        options=parts["options"], **floor, **parts["scalars"],
        format_version=".".join(map(str, reader.version)),
    )
