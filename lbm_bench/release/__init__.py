"""Dataset releases: spec-driven, parallel, resumable, byte-reproducible builds.

A release spec (TOML) describes grids of tables: kinds, shapes, cluster numbers,
target risks, replicates and the generation settings. :func:`build_release`
turns it into ``DIR/tables/<id>.h5`` files, ``DIR/spec.toml`` (the spec, byte
for byte: a release rebuilds from it), ``DIR/manifest.json``,
``DIR/SHA256SUMS``, data cards ``DIR/README.md`` and ``DIR/index.html`` and a
Croissant description ``DIR/croissant.json``; :func:`verify_release` re-checks a
release and :func:`compare_releases` compares two (a rebuild and the original),
:func:`load_release` and :func:`load_release_table` read it, and
:func:`fetch_release` downloads a published one.

One concept per module:

- :mod:`~lbm_bench.release.spec`: read and validate a spec, expand its grids;
- :func:`derive_seed`: every seed of a release, from the master seed and an identity (the seed
  policy of :mod:`lbm_bench._seeds`, re-exported here);
- :mod:`~lbm_bench.release.build`: the build (parallel, resumable) and its report;
- :mod:`~lbm_bench.release.manifest`: ``manifest.json`` and ``SHA256SUMS``;
- :mod:`~lbm_bench.release.readme`: the Markdown card ``README.md``;
- :mod:`~lbm_bench.release.croissant`: the Croissant description ``croissant.json`` (and
  ``tables.csv``);
- :mod:`~lbm_bench.release.card`: the HTML card ``index.html`` with thumbnails of the tables;
- :mod:`~lbm_bench.release.thumbnail`: a table's thumbnail as pixels (no figure);
- :mod:`~lbm_bench.release.archive`: the deterministic ``DIR.tar.gz``;
- :mod:`~lbm_bench.release.verify`: checksums, format and manifest agree, risks re-derived from the
  label sets;
- :mod:`~lbm_bench.release.load`: the manifest and the tables of a release;
- :mod:`~lbm_bench.release.fetch`: download, check, extract and cache a published release.
"""

from lbm_bench._seeds import derive_seed
from lbm_bench.release.archive import write_archive
from lbm_bench.release.build import BuildReport, build_release
from lbm_bench.release.download import FetchError
from lbm_bench.release.fetch import fetch_release
from lbm_bench.release.load import load_release, load_release_table
from lbm_bench.release.spec import ReleaseSpec, TableSpec, parse_spec, read_spec, spec_toml
from lbm_bench.release.verify import compare_releases, verify_release

__all__ = [
    "BuildReport",
    "FetchError",
    "ReleaseSpec",
    "TableSpec",
    "build_release",
    "compare_releases",
    "derive_seed",
    "fetch_release",
    "load_release",
    "load_release_table",
    "parse_spec",
    "read_spec",
    "spec_toml",
    "verify_release",
    "write_archive",
]
