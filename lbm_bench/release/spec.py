"""Release specs: read and validate a release spec (TOML) and expand its grids.

A spec describes grids of tables (kinds, shapes, cluster numbers, target risks,
replicates) and the generation settings; :func:`read_spec` and :func:`parse_spec`
turn it into a :class:`ReleaseSpec` holding one :class:`TableSpec` per table,
each with its seeds derived from the master seed and its identity
(:func:`lbm_bench.release.derive_seed`, the seed policy of :mod:`lbm_bench._seeds`). The committed
specs are ``repository/mini.toml`` and ``repository/paper.toml``; ``docs/releases.md``
describes the keys.
"""

from __future__ import annotations

import itertools
import os
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from lbm_bench._seeds import derive_seed
from lbm_bench.protocol.request import RequestOptions, TableRequest
from lbm_bench.protocol.settings import GenerationSettings, ModelOptions

__all__ = [
    "MODEL_OPTIONS",
    "REQUEST_OPTIONS",
    "SETTINGS",
    "SPEC_FILE",
    "ReleaseSpec",
    "TableSpec",
    "parse_spec",
    "read_spec",
    "spec_toml",
]

#: The name of a release's copy of its spec (byte for byte the file it was built from).
SPEC_FILE = "spec.toml"

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

#: Generation settings a spec may set (in [defaults] or per [[grid]]), with their defaults:
#: the fields of the settings record (:class:`~lbm_bench.protocol.settings.GenerationSettings`).
SETTINGS: dict[str, Any] = GenerationSettings().to_record()
#: Options of random_design a spec may set in ``model_options`` (fields of ModelOptions).
MODEL_OPTIONS = set(ModelOptions.names())
#: Options of the request a spec may set (in [defaults] or per [[grid]]): the criterion.
REQUEST_OPTIONS: dict[str, Any] = RequestOptions().to_record()
_GRID_KEYS = {"kinds", "shapes", "clusters", "risks", "replicates", "model_options", "design"
              } | set(SETTINGS) | set(REQUEST_OPTIONS)
_RELEASE_KEYS = {
    "name", "version", "seed", "description", "license", "citation", "date", "creator", "url"
}


@dataclass(frozen=True)
class TableSpec:
    """One table of a release: its identity, request, settings and seeds."""

    id: str
    config_id: str
    request: TableRequest
    replicate: int
    settings: GenerationSettings
    seed: int
    calibration_seed: int
    #: The grid's design file (``design = "path.toml"``, relative to the spec) and the design
    #: read from it; None for random designs.
    design_path: str | None = None
    design: Any = field(default=None, compare=False, repr=False)

    @property
    def filename(self) -> str:
        return f"tables/{self.id}.h5"

    @property
    def kind(self) -> str:
        return self.request.kind

    @property
    def shape(self) -> tuple[int, int]:
        return self.request.shape

    @property
    def clusters(self) -> tuple[int, int]:
        return self.request.clusters

    @property
    def risk(self) -> float:
        return self.request.target_risk

    @property
    def model_options(self) -> dict:
        """The design options that differ from their defaults, by name (as the spec gives them)."""
        return self.request.model_options.design_options()


@dataclass(frozen=True)
class ReleaseSpec:
    """A parsed, validated release spec."""

    name: str
    version: str
    seed: int
    description: str
    license: str
    citation: str
    tables: tuple[TableSpec, ...]
    source: dict = field(repr=False)
    #: The TOML text the spec was read from (None for a spec parsed from a dict): what a
    #: release stores as its ``spec.toml``, byte for byte.
    text: str | None = field(default=None, repr=False, compare=False)
    #: The folder its design files are relative to (the spec file's; None: the working folder).
    base: Path | None = field(default=None, repr=False, compare=False)

    def configurations(self) -> dict[str, list[TableSpec]]:
        """Tables grouped by configuration (shared calibration), in id order."""
        groups: dict[str, list[TableSpec]] = {}
        for table in self.tables:
            groups.setdefault(table.config_id, []).append(table)
        return groups


def _pair(where: str, text: Any) -> tuple[int, int]:
    if not isinstance(text, str):
        raise ValueError(f"{where}: expected a string like '200x100', got {text!r}")
    parts = text.lower().split("x")
    try:
        a, b = (int(p) for p in parts)
    except ValueError:
        raise ValueError(f"{where}: expected a string like '200x100', got {text!r}") from None
    if a < 1 or b < 1:
        raise ValueError(f"{where}: sizes must be positive, got {text!r}")
    return a, b


def _list(where: str, value: Any) -> list:
    if not isinstance(value, list) or not value:
        raise ValueError(f"{where} must be a non-empty list, got {value!r}")
    return value


def _check_keys(where: str, table: dict, allowed: set[str]) -> None:
    unknown = sorted(set(table) - allowed)
    if unknown:
        raise ValueError(f"{where}: unknown key(s) {', '.join(unknown)}; allowed: "
                         f"{', '.join(sorted(allowed))}")


def _check_settings(where: str, settings: dict) -> GenerationSettings:
    """The settings record of a configuration, from ``[defaults]`` and its ``[[grid]]``."""
    return GenerationSettings.from_mapping(settings, where=where)


def _check_model_options(where: str, options: Any) -> Any:
    if not isinstance(options, dict):
        raise ValueError(f"{where}: model_options must be a table, got {options!r}")
    return ModelOptions.from_mapping(options, where=f"{where}.model_options")


def _grid_design(where: str, grid: dict, base: Path | None) -> tuple[dict, Any]:
    """A grid with a design file: its kinds, clusters and (default) shapes from the design, and
    the design; the grid as it is and None without one."""
    if "design" not in grid:
        return grid, None
    from lbm_bench.protocol.from_design import load_design

    path = grid["design"]
    if not isinstance(path, str) or Path(path).is_absolute() or ".." in Path(path).parts:
        raise ValueError(f"{where}.design must be a path relative to the spec, inside its folder, "
                         f"got {path!r}")
    if grid.get("model_options"):
        raise ValueError(f"{where}: model_options are fixed by the design; drop them")
    try:
        design, shape = load_design((base or Path()) / path)
    except FileNotFoundError:
        raise ValueError(f"{where}.design: no design file {path}") from None
    g, m = design.block_shape
    filled = {
        "kinds": [design.kind], "clusters": [f"{g}x{m}"], "shapes": [f"{shape[0]}x{shape[1]}"]
    }
    for key in ("kinds", "clusters"):
        if key in grid and grid[key] != filled[key]:
            raise ValueError(
                f"{where}.{key} must be the design's, {filled[key]}, got {grid[key]!r}")
    return {**filled, **grid}, design


def _grid_tables(index: int, grid: dict, defaults: dict, master: int,
                 base: Path | None = None) -> list[TableSpec]:
    where = f"grid[{index}]"
    _check_keys(where, grid, _GRID_KEYS)
    grid, design = _grid_design(where, grid, base)
    for key in ("kinds", "shapes", "clusters", "risks"):
        if key not in grid:
            raise ValueError(f"{where}: missing required key {key!r}")
    grid_settings = {k: grid[k] for k in SETTINGS if k in grid}
    settings = _check_settings(where, {**defaults.get("settings", {}), **grid_settings})
    grid_request = {k: grid[k] for k in REQUEST_OPTIONS if k in grid}
    request_options = RequestOptions.from_mapping({**defaults.get("request", {}), **grid_request},
                                                  where=where)
    options = _check_model_options(
        where, {} if design is not None else
        {**defaults.get("model_options", {}), **grid.get("model_options", {})})
    replicates = grid.get("replicates", 1)
    if not isinstance(replicates, int) or isinstance(replicates, bool) or replicates < 1:
        raise ValueError(f"{where}: replicates must be a positive integer, got {replicates!r}")
    tables = []
    for kind, shape_text, cluster_text, risk in itertools.product(
        _list(f"{where}.kinds", grid["kinds"]),
        _list(f"{where}.shapes", grid["shapes"]),
        _list(f"{where}.clusters", grid["clusters"]),
        _list(f"{where}.risks", grid["risks"]),
    ):
        n, d = _pair(f"{where}.shapes", shape_text)
        g, m = _pair(f"{where}.clusters", cluster_text)
        if g < 2 or m < 2:
            raise ValueError(f"{where}: clusters must be at least 2x2, got {cluster_text!r}")
        if g > n or m > d:
            raise ValueError(f"{where}: {cluster_text} clusters do not fit a {shape_text} table")
        if not isinstance(risk, (int, float)) or isinstance(risk, bool) or not 0 < risk < 1:
            raise ValueError(f"{where}: risks must be in (0, 1), got {risk!r}")
        if risk < 1.0 / (n * d):
            raise ValueError(f"{where}: risk {risk} is below 1/(n_rows*n_cols) for {shape_text}")
        try:
            if design is not None:
                from lbm_bench.protocol.from_design import design_request

                request, _ = design_request(design, float(risk), n, d,
                                            criterion=request_options.criterion)
            else:
                request = TableRequest(kind, n, d, g, m, float(risk), model_options=options,
                                       criterion=request_options.criterion)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{where}: {exc}") from None
        tag = request.family.options.id_tag(request.family_options())  # e.g. "-k5": categories
        # the design file's digest names the configuration: another file, other seeds
        if design is not None:
            tag += f"-d{design.digest[:8]}"
        config_id = (f"{request.kind}{tag}-{n}x{d}-{g}x{m}-r{risk:.4f}".rstrip("0")
                     + _missing_suffix(request.model_options))
        for rep in range(1, replicates + 1):
            table_id = f"{config_id}-{rep:02d}"
            tables.append(
                TableSpec(id=table_id, config_id=config_id, request=request, replicate=rep,
                          settings=settings, seed=derive_seed(master, "table:" + table_id),
                          calibration_seed=derive_seed(master, "calibration:" + config_id),
                          design_path=None if design is None else grid["design"], design=design,
                          ))
    return tables


def _missing_suffix(options: Any) -> str:
    """The part of a configuration's id that says how its entries go missing: empty for
    complete tables (their ids, hence their seeds, are those of earlier releases),
    ``-m0.3`` missing at random, ``-mb0.3`` missing by block."""
    if options.missing == 0:
        return ""
    tag = "mb" if options.missing_mechanism == "block" else "m"
    return f"-{tag}{options.missing:g}"


def _publication_keys(release: dict) -> dict:
    """Check the optional publication keys of [release] (date, creator, url), used by the
    Croissant description and the HTML card; the date becomes its ISO text so that the
    spec stays JSON in the manifest. The date is the only time a release records."""
    import datetime

    out = dict(release)
    if "date" in out:
        date = out["date"]
        if isinstance(date, datetime.datetime) or not isinstance(date, (datetime.date, str)):
            raise ValueError(f"release: date must be a date like 2026-11-23, got {date!r}")
        try:
            out["date"] = datetime.date.fromisoformat(str(date)).isoformat()
        except ValueError:
            raise ValueError(
                f"release: date must be a date like 2026-11-23, got {date!r}") from None
    if "creator" in out:
        creator = out["creator"]
        names = creator if isinstance(creator, list) else [creator]
        if not names or not all(isinstance(n, str) and n.strip() for n in names):
            raise ValueError(f"release: creator must be a name or a list of names, got {creator!r}")
    if "url" in out:
        url = out["url"]
        if not isinstance(url, str) or not url.startswith(("https://", "http://")):
            raise ValueError(f"release: url must be an http(s) address, got {url!r}")
    return out


def parse_spec(source: dict, *, base: str | os.PathLike[str] | None = None) -> ReleaseSpec:
    """Validate a spec given as a dict (the parsed TOML) and expand its grids.

    ``base`` is the folder the grids' design files (``design = "path.toml"``) are relative to
    (:func:`read_spec`: the spec file's); default, the working folder.

    Raises
    ------
    ValueError
        Naming the offending key: unknown keys, missing keys, impossible
        combinations (more clusters than rows, binary modes that cannot be
        distinct), risks out of range, duplicate tables.
    """
    _check_keys("spec", source, {"release", "defaults", "grid"})
    release = source.get("release")
    if not isinstance(release, dict):
        raise ValueError("spec: missing [release] table")
    _check_keys("release", release, _RELEASE_KEYS)
    for key in ("name", "version", "seed"):
        if key not in release:
            raise ValueError(f"release: missing required key {key!r}")
    seed = release["seed"]
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"release: seed must be a non-negative integer, got {seed!r}")
    source = {**source, "release": _publication_keys(release)}
    defaults_source = source.get("defaults", {})
    _check_keys("defaults", defaults_source,
                set(SETTINGS) | set(REQUEST_OPTIONS) | {"model_options"})
    defaults = {
        "settings": {k: v for k, v in defaults_source.items() if k in SETTINGS},
        "request": {k: v for k, v in defaults_source.items() if k in REQUEST_OPTIONS},
        "model_options": defaults_source.get("model_options", {}),
    }
    grids = source.get("grid")
    if not isinstance(grids, list) or not grids:
        raise ValueError("spec: at least one [[grid]] is required")
    base = None if base is None else Path(base)
    tables = [
        t for i, grid in enumerate(grids) for t in _grid_tables(i, grid, defaults, seed, base)
    ]
    ids = [t.id for t in tables]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise ValueError(f"spec: tables defined twice: {', '.join(duplicates[:5])}")
    configs: dict[str, TableSpec] = {}
    for t in tables:
        first = configs.setdefault(t.config_id, t)
        if (first.settings, first.request) != (t.settings, t.request):
            raise ValueError(f"spec: configuration {t.config_id} appears with different settings")
    return ReleaseSpec(name=str(release["name"]), version=str(release["version"]), seed=seed,
                       description=str(release.get("description", "")),
                       license=str(release.get("license", "CC-BY-4.0")),
                       citation=str(release.get("citation", "")),
                       tables=tuple(sorted(tables, key=lambda t: t.id)), source=source, base=base,
                       )


def read_spec(path: str | os.PathLike[str]) -> ReleaseSpec:
    """Read and validate a release spec: a TOML file, or the spec of a built release.

    Parameters
    ----------
    path : path
        A spec file (TOML); a release directory (its ``spec.toml``); or a release's
        ``manifest.json`` (the ``spec.toml`` next to it, else, for a release built
        before releases carried their spec, the spec the manifest records).

    Returns
    -------
    ReleaseSpec
        With ``text`` the TOML text, exactly as read (or, from a manifest alone, as
        :func:`spec_toml` writes the recorded spec).
    """
    path = Path(path)
    if path.is_dir():
        inside = path / SPEC_FILE
        if not inside.is_file() and not (path / "manifest.json").is_file():
            raise ValueError(f"{path} is a directory, not a spec: it has neither {SPEC_FILE} nor "
                             "manifest.json")
        return read_spec(inside if inside.is_file() else path / "manifest.json")
    if path.suffix == ".json":
        return _spec_of_manifest(path)
    try:
        text = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise ValueError(f"spec {path} does not exist") from None
    except UnicodeDecodeError as exc:
        raise ValueError(f"spec {path} is not UTF-8 text: {exc}") from None
    try:
        source = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"spec {path} is not valid TOML: {exc}") from None
    try:
        spec = parse_spec(source, base=path.parent)
    except ValueError as exc:
        raise ValueError(f"spec {path}: {exc}") from None
    return replace(spec, text=text)


def _spec_of_manifest(path: Path) -> ReleaseSpec:
    """The spec of the release whose ``manifest.json`` is ``path``."""
    import json

    if path.with_name(SPEC_FILE).is_file():
        return read_spec(path.with_name(SPEC_FILE))
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(f"spec {path} does not exist") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path} is neither a TOML spec nor a release manifest: {exc}") from None
    if not isinstance(manifest, dict) or manifest.get(
            "format") != "lbm-bench-release" or "spec" not in manifest:
        raise ValueError(f"{path} is not a release manifest (no format 'lbm-bench-release' with a "
                         "spec)")
    try:
        spec = parse_spec(manifest["spec"])
    except ValueError as exc:
        raise ValueError(f"the spec recorded in {path}: {exc}") from None
    return replace(spec, text=spec_toml(spec.source))


def _toml_value(value: Any, where: str) -> str:
    import json

    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise ValueError(f"{where}: {value!r} has no place in a spec")
        return repr(value)
    if isinstance(value, str):
        # a TOML basic string: JSON's escapes are TOML's
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v, where) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{_toml_key(k)} = {_toml_value(v, where)}"
                                for k, v in value.items()) + " }"
    raise ValueError(f"{where}: cannot write {type(value).__name__} {value!r} as TOML")


def _toml_key(key: str) -> str:
    import json
    import re

    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else json.dumps(key)


def _toml_table(header: str, table: dict) -> list[str]:
    return [header, *(f"{_toml_key(k)} = {_toml_value(v, header)}" for k, v in table.items()), ""]


def spec_toml(source: dict) -> str:
    """A spec (as :func:`parse_spec` takes it: the parsed TOML) written as TOML text.

    For a spec that was not read from a file (:func:`parse_spec` of a dict, or the spec
    a manifest records): :func:`read_spec` of the text gives the same spec.

    Examples
    --------
    >>> grid = {"kinds": ["bernoulli"], "shapes": ["30x20"], "clusters": ["2x2"], "risks": [0.1],
    ...         "model_options": {"equal_proportions": True}}
    >>> text = spec_toml({"release": {"name": "r", "version": "1", "seed": 7}, "grid": [grid]})
    >>> print(text)
    [release]
    name = "r"
    version = "1"
    seed = 7
    <BLANKLINE>
    [[grid]]
    kinds = ["bernoulli"]
    shapes = ["30x20"]
    clusters = ["2x2"]
    risks = [0.1]
    model_options = { equal_proportions = true }
    <BLANKLINE>
    >>> parse_spec(tomllib.loads(text)).tables[0].id
    'bernoulli-30x20-2x2-r0.1-01'
    """
    lines = _toml_table("[release]", source.get("release", {}))
    if source.get("defaults"):
        lines += _toml_table("[defaults]", source["defaults"])
    for grid in source.get("grid", []):
        lines += _toml_table("[[grid]]", grid)
    return "\n".join(lines)
