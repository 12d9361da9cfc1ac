"""lbm_bench/storage/text_scan.py: lines counted whatever their ends, the longest line, a sample
never larger than its cap, damaged gzip streams in one line, the check that stops a bomb, and the
delimiter sniffed (issue 48, section 1: decompression and line counting streamed with a cap)."""

import gzip
import time

import pytest

from lbm_bench.storage.text_scan import SAMPLE_BYTES, TextScanError, scan_text, sniff_delimiter


@pytest.mark.parametrize(
    "data, lines, longest",
    [(b"a,b\n1,2\n", 2, 3), (b"a,b\r1,2\r", 2, 3), (b"a,b\r\n1,2\r\n", 2, 3), (b"a,b\r\n\r\n1,22", 3, 4),
     (b"", 0, 0), (b"xyz", 1, 3), (b"\r\r\n\n", 3, 0)],
)
def test_every_line_end_counts(tmp_path, data, lines, longest):
    (tmp_path / "t.csv").write_bytes(data)
    scan = scan_text(tmp_path / "t.csv")
    assert (scan.lines, scan.longest, scan.size) == (lines, longest, len(data))


def test_cr_pairs_across_chunks(tmp_path):
    """A '\\r\\n' cut between two chunks of a megabyte ends one line."""
    data = b"x" * ((1 << 20) - 1) + b"\r\n" + b"y\r\n"
    (tmp_path / "t.csv").write_bytes(data)
    assert scan_text(tmp_path / "t.csv").lines == 2


def test_cr_only_lines_of_a_gzip_are_counted(tmp_path):
    """Issue 48: a gzip of CR lines counted as one line, then read whole (5.5 GB peak)."""
    with gzip.open(tmp_path / "t.csv.gz", "wb") as handle:
        handle.write(b"1,2,3\r" * 100_000)
    scan = scan_text(tmp_path / "t.csv.gz")
    assert scan.lines == 100_000 and scan.longest == 5 and scan.first_line == "1,2,3"


def test_the_sample_is_capped_and_a_line_without_end_is_not_held(tmp_path):
    """Issue 48: 600 MB of spaces without a newline grew the first line quadratically (over 200 s)."""
    with gzip.open(tmp_path / "spaces.csv.gz", "wb") as handle:
        for _ in range(64):
            handle.write(b" " * (1 << 20))
        handle.write(b"1,2")
    start = time.perf_counter()
    scan = scan_text(tmp_path / "spaces.csv.gz")
    assert time.perf_counter() - start < 20
    assert scan.lines == 1 and scan.longest == 64 * (1 << 20) + 3 and len(scan.sample) <= SAMPLE_BYTES


def test_the_check_stops_the_scan(tmp_path):
    with gzip.open(tmp_path / "bomb.csv.gz", "wb") as handle:
        for _ in range(32):
            handle.write(b"\n" * (1 << 20))
    seen = []

    def check(scan):
        seen.append(scan.size)
        if scan.lines > 2 << 20:
            raise ValueError("too many lines")

    with pytest.raises(ValueError, match="too many lines"):
        scan_text(tmp_path / "bomb.csv.gz", check)
    assert max(seen) <= 4 << 20


@pytest.mark.parametrize(
    "damage, message",
    [(lambda b: b[: len(b) // 2], "a truncated gzip stream"), (lambda b: b[:20] + b"\xff" * 40 + b[60:], "gzip"),
     (lambda b: b",s,t\n1,2\n", "not a gzip file")],
)
def test_damaged_gzip_streams_are_one_line(tmp_path, damage, message):
    """Issue 48: zlib.error, EOFError and 'Not a gzipped file' were tracebacks or nameless."""
    data = gzip.compress(b"".join(b"%d,%d\n" % (i, i + 1) for i in range(20000)))
    (tmp_path / "t.csv.gz").write_bytes(damage(data))
    with pytest.raises(TextScanError) as info:
        scan_text(tmp_path / "t.csv.gz")
    assert message in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize(
    "sample, delimiter",
    [("a,b,c\n1,2,3\n", ","), ("a;b;c\n1,5;2;3\n", ";"), ("a\tb\n1\t2\n", "\t"), ('"x, y"|1\n"z"|2\n', "|"),
     ('"a" "b"\n"r 1" 1.5 2\n', " "), ("a,b\nr,1,2\n", ","), ("single\n1\n", ","), ("", ",")],
)
def test_the_delimiter_that_splits_the_lines_alike(sample, delimiter):
    assert sniff_delimiter(sample) == delimiter
