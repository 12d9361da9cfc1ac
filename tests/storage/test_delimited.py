"""CSV and TSV tables: names detected and kept, missing cells, one-line refusals naming the line."""

from __future__ import annotations

import gzip

import numpy as np
import pytest

from lbm_bench.storage.delimited import DelimitedTextError, count_lines, read_delimited


def _read(tmp_path, text, delimiter=",", name="t.csv", **options):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return read_delimited(path, delimiter, **options)


def _same(values, expected):
    np.testing.assert_array_equal(values, np.array(expected, dtype=np.float64))


def test_numbers_without_header_or_names(tmp_path):
    read = _read(tmp_path, "1,2,3\n4,5,6\n")
    _same(read.values, [[1, 2, 3], [4, 5, 6]])
    assert read.row_names is None and read.col_names is None


def test_pandas_to_csv_header_and_index(tmp_path):
    """pandas writes an empty first header cell above the index (numbers here: still names)."""
    read = _read(tmp_path, ",a,b\n0,1.5,2\n1,3,4\n")
    _same(read.values, [[1.5, 2], [3, 4]])
    assert read.row_names == ("0", "1") and read.col_names == ("a", "b")


def test_r_write_table_header_one_cell_short(tmp_path):
    """R's write.table writes no header cell above the row names."""
    read = _read(tmp_path, "a\tb\nr1\t1\t2\nr2\t3\tNA\n", delimiter="\t")
    assert read.row_names == ("r1", "r2") and read.col_names == ("a", "b")
    assert np.isnan(read.values[1, 1]) and read.values[0, 1] == 2


def test_names_column_of_text_with_a_named_header(tmp_path):
    read = _read(tmp_path, '"gene","s1","s2"\n"g1",1,2\n"g2",3,4\n')
    assert read.row_names == ("g1", "g2") and read.col_names == ("s1", "s2")


def test_names_without_header(tmp_path):
    read = _read(tmp_path, "g1,1,2\ng2,3,4\n")
    assert read.row_names == ("g1", "g2") and read.col_names is None
    _same(read.values, [[1, 2], [3, 4]])


def test_header_without_names(tmp_path):
    read = _read(tmp_path, "x,y,z\n1,2,3\n4,5,6\n")
    assert read.row_names is None and read.col_names == ("x", "y", "z")


@pytest.mark.parametrize("marker", ["", "NA", "nan", "NaN", "N/A", "#N/A", "null", " NA "])
def test_missing_markers(tmp_path, marker):
    read = _read(tmp_path, f"1,{marker}\n3,4\n")
    assert np.isnan(read.values[0, 1]) and np.count_nonzero(np.isnan(read.values)) == 1


def test_quoted_cells_bom_blank_lines_and_gzip(tmp_path):
    path = tmp_path / "t.csv.gz"
    with gzip.open(path, "wt", encoding="utf-8-sig") as handle:
        handle.write('name,"a, b",c\n\n"x, y",1,2\n\nz,3,4\n')
    read = read_delimited(path, ",")
    assert read.col_names == ("a, b", "c") and read.row_names == ("x, y", "z")
    _same(read.values, [[1, 2], [3, 4]])
    assert count_lines(path) == (5, 'name,"a, b",c')


def test_trailing_delimiter_column_is_dropped(tmp_path):
    read = _read(tmp_path, "1,2,\n3,4,\n")
    _same(read.values, [[1, 2], [3, 4]])


def test_forced_header_and_row_names(tmp_path):
    """A header of numbers (years) is read as one when told; row_names=False keeps a column."""
    read = _read(tmp_path, "2001,2002\n1,2\n3,4\n", header=True)
    assert read.col_names == ("2001", "2002")
    _same(read.values, [[1, 2], [3, 4]])
    read = _read(tmp_path, ",a,b\n0,1,2\n1,3,4\n", row_names=False)
    _same(read.values, [[0, 1, 2], [1, 3, 4]])
    assert read.row_names is None and read.col_names == ("", "a", "b")


@pytest.mark.parametrize(
    "text, message",
    [
        ("1,2,3\n4,5\n", "line 2: 2 cells, expected 3 (ragged rows)"),
        ("a,b\n1,2\n3,x\n", "line 3, column 2 ('b'): 'x' is not a number"),
        ("1,2\n3,4\nfoo,5\n", "line 3, column 1: 'foo' is not a number (a first column of names"),
        ("a,b,c\n1,2\n", "line 2: 2 cells, the header has 3"),
        ("a,b\n", "has a header line but no data lines"),
        ("\n\n", "has no data"),
    ],
)
def test_refusals_name_the_line(tmp_path, text, message):
    with pytest.raises(DelimitedTextError) as info:
        _read(tmp_path, text)
    assert message in str(info.value) and "\n" not in str(info.value)


def test_not_utf8(tmp_path):
    path = tmp_path / "t.csv"
    path.write_bytes("a,b\n1,\xe9\n".encode("latin-1"))
    with pytest.raises(DelimitedTextError, match="not UTF-8 text"):
        read_delimited(path, ",")


def test_capacity_grows(tmp_path):
    read = _read(tmp_path, "".join(f"{i},{i + 1}\n" for i in range(50)), capacity=3)
    assert read.values.shape == (50, 2) and read.values[49, 1] == 50
