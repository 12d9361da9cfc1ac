"""Shared helpers of the storage tests: seeded tables, the sample file, file mutations.

Tables are built without the calibration code: a seeded random design, a
table drawn from its model, the MAP and Gibbs labels, and hand-made
calibration and rejection records (:func:`make_table`).

The committed samples ``tests/data/table_v1.h5`` (version 1.0) and
``tests/data/table_v1_1.h5`` (1.1: the same table with its floor) are written by
:func:`make_sample`; regenerate them (only when the format version changes) with
``python -m tests.storage.tables`` from the repository root, and paste the
printed values into the ``SAMPLE_*`` constants of ``tests/storage/test_reader.py``.
The sparse sample ``tests/data/table_v1_1_sparse.h5`` (format 1.1) is written by
:func:`make_sparse_sample` with ``python -m tests.storage.tables sparse`` (its
values go into ``tests/storage/test_sparse_files.py``), the categorical sample
``tests/data/table_v1_2_categorical.h5`` (format 1.2) by :func:`make_categorical_sample`
with ``python -m tests.storage.tables categorical`` (its values go into
``tests/storage/test_reader.py``), and the sample with missing entries
``tests/data/table_v1_3_missing_sparse.h5`` (format 1.3) by :func:`make_missing_sample` with
``python -m tests.storage.tables missing`` (its values go into ``tests/storage/test_reader.py``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import h5py
import numpy as np
import scipy.sparse as sp

from lbm_bench import (
    GibbsSamples,
    LatentBlockModel,
    ModelDesign,
    floor_certificate,
    gibbs_labels,
    map_labels,
    random_design,
)
from lbm_bench.models.missing import MaskNoise, mask_table
from lbm_bench.protocol.table import CalibrationResult, RejectionRecord, Table
from lbm_bench.storage import (
    load_table,
    save_table,
)
from lbm_bench.storage.sources import Layout

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "format.md"
SAMPLE = ROOT / "tests" / "data" / "table_v1.h5"
SAMPLE_1_1 = ROOT / "tests" / "data" / "table_v1_1.h5"
CATEGORICAL_SAMPLE = ROOT / "tests" / "data" / "table_v1_2_categorical.h5"
MISSING_SAMPLE = ROOT / "tests" / "data" / "table_v1_3_missing_sparse.h5"

#: (kind, with Poisson effects, with the floor of version 1.1) of every family, by test id.
FAMILIES = {
    "gaussian": ("gaussian", False, False),
    "poisson": ("poisson", False, False),
    "poisson-effects": ("poisson", True, False),
    "bernoulli": ("bernoulli", False, False),
    "gaussian-floor": ("gaussian", False, True),
    "poisson-effects-floor": ("poisson", True, True),
    "categorical": ("categorical", False, False),
}
#: The design options a family needs (categorical blocks: their number of categories).
OPTIONS = {"categorical": {"categories": 4}}
#: Sparse tables (``data`` a CSR group, format 1.1), by test id: (kind, with Poisson effects).
SPARSE_FAMILIES = {
    "bernoulli-sparse": ("bernoulli", False),
    "poisson-effects-sparse": ("poisson", True),
    "gaussian-sparse": ("gaussian", False),
}
SPARSE_SAMPLE = ROOT / "tests" / "data" / "table_v1_1_sparse.h5"
#: Tables with missing entries (format 1.3), by test id: (kind, effects, sparse, missing rate, mechanism).
MISSING_FAMILIES = {
    "gaussian-missing": ("gaussian", False, False, 0.3, "random"),
    "bernoulli-missing-block": ("bernoulli", False, False, 0.3, "block"),
    "poisson-effects-missing-block": ("poisson", True, False, 0.2, "block"),
    "bernoulli-sparse-missing": ("bernoulli", False, True, 0.1, "random"),
    "poisson-effects-sparse-missing-block": ("poisson", True, True, 0.1, "block"),
}


# ---------------------------------------------------------------------------
# Building tables and the sample file
# ---------------------------------------------------------------------------
def make_table(
    kind: str,
    *,
    effects: bool = False,
    n_rows: int = 12,
    n_cols: int = 10,
    n_samples: int = 50,
    scale: float = 0.8,
    seed: int = 2,
    balance: float | None = None,
    sparse: bool = False,
    floor: bool = False,
    missing: tuple[float, str] | None = None,
) -> Table:
    """A small seeded table with plausible hand-made calibration and rejection records
    (with ``floor``: also its Bayes labels and their cross-fitted risk, criterion "bayes").

    With ``sparse``, ``data`` is the same table as a ``scipy.sparse.csr_array``
    (Gaussian entries below 0.3 in absolute value set to zero, so that it has zeros).
    With ``missing=(rate, mechanism)``, entries go missing (format 1.3): ``data`` holds
    NaN there (explicit NaN values of a sparse table) and the labels see the rest.
    """
    extra = {} if missing is None else {"missing": missing[0], "missing_mechanism": missing[1]}
    design = random_design(kind, 2, 2, effects=(n_rows, n_cols) if effects else None, rng=seed,
                           **OPTIONS.get(kind, {}), **extra)
    model = design.model(scale)
    X, z, w = model.sample(n_rows, n_cols, rng=seed + 1)
    seen = X  # what the labels see: the table, or its observed entries
    if missing is not None:  # (sparse: bernoulli and poisson only)
        noise = MaskNoise(n_rows, n_cols, design.missing, sparse, rng=np.random.default_rng(seed + 5))
        seen = mask_table(sp.csr_array(X) if sparse else X, noise, design.missing_probs(scale), z, w)
    mapped = map_labels(model, seen, rng=seed + 2)
    samples = gibbs_labels(model, seen, n_samples=n_samples, n_chains=2, burn_in=20, rng=seed + 3)
    risk = samples.risk(mapped.rows, mapped.cols)
    history = np.array([[0.5, 0.31, 0.06, 20], [1.0, 0.04, 0.02, 20], [scale, 0.11, 0.04, 20]])
    calibration = CalibrationResult(
        scale=scale,
        bracket=(0.5, 1.0),
        n_steps=3,
        error_std=0.04,
        target_risk=0.1,
        tolerance=0.02,
        n_tables=20,
        history=history,
        **(_floor_calibration(scale) if floor else {"mean_error": 0.11}),
    )
    rejection = RejectionRecord(
        attempts=3,
        screened_out=2,
        acceptance_rate=1 / 3,
        tolerance=0.05,
        candidate_risks=np.array([0.31, 0.02, risk.risk]),
        balance=balance,
    )
    options = {"kind": kind, "gibbs": {"n_samples": n_samples, "n_chains": 2}, "effects": effects}
    if sparse:
        X = sp.csr_array(np.where(np.abs(X) < 0.3, 0.0, X) if kind == "gaussian" else X)
    if missing is not None:
        X = seen.with_nan()
    return Table(
        data=X,
        model=model,
        design=design,
        scale=scale,
        truth_rows=z,
        truth_cols=w,
        map_rows=mapped.rows,
        map_cols=mapped.cols,
        gibbs=samples,
        risk=risk,
        target_risk=0.1,
        seed=seed,
        calibration=calibration,
        rejection=rejection,
        options=options,
        **(_floor(samples, mapped, model) if floor else {}),
    )


def _floor_calibration(scale: float) -> dict[str, Any]:
    """The calibration of the floor: a gap measured twice, the last time at the scale."""
    gaps = np.array([[1.0, 0.006, 0.003, 4], [scale, 0.004, 0.002, 6]])
    return {"mean_error": 0.11 - 0.004, "gap": 0.004, "gap_history": gaps, "criterion": "bayes"}


def _floor(samples: GibbsSamples, mapped: Any, model: LatentBlockModel) -> dict[str, Any]:
    g, m = model.block_shape
    certificate = floor_certificate(
        samples, starts=[(mapped.rows, mapped.cols)], n_row_clusters=g, n_col_clusters=m
    )
    return {
        "bayes_rows": certificate.rows,
        "bayes_cols": certificate.cols,
        "bayes_risk": certificate.risk,
        "criterion": "bayes",
    }


def make_sample(path: Path = SAMPLE, *, floor: bool = False) -> Path:
    """Write a committed sample: Poisson with effects, 12x10, 2x2 clusters, 50 sets
    (with ``floor``: version 1.1, the same table with its floor)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    return save_table(make_table("poisson", effects=True, balance=0.25, floor=floor), path)


def make_categorical_sample(path: Path = CATEGORICAL_SAMPLE) -> Path:
    """Write the committed categorical sample (format 1.2): 12x10 codes of K = 4 categories,
    2x2 clusters, 50 sets, with its floor."""
    path.parent.mkdir(parents=True, exist_ok=True)
    return save_table(make_table("categorical", floor=True, seed=6), path)


def make_missing_sample(path: Path = MISSING_SAMPLE) -> Path:
    """Write the committed sample with missing entries (format 1.3): Poisson with row and column
    effects, 12x10 stored as CSR, 10% of the entries missing by block, 2x2 clusters, 50 sets."""
    path.parent.mkdir(parents=True, exist_ok=True)
    return save_table(make_table("poisson", effects=True, sparse=True, missing=(0.1, "block"), seed=7), path)


def declare_label_sets(source: Path, path: Path, n_sets: int) -> Path:
    """A copy of the table file ``source`` whose Gibbs datasets declare ``n_sets`` label sets,
    compressed and never written (every label 0, the fill value): a file of tens of KB that
    declares gigabytes (issue 48)."""
    import h5py

    shutil.copy(source, path)
    with h5py.File(path, "r+") as file:
        gibbs = file["gibbs"]
        for side in ("rows", "cols"):
            width = gibbs[side].shape[1]
            del gibbs[side]
            gibbs.create_dataset(side, shape=(n_sets, width), dtype="u1", chunks=(min(n_sets, 1 << 16), width),
                                 compression="gzip", fillvalue=0)
        chains = int(gibbs.attrs["n_chains"])
        gibbs.attrs["chain_lengths"] = np.full(chains, n_sets // chains, dtype=np.int64)
    return path


def make_sparse_sample(path: Path = SPARSE_SAMPLE) -> Path:
    """Write the committed sparse sample (format 1.1): Bernoulli, 12x10 stored as CSR, 2x2 clusters."""
    path.parent.mkdir(parents=True, exist_ok=True)
    return save_table(make_table("bernoulli", sparse=True, seed=4), path)


def wide_table() -> Table:
    """A hand-built Gaussian table with 257 row clusters (uint16 labels), 3 chains, one empty."""
    g, n_rows, n_cols = 257, 300, 4
    rng = np.random.default_rng(5)
    props = np.full(g, 1.0 / g)
    pattern = rng.standard_normal((g, 1))
    design = ModelDesign("gaussian", props, np.array([1.0]), pattern, np.ones((g, 1)))
    model = design.model(2.0)
    z = np.arange(n_rows) % g
    w = np.zeros(n_cols, dtype=np.int64)
    X = model.table_from_noise(rng.standard_normal((n_rows, n_cols)), z, w)
    sets = np.stack([np.roll(z, k) for k in range(5)]).astype(np.uint16)
    gibbs = GibbsSamples(sets, np.zeros((5, n_cols), np.uint8), np.array([3, 0, 2]), 0, 1)
    risk = gibbs.risk(z, w)
    calibration = CalibrationResult(2.0, (1.0, 3.0), 1, 0.2, 0.1, 0.2, 0.01, 5, np.array([[2.0, 0.2, 0.1, 5]]))
    rejection = RejectionRecord(1, 0, 1.0, 0.1, np.array([risk.risk]), None)
    return Table(X, model, design, 2.0, z, w, z, w, gibbs, risk, 0.2, 2**62, calibration, rejection, {})



def layout_of(path: Path) -> Layout:
    """Every attribute and dataset of a table file, in memory (what the writer's checks read)."""
    layout = Layout()
    with h5py.File(path, "r") as f:
        layout.attrs[""] = dict(f.attrs)

        def visit(name: str, obj: Any) -> None:
            if isinstance(obj, h5py.Group):
                layout.attrs[name] = dict(obj.attrs)
            else:
                layout.datasets[name] = obj[()]

        f.visititems(visit)
    return layout


def copy_of(path: Path, tmp_path: Path, name: str = "copy.h5") -> Path:
    target = tmp_path / name
    shutil.copyfile(path, target)
    return target


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# ---------------------------------------------------------------------------
# Comparing tables field by field
# ---------------------------------------------------------------------------
def assert_same(a: Any, b: Any, where: str = "table") -> None:
    """Exact equality of every field (arrays: dtype, shape, values; NaN equal to NaN)."""
    if dataclasses.is_dataclass(a):
        assert type(a) is type(b), where
        for field in dataclasses.fields(a):
            if field.compare:  # Table.timings and CalibrationResult.design are not compared
                assert_same(getattr(a, field.name), getattr(b, field.name), f"{where}.{field.name}")
    elif isinstance(a, LatentBlockModel):
        assert type(a) is type(b), where
        assert_same(a.row_proportions, b.row_proportions, f"{where}.row_proportions")
        assert_same(a.col_proportions, b.col_proportions, f"{where}.col_proportions")
        assert_same(a.block_parameters(), b.block_parameters(), f"{where}.block_parameters")
    elif sp.issparse(a):
        assert isinstance(b, sp.csr_array) and isinstance(a, sp.csr_array), where
        assert (a.dtype, a.shape, a.nnz) == (b.dtype, b.shape, b.nnz), where
        if a.dtype.kind == "f" and np.isnan(a.data).any():  # explicit NaN: missing entries
            a, b = a.copy(), b.copy()
            a.sort_indices()
            b.sort_indices()
            assert np.array_equal(a.indptr, b.indptr) and np.array_equal(a.indices, b.indices), where
            assert np.array_equal(a.data, b.data, equal_nan=True), where
        else:
            assert (a != b).nnz == 0, where
    elif isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray), where
        assert (a.dtype, a.shape) == (b.dtype, b.shape), where
        assert np.array_equal(a, b, equal_nan=a.dtype.kind == "f"), where
    elif isinstance(a, dict):
        assert isinstance(b, dict) and a.keys() == b.keys(), where
        for key in a:
            assert_same(a[key], b[key], f"{where}[{key!r}]")
    elif isinstance(a, (tuple, list)):
        assert type(a) is type(b) and len(a) == len(b), where
        for k, (x, y) in enumerate(zip(a, b, strict=True)):
            assert_same(x, y, f"{where}[{k}]")
    elif isinstance(a, float) and math.isnan(a):
        assert isinstance(b, float) and math.isnan(b), where
    else:
        assert a == b, f"{where}: {a!r} != {b!r}"
        assert isinstance(b, type(a)) or isinstance(a, type(b)), where



def _cells(line: str) -> list[str]:
    return [cell.strip().replace("\\|", "|") for cell in re.split(r"(?<!\\)\|", line)[1:-1]]


def documented_items() -> dict[str, tuple[str, str, str, str]]:
    """Item -> (type, dtype, shape, present) from the tables of docs/format.md.

    An item documented twice is keyed ``name|present`` the second time: ``data`` (the
    dataset of a dense table, present ``dense``, and the group of a sparse one,
    ``data|sparse``), ``params/probs`` and ``params/design/pattern`` (of shape
    (g, m, K) for categorical tables, ``params/probs|categorical``).
    """
    items: dict[str, tuple[str, str, str, str]] = {}
    for line in DOC.read_text().splitlines():
        if re.match(r"^\| `[^`]+` \| (attribute|dataset|group) \|", line):
            name, type_, dtype, shape, present = _cells(line)[:5]
            key = name.strip("`")
            key += f"|{present}" if key in items else ""
            assert key not in items, name
            items[key] = (type_, dtype, shape, present)
    return items


def documented_data_dtypes() -> dict[str, np.dtype]:
    from lbm_bench import family_names

    dtypes = {}
    for line in DOC.read_text().splitlines():
        match = re.match(rf"^\| `({'|'.join(family_names())})` \| (\w+) \|", line)
        if match:
            dtypes[match.group(1)] = np.dtype(match.group(2))
    return dtypes


def file_items(path: Path) -> dict[str, tuple[str, Any, Any]]:
    """Every group, dataset and attribute of a file as (type, dtype, shape), by documented name."""
    items: dict[str, tuple[str, Any, Any]] = {}
    with h5py.File(path, "r") as f:

        def add_attrs(prefix: str, obj: Any) -> None:
            for key in obj.attrs:
                aid = obj.attrs.get_id(key)
                items[f"{prefix}@{key}"] = ("attribute", aid.dtype, aid.shape)

        def visit(name: str, obj: Any) -> None:
            if isinstance(obj, h5py.Group):
                items[name] = ("group", None, None)
                add_attrs(name, obj)
            else:
                items[name] = ("dataset", obj.dtype, obj.shape)

        add_attrs("", f)
        f.visititems(visit)
    return items



def all_names(f: h5py.File) -> list[str]:
    names: list[str] = []
    f.visit(names.append)
    return names



# ---------------------------------------------------------------------------
# What readers must reject
# ---------------------------------------------------------------------------
def set_attr(obj: str, name: str, value: Any) -> Callable[[Path], None]:
    def mutate(path: Path) -> None:
        with h5py.File(path, "r+") as f:
            f[obj].attrs[name] = value

    return mutate


def delete_item(item: str) -> Callable[[Path], None]:
    def mutate(path: Path) -> None:
        with h5py.File(path, "r+") as f:
            obj, _, attr = item.partition("@")
            if attr:
                del f[obj or "/"].attrs[attr]
            else:
                del f[obj]

    return mutate


def replace_dataset(item: str, make: Callable[[np.ndarray], np.ndarray]) -> Callable[[Path], None]:
    def mutate(path: Path) -> None:
        with h5py.File(path, "r+") as f:
            values = make(f[item][()])
            del f[item]
            f.create_dataset(item, data=values)

    return mutate


def set_first(item: str, value: Any) -> Callable[[Path], None]:
    def mutate(path: Path) -> None:
        with h5py.File(path, "r+") as f:
            ds = f[item]
            index = (0,) * ds.ndim
            ds[index] = value

    return mutate


def overwrite_bytes(make: Callable[[bytes], bytes]) -> Callable[[Path], None]:
    def mutate(path: Path) -> None:
        path.write_bytes(make(path.read_bytes()))

    return mutate


REJECTIONS = {
    "not-hdf5": ("gaussian", overwrite_bytes(lambda b: b"kind,risk\ngaussian,0.1\n"), "not a readable HDF5 file"),
    "empty": ("gaussian", overwrite_bytes(lambda b: b""), "not a readable HDF5 file"),
    "truncated": ("gaussian", overwrite_bytes(lambda b: b[: len(b) // 2]), "not a readable HDF5 file"),
    "no-format": ("gaussian", delete_item("@format"), "attribute @format is missing"),
    "other-format": ("gaussian", set_attr("/", "format", "netcdf-table"), "not an lbm-bench-table file"),
    "format-not-string": ("gaussian", set_attr("/", "format", 3), "must be a UTF-8 string"),
    "newer-major": ("gaussian", set_attr("/", "format_version", "2.0"), "newer than this reader"),
    "older-major": ("gaussian", set_attr("/", "format_version", "0.9"), "not supported"),
    "bad-version": ("gaussian", set_attr("/", "format_version", "1"), "MAJOR.MINOR"),
    "bad-kind": ("gaussian", set_attr("/", "kind", "normal"), "@kind must be one of"),
    "zero-rows": ("gaussian", set_attr("/", "n_rows", 0), "@n_rows must be >= 1"),
    "missing-dataset": ("gaussian", delete_item("gibbs/cols"), "dataset gibbs/cols is missing"),
    "missing-group": ("gaussian", delete_item("calibration"), "group calibration is missing"),
    "missing-attribute": ("gaussian", delete_item("gibbs@thin"), "attribute gibbs@thin is missing"),
    "missing-risk": ("gaussian", delete_item("@risk_ess"), "attribute @risk_ess is missing"),
    "data-shape": ("gaussian", replace_dataset("data", lambda x: x[:-1]), "dataset data has shape (11, 10)"),
    "n-cols": ("gaussian", set_attr("/", "n_cols", 11), "has shape"),
    "truth-shape": ("gaussian", replace_dataset("truth/rows", lambda x: x[:-1]), "dataset truth/rows has shape"),
    "label-range": ("gaussian", set_first("map/rows", 2), "map/rows holds label 2, outside [0, 2)"),
    "gibbs-range": ("bernoulli", set_first("gibbs/cols", 7), "gibbs/cols holds label 7"),
    "signed-labels": ("gaussian", replace_dataset("truth/cols", lambda x: x.astype(np.int64)), "expected unsigned"),
    "chain-lengths": ("gaussian", set_attr("gibbs", "chain_lengths", np.array([25, 24])), "sum(gibbs@chain_lengths)"),
    "n-chains": ("gaussian", set_attr("gibbs", "n_chains", 3), "gibbs@n_chains is 3"),
    "gibbs-lengths-differ": ("poisson", replace_dataset("gibbs/cols", lambda x: x[:-1]), "49 label sets"),
    "param-shape": ("gaussian", replace_dataset("params/means", lambda x: x[:, :1]), "params/means has shape (2, 1)"),
    "param-dtype": (
        "bernoulli", replace_dataset("params/probs", lambda x: (x > 0.5).astype(np.int64)), "expected float"
    ),
    "param-value": ("poisson", replace_dataset("params/rates", lambda x: -x), "params: rates must be > 0"),
    "proportions": ("gaussian", replace_dataset("params/row_proportions", lambda x: 2 * x), "must sum to 1"),
    "effects-alone": ("poisson-effects", delete_item("params/col_effects"), "must come together"),
    "effects-length": (
        "poisson-effects", replace_dataset("params/row_effects", lambda x: x[:-1]), "row_effects has shape"
    ),
    "design-shape": ("gaussian", replace_dataset("params/design/pattern", lambda x: x.T[:1]), "params/design/pattern"),
    "scale-mismatch": ("gaussian", set_attr("params", "scale", 9.0), "params@scale"),
    "gaussian-dtype": ("gaussian", replace_dataset("data", lambda x: x.astype(np.float32)), "expected float64"),
    "poisson-dtype": ("poisson", replace_dataset("data", lambda x: x.astype(np.float64)), "expected int64"),
    "bernoulli-dtype": ("bernoulli", replace_dataset("data", lambda x: x.astype(np.int64)), "expected uint8"),
    "gaussian-nan": ("gaussian", set_first("data", np.nan), "non-finite"),
    "poisson-negative": ("poisson", set_first("data", -1), "negative count"),
    "bernoulli-two": ("bernoulli", set_first("data", 2), "other than 0/1"),
    "history-steps": ("gaussian", set_attr("calibration", "n_steps", 4), "calibration/history has shape (3, 3)"),
    "bracket": ("gaussian", set_attr("calibration", "bracket", np.array([1.0, 2.0, 3.0])), "2 values"),
    "candidates": ("gaussian", set_attr("rejection", "attempts", 2), "rejection/candidate_risks has shape"),
    "options-json": ("gaussian", set_attr("/", "options_json", "{not json"), "not valid JSON"),
    "options-list": ("gaussian", set_attr("/", "options_json", "[1, 2]"), "JSON object"),
    "seed-type": ("gaussian", set_attr("/", "seed", 1.5), "@seed must be an integer"),
    "floor-partial": ("gaussian-floor", delete_item("posterior"), "must come together; posterior/rows"),
    "floor-criterion": ("gaussian-floor", set_attr("/", "criterion", "best"), "@criterion must be one of"),
    "floor-label-range": ("gaussian-floor", set_first("bayes/rows", 5), "bayes/rows holds label 5"),
    "floor-posterior": (
        "gaussian-floor", replace_dataset("posterior/rows", lambda x: x[:, ::-1].copy()), "differs from the shares"
    ),
    "floor-posterior-dtype": (
        "gaussian-floor", replace_dataset("posterior/cols", lambda x: x.astype(np.float64)), "expected float32"
    ),
    # 1.2: categorical tables
    "categorical-no-categories": ("categorical", delete_item("@categories"), "attribute @categories is missing"),
    "categorical-version": (
        "categorical", set_attr("/", "format_version", "1.1"),
        "categorical tables need a format version that has @categories, not 1.1",
    ),
    "categorical-one-category": (
        "categorical", set_attr("/", "categories", 1), "@categories must be between 2 and 255"
    ),
    "categorical-code": ("categorical", set_first("data", 4), "dataset data holds code 4, outside 0..3"),
    "categorical-dtype": ("categorical", replace_dataset("data", lambda x: x.astype(np.int64)), "expected uint8"),
    "categorical-probs-shape": (
        "categorical", replace_dataset("params/probs", lambda x: x[:, :, :3]), "params/probs has shape (2, 2, 3)"
    ),
    "categorical-fewer-categories": ("categorical", set_attr("/", "categories", 3), "holds code 3, outside 0..2"),
    "categorical-probs-sum": (
        "categorical", replace_dataset("params/probs", lambda x: 2 * x), "params: probs must sum to 1"
    ),
    "categorical-pattern": (
        "categorical", replace_dataset("params/design/pattern", lambda x: x[:, :, 0]), "params/design/pattern has shape"
    ),
}


if __name__ == "__main__":
    import sys

    if sys.argv[1:] == ["sparse"]:  # python -m tests.storage.tables sparse
        written = make_sparse_sample()
        sample = load_table(written)
        print(f"wrote {written} ({written.stat().st_size} bytes)")
        print(f"SPARSE_SAMPLE_NNZ = {sample.data.nnz}")
        print(f"SPARSE_SAMPLE_INDPTR = {sample.data.indptr.tolist()}")
        print(f"SPARSE_SAMPLE_RISK = {sample.risk.risk!r}")
        sys.exit(0)
    if sys.argv[1:] == ["categorical"]:  # python -m tests.storage.tables categorical
        written = make_categorical_sample()
        sample = load_table(written)
        print(f"wrote {written} ({written.stat().st_size} bytes)")
        print(f"CATEGORICAL_SAMPLE_DATA_SUM = {int(sample.data.sum())}")
        print(f"CATEGORICAL_SAMPLE_PROBS_00 = {sample.model.probs[0, 0].tolist()}")
        print(f"CATEGORICAL_SAMPLE_RISK = {sample.risk.risk!r}")
        print(f"CATEGORICAL_SAMPLE_BAYES_RISK = {sample.bayes_risk.risk!r}")
        sys.exit(0)
    if sys.argv[1:] == ["missing"]:  # python -m tests.storage.tables missing
        written = make_missing_sample()
        sample = load_table(written)
        print(f"wrote {written} ({written.stat().st_size} bytes)")
        print(f"MISSING_SAMPLE_MISSING = {int(np.isnan(sample.data.data).sum())}")
        print(f"MISSING_SAMPLE_DATA_SUM = {int(np.nansum(sample.data.data))}")
        print(f"MISSING_SAMPLE_RISK = {sample.risk.risk!r}")
        sys.exit(0)
    for floor in (False, True):
        if not floor and SAMPLE.exists():
            continue  # the 1.0 sample is a compatibility fixture: never rewritten
        written = make_sample(SAMPLE_1_1 if floor else SAMPLE, floor=floor)
    sample = load_table(written)
    print(f"SAMPLE_BAYES_RISK = {sample.bayes_risk.risk!r}")
    print(f"SAMPLE_BAYES_ROWS = {sample.bayes_rows.tolist()}")
    print(f"wrote {written} ({written.stat().st_size} bytes)")
    print(f"SAMPLE_RISK = {sample.risk.risk!r}")
    print(f"SAMPLE_ROW_LOSS = {sample.risk.row_loss!r}")
    print(f"SAMPLE_DATA_SUM = {int(sample.data.sum())}")
    print(f"SAMPLE_TRUTH_ROWS = {sample.truth_rows.tolist()}")
