"""The archive of a release (``build --archive``): a deterministic ``<dir>.tar.gz``."""

from __future__ import annotations

import io
import os
import tarfile
from pathlib import Path

from lbm_bench._atomic import atomic_path

__all__ = ["write_archive"]


def write_archive(out_dir: str | os.PathLike[str]) -> Path:
    """Write ``<out_dir>.tar.gz`` deterministically (sorted entries, no times or owners)."""
    import gzip

    out = Path(out_dir)
    target = out.with_name(out.name + ".tar.gz")
    files = sorted((p for p in out.rglob("*") if p.is_file() and not p.name.startswith(".")),
                   # by name: "tables.csv" before "tables/..."
                   key=lambda p: p.relative_to(out).as_posix())
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path in files:
            info = tarfile.TarInfo(f"{out.name}/{path.relative_to(out).as_posix()}")
            info.size = path.stat().st_size
            info.mtime = 0
            info.mode = 0o644
            with open(path, "rb") as handle:
                tar.addfile(info, handle)
    with atomic_path(target) as temporary, open(temporary, "wb") as raw, \
            gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as gz:
        gz.write(buffer.getvalue())
    return target

