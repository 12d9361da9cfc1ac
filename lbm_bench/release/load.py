"""Loading a release: its manifest, and one of its tables by id."""

from __future__ import annotations

import os
from pathlib import Path

from lbm_bench.release.manifest import read_manifest

__all__ = ["load_release", "load_release_table"]


def load_release(out_dir: str | os.PathLike[str]) -> dict:
    """The manifest of a release (release info, spec and one entry per table).

    Parameters
    ----------
    out_dir : path
        The release folder (it holds ``manifest.json``).

    Returns
    -------
    dict
        The parsed ``manifest.json``: ``"tables"`` lists one entry per table (its ``id``,
        ``file``, kind, shape, seed and certified risks).

    Examples
    --------
    >>> import os, tempfile
    >>> from lbm_bench.release import build_release, parse_spec
    >>> grid = dict(kinds=["bernoulli"], shapes=["30x20"], clusters=["2x2"], risks=[0.1])
    >>> spec = parse_spec({"release": {"name": "tiny", "version": "0.1", "seed": 1},
    ...                    "defaults": {"tolerance": 0.03, "n_samples": 200, "screen_samples": 0,
    ...                                 "n_calibration_tables": 10}, "grid": [grid]})
    >>> tiny = os.path.join(tempfile.mkdtemp(), "tiny")
    >>> build_release(spec, tiny).ok
    True
    >>> manifest = load_release(tiny)
    >>> [entry["id"] for entry in manifest["tables"]]
    ['bernoulli-30x20-2x2-r0.1-01']
    """
    return read_manifest(Path(out_dir))


def load_release_table(out_dir: str | os.PathLike[str], table_id: str, *, missing: str = "nan"):
    """Load one table of a release by id.

    Parameters
    ----------
    out_dir : path
        The release folder.
    table_id : str
        The table's id, as the manifest lists it.
    missing : {"nan", "masked"}, default="nan"
        As in :func:`lbm_bench.load_table`: how ``data`` marks missing entries.

    Returns
    -------
    Table

    Raises
    ------
    ValueError
        When the release has no table ``table_id``.

    Examples
    --------
    >>> import os, tempfile
    >>> from lbm_bench.release import build_release, parse_spec
    >>> grid = dict(kinds=["bernoulli"], shapes=["30x20"], clusters=["2x2"], risks=[0.1])
    >>> spec = parse_spec({"release": {"name": "tiny", "version": "0.1", "seed": 1},
    ...                    "defaults": {"tolerance": 0.03, "n_samples": 200, "screen_samples": 0,
    ...                                 "n_calibration_tables": 10}, "grid": [grid]})
    >>> tiny = os.path.join(tempfile.mkdtemp(), "tiny")
    >>> build_release(spec, tiny).ok
    True
    >>> load_release_table(tiny, "bernoulli-30x20-2x2-r0.1-01").shape
    (30, 20)
    """
    from lbm_bench.storage import load_table

    out = Path(out_dir)
    manifest = read_manifest(out)
    for entry in manifest["tables"]:
        if entry["id"] == table_id:
            return load_table(out / entry["file"], missing=missing)
    raise ValueError(f"release {out} has no table {table_id!r}")
