"""lbm_bench/storage/user_formats.py: the format of a file name, the memory guard's estimate and
refusal, the families that read a Matrix Market pattern file, and each reader's raw result
(NaN still in the table: read_user_table's TableData reads it as missing)."""

import copy as copy_module
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from lbm_bench.models.registry import FAMILIES
from lbm_bench.protocol.memory import BASELINE_BYTES, MemoryLimitError
from lbm_bench.storage.user_formats import (
    USER_FORMATS,
    ReadGuard,
    ReadLimitError,
    UserTableError,
    file_stem,
    format_of,
    pattern_kinds,
    read_format,
    reads_patterns,
)


@pytest.mark.parametrize(
    "name, fmt, stem",
    [("counts.csv", "csv", "counts"), ("Counts.CSV.GZ", "csv", "Counts"), ("m.mtx.gz", "mtx", "m"),
     ("x.tsv", "tsv", "x"), ("cells.h5ad", "h5ad", "cells"), ("t.h5", "table", "t"), ("a.b.npy", "npy", "a.b")],
)
def test_format_and_stem_from_the_name(name, fmt, stem):
    assert format_of(Path(name), name) == fmt and file_stem(Path(name)) == stem


def test_unknown_ending_lists_the_known_ones():
    with pytest.raises(UserTableError) as info:
        format_of(Path("t.parquet"), "t.parquet")
    text = str(info.value)
    assert text.startswith("t.parquet: unknown kind of file (.parquet)")
    assert all(ending in text for endings in USER_FORMATS.values() for ending in endings)


def test_the_guard_sums_its_parts_with_the_baseline_and_names_the_limit():
    with pytest.raises(MemoryLimitError, match=r"baseline 160 MiB, table 10 B\), more than the 1 MiB allowed by "):
        ReadGuard("big.npy", "1M")("tiny table", "advice", table=10)  # the interpreter counts too
    with pytest.raises(MemoryLimitError):
        ReadGuard("big.npy", 2 * BASELINE_BYTES)("table", "advice", table=2 * BASELINE_BYTES)
    ReadGuard("big.npy", 2 * BASELINE_BYTES)("table", "advice", table=BASELINE_BYTES // 2)
    with pytest.raises(MemoryLimitError, match=r"big.npy: reading the table needs about .*allowed by max_memory=; go"):
        ReadGuard("big.npy", "200M")("table", "go", table=2**30)


def test_a_read_refusal_is_one_memory_error_that_copies():
    with pytest.raises(ReadLimitError) as info:
        ReadGuard("big.npy", "1M")("table", "go", table=2**30)
    refusal = info.value
    assert isinstance(refusal, MemoryLimitError) and isinstance(refusal, ValueError)
    assert "\n" not in str(refusal) and "max_memory=" in str(refusal)
    copy = copy_module.deepcopy(refusal)  # through __reduce__, as a worker process's refusal comes back
    assert type(copy) is ReadLimitError and str(copy) == str(refusal) and copy.estimate == refusal.estimate


def test_only_the_families_of_01_tables_read_patterns():
    assert pattern_kinds() == [f.kind for f in FAMILIES if reads_patterns(f)]
    for family in FAMILIES:
        describes = family.estimation.describes
        assert reads_patterns(family) == (describes("b", 0, 1) and not describes("u", 0, 2))


def test_readers_return_the_raw_table(tmp_path):
    guard = ReadGuard("x", None)
    values = np.array([[1.0, np.nan], [2.0, 3.0]])
    np.save(tmp_path / "v.npy", values)
    read = read_format(tmp_path / "v.npy", "npy", guard, {})
    assert np.isnan(read.table[0, 1]) and read.source_dtype == "float64" and read.row_names is None
    sp.save_npz(tmp_path / "s.npz", sp.csr_array(values))
    read = read_format(tmp_path / "s.npz", "npz", guard, {})
    assert isinstance(read.table, sp.csr_array) and np.isnan(read.table.data).sum() == 1
    (tmp_path / "t.csv").write_text(",a,b\nr,1,\ns,2,3\n")
    read = read_format(tmp_path / "t.csv", "csv", guard, {})
    assert isinstance(read.table, np.ma.MaskedArray) and read.table.dtype == np.int64
    assert read.row_names == ("r", "s") and read.col_names == ("a", "b") and read.source_dtype == "text"


