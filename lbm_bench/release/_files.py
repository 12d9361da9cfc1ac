"""File helpers of the release package: the SHA-256 of a file (manifest, SHA256SUMS,
Croissant, verify). Files are written by :mod:`lbm_bench._atomic`."""

from __future__ import annotations

import hashlib
from pathlib import Path

__all__ = ["sha256_file"]


def sha256_file(path: Path) -> str:
    """The hexadecimal SHA-256 digest of a file, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
