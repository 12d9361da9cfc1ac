"""Benchmark tables as HDF5 files: format ``lbm-bench-table`` (``docs/format.md``).

A file holds the table (``data``), its generating labels (``truth/``), the
X-only MAP labels (``map/``), the Gibbs label sets (``gibbs/``), the true
parameters and their scale-free design (``params/``, ``params/design/``), the
records of calibration and rejection sampling (``calibration/``,
``rejection/``) and, as root attributes, the certificate (risk, MCSE, R-hat...);
a table with missing entries also its observed mask (``observed``, or the
``missing`` set of a sparse table; format 1.3).

Modules: :mod:`~lbm_bench.storage.format` (the normative constants: name,
versions, item names and kinds, dtypes, chunking), :mod:`~lbm_bench.storage.writer`
(:func:`save_table`: atomic and byte-stable), :mod:`~lbm_bench.storage.reader`
(:func:`load_table`, :func:`check_file`, :func:`read_info`),
:mod:`~lbm_bench.storage.validate` (the checks, shared by the writer and the
reader), :mod:`~lbm_bench.storage.missing_mask` (the mask's items and their checks) and
:mod:`~lbm_bench.storage.compare` (two files item by item: the same table up to
rounding, or another table).

A user's own table (``.npy``, ``.npz``, ``.mtx``, CSV/TSV, ``.h5ad`` or a table file) is
read by :mod:`~lbm_bench.storage.user_data` (:func:`read_user_table`), on the readers of
:mod:`~lbm_bench.storage.user_formats`, :mod:`~lbm_bench.storage.delimited` (text) and
:mod:`~lbm_bench.storage.anndata_files` (AnnData).

Examples
--------
>>> from lbm_bench.storage import check_file, load_table
>>> check_file("tests/data/table_v1.h5")  # doctest: +SKIP
[]
>>> load_table("tests/data/table_v1.h5").shape  # doctest: +SKIP
(12, 10)
"""

from lbm_bench.storage.format import FORMAT_NAME, FORMAT_VERSION
from lbm_bench.storage.reader import FormatError, check_file, load_table, read_info
from lbm_bench.storage.user_data import (
    UserTable,
    UserTableError,
    check_user_values,
    read_user_table,
)
from lbm_bench.storage.writer import save_table

__all__ = [
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "FormatError",
    "UserTable",
    "UserTableError",
    "check_file",
    "check_user_values",
    "load_table",
    "read_info",
    "read_user_table",
    "save_table",
]
