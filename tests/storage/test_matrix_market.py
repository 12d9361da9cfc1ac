"""lbm_bench/storage/matrix_market.py: the header read streamed (comments skipped, sizes checked as
integers below 2^63), the entries read by SciPy from the size line on, an integer file's values
checked whole (issue 48: 1.5 read as 1, 1e23 and a 23-digit size an OverflowError, 1.3 GB for
the comments of a 290 KB .mtx.gz)."""

import gzip

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

from lbm_bench.storage.matrix_market import MatrixMarketError, mtx_header, read_mtx

BANNER = "%%MatrixMarket matrix coordinate {field} general\n"


def _write(path, text):
    path.write_text(text)
    return path


def test_scipy_files_read_back(tmp_path):
    table = sp.random(9, 7, density=0.3, random_state=1, format="coo")
    scipy.io.mmwrite(tmp_path / "t.mtx", table, comment="a comment\nof two lines")
    header = mtx_header(tmp_path / "t.mtx")
    assert (header.layout, header.field, header.shape, header.entries) == ("coordinate", "real", (9, 7), table.nnz)
    np.testing.assert_allclose(read_mtx(tmp_path / "t.mtx", header).toarray(), table.toarray())
    dense = np.arange(6.0).reshape(2, 3)
    scipy.io.mmwrite(tmp_path / "d.mtx", dense)
    header = mtx_header(tmp_path / "d.mtx")
    assert header.layout == "array" and header.shape == (2, 3)
    np.testing.assert_array_equal(read_mtx(tmp_path / "d.mtx", header), dense)


def test_integer_files_come_back_as_int64(tmp_path):
    path = _write(tmp_path / "i.mtx", BANNER.format(field="integer") + "2 2 2\n1 1 3\n2 2 9007199254740991\n")
    table = read_mtx(path, mtx_header(path))
    assert table.dtype == np.int64 and table.toarray()[1, 1] == 2**53 - 1


@pytest.mark.parametrize("value", ["1.5", "100000000000000000000000", "1e23", "9007199254740992"])
def test_an_integer_file_holding_a_non_integer_is_refused(tmp_path, value):
    path = _write(tmp_path / "i.mtx", BANNER.format(field="integer") + f"2 2 2\n1 1 {value}\n2 2 1\n")
    with pytest.raises(MatrixMarketError, match="an integer Matrix Market file holding .*not an integer below 2"):
        read_mtx(path, mtx_header(path))


@pytest.mark.parametrize(
    "text, message",
    [("%%MatrixMarket matrix coordinate real general\n99999999999999999999999 3 3\n", r"beyond 2\^63"),
     ("%%MatrixMarket matrix coordinate real general\n3 x 3\n", "is not the rows, columns and entries"),
     ("%%MatrixMarket matrix coordinate real general\n3 3\n", "is not the rows, columns and entries"),
     ("%%MatrixMarket matrix coordinate real general\n-3 3 1\n", "non-negative"),
     ("%%MatrixMarket matrix coordinate real general\n% only comments\n", "without its size line"),
     ("%%MatrixMarket matrix pyramid real general\n3 3 1\n", "unknown words"),
     ("1 2 3\n", "not a Matrix Market file")],
)
def test_bad_headers_are_one_line(tmp_path, text, message):
    with pytest.raises(MatrixMarketError, match=message) as info:
        mtx_header(_write(tmp_path / "t.mtx", text))
    assert "\n" not in str(info.value)


def test_comments_are_skipped_without_being_held(tmp_path):
    """64 MiB of comment lines (one of them without any newline for 16 MiB) cost no memory: the
    entries are read from the size line on."""
    path = tmp_path / "c.mtx.gz"
    with gzip.open(path, "wb") as handle:
        handle.write(BANNER.format(field="real").encode())
        handle.write(b"%" + b"x" * (16 << 20) + b"\n")
        for _ in range(48):
            handle.write(b"%" + b"y" * ((1 << 20) - 2) + b"\n")
        handle.write(b"2 2 2\n1 1 1.0\n2 2 3.0\n")
    header = mtx_header(path)
    assert header.shape == (2, 2) and header.comments == (16 << 20) + 2 + 48 * (1 << 20)
    np.testing.assert_array_equal(read_mtx(path, header).toarray(), [[1, 0], [0, 3]])


def test_damaged_streams_and_entries(tmp_path):
    data = gzip.compress((BANNER.format(field="real") + "3 3 3\n1 1 1\n2 2 2\n3 3 3\n").encode())
    (tmp_path / "t.mtx.gz").write_bytes(data[:-12])
    with pytest.raises(MatrixMarketError, match="truncated gzip stream|damaged"):
        read_mtx(tmp_path / "t.mtx.gz", mtx_header(tmp_path / "t.mtx.gz"))
    path = _write(tmp_path / "out.mtx", BANNER.format(field="real") + "2 2 1\n3 1 1.0\n")
    with pytest.raises(MatrixMarketError, match="damaged Matrix Market file"):
        read_mtx(path, mtx_header(path))
