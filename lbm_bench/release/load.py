"""Loading a release: its manifest, and one of its tables by id."""

from __future__ import annotations

import os
from pathlib import Path

from lbm_bench.release.manifest import read_manifest

__all__ = ["load_release", "load_release_table"]


def load_release(out_dir: str | os.PathLike[str]) -> dict:
    """The manifest of a release (release info, spec and one entry per table).

    Examples
    --------
    >>> release = load_release("mini-release")  # doctest: +SKIP
    >>> [t["id"] for t in release["tables"]][:1]  # doctest: +SKIP
    ['bernoulli-60x40-2x2-r0.1-01']
    """
    return read_manifest(Path(out_dir))


def load_release_table(out_dir: str | os.PathLike[str], table_id: str, *, missing: str = "nan"):
    """Load one table of a release by id (see :func:`lbm_bench.storage.load_table`, whose
    ``missing`` says how ``data`` marks missing entries: NaN, or a masked array)."""
    from lbm_bench.storage import load_table

    out = Path(out_dir)
    manifest = read_manifest(out)
    for entry in manifest["tables"]:
        if entry["id"] == table_id:
            return load_table(out / entry["file"], missing=missing)
    raise ValueError(f"release {out} has no table {table_id!r}")
