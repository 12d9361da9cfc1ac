"""Dataset releases (being split into one module per concept; see build.py)."""

from lbm_bench.release.build import (  # noqa: F401
    BuildReport,
    ReleaseSpec,
    TableSpec,
    __all__,
    _derive_seed,
    build_release,
    load_release,
    load_release_table,
    parse_spec,
    read_spec,
    verify_release,
    write_archive,
)
