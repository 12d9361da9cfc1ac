"""The normative constants of the ``lbm-bench-table`` format (``docs/format.md``).

Everything the writer and the reader must agree on lives here, once: the
format name and the table of versions, the names and kinds of the attributes
of each group, the datasets and their dtypes, and the chunking and
compression of the chunked datasets. :mod:`lbm_bench.storage.writer` and
:mod:`lbm_bench.storage.validate` only read these tables.

Versions
--------
A file says ``format_version = "MAJOR.MINOR"``. A minor version only adds
optional items, so a reader of major ``MAJOR`` reads every ``MAJOR.x`` file:
an older minor lacks the items of the later ones (they are optional), a newer
minor may hold items this reader does not know (they are ignored). To add
version ``1.1``, add its entry to :data:`MINOR_VERSIONS` with the items it
adds: :data:`FORMAT_VERSION` follows; :func:`optional_items` tells the reader
which items a file of a given version may hold (read an added item only when
it is listed there for the file's version and present); :func:`version_for`
gives the writer the oldest version that holds the items it writes, so that a
table without the new items keeps its bytes (and stays readable by older
readers of the same major).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from lbm_bench.models.family import Family

__all__ = [
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "MAJOR",
    "MINOR_VERSIONS",
    "ACCEPTED_VERSIONS",
    "MISSING_ATTRIBUTES",
    "MISSING_DATA",
    "added_in",
    "parse_version",
    "optional_items",
    "version_for",
    "data_dtype",
    "block_parameters",
    "header_attributes",
    "EFFECTS",
    "DESIGN_ARRAYS",
    "LABEL_GROUPS",
    "DATASETS",
    "DatasetSpec",
    "dataset_spec",
    "ROOT_ATTRIBUTES",
    "RISK_ATTRIBUTES",
    "BAYES_RISK_ATTRIBUTES",
    "FLOOR_ATTRIBUTES",
    "FLOOR_DATASETS",
    "POSTERIOR_DTYPE",
    "GROUP_ATTRIBUTES",
    "SPARSE_DATA",
    "MAX_STRING_BYTES",
]

# ---------------------------------------------------------------------------
# Name and versions
# ---------------------------------------------------------------------------
#: Value of the root attribute ``format``.
FORMAT_NAME = "lbm-bench-table"
#: Major version this package writes and reads (files of another major are refused).
MAJOR = 1
#: Minor versions of :data:`MAJOR` this package knows, each with the items it adds
#: (``"group/dataset"`` or ``"group@attribute"``; ``"@name"`` for a root attribute).
#: Every item a minor adds is optional for readers: a file of an older minor lacks it.
MINOR_VERSIONS: dict[int, tuple[str, ...]] = {
    0: (),  # 1.0: the layout of docs/format.md
    # 1.1: sparse tables, ``data`` as a CSR group (docs/format.md, "Sparse tables"), and
    # the floor (the Bayes labels for l_item, their cross-fitted risk, the criterion the
    # target applied to) with the posterior marginals, stored all together or not at all.
    # Either set of items makes a file 1.1; both may be present.
    1: (
        "data@encoding",
        "data@shape",
        "data/indices",
        "data/indptr",
        "data/values",
        "bayes/rows",
        "bayes/cols",
        "posterior/rows",
        "posterior/cols",
        "@bayes_risk",
        "@bayes_risk_mcse",
        "@bayes_risk_rhat",
        "@bayes_risk_ess",
        "@bayes_row_loss",
        "@bayes_col_loss",
        "@criterion",
        # the calibration's method ("secant" or "bisection"), and a fourth column of
        # calibration/history, n_tables (1.0 files: 3 columns, every step on n_tables)
        "calibration@method",
        # calibration of the floor (criterion "bayes"): the mean gap between the MAP's
        # risk and the floor at the scale, and every measure of it
        "calibration@gap",
        "calibration/gaps",
    ),
    # 1.2: categorical tables: the number of categories K at the root (a family's
    # header attribute, docs/format.md "Categorical tables"), with ``data`` as uint8
    # codes 0..K-1, ``params/probs`` and ``params/design/pattern`` of shape (g, m, K).
    2: ("@categories",),
    # 1.3: tables with missing entries (docs/format.md, "Missing entries"): the observed
    # mask of a dense table (uint8, 1: observed) or the missing set of a sparse one (CSR
    # positions), the rate, mechanism and count as root attributes, and for the block
    # mechanism its probabilities, pattern and spread.
    3: (
        "observed",
        "missing@encoding",
        "missing@shape",
        "missing/indptr",
        "missing/indices",
        "@missing_rate",
        "@missing_mechanism",
        "@n_missing",
        "params/missing_probs",
        "params/design/missing_pattern",
        "params/design@missing_spread",
    ),
    # 1.4: the density of a sparse design (the expected fraction of non-zero entries its
    # scale keeps), so that a loaded table's ``design.model(scale)`` is its ``model``
    # (files of 1.1 to 1.3 lose it: their sparse designs read back as dense ones).
    4: ("params/design@density",),
    # 1.5: a design fitted to a table (issue 34, docs/design-files.md): the natural parameters
    # its scale moves along (scale 1: the fitted model; scale 0: the table's overall level),
    # and the SHA-256 of the design file it was read from, so that a loaded table's
    # ``design.model(scale)`` is its ``model`` and the table names its design file.
    5: ("params/design/path_natural", "params/design/path_centre", "params/design@digest"),
    # 1.6: the knee from which up a fitted design's path keeps the classes' margins (Poisson
    # and Bernoulli designs; absent: the straight line of 1.5), without which a 1.5 reader
    # would rebuild another model at the table's scale.
    6: ("params/design/path_knee",),
}
#: Version written by the writer: the newest known minor.
FORMAT_VERSION = f"{MAJOR}.{max(MINOR_VERSIONS)}"
#: Every version this package knows, oldest first (readers also accept unknown newer minors).
ACCEPTED_VERSIONS = tuple(f"{MAJOR}.{minor}" for minor in sorted(MINOR_VERSIONS))

_VERSION_PATTERN = re.compile(r"^(\d+)\.(\d+)$")


def added_in(item: str) -> str:
    """The version that added ``item`` (named as in :data:`MINOR_VERSIONS`), ``"1.0"`` for
    the items of the first version: messages name versions through it, so that a version
    number is written in one place.

    Examples
    --------
    >>> added_in("bayes/rows"), added_in("gibbs/rows")
    ('1.1', '1.0')
    """
    minor = next((m for m, items in MINOR_VERSIONS.items() if item in items), 0)
    return f"{MAJOR}.{minor}"


def parse_version(text: str) -> tuple[int, int] | None:
    """``(major, minor)`` of a ``"MAJOR.MINOR"`` string of decimal integers, None otherwise.

    Examples
    --------
    >>> parse_version("1.0"), parse_version("1.12"), parse_version("1")
    ((1, 0), (1, 12), None)
    """
    match = _VERSION_PATTERN.match(text)
    return None if match is None else (int(match.group(1)), int(match.group(2)))


def optional_items(version: tuple[int, int]) -> frozenset[str]:
    """Items added by the minors up to ``version`` (all optional to readers).

    A file of a minor newer than the newest known gets the items of every known
    minor (its own unknown items are ignored by the reader).

    Parameters
    ----------
    version : (major, minor)
        Of :data:`MAJOR`.

    Returns
    -------
    frozenset of str
        Item names as in :data:`MINOR_VERSIONS`.
    """
    major, minor = version
    if major != MAJOR:
        raise ValueError(f"version must be of major {MAJOR}, got {major}.{minor}")
    return frozenset(item for m, items in MINOR_VERSIONS.items() if m <= minor for item in items)


def version_for(items: Iterable[str]) -> str:
    """The oldest known version whose optional items include those of ``items`` it lists.

    Parameters
    ----------
    items : iterable of str
        Every item of a file about to be written (names as in :data:`MINOR_VERSIONS`;
        the items of version 1.0 match no entry).

    Returns
    -------
    str
        ``"MAJOR.MINOR"``; ``"1.0"`` for a file with none of the items later minors add.

    Examples
    --------
    >>> version_for(["data", "gibbs/rows", "gibbs@thin"])
    '1.0'
    """
    present = set(items)
    minor = max((m for m, added in MINOR_VERSIONS.items() if present.intersection(added)),
                default=0)
    return f"{MAJOR}.{minor}"


# ---------------------------------------------------------------------------
# Datasets
# ---------------------------------------------------------------------------
def data_dtype(family: Family) -> np.dtype:
    """dtype of ``data`` (the dataset, or ``data/values`` of a sparse table) for ``family``: the
    model class's ``table_dtype``.

    Examples
    --------
    >>> from lbm_bench.models.registry import get_family
    >>> data_dtype(get_family("poisson"))
    dtype('int64')
    """
    return family.model.table_dtype


def block_parameters(family: Family) -> tuple[str, ...]:
    """Block parameter datasets of ``params/`` for ``family``, each of shape (g, m)
    (its storage codec's ``parameter_names``; the optional EFFECTS come on top)."""
    return family.storage.parameter_names


def header_attributes(family: Family) -> dict[str, str]:
    """Root attributes the files of ``family`` carry beyond :data:`ROOT_ATTRIBUTES`
    (name -> attribute kind; its storage codec's ``header_attributes``): ``{"categories": "int"}``
    for categorical tables (version 1.2), none otherwise."""
    return {name: kind for name, (kind, _) in family.storage.header_attributes.items()}


#: Optional per-row/column parameters (the exposures of a family that ``has_effects``: the
#: Poisson contingency model), in ``params/`` and ``params/design/``, stored together or not at all.
EFFECTS = ("row_effects", "col_effects")
#: Datasets of ``params/design/`` (the last two: the optional EFFECTS).
DESIGN_ARRAYS = ("row_proportions", "col_proportions", "pattern", "dispersion") + EFFECTS
#: Groups holding one labelling each as ``rows`` and ``cols`` datasets.
LABEL_GROUPS = ("truth", "map")


@dataclass(frozen=True)
class DatasetSpec:
    """What a dataset of the format must be.

    Attributes
    ----------
    shape : tuple of (str, int or None)
        Its extents: a size of the header (``"n_rows"``, ``"n_cols"``, ``"g"``, ``"m"``), an
        attribute read before it (``"calibration@n_steps"``), a number, or None (any).
    kinds : str
        Allowed dtype kinds (``"u"`` unsigned, ``"f"`` float, ``"iu"`` integer).
    dtype : numpy.dtype, optional
        The exact dtype, when one is required.
    labels : {"g", "m"}, optional
        Labels: every value lies in ``[0, g)`` or ``[0, m)``.
    """

    shape: tuple[str | int | None, ...]
    kinds: str
    dtype: np.dtype | None = None
    labels: str | None = None


def _labelling(group: str) -> dict[str, DatasetSpec]:
    return {f"{group}/rows": DatasetSpec(("n_rows",), "u", labels="g"),
            f"{group}/cols": DatasetSpec(("n_cols",), "u", labels="m")}


#: Every dataset of every family's file but the table itself, the family's parameters and
#: the design's pattern (:func:`dataset_spec` adds those): the validator reads each through
#: this table.
DATASETS: dict[str, DatasetSpec] = {
    **_labelling("truth"),
    **_labelling("map"),
    **_labelling("bayes"),  # 1.1
    "gibbs/rows": DatasetSpec((None, "n_rows"), "u", labels="g"),
    "gibbs/cols": DatasetSpec((None, "n_cols"), "u", labels="m"),
    "params/row_proportions": DatasetSpec(("g",), "f"),
    "params/col_proportions": DatasetSpec(("m",), "f"),
    "params/design/row_proportions": DatasetSpec(("g",), "f"),
    "params/design/col_proportions": DatasetSpec(("m",), "f"),
    "params/design/dispersion": DatasetSpec(("g", "m"), "f"),
    "calibration/history": DatasetSpec(("calibration@n_steps", None), "f"),
    "calibration/gaps": DatasetSpec((None, 4), "f"),  # 1.1
    "rejection/candidate_risks": DatasetSpec(("rejection@attempts",), "f"),
    "posterior/rows": DatasetSpec(("n_rows", "g"), "f", dtype=np.dtype(np.float32)),  # 1.1
    "posterior/cols": DatasetSpec(("n_cols", "m"), "f", dtype=np.dtype(np.float32)),  # 1.1
    "data/indptr": DatasetSpec(("n_rows+1",), "iu"),  # 1.1, sparse tables
    "data/indices": DatasetSpec((None,), "iu"),
    # 1.3, missing entries: the observed mask of a dense table, the missing set of a sparse one
    "observed": DatasetSpec(("n_rows", "n_cols"), "u", dtype=np.dtype(np.uint8)),
    "missing/indptr": DatasetSpec(("n_rows+1",), "iu"),
    "missing/indices": DatasetSpec(("@n_missing",), "iu"),
    "params/missing_probs": DatasetSpec(("g", "m"), "f"),
    "params/design/missing_pattern": DatasetSpec(("g", "m"), "f"),
    # 1.5, a fitted design: its path's natural parameters (n_stats, g, m) and centre (n_stats,)
    "params/design/path_natural": DatasetSpec((None, "g", "m"), "f"),
    "params/design/path_centre": DatasetSpec((None,), "f"),
    # the scale from which up it keeps the margins
    "params/design/path_knee": DatasetSpec((1,), "f"),
}
#: Shapes of the optional EFFECTS (in ``params/`` and ``params/design/``).
_EFFECT_SHAPES = {"row_effects": ("n_rows",), "col_effects": ("n_cols",)}


def dataset_spec(path: str, family: Family) -> DatasetSpec:
    """What dataset ``path`` must be in a file of ``family``.

    The fixed datasets of :data:`DATASETS`; the family's block parameters
    ``params/<name>`` (:func:`block_parameters`) and the design's
    ``params/design/pattern``, of shape (g, m) and the family's ``block_extents``
    (header attributes: ``(g, m, @categories)`` for categorical blocks); the
    EFFECTS; the table ``data`` (n_rows, n_cols) or ``data/values`` of the
    family's dtype.

    Examples
    --------
    >>> from lbm_bench.models.registry import get_family
    >>> poisson = get_family("poisson")
    >>> dataset_spec("params/rates", poisson).shape, dataset_spec("truth/rows", poisson).labels
    (('g', 'm'), 'g')
    >>> dataset_spec("params/probs", get_family("categorical")).shape
    ('g', 'm', '@categories')
    """
    if path in DATASETS:
        return DATASETS[path]
    group, _, name = path.rpartition("/")
    if group in ("params", "params/design") and name in _EFFECT_SHAPES:
        return DatasetSpec(_EFFECT_SHAPES[name], "f")
    if (group == "params" and name in block_parameters(family)) or path == "params/design/pattern":
        return DatasetSpec(("g", "m") + family.storage.block_extents, "f")
    dtype = data_dtype(family)
    if path == "data":
        return DatasetSpec(("n_rows", "n_cols"), dtype.kind, dtype=dtype)
    if path == "data/values":
        return DatasetSpec((None,), dtype.kind, dtype=dtype)
    raise KeyError(f"no dataset {path!r} in the format")

# ---------------------------------------------------------------------------
# Attributes: name -> kind ("int": int64 scalar, "float": float64 scalar,
# "str": UTF-8 string, "ints"/"floats": 1-D int64/float64 array)
# ---------------------------------------------------------------------------
#: Root attributes.
ROOT_ATTRIBUTES = {
    "format": "str",
    "format_version": "str",
    "lbm_bench_version": "str",
    "kind": "str",
    "n_rows": "int",
    "n_cols": "int",
    "n_row_clusters": "int",
    "n_col_clusters": "int",
    "target_risk": "float",
    "risk": "float",
    "risk_mcse": "float",
    "risk_rhat": "float",
    "risk_ess": "float",
    "row_loss": "float",
    "col_loss": "float",
    "seed": "int",
    "scale": "float",
    "options_json": "str",
}
#: Root attribute of each stored field of the risk estimate (RiskEstimate field -> attribute).
RISK_ATTRIBUTES = {
    "risk": "risk",
    "mcse": "risk_mcse",
    "rhat": "risk_rhat",
    "ess": "risk_ess",
    "row_loss": "row_loss",
    "col_loss": "col_loss",
}
#: Version 1.1: root attribute of each field of the floor's risk estimate.
BAYES_RISK_ATTRIBUTES = {
    "risk": "bayes_risk",
    "mcse": "bayes_risk_mcse",
    "rhat": "bayes_risk_rhat",
    "ess": "bayes_risk_ess",
    "row_loss": "bayes_row_loss",
    "col_loss": "bayes_col_loss",
}
#: Version 1.1: the root attributes of the floor (name -> kind).
FLOOR_ATTRIBUTES = {
    **{attr: "float"
       for attr in BAYES_RISK_ATTRIBUTES.values()}, "criterion": "str"
}
#: Version 1.1: the datasets of the floor: Bayes labels (unsigned, as the other labels) and
#: posterior marginals (share of the Gibbs sets giving each row/column each class).
FLOOR_DATASETS = ("bayes/rows", "bayes/cols", "posterior/rows", "posterior/cols")
#: Version 1.3: the root attributes of a table with missing entries (name -> kind).
MISSING_ATTRIBUTES = {"missing_rate": "float", "missing_mechanism": "str", "n_missing": "int"}
#: Version 1.3: the datasets of a sparse table's missing set (CSR positions, no values).
MISSING_DATA = ("missing/indptr", "missing/indices")
#: dtype of ``posterior/rows`` (n_rows, n_row_clusters) and ``posterior/cols`` (n_cols,
#: n_col_clusters).
POSTERIOR_DTYPE = np.dtype(np.float32)
#: Attributes of the groups (group path -> {name: kind}); the names of the
#: ``gibbs``, ``calibration`` and ``rejection`` attributes are those of the record's fields.
GROUP_ATTRIBUTES = {
    "gibbs": {"burn_in": "int", "chain_lengths": "ints", "n_chains": "int", "thin": "int"},
    "params": {"scale": "float"},
    "params/design": {"base_rate": "float"},
    "calibration": {
        "bracket": "floats",
        "error_std": "float",
        "mean_error": "float",
        "n_steps": "int",
        "n_tables": "int",
        "scale": "float",
        "target_risk": "float",
        "tolerance": "float",
    },
    "rejection": {
        "acceptance_rate": "float",
        "attempts": "int",
        "balance": "float",  # NaN: no balance constraint
        "screened_out": "int",
        "tolerance": "float",
    },
}
#: Longest string attribute, in UTF-8 bytes (version-1 object headers cap a message near 64 KiB).
MAX_STRING_BYTES = 64_000

#: The datasets of a sparse table's ``data`` group (CSR, version 1.1).
SPARSE_DATA = ("data/indptr", "data/indices", "data/values")
