"""Verification of a release: checksums, file format and manifest agree."""

from __future__ import annotations

import os
from pathlib import Path

from lbm_bench.release._files import sha256_file
from lbm_bench.release.card import THUMBNAILS, card_problems
from lbm_bench.release.croissant import croissant_problems
from lbm_bench.release.manifest import read_manifest, release_format_version

#: Files every release of layout 1.1 lists in SHA256SUMS, besides its tables.
RELEASE_FILES = ("README.md", "croissant.json", "index.html", "manifest.json", "tables.csv")

__all__ = ["verify_release"]


def verify_release(out_dir: str | os.PathLike[str]) -> list[str]:
    """Re-check every checksum and every file against the format and the manifest.

    Besides the tables: every file listed in ``SHA256SUMS`` must match its digest;
    a release of layout 1.1 must list ``README.md``, ``manifest.json``,
    ``croissant.json``, ``tables.csv`` and ``index.html``, and every thumbnail;
    ``tables.csv`` must be the manifest's, ``croissant.json``'s FileObjects must
    point to files of the release with their digests, and ``index.html`` must link
    only to files of the release.

    Returns
    -------
    list of str
        Problems found (empty when the release is intact).
    """
    from lbm_bench.storage import check_file, read_info

    out = Path(out_dir)
    manifest = read_manifest(out)
    problems: list[str] = []
    sums_path = out / "SHA256SUMS"
    listed: dict[str, str] = {}
    if not sums_path.is_file():
        problems.append("SHA256SUMS is missing")
    else:
        for line in sums_path.read_text(encoding="utf-8").splitlines():
            digest, _, name = line.partition("  ")
            listed[name] = digest
    for name, digest in sorted(listed.items()):
        path = out / name
        if not path.is_file():
            problems.append(f"{name}: missing")
        elif sha256_file(path) != digest:
            problems.append(f"{name}: SHA-256 mismatch")
    for entry in manifest.get("tables", []):
        path = out / entry["file"]
        if not path.is_file():
            if entry["file"] not in listed:
                problems.append(f"{entry['file']}: missing")
            continue
        if entry["file"] not in listed:
            problems.append(f"{entry['file']}: not listed in SHA256SUMS")
        if path.stat().st_size != entry["size"]:
            problems.append(f"{entry['file']}: size {path.stat().st_size} differs from the manifest's {entry['size']}")
        if sha256_file(path) != entry["sha256"]:
            problems.append(f"{entry['file']}: SHA-256 differs from the manifest")
        file_problems = check_file(path)
        problems += [f"{entry['file']}: {p}" for p in file_problems]
        if not file_problems:
            info = read_info(path)
            for key, expected in (("kind", entry["kind"]), ("seed", entry["seed"])):
                if info.get(key) != expected:
                    problems.append(
                        f"{entry['file']}: {key} {info.get(key)!r} differs from the manifest's {expected!r}"
                    )
            if [int(info["n_rows"]), int(info["n_cols"])] != entry["shape"]:
                problems.append(f"{entry['file']}: shape differs from the manifest")
            if abs(float(info["risk"]) - entry["risk"]) > 1e-12:
                problems.append(f"{entry['file']}: risk differs from the manifest")
    known = {e["file"] for e in manifest.get("tables", [])}
    for path in sorted((out / "tables").glob("*.h5")):
        rel = path.relative_to(out).as_posix()
        if rel not in known:
            problems.append(f"{rel}: not in the manifest")
    if release_format_version(manifest) >= (1, 1) and sums_path.is_file():
        problems += [f"{name}: not listed in SHA256SUMS" for name in RELEASE_FILES if name not in listed]
    for path in sorted((out / THUMBNAILS).glob("*")):
        rel = path.relative_to(out).as_posix()
        if rel not in listed:
            problems.append(f"{rel}: not listed in SHA256SUMS")
    problems += croissant_problems(out, manifest)
    problems += card_problems(out)
    return problems

