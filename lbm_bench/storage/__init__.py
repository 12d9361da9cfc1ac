"""Benchmark tables as HDF5 files: format ``lbm-bench-table`` (``docs/format.md``)."""

from lbm_bench.storage.reader import (
    FORMAT_NAME,
    FORMAT_VERSION,
    FormatError,
    check_file,
    load_table,
    read_info,
    save_table,
)

__all__ = [
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "FormatError",
    "check_file",
    "load_table",
    "read_info",
    "save_table",
]
