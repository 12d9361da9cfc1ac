"""CSV and TSV tables: names detected and kept, missing cells, one-line refusals naming the line."""

from __future__ import annotations

import gzip

import numpy as np
import pytest

from lbm_bench.storage.delimited import DelimitedTextError, read_delimited
from lbm_bench.storage.text_scan import scan_text


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
    scan = scan_text(path)
    assert (scan.lines, scan.first_line) == (5, 'name,"a, b",c')


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
        ("1,2\n3,4\nfoo,5\n", "line 3, column 1: 'foo' is not a number (a first column mostly of numbers is data"),
        ("a,b,c\n1,2\n", "line 2: 2 cells, expected 3 (ragged rows)"),
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


# -- the writers users' tools are (issue 47, item 1) --------------------------------------------------
YEARS = [str(y) for y in range(1960, 1972)]
COUNTRIES = [f"Country {i}, the" for i in range(25)]


def _frame():
    pd = pytest.importorskip("pandas")
    values = np.round(np.random.default_rng(47).uniform(1, 8, (25, 12)), 2)
    values[3, 4] = np.nan
    return pd.DataFrame(values, index=COUNTRIES, columns=YEARS), values


def _sniffed(path, **options):
    from lbm_bench.storage.text_scan import scan_text, sniff_delimiter

    return read_delimited(path, sniff_delimiter(scan_text(path).sample), **options)


@pytest.mark.parametrize(
    "style, write, names, note",
    [
        ("to_csv with its index", lambda df, p: df.to_csv(p), True, None),
        ("to_csv, index named", lambda df, p: df.rename_axis("country").to_csv(p), True, "read as a header of numbers"),
        ("to_csv without index", lambda df, p: df.to_csv(p, index=False), False, "read as a header of numbers"),
        ("Excel style: BOM, ';', decimal comma",
         lambda df, p: df.to_csv(p, sep=";", decimal=",", encoding="utf-8-sig"), True, None),
        ("CR line ends", lambda df, p: df.to_csv(p, lineterminator="\r"), True, None),
        ("CRLF line ends", lambda df, p: df.to_csv(p, lineterminator="\r\n"), True, None),
        ("tab separated", lambda df, p: df.to_csv(p, sep="\t"), True, None),
        ("NA spelled NA", lambda df, p: df.to_csv(p, na_rep="NA"), True, None),
        ("NA spelled #N/A", lambda df, p: df.to_csv(p, na_rep="#N/A"), True, None),
    ],
)
def test_pandas_writers_read_with_names_years_and_missing_entries(tmp_path, style, write, names, note):
    """pandas' to_csv of a table with numeric year headers and names holding a comma, as the issue's
    World Bank fertility table: the right shape, names and missing entry, whatever the options."""
    df, values = _frame()
    path = tmp_path / "fertility.csv"
    write(df, path)
    read = _sniffed(path)
    np.testing.assert_array_equal(read.values, values)
    assert read.col_names == tuple(YEARS)
    assert read.row_names == (tuple(COUNTRIES) if names else None)
    assert (note is None and not read.notes) or (note is not None and note in read.notes[0]), read.notes


def test_a_named_first_header_cell_above_numeric_years_is_a_header(tmp_path):
    """The issue's silent misread: 'country,1960,1961,...' was read as a first row of data."""
    text = "country," + ",".join(YEARS) + "\n" + "".join(
        f"c{i}," + ",".join(f"{4 + 0.1 * (i + j):.1f}" for j in range(12)) + "\n" for i in range(9))
    read = _read(tmp_path, text)
    assert read.values.shape == (9, 12) and read.col_names == tuple(YEARS) and read.row_names[0] == "c0"
    assert read.notes == ("first line 'country,1960,1961,1962,1963,1964,1965,19...' read as a header of numbers "
                          "(they step evenly up, as years or column numbers do); header='no' reads it as data",)
    assert _read(tmp_path, text, header="no").values.shape == (10, 12)


def test_an_empty_corner_above_names_makes_a_header_of_numbers(tmp_path):
    """The issue's false message ('Aruba' is not a number ...): pandas' to_csv, the years numeric."""
    text = "," + ",".join(YEARS[:3]) + "\nAruba,4.8,4.7,NA\nAfghanistan,7.4,7.5,7.5\n"
    read = _read(tmp_path, text)
    assert read.row_names == ("Aruba", "Afghanistan") and read.col_names == tuple(YEARS[:3]) and not read.notes
    assert np.isnan(read.values[0, 2])


def test_a_named_row_of_numbers_is_data_and_noted(tmp_path):
    read = _read(tmp_path, "g1,1,2\ng2,3,4\n")
    assert read.values.shape == (2, 2) and read.notes == (
        "first line 'g1,1,2' read as data (a named row of numbers); header='yes' reads it as the columns' names",)


def test_ids_as_header_stand_out_from_the_counts_below(tmp_path):
    ids = "7157,672,675,1956,3845"
    body = "".join(",".join(str((i * 7 + j) % 9) for j in range(5)) + "\n" for i in range(10))
    read = _read(tmp_path, ids + "\n" + body)
    assert read.col_names == tuple(ids.split(",")) and read.values.shape == (10, 5)
    assert "stand outside the values below them" in read.notes[0]


def test_r_quotes_its_headers_even_years(tmp_path):
    read = _read(tmp_path, '"2001","2002","2003"\n1,4,7\n2,5,8\n')
    assert read.col_names == ("2001", "2002", "2003") and read.values.shape == (2, 3) and not read.notes


def test_a_first_column_mixing_names_and_numbers_is_noted(tmp_path):
    read = _read(tmp_path, "gene,a,b\nTP53,1,2\n7157,3,4\nBRCA1,5,6\n")
    assert read.row_names == ("TP53", "7157", "BRCA1")
    assert read.notes == ("the first column mixes names and 1 number: read as the rows' names; row_names='no' "
                          "reads it as data",)


def test_header_and_row_names_take_yes_no_auto(tmp_path):
    read = _read(tmp_path, "2001,2002\n1,2\n3,4\n", header="yes", row_names="no")
    assert read.col_names == ("2001", "2002") and read.row_names is None
    with pytest.raises(ValueError, match="header must be 'auto', 'yes' or 'no', got 'maybe'"):
        _read(tmp_path, "1,2\n", header="maybe")


@pytest.mark.real_client
def test_files_written_by_r(tmp_path):
    """R's write.csv (an empty quoted corner), write.table (the header one cell short, tab or space
    separated) and write.csv of a matrix with year names (quoted numbers), run by Rscript."""
    import shutil
    import subprocess

    if shutil.which("Rscript") is None:
        pytest.skip("Rscript is not installed")
    script = (
        'df <- data.frame(a=c(1.5,NA,3), b=c(2L,3L,4L), row.names=c("r 1","r,2","r3"));'
        f'write.csv(df, "{tmp_path}/csv.csv"); write.table(df, "{tmp_path}/tab.tsv", sep="\\t");'
        f'write.table(df, "{tmp_path}/space.csv"); write.csv2(df, "{tmp_path}/csv2.csv");'
        f'm <- matrix(1:12, 3); colnames(m) <- 2001:2004; write.csv(m, "{tmp_path}/years.csv", row.names=FALSE)')
    subprocess.run(["Rscript", "-e", script], check=True, capture_output=True, timeout=120)
    for name in ("csv.csv", "tab.tsv", "space.csv", "csv2.csv"):
        read = _sniffed(tmp_path / name)
        assert read.row_names == ("r 1", "r,2", "r3") and read.col_names == ("a", "b"), name
        np.testing.assert_array_equal(read.values, [[1.5, 2], [np.nan, 3], [3, 4]])
    read = _sniffed(tmp_path / "years.csv")
    assert read.col_names == ("2001", "2002", "2003", "2004") and read.row_names is None and not read.notes
