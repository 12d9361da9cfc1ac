"""The files of a release beside its tables: ``spec.toml`` (the spec it was built from, byte
for byte), ``manifest.json``, the files of :data:`RELEASE_FILE_WRITERS` (the README card, the
Croissant description, the HTML card) and ``SHA256SUMS`` listing them all.

:func:`~lbm_bench.release.build.build_release` writes them once its tables are complete
(``spec.toml`` first, so that an interrupted build says which release it was building).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from lbm_bench._atomic import atomic_write_bytes
from lbm_bench.release.card import write_card
from lbm_bench.release.croissant import write_croissant
from lbm_bench.release.manifest import write_checksums, write_manifest
from lbm_bench.release.readme import write_readme
from lbm_bench.release.spec import SPEC_FILE, ReleaseSpec, spec_toml

__all__ = ["RELEASE_FILE_WRITERS", "write_release_files", "write_spec_file"]

#: Writers of the files a complete build adds next to ``manifest.json``, called in
#: this order after it: ``writer(manifest, out, spec_path=...)`` writes its files
#: under the release directory ``out`` (atomically) and returns their names (one
#: name or a list), which ``SHA256SUMS`` then lists: the Markdown card, the
#: Croissant description (``tables.csv``, ``croissant.json``), then the HTML card
#: (thumbnails, ``index.html``), which links the files written before it.
RELEASE_FILE_WRITERS: tuple[Callable[..., str | list[str]],
                            ...] = (write_readme, write_croissant, write_card)


def write_spec_file(spec: ReleaseSpec, out: Path) -> str:
    """Write the release's ``spec.toml``: the spec file it was built from, byte for byte
    (:func:`~lbm_bench.release.spec.spec_toml` of the spec when it was not read from a
    file), so that ``lbm-bench build OUT/spec.toml --out NEW`` rebuilds it; return its name."""
    text = spec.text if spec.text is not None else spec_toml(spec.source)
    for path in sorted({t.design_path for t in spec.tables if t.design_path is not None}):
        # beside the spec.toml that names it
        source, copy = (spec.base or Path()) / path, out / path
        if source.resolve() != copy.resolve():
            copy.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_bytes(copy, source.read_bytes())
    atomic_write_bytes(out / SPEC_FILE, text.encode("utf-8"))
    return SPEC_FILE


def write_release_files(spec: ReleaseSpec, out: Path, *, spec_path: str | None = None) -> dict:
    """Write the files of a complete build: ``spec.toml``, ``manifest.json``, then each of
    :data:`RELEASE_FILE_WRITERS`, then ``SHA256SUMS`` over the tables and them.

    Returns
    -------
    dict
        The manifest.
    """
    names = [write_spec_file(spec, out)]
    manifest = write_manifest(spec, out, spec_path=spec_path)
    names.append("manifest.json")
    for writer in RELEASE_FILE_WRITERS:
        written = writer(manifest, out, spec_path=spec_path)
        names.extend([written] if isinstance(written, str) else written)
    write_checksums(out, manifest, names)
    return manifest
