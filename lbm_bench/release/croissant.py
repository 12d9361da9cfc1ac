"""The Croissant description of a release (``croissant.json``) and its ``tables.csv``.

`Croissant <https://mlcommons.org/croissant/>`_ 1.0 is the ML Commons JSON-LD
vocabulary (built on schema.org's ``Dataset``) that dataset hubs and loaders read.
A release's ``croissant.json`` says what the release is (name, description,
version, license, citation, creator, date when the spec gives one), lists its
files in ``distribution`` (one ``cr:FileObject`` per table with its relative path,
SHA-256, size and encoding format, plus ``manifest.json``, ``tables.csv`` and the
release's ``spec.toml``), and
describes one ``cr:RecordSet``, ``tables``: one record per table with its id,
kind, shape, clusters, target, criterion, floor (the risk of the Bayes labels) and
MAP risk with their MCSE and R-hat, losses, seed and file (and the families' header
values, such as ``categories``, when the release holds such tables, and, in a release
with missing entries, each table's missing rate, mechanism and number of missing
entries: :data:`MISSING_FIELDS`), extracted from the columns of ``tables.csv``
(a CSV view of the manifest, written next to it, because
Croissant record sets read tabular files). The field descriptions say which risk is
the certified difficulty: the one named by ``criterion``.

Both files are generated from the manifest: no timestamp is added (``datePublished``
appears only when the spec's ``[release]`` gives ``date``), so the same spec gives
the same bytes. ``mlcroissant validate --jsonld croissant.json`` accepts the file,
and ``mlcroissant.Dataset("croissant.json").records("tables")`` reads the records.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from lbm_bench._atomic import atomic_write_text
from lbm_bench.models.registry import family_names
from lbm_bench.release._files import sha256_file
from lbm_bench.release.manifest import entry_family, header_fields

__all__ = [
    "CROISSANT_CONTEXT",
    "MISSING_FIELDS",
    "TABLE_FIELDS",
    "croissant_metadata",
    "croissant_problems",
    "table_fields",
    "tables_csv_text",
    "write_croissant",
]

#: The JSON-LD ``@context`` of Croissant 1.0 (as in the specification's examples).
CROISSANT_CONTEXT = {
    "@language": "en",
    "@vocab": "https://schema.org/",
    "citeAs": "cr:citeAs",
    "column": "cr:column",
    "conformsTo": "dct:conformsTo",
    "cr": "http://mlcommons.org/croissant/",
    "rai": "http://mlcommons.org/croissant/RAI/",
    "data": {"@id": "cr:data", "@type": "@json"},
    "dataType": {"@id": "cr:dataType", "@type": "@vocab"},
    "dct": "http://purl.org/dc/terms/",
    "equivalentProperty": "cr:equivalentProperty",
    "examples": {"@id": "cr:examples", "@type": "@json"},
    "extract": "cr:extract",
    "field": "cr:field",
    "fileProperty": "cr:fileProperty",
    "fileObject": "cr:fileObject",
    "fileSet": "cr:fileSet",
    "format": "cr:format",
    "includes": "cr:includes",
    "isLiveDataset": "cr:isLiveDataset",
    "jsonPath": "cr:jsonPath",
    "key": "cr:key",
    "md5": "cr:md5",
    "parentField": "cr:parentField",
    "path": "cr:path",
    "recordSet": "cr:recordSet",
    "references": "cr:references",
    "regex": "cr:regex",
    "repeated": "cr:repeated",
    "replace": "cr:replace",
    "samplingRate": "cr:samplingRate",
    "sc": "https://schema.org/",
    "separator": "cr:separator",
    "source": "cr:source",
    "subField": "cr:subField",
    "transform": "cr:transform",
}
CONFORMS_TO = "http://mlcommons.org/croissant/1.0"

#: Columns of ``tables.csv`` and fields of the ``tables`` record set:
#: (name, Croissant data type, how to get it from a manifest entry, description).
TABLE_FIELDS: tuple[tuple[str, str, str], ...] = (
    ("id", "sc:Text", "table identifier (kind-shape-clusters-risk-replicate)"),
    ("kind", "sc:Text", "family of the entries: " + ", ".join(family_names())),
    ("n_rows", "sc:Integer", "rows of the table"),
    ("n_cols", "sc:Integer", "columns of the table"),
    ("n_row_clusters", "sc:Integer", "row clusters g of the generating model"),
    ("n_col_clusters", "sc:Integer", "column clusters m of the generating model"),
    ("target_risk", "sc:Float", "requested difficulty: the target of the risk named by criterion"),
    ("criterion", "sc:Text",
     "which risk is the table's certified difficulty, the one its target and rejection step "
     "applied to: "
     "'bayes' (bayes_risk, the floor) or 'map' (risk, the paper's protocol)"),
    ("bayes_risk", "sc:Float",
     "the floor: cross-fitted conditional risk of the Bayes labels for l_item (Gibbs estimate), "
     "which no "
     "labelling beats beyond Monte Carlo error; the certified difficulty when criterion is 'bayes' "
     "(NaN for tables without a floor, format 1.0)"),
    ("bayes_risk_mcse", "sc:Float", "Monte Carlo standard error of bayes_risk"),
    ("bayes_risk_rhat", "sc:Float", "split R-hat of the cross-fitted loss of the Bayes labels "
                                    "across Gibbs chains"),
    ("risk", "sc:Float",
     "conditional risk of the X-only MAP labels (Gibbs estimate), an upper bound of the floor; the "
     "certified "
     "difficulty when criterion is 'map'"),
    ("risk_mcse", "sc:Float", "Monte Carlo standard error of risk"),
    ("risk_rhat", "sc:Float", "split R-hat of the loss of the MAP labels across Gibbs chains"),
    ("row_loss", "sc:Float", "mean l_row of the MAP row labels over the Gibbs label sets"),
    ("col_loss", "sc:Float", "mean l_col of the MAP column labels over the Gibbs label sets"),
    ("seed", "sc:Integer", "seed that reproduces the table with lbm_bench.generate_table"),
    ("file", "sc:Text", "path of the table's HDF5 file in the release"),
    ("sha256", "sc:Text", "SHA-256 of the table's file"),
)

#: Further columns and fields of a release with missing entries (format 1.3): a release of
#: complete tables keeps the columns above, byte for byte.
MISSING_FIELDS: tuple[tuple[str, str, str], ...] = (
    ("missing_rate", "sc:Float",
     "fraction of the entries missing by design (0 for a complete table); the certified risks are "
     "given "
     "the observed entries"),
    ("missing_mechanism", "sc:Text",
     "how entries went missing: 'random' (completely at random), 'block' (each block its own "
     "probability: "
     "not at random) or 'none'"),
    ("n_missing", "sc:Integer",
     "missing entries of the table: 0 in the HDF5 data, marked by the observed mask 'observed' "
     "(uint8, 1: "
     "observed) or, for a sparse table, listed by the group 'missing' (CSR positions)"),
)
#: Values of the missing fields for a complete table.
_COMPLETE = {"missing_rate": 0.0, "missing_mechanism": "none", "n_missing": 0}
#: What a table file holds besides its data, for its FileObject's description.
_MASK_TEXT = ("; its missing entries are 0 in data and marked by the observed mask 'observed' "
              "(uint8, 1: observed)"
              " or, sparse, listed by the group 'missing'")

_ENCODINGS = {".h5": "application/x-hdf5", ".json": "application/json", ".csv": "text/csv",
              ".toml": "application/toml"}


#: Values of the floor's fields for a table without a floor (format 1.0 files: the MAP criterion).
_NO_FLOOR = {"criterion": "map", "bayes_risk": float("nan"), "bayes_risk_mcse": float("nan"),
             "bayes_risk_rhat": float("nan")}


#: Croissant data types of the attribute kinds of the format.
_DATA_TYPES = {"int": "sc:Integer", "float": "sc:Float", "str": "sc:Text"}


def table_fields(manifest: dict) -> tuple[tuple[str, str, str], ...]:
    """The fields of ``tables.csv`` and of the ``tables`` record set: :data:`TABLE_FIELDS`, then
    the header attributes of the families of the release's tables (``categories`` when it
    holds categorical tables; empty for the tables of other families), then
    :data:`MISSING_FIELDS` when a table of the release has missing entries."""
    extra: dict[str, tuple[str, str, str]] = {}
    for entry in manifest["tables"]:
        for name, (kind, text) in header_fields(entry_family(entry)).items():
            extra.setdefault(name, (name, _DATA_TYPES[kind], f"{entry['kind']} tables: {text}"))
    missing = MISSING_FIELDS if any("missing_rate" in entry for entry in manifest["tables"]) else ()
    return TABLE_FIELDS + tuple(extra[name] for name in sorted(extra)) + missing


def _row(entry: dict, fields: tuple[tuple[str, str, str], ...]) -> dict:
    values = {**_NO_FLOOR, **_COMPLETE, **entry}
    values["n_rows"], values["n_cols"] = entry["shape"]
    values["n_row_clusters"], values["n_col_clusters"] = entry["clusters"]
    return {name: values.get(name, "") for name, _, _ in fields}


def _cell(value) -> str:
    if isinstance(value, float):
        return repr(value)  # shortest round-trip text: the CSV holds the manifest's exact values
    return str(value)


def tables_csv_text(manifest: dict) -> str:
    """``tables.csv``: one line per table of the manifest, columns :func:`table_fields`."""
    fields = table_fields(manifest)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([name for name, _, _ in fields])
    for entry in manifest["tables"]:
        writer.writerow([_cell(v) for v in _row(entry, fields).values()])
    return buffer.getvalue()


def _file_object(name: str, path: Path, description: str) -> dict:
    return {
        "@type": "cr:FileObject",
        "@id": name,
        "name": name,
        "description": description,
        "contentUrl": name,
        "contentSize": f"{path.stat().st_size} B",
        "encodingFormat": _ENCODINGS[path.suffix],
        "sha256": sha256_file(path),
    }


def _creators(release: dict) -> list[dict]:
    creator = release.get("creator") or "lbm-bench"
    names = creator if isinstance(creator, list) else [creator]
    return [{"@type": "sc:Person" if release.get("creator") else "sc:Organization", "name": str(n)}
            for n in names]


def croissant_metadata(manifest: dict, out: Path) -> dict:
    """The Croissant 1.0 JSON-LD description of the release in ``out``.

    ``manifest.json``, ``tables.csv`` and (layout 1.2) ``spec.toml`` must already be
    written in ``out`` (their digests are part of the description); the tables' digests
    come from the manifest.

    Parameters
    ----------
    manifest : dict
        The release's manifest (:func:`lbm_bench.release.manifest.write_manifest`).
    out : Path
        The release directory.

    Returns
    -------
    dict
        The JSON-LD document.
    """
    from lbm_bench.release.readme import DEFAULT_CITATION

    release = {**manifest.get("spec", {}).get("release", {}), **manifest["release"]}
    description = release.get("description") or (
        "Co-clustering benchmark tables with a certified conditional Bayes risk, built by "
        "lbm-bench."
    )
    distribution = [
        _file_object("manifest.json", out / "manifest.json",
                     "the release manifest: spec, seeds and one entry per table"),
        _file_object("tables.csv", out / "tables.csv", "one line per table (the fields of the "
                                                       "tables record set)"),
    ]
    if (out / "spec.toml").is_file():  # release layout 1.2
        distribution.append(
            _file_object(
                "spec.toml", out / "spec.toml",
                "the spec the release was built from (lbm-bench build spec.toml --out DIR rebuilds "
                "it)"
            ))
    for entry in manifest["tables"]:
        distribution.append({
            "@type": "cr:FileObject", "@id": entry["file"], "name": entry["file"],
            "description": f"table {entry['id']}: data, generating, MAP, Bayes and Gibbs labels, "
            "parameters "
            "(lbm-bench-table HDF5 format)" + (_MASK_TEXT if "missing_rate" in entry else ""),
            "contentUrl": entry["file"], "contentSize": f"{entry['size']} B",
            "encodingFormat": _ENCODINGS[".h5"], "sha256": entry["sha256"],
        })
    fields = [
        {
            "@type": "cr:Field",
            "@id": f"tables/{name}",
            "name": name,
            "description": text,
            "dataType": data_type,
            "source": {"fileObject": {"@id": "tables.csv"}, "extract": {"column": name}},
        }
        for name, data_type, text in table_fields(manifest)
    ]
    metadata = {
        "@context": CROISSANT_CONTEXT, "@type": "sc:Dataset", "conformsTo": CONFORMS_TO,
        "name": release["name"], "description": description, "version": release["version"],
        "license": release["license"], "citeAs": release.get("citation") or DEFAULT_CITATION,
        "creator": _creators(release),
        "keywords": ["co-clustering", "latent block model", "benchmark", "Bayes risk"] +
        (["missing data"] if any("missing_rate" in entry for entry in manifest["tables"]) else []),
        "isAccessibleForFree": True,
    }
    if release.get("url"):
        metadata["url"] = release["url"]
    if release.get("date"):
        metadata["datePublished"] = str(release["date"])
    metadata["distribution"] = distribution
    metadata["recordSet"] = [{
        "@type": "cr:RecordSet",
        "@id": "tables",
        "name": "tables",
        "description": "one record per benchmark table of the release",
        "key": {"@id": "tables/id"},
        "field": fields,
    }]
    return metadata


def write_croissant(manifest: dict, out: Path, *, spec_path: str | None = None) -> list[str]:
    """Write ``tables.csv`` and ``croissant.json`` into the release directory ``out``.

    One of the release file writers (:data:`lbm_bench.release.release_files.RELEASE_FILE_WRITERS`);
    returns the names written, for ``SHA256SUMS``.
    """
    atomic_write_text(out / "tables.csv", tables_csv_text(manifest))
    text = json.dumps(croissant_metadata(manifest, out), indent=2, ensure_ascii=False) + "\n"
    atomic_write_text(out / "croissant.json", text)
    return ["tables.csv", "croissant.json"]


def croissant_problems(out: Path, manifest: dict) -> list[str]:
    """What :func:`lbm_bench.verify_release` finds wrong with ``croissant.json`` and
    ``tables.csv``: unreadable JSON, a FileObject whose file is missing or whose SHA-256
    differs, a ``tables.csv`` that is not the manifest's."""
    problems: list[str] = []
    csv_path = out / "tables.csv"
    if csv_path.is_file() and csv_path.read_text(encoding="utf-8") != tables_csv_text(manifest):
        problems.append("tables.csv: differs from the manifest's tables")
    path = out / "croissant.json"
    if not path.is_file():
        return problems
    try:
        metadata = json.loads(path.read_text(encoding="utf-8"))
        objects = [o for o in metadata["distribution"] if o.get("@type") == "cr:FileObject"]
    except (json.JSONDecodeError, KeyError, TypeError, AttributeError) as exc:
        return problems + [f"croissant.json: not a Croissant description ({type(exc).__name__}: "
                           f"{exc})"]
    for obj in objects:
        url = str(obj.get("contentUrl", ""))
        target = out / url
        if "://" in url or not target.is_file():
            problems.append(f"croissant.json: FileObject {url!r} is not a file of the release")
        elif obj.get("sha256") != sha256_file(target):
            problems.append(f"croissant.json: SHA-256 of {url} differs from the file's")
    return problems
