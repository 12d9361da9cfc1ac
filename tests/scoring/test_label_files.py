"""A co-clustering's labels read from a file (lbm_bench.scoring.label_files): text with an optional
header, savetxt's floats, .npy; each refusal naming its line."""

import numpy as np
import pytest

from lbm_bench.scoring.label_files import read_labels


def test_read_labels_formats(tmp_path):
    (tmp_path / "a.txt").write_text("3\n1\n\n2\n")
    np.testing.assert_array_equal(read_labels(tmp_path / "a.txt"), [3, 1, 2])
    (tmp_path / "b.csv").write_text('"cluster"\n1\n2\n')
    np.testing.assert_array_equal(read_labels(tmp_path / "b.csv"), [1, 2])
    np.save(tmp_path / "c.npy", np.array([0, 1, 1]))
    np.testing.assert_array_equal(read_labels(tmp_path / "c.npy"), [0, 1, 1])
    (tmp_path / "d.txt").write_text("1\n2.5\n")
    with pytest.raises(ValueError, match="line 2 is not an integer"):
        read_labels(tmp_path / "d.txt")
    np.save(tmp_path / "e.npy", np.zeros((2, 2)))
    with pytest.raises(ValueError, match="1-D"):
        read_labels(tmp_path / "e.npy")
    with pytest.raises(ValueError, match="does not exist"):
        read_labels(tmp_path / "missing.txt")
    np.save(tmp_path / "f.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(ValueError, match="not a readable .npy"):
        read_labels(tmp_path / "f.npy")


def test_read_labels_accepts_savetxt_default_floats(tmp_path):
    """numpy.savetxt's default format ("%.18e") of integer labels reads as those integers."""
    labels = np.array([2, 0, 1, 1, 10])
    np.savetxt(tmp_path / "rows.txt", labels)
    assert "e+00" in (tmp_path / "rows.txt").read_text()
    np.testing.assert_array_equal(read_labels(tmp_path / "rows.txt"), labels)
    (tmp_path / "floats.txt").write_text("2.0\n0\n1.000000000000000000e+00\n")
    np.testing.assert_array_equal(read_labels(tmp_path / "floats.txt"), [2, 0, 1])


@pytest.mark.parametrize("first", ["1O", "2.5", "O", "l", "nan", "-", "1e", "#1"])
def test_read_labels_refuses_a_mistyped_first_line(tmp_path, first):
    """A first line that is not an integer is a header only when it is a name; a value that
    looks like a mistyped number is an error naming line 1, not a silently skipped label."""
    (tmp_path / "rows.txt").write_text(f"{first}\n1\n2\n")
    with pytest.raises(ValueError, match=r"line 1 is not an integer label"):
        read_labels(tmp_path / "rows.txt")


@pytest.mark.parametrize("header", ["label", '"cluster"', "x", "V1", "row_label", "'cols'"])
def test_read_labels_header_names(tmp_path, header):
    (tmp_path / "rows.txt").write_text(f"{header}\n1\n2\n")
    labels, found = read_labels(tmp_path / "rows.txt", return_header=True)
    np.testing.assert_array_equal(labels, [1, 2])
    assert found == header.strip("'\"")
    assert read_labels(tmp_path / "rows.txt").tolist() == [1, 2]


def test_read_labels_line_numbers_count_every_line(tmp_path):
    """Errors name the file's own 1-based line, counting the header and blank lines."""
    (tmp_path / "a.txt").write_text("label\n1\n\n2\n2,5\n")
    with pytest.raises(ValueError, match=r"line 5 has 2 comma-separated fields"):
        read_labels(tmp_path / "a.txt")
    (tmp_path / "b.txt").write_text("\n0\n1\n1.5\n")
    with pytest.raises(ValueError, match=r"line 4 is not an integer label: '1.5'"):
        read_labels(tmp_path / "b.txt")
    (tmp_path / "c.txt").write_text("label\n\n")
    with pytest.raises(ValueError, match="holds no labels"):
        read_labels(tmp_path / "c.txt")
