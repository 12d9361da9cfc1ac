"""The manifest of a release (``manifest.json``) and its checksums (``SHA256SUMS``).

The manifest holds the release's identity, its spec (parsed; ``spec.toml`` holds the
file), the versions that built it and one entry per table (target and certified risk,
seeds, file, size, SHA-256, the family's header values such as the ``categories``
of a categorical table, and for a table with missing entries their rate, mechanism and
number); it carries no timestamps, so the same spec gives the same bytes with the same
versions. ``SHA256SUMS`` (coreutils format, sorted by name)
lists every table, the manifest and the other files a build writes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from lbm_bench._atomic import atomic_write_text
from lbm_bench._validation import describe_percent
from lbm_bench.models.family import Family
from lbm_bench.models.registry import get_family
from lbm_bench.release._files import sha256_file
from lbm_bench.release.spec import SPEC_FILE, ReleaseSpec, TableSpec

__all__ = [
    "RELEASE_FORMAT_VERSION",
    "built_with",
    "has_missing_entries",
    "entry_family",
    "header_fields",
    "kind_text",
    "missing_text",
    "read_manifest",
    "release_format_version",
    "risk_texts",
    "write_checksums",
    "write_manifest",
]

#: Version of the release layout: 1.0 has the tables, manifest.json, SHA256SUMS and
#: README.md; 1.1 adds croissant.json, tables.csv, index.html and thumbnails/; 1.2 adds
#: spec.toml (the spec it was built from, byte for byte) and the manifest's ``built_with``.
RELEASE_FORMAT_VERSION = "1.2"


def built_with() -> dict[str, str]:
    """The versions a release's bytes depend on (besides lbm-bench's own): Python, numpy,
    scipy, h5py and its HDF5 library, and matplotlib (thumbnails; ``"none"`` when it is
    not installed). The same spec gives the same bytes with the same versions."""
    import platform

    import h5py
    import numpy
    import scipy

    try:
        import matplotlib

        plots = matplotlib.__version__
    except ImportError:
        plots = "none"
    return {
        "python": platform.python_version(), "numpy": numpy.__version__, "scipy": scipy.__version__,
        "h5py": h5py.__version__, "hdf5": h5py.version.hdf5_version, "matplotlib": plots
    }


def risk_texts(entry: dict, plus_minus: str, emphasize) -> tuple[str, str]:
    """The floor and MAP risk of a manifest entry as ``"risk +- MCSE"`` texts, the certified
    one (named by the entry's criterion) passed through ``emphasize``; the floor is ``"-"``
    when the table has none (format 1.0).

    Examples
    --------
    >>> risk_texts({"criterion": "map", "risk": 0.1, "risk_mcse": 0.002}, "+-", str.upper)
    ('-', '0.1000 +- 0.0020')
    """
    certified = entry.get("criterion", "map")
    floor = (f"{entry['bayes_risk']:.4f} {plus_minus} {entry['bayes_risk_mcse']:.4f}"
             if "bayes_risk" in entry else "-")
    risk = f"{entry['risk']:.4f} {plus_minus} {entry['risk_mcse']:.4f}"
    if certified == "bayes":
        floor = emphasize(floor)
    elif certified == "map":
        risk = emphasize(risk)
    return floor, risk


def has_missing_entries(manifest: dict) -> bool:
    """Whether a table of the release has missing entries (its cards then say how many)."""
    return any("missing_rate" in entry for entry in manifest.get("tables", []))


def missing_text(entry: dict) -> str:
    """``"30% random (721)"``: a table's missing rate, mechanism and count (``"-"``: complete).

    Examples
    --------
    >>> entry = {"missing_rate": 0.3, "missing_mechanism": "block", "n_missing": 721}
    >>> missing_text(entry), missing_text({})
    ('30% block (721)', '-')
    """
    if "missing_rate" not in entry:
        return "-"
    rate = describe_percent(entry["missing_rate"], 0)
    return f"{rate} {entry['missing_mechanism']} ({entry['n_missing']})"


def release_format_version(manifest: dict) -> tuple[int, int]:
    """The manifest's release layout version as ``(major, minor)`` (``(1, 0)`` when unreadable)."""
    try:
        major, minor = str(manifest.get("format_version", "1.0")).split(".")
        return int(major), int(minor)
    except ValueError:
        return (1, 0)


def entry_family(entry: dict) -> Family:
    """The family of a manifest entry: its ``kind``, a name read from a manifest file (where
    the name becomes the family, as a table file's ``@kind`` does).

    Raises
    ------
    ValueError
        When the entry names no registered family.
    """
    return get_family(entry["kind"])


def header_fields(family: Family) -> dict[str, tuple[str, str]]:
    """The header attributes of ``family`` a manifest entry repeats (``categories`` of a
    categorical table), name to (attribute kind, description)."""
    return dict(family.storage.header_attributes)


def kind_text(entry: dict) -> str:
    """The kind of a manifest entry with its header values, for cards: ``"categorical (categories
    5)"``."""
    extra = ", ".join(f"{name} {entry[name]}" for name in header_fields(entry_family(entry))
                      if name in entry)
    return f"{entry['kind']} ({extra})" if extra else entry["kind"]


def _table_entry(out: Path, spec: TableSpec) -> dict:
    from lbm_bench.storage import read_info

    path = out / spec.filename
    info = read_info(path)
    return {
        "id": spec.id,
        "kind": spec.kind,
        **{name: info[name] for name in header_fields(spec.request.family)},  # e.g. categories
        "shape": list(spec.shape),
        "clusters": list(spec.clusters),
        "target_risk": spec.risk,
        "risk": float(info["risk"]),
        "risk_mcse": float(info["risk_mcse"]),
        "risk_rhat": float(info["risk_rhat"]),
        "row_loss": float(info["row_loss"]),
        "col_loss": float(info["col_loss"]),
        **_floor_entry(info),
        **_missing_entry(info),
        "acceptance_rate": float(info["acceptance_rate"]),
        "attempts": int(info["attempts"]),
        "scale": float(info["scale"]),
        "seed": spec.seed,
        "calibration_seed": spec.calibration_seed,
        "file": spec.filename,
        "size": path.stat().st_size,
        "sha256": sha256_file(path),
    }

def _floor_entry(info: dict) -> dict:
    """The floor of a format 1.1 table (none for 1.0 files) and the criterion its target applied
    to."""
    if "bayes_risk" not in info:
        return {"criterion": "map"}
    return {
        "criterion": str(info["criterion"]),
        "bayes_risk": float(info["bayes_risk"]),
        "bayes_risk_mcse": float(info["bayes_risk_mcse"]),
        "bayes_risk_rhat": float(info["bayes_risk_rhat"]),
    }


def _missing_entry(info: dict) -> dict:
    """How a table's entries went missing (format 1.3); nothing for a complete table, whose
    entry stays as before."""
    if "missing_mechanism" not in info:
        return {}
    return {
        "missing_rate": float(info["missing_rate"]),
        "missing_mechanism": str(info["missing_mechanism"]), "n_missing": int(info["n_missing"])
    }


def write_manifest(spec: ReleaseSpec, out: Path, *, spec_path: str | None = None) -> dict:
    """Write ``manifest.json`` for a complete build (every table present) and return it.

    Parameters
    ----------
    spec : ReleaseSpec
        The release spec that was built.
    out : Path
        The release directory.
    spec_path : str, optional
        The spec's file (unused: the manifest's ``spec_file`` is the release's own copy,
        ``spec.toml``, whatever the file built from was called, so a rebuild from it
        gives the same bytes).

    Returns
    -------
    dict
        The manifest as written.
    """
    from lbm_bench._version import __version__

    entries = [_table_entry(out, t) for t in spec.tables]
    manifest = {
        "release": {"name": spec.name, "version": spec.version, "seed": spec.seed,
                    "description": spec.description, "license": spec.license},
        "lbm_bench_version": __version__,
        "built_with": built_with(),
        "format": "lbm-bench-release",
        "format_version": RELEASE_FORMAT_VERSION,
        "spec": spec.source,
        "spec_file": SPEC_FILE,
        "tables": entries,
    }
    atomic_write_text(out / "manifest.json", json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    return manifest


def write_checksums(out: Path, manifest: dict, names: list[str]) -> None:
    """Write ``SHA256SUMS``: the tables' digests from the manifest and the digests of
    the files ``names`` (relative to ``out``), one ``<digest>  <name>`` line each,
    sorted by name (``sha256sum -c SHA256SUMS`` checks it)."""
    sums = [f"{e['sha256']}  {e['file']}" for e in manifest["tables"]]
    for name in names:
        sums.append(f"{sha256_file(out / name)}  {name}")
    atomic_write_text(out / "SHA256SUMS",
                      "\n".join(sorted(sums, key=lambda s: s.split("  ")[1])) + "\n")


def read_manifest(out: Path) -> dict:
    """The parsed ``manifest.json`` of the release in ``out``; ValueError when absent or not
    JSON."""
    path = out / "manifest.json"
    if not path.is_file():
        raise ValueError(f"{out} is not a release: no manifest.json")
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path} is not valid JSON: {exc}") from None
    _check_manifest_shape(manifest, path)
    return manifest


_ABSENT = object()

#: The JSON types of the fields every table entry of a manifest holds (what verification,
#: loading and the release's other files read from it).
_ENTRY_TYPES = {
    "id": (str, "a string"), "file": (str, "a string"), "sha256": (str, "a string"),
    "kind": (str, "a string"), "seed": (int, "an integer"), "calibration_seed": (int, "an integer"),
    "shape": (list, "a list"), "risk": ((int, float), "a number")
}


def _check_manifest_shape(manifest: Any, path: Path) -> None:
    """ValueError naming the first field of a damaged ``manifest.json`` (an object with a
    ``tables`` list of objects, each with :data:`_ENTRY_TYPES`' fields): not a KeyError later."""
    if not isinstance(manifest, dict):
        raise ValueError(f"{path} is not a release manifest: a JSON {type(manifest).__name__}, not "
                         "an object")
    tables = manifest.get("tables", _ABSENT)
    if not isinstance(tables, list):
        raise ValueError(f"{path} is not a release manifest: 'tables' is {_describe_json(tables)}, "
                         "not a list")
    for k, entry in enumerate(tables):
        if not isinstance(entry, dict):
            raise ValueError(f"{path}: tables[{k}] is {_describe_json(entry)}, not an object")
        for name, (kind, spelled) in _ENTRY_TYPES.items():
            value = entry.get(name, _ABSENT)
            if not isinstance(value, kind) or isinstance(value, bool):
                raise ValueError(f"{path}: tables[{k}].{name} is {_describe_json(value)}, not "
                                 f"{spelled}")


def _describe_json(value: Any) -> str:
    """A short description of a JSON value for a message: ``missing``, or its type and text."""
    if value is _ABSENT:
        return "missing"
    text = json.dumps(value)
    return f"{type(value).__name__} {text if len(text) <= 40 else text[:37] + '...'}"
