"""A user's table read from each format, and one line for each bad file (issue 34, items 1 and 7)."""

from __future__ import annotations

import gzip
import hashlib
import shutil

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

from lbm_bench.models.data import TableData
from lbm_bench.models.registry import FAMILIES
from lbm_bench.protocol.memory import MemoryLimitError
from lbm_bench.storage import load_table
from lbm_bench.storage import user_formats as formats
from lbm_bench.storage.user_data import (
    PATTERN,
    USER_FORMATS,
    UserTableError,
    check_user_values,
    read_user_table,
    user_table,
)
from tests.storage.tables import MISSING_SAMPLE, SAMPLE

RNG = np.random.default_rng(34)
COUNTS = RNG.poisson(2.0, (12, 7))
SPARSE = sp.random(40, 30, density=0.1, format="csr", random_state=3,
                   data_rvs=lambda k: RNG.integers(1, 6, k).astype(np.float64))


def _refused(path, message, **options):
    with pytest.raises(UserTableError) as info:
        read_user_table(path, **options)
    text = str(info.value)
    assert text.startswith(str(path) + ": ") and message in text and "\n" not in text, text
    return text


# -- each format ------------------------------------------------------------------------------------------
def test_npy_keeps_its_dtype_and_nan_is_missing(tmp_path):
    np.save(tmp_path / "counts.npy", COUNTS)
    table = read_user_table(tmp_path / "counts.npy")
    np.testing.assert_array_equal(table.data.table, COUNTS)
    assert table.format == "npy" and table.name == "counts" and table.source_dtype == "int64"
    assert not table.is_sparse and table.n_missing == 0 and table.row_names is None
    assert table.sha256 == hashlib.sha256((tmp_path / "counts.npy").read_bytes()).hexdigest()
    values = COUNTS.astype(np.float32)
    values[2, 3] = np.nan
    np.save(tmp_path / "real.npy", values)
    table = read_user_table(tmp_path / "real.npy")
    assert table.n_missing == 1 and not table.data.observed[2, 3] and table.data.table[2, 3] == 0
    assert table.data.table.dtype == np.float32


@pytest.mark.parametrize("layout", ["csr", "csc", "coo"])
def test_npz_sparse_stays_sparse(tmp_path, layout):
    sp.save_npz(tmp_path / "s.npz", SPARSE.asformat(layout))
    table = read_user_table(tmp_path / "s.npz")
    assert table.is_sparse and isinstance(table.data.table, sp.csr_array)
    assert (table.data.table != SPARSE).nnz == 0 and table.data.table.nnz == SPARSE.nnz


def test_npz_explicit_nan_is_missing_and_dense_npz_reads(tmp_path):
    table = SPARSE.copy()
    table.data[0] = np.nan
    sp.save_npz(tmp_path / "s.npz", table)
    read = read_user_table(tmp_path / "s.npz")
    assert read.n_missing == 1 and read.data.table.nnz == SPARSE.nnz - 1
    np.savez(tmp_path / "d.npz", counts=COUNTS)
    np.testing.assert_array_equal(read_user_table(tmp_path / "d.npz").data.table, COUNTS)


def test_sparse_files_are_never_densified(tmp_path, monkeypatch):
    sp.save_npz(tmp_path / "s.npz", SPARSE)
    scipy.io.mmwrite(tmp_path / "s.mtx", SPARSE)

    def refuse(*args, **kwargs):
        raise AssertionError("densified")

    for cls in (sp.csr_array, sp.csc_array, sp.coo_array, sp.csr_matrix, sp.csc_matrix, sp.coo_matrix):
        for name in ("toarray", "todense"):
            monkeypatch.setattr(cls, name, refuse)
    for name in ("s.npz", "s.mtx"):
        table = read_user_table(tmp_path / name, kind="poisson")
        assert table.is_sparse and table.data.table.dtype == np.int64


@pytest.mark.parametrize("compressed", [False, True])
def test_mtx_coordinate_real_integer_symmetric(tmp_path, compressed):
    scipy.io.mmwrite(tmp_path / "m.mtx", SPARSE)
    name = "m.mtx"
    if compressed:
        with open(tmp_path / "m.mtx", "rb") as src, gzip.open(tmp_path / "m.mtx.gz", "wb") as dst:
            shutil.copyfileobj(src, dst)
        name = "m.mtx.gz"
    table = read_user_table(tmp_path / name)
    assert table.is_sparse and table.name == "m" and table.format == "mtx" and table.source_dtype == "float64"
    np.testing.assert_array_equal(table.data.table.toarray(), SPARSE.toarray())
    (tmp_path / "i.mtx").write_text("%%MatrixMarket matrix coordinate integer symmetric\n3 3 2\n1 1 4\n3 2 5\n")
    table = read_user_table(tmp_path / "i.mtx")
    np.testing.assert_array_equal(table.data.table.toarray(), [[4, 0, 0], [0, 0, 5], [0, 5, 0]])
    assert table.data.table.dtype == np.int64


def test_mtx_array_layout_is_dense_and_nan_missing(tmp_path):
    scipy.io.mmwrite(tmp_path / "a.mtx", COUNTS.astype(np.float64))
    table = read_user_table(tmp_path / "a.mtx")
    assert not table.is_sparse
    np.testing.assert_array_equal(table.data.table, COUNTS)
    (tmp_path / "n.mtx").write_text("%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 nan\n3 2 5\n2 2 1\n")
    table = read_user_table(tmp_path / "n.mtx")
    assert table.n_missing == 1 and table.data.missing.toarray()[0, 0] == 1


def test_mtx_pattern_is_refused_unless_a_family_of_01_tables_reads_it(tmp_path):
    """A pattern file gives positions, not values: read as 0/1 only when asked (module docstring)."""
    path = tmp_path / "p.mtx"
    path.write_text("%%MatrixMarket matrix coordinate pattern general\n3 3 3\n1 1\n2 3\n3 2\n")
    binary = [family.kind for family in FAMILIES if formats.reads_patterns(family)]
    assert binary == ["bernoulli"]  # the one registered family of 0/1 tables
    text = _refused(path, "a Matrix Market pattern file")
    assert "kind='bernoulli'" in text
    others = [family.kind for family in FAMILIES if family.kind not in binary]
    for kind in others:
        _refused(path, "pattern file", kind=kind)
    table = read_user_table(path, kind=binary[0])
    assert table.source_dtype == PATTERN and table.is_sparse
    np.testing.assert_array_equal(table.data.table.toarray(), [[1, 0, 0], [0, 0, 1], [0, 1, 0]])
    with pytest.raises(UserTableError, match="cannot hold poisson blocks"):
        check_user_values(table, "poisson")


def test_csv_with_names_and_missing_cells(tmp_path):
    path = tmp_path / "votes.csv"
    path.write_text(",s1,s2,s3\ng1,1,,0\ng2,0,1,1\ng3,NA,0,1\n")
    table = read_user_table(path)
    assert table.row_names == ("g1", "g2", "g3") and table.col_names == ("s1", "s2", "s3")
    assert table.n_missing == 2 and table.data.table.dtype == np.int64 and table.source_dtype == "text"
    assert table.describe() == (f"{path}: 3x3 table of int64 (from text), dense, 2 missing entries (22.22%), "
                                "row and column names")
    real = tmp_path / "real.tsv"
    real.write_text("a\tb\n0.5\t1\n2\t3\n")
    table = read_user_table(real)
    assert table.data.table.dtype == np.float64 and table.col_names == ("a", "b") and table.row_names is None


def test_csv_semicolons_and_format_override(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("a;b\n1;2\n3;4\n")
    assert read_user_table(path).col_names == ("a", "b")
    other = tmp_path / "t.txt"
    other.write_text("1\t2\n3\t4\n")
    np.testing.assert_array_equal(read_user_table(other, format="tsv").data.table, [[1, 2], [3, 4]])
    forced = read_user_table(tmp_path / "t.csv", delimiter=";", header=True, row_names=False)
    assert forced.col_names == ("a", "b") and forced.row_names is None


def test_our_own_table_files(tmp_path):
    stored = load_table(SAMPLE)
    table = read_user_table(SAMPLE)
    assert table.format == "table" and table.kind == stored.kind
    np.testing.assert_array_equal(table.data.table, stored.data)
    table = read_user_table(MISSING_SAMPLE)
    stored = TableData.incomplete(load_table(MISSING_SAMPLE).data)
    assert table.is_sparse and table.n_missing == stored.n_missing > 0


def test_user_table_from_memory():
    table = user_table(np.ma.MaskedArray([[1, 2], [3, 4]], mask=[[0, 1], [0, 0]]), name="mine",
                       row_names=["a", "b"], col_names=("x", "y"))
    assert table.format == "array" and table.sha256 is None and table.n_missing == 1
    assert table.cell(1, 0) == "row 2 ('b'), column 1 ('x')"
    with pytest.raises(ValueError, match="row_names must have 2 names, got 3"):
        user_table([[1, 2], [3, 4]], row_names=["a", "b", "c"])
    with pytest.raises(TypeError, match="X must hold numbers"):
        user_table([["a", "b"], ["c", "d"]])


# -- bad files: one line each -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "name, content, message",
    [
        ("ragged.csv", "1,2,3\n4,5\n", "line 2: 2 cells, expected 3 (ragged rows)"),
        ("text.csv", "a,b\n1,2\n3,high\n", "line 3, column 2 ('b'): 'high' is not a number"),
        ("empty.csv", "", "is empty"),
        ("blank.tsv", "\n \n", "has no data"),
        ("one_row.csv", "1,2,3\n", "has 1 row and 3 columns: a table to co-cluster needs at least 2 of each"),
        ("one_col.csv", "1\n2\n3\n", "has 3 rows and 1 column"),
        ("zeros.csv", "0,0,0\n0,0,0\n", "every observed entry is 0: nothing to co-cluster"),
        ("constant.csv", "2,2\n2,\n", "every observed entry is 2"),
        ("missing.csv", "a,b\n,\nNA,\n", "every entry is missing"),
        ("infinite.csv", "g,a,b\nx,1,2\ny,3,-inf\n", "holds an infinite value at row 2 ('y'), column 2 ('b')"),
        ("table.xlsx", "PK", "unknown kind of file (.xlsx)"),
        ("noext", "1,2", "unknown kind of file (no extension)"),
        ("latin.csv", b"a,b\n1,\xe9\n", "not UTF-8 text"),
        ("bad.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1\n9 3 2\n", "damaged Matrix Market"),
        ("short.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 1\n2 3 2\n", "Truncated"),
        ("nobanner.mtx", "1 2 3\n", "not a Matrix Market file"),
        ("complex.mtx", "%%MatrixMarket matrix coordinate complex general\n2 2 1\n1 1 1 1\n", "complex numbers"),
        ("notzip.npz", "hello", "not a readable .npz file"),
        ("bad.npy", b"\x93NUMPY\x01\x00garbage", "not a readable .npy file"),
        ("neither.h5", b"\x89HDF\r\n\x1a\nxx", "not a readable HDF5 file"),
        ("broken.h5ad", b"\x89HDF\r\n\x1a\n" + b"0" * 64, "not a readable HDF5 file"),
    ],
)
def test_bad_files_one_line_each(tmp_path, name, content, message):
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    _refused(path, message)


def test_bad_arrays(tmp_path):
    np.save(tmp_path / "flat.npy", np.arange(5))
    _refused(tmp_path / "flat.npy", "holds an array of shape (5,), not a 2-D table")
    np.save(tmp_path / "words.npy", np.array([["a", "b"], ["c", "d"]]))
    _refused(tmp_path / "words.npy", "holds text (dtype <U1), not numbers")
    np.save(tmp_path / "objects.npy", np.array([[1, None], [2, 3]], dtype=object), allow_pickle=True)
    _refused(tmp_path / "objects.npy", "holds Python objects (dtype object), not numbers")
    np.save(tmp_path / "cut.npy", COUNTS)
    (tmp_path / "cut.npy").write_bytes((tmp_path / "cut.npy").read_bytes()[:-50])
    _refused(tmp_path / "cut.npy", "truncated .npy file")
    np.savez(tmp_path / "two.npz", a=COUNTS, b=COUNTS)
    _refused(tmp_path / "two.npz", "holds 2 arrays (a, b)")
    sp.save_npz(tmp_path / "empty.npz", sp.csr_array((5, 4)))
    _refused(tmp_path / "empty.npz", "every observed entry is 0")
    with pytest.raises(FileNotFoundError):
        read_user_table(tmp_path / "absent.csv")


def test_a_folder_and_an_hdf5_file_of_another_kind(tmp_path):
    import h5py

    folder = tmp_path / "dir.csv"
    folder.mkdir()
    _refused(folder, "is a folder, not a file")
    with h5py.File(tmp_path / "other.h5", "w") as file:
        file["x"] = np.ones(3)
    _refused(tmp_path / "other.h5", "neither an lbm-bench-table file nor an AnnData file")


@pytest.mark.parametrize("fmt", ["npy", "npz", "mtx", "csv"])
def test_too_large_for_memory_is_refused_before_reading(tmp_path, monkeypatch, fmt):
    """The estimate comes from the header or the line count; the table itself is never read."""
    path = tmp_path / f"t.{fmt}"
    if fmt == "npy":
        np.save(path, COUNTS)
    elif fmt == "npz":
        sp.save_npz(path, SPARSE)
    elif fmt == "mtx":
        scipy.io.mmwrite(path, SPARSE)
    else:
        path.write_text("\n".join(",".join(map(str, row)) for row in COUNTS))

    def never(*args, **kwargs):
        raise AssertionError("the table was read")

    monkeypatch.setattr(formats.sp, "load_npz", never)
    monkeypatch.setattr(formats, "read_mtx", never)
    monkeypatch.setattr(formats, "read_delimited", never)
    with pytest.raises(MemoryLimitError) as info:
        read_user_table(path, max_memory=100 * 2**20)
    text = str(info.value)
    assert text.startswith(f"{path}: reading the ") and "needs about" in text and "max_memory=" in text
    assert "\n" not in text


def test_estimate_of_a_large_dense_file_exceeds_its_size(tmp_path):
    """A header that announces a huge table: refused against the memory available, from the header alone."""
    path = tmp_path / "huge.npy"
    with open(path, "wb") as handle:
        np.lib.format.write_array_header_1_0(handle, {"descr": "<f8", "fortran_order": False,
                                                      "shape": (2_000_000, 1_000_000)})
    with pytest.raises(MemoryLimitError, match=r"dense 2000000x1000000 table needs about [0-9.]+ TiB"):
        read_user_table(path)


# -- the family's checks -----------------------------------------------------------------------------------
def test_negative_counts_with_kind_poisson_name_the_cell(tmp_path):
    path = tmp_path / "c.csv"
    path.write_text(",a,b,c\nr1,1,2,3\nr2,4,-5,6\n")
    text = _refused(path, "not a table of poisson blocks", kind="poisson")
    assert text.endswith("got min -5; the first refused entry is row 2 ('r2'), column 2 ('b'): -5")


def test_non_integers_with_kind_bernoulli(tmp_path):
    np.save(tmp_path / "b.npy", np.array([[1.0, 0.0, 1.0], [0.0, 0.25, 1.0]]))
    text = _refused(tmp_path / "b.npy", "not a table of bernoulli blocks", kind="bernoulli")
    assert "integers" in text and "; the first refused entry is row 2, column 2: 0.25" in text
    np.save(tmp_path / "c.npy", np.array([[1, 0, 1], [0, 2, 1]]))
    _refused(tmp_path / "c.npy", "0/1 values, got max 2; the first refused entry is row 2, column 2: 2",
             kind="bernoulli")


def test_the_minimum_and_the_first_refused_entry_are_told_apart(tmp_path):
    """Issue 47: "got min -11 (first at row 1, column 2: -2)" read as if -2 were the minimum."""
    path = tmp_path / "n.csv"
    path.write_text("1,-2,3\n4,5,-11\n1,1,1\n")
    text = _refused(path, "not a table of poisson blocks", kind="poisson")
    assert text.endswith("got min -11; the first refused entry is row 1, column 2: -2"), text


def test_a_files_name_is_not_a_table(tmp_path):
    """Issue 47: fit_design('file.csv', ...) said "X must be a 2-D table, got shape ()"."""
    from lbm_bench import fit_design

    for given in ("votes.csv", tmp_path / "votes.csv"):
        with pytest.raises(TypeError, match=r"X must be a table .*got the path '.*votes\.csv'; read the file "
                                            r"first: read_user_table\('.*votes\.csv'\)"):
            fit_design(given, (2, 2))


def test_located_in_a_sparse_table():
    table = sp.csr_array(([1.0, 2.0, -3.0], ([0, 4, 7], [2, 1, 5])), shape=(9, 6))
    with pytest.raises(UserTableError, match=r"the first refused entry is row 8, column 6: -3\.0"):
        check_user_values(user_table(table, name="s"), "poisson")


@pytest.mark.parametrize("kind", ["gaussian", "poisson", "bernoulli", "categorical"])
def test_checked_table_has_the_family_dtype_and_keeps_the_mask(kind):
    values = np.array([[0.0, 1.0, np.nan], [1.0, 0.0, 1.0], [1.0, 1.0, 0.0]])
    family = {f.kind: f for f in FAMILIES}[kind]
    data = check_user_values(user_table(values), kind)
    assert data.table.dtype == family.model.table_dtype and data.n_missing == 1 and not data.observed[0, 2]


def test_sparse_table_for_a_dense_family_is_densified_when_it_fits(tmp_path):
    sp.save_npz(tmp_path / "s.npz", SPARSE)
    dense = [f.kind for f in FAMILIES if not f.model.can_be_sparse and f.estimation.describes("f", None, None)]
    table = read_user_table(tmp_path / "s.npz")
    for kind in dense:
        data = check_user_values(table, kind)
        assert not data.is_sparse
        np.testing.assert_array_equal(data.table, SPARSE.toarray())
        with pytest.raises(MemoryLimitError, match="needs about"):
            check_user_values(table, kind, max_memory="1K")


def test_read_with_kind_returns_the_checked_table(tmp_path):
    np.save(tmp_path / "b.npy", np.array([[1, 0], [0, 1]], dtype=np.int64))
    assert read_user_table(tmp_path / "b.npy", kind="bernoulli").data.table.dtype == np.uint8


def test_formats_cover_the_documented_endings():
    assert {"npy", "npz", "mtx", "csv", "tsv", "h5ad", "table"} == set(USER_FORMATS)
