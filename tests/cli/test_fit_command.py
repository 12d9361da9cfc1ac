"""``lbm-bench fit`` (lbm_bench.cli.fit_command, issue 34): a design fitted to a user's table and
written as a design file, and its one-line refusals (exit 2, nothing written) naming its flags."""

import pytest

from lbm_bench import read_design_file
from lbm_bench.cli import main


def test_fit_writes_a_design_file_and_prints_its_summary(counts, tmp_path, capsys):
    out = tmp_path / "d.toml"
    assert main(["fit", str(counts), "--max-clusters", "4x4", "--samples", "200", "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert "counts: 120x80 table, poisson blocks" in text and "counts 2x2 by exact-icl" in text
    assert "a table like yours, if it followed the model, has a floor of" in text and "wrote" in text
    record = read_design_file(out)
    assert record.design.block_shape == (2, 2) and record.source_name == "counts"
    assert record.source_shape == (120, 80) and len(record.source_sha256) == 64


BAD_DATA = {
    "ragged.csv": ("a,b,c\n1,2\n3,4,5\n", [], "the header has 3"),
    "text.csv": ("1,2,3\n2,x,4\n5,6,7\n", [], "line 2, column 2: 'x' is not a number"),
    "empty.csv": ("", [], "is empty"),
    "one_row.csv": ("1,2,3\n", [], "needs at least 2 of each"),
    "zeros.csv": ("0,0\n0,0\n0,0\n", [], "every observed entry is 0"),
    "negative.csv": ("-1,2\n3,4\n5,6\n", ["--kind", "poisson"], "must be non-negative"),
    "fractions.csv": ("0.5,1\n1,0\n0,1\n", ["--kind", "bernoulli"], "non-integer values"),
    "pattern.mtx": ("%%MatrixMarket matrix coordinate pattern general\n3 3 2\n1 1\n2 3\n", [], "pattern file"),
    "small.csv": ("1,2,3\n2,1,4\n5,6,7\n", ["--max-clusters", "4x2"],
                  "error: --max-clusters 4x2 exceeds the table's 3 rows and 3 columns"),  # as typed, not (4, 2)
}


@pytest.mark.parametrize("name", sorted(BAD_DATA))
def test_fit_refuses_bad_tables_in_one_line(name, tmp_path, capsys):
    text, extra, message = BAD_DATA[name]
    (tmp_path / name).write_text(text)
    out = tmp_path / "d.toml"
    assert main(["fit", str(tmp_path / name), *extra, "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and err.startswith("lbm-bench fit: error:") and message in err, err
    assert not out.exists() and list(tmp_path.iterdir()) == [tmp_path / name]


@pytest.mark.parametrize("args,message", [
    (["--samples", "0"], "error: --samples must be >= 1, got 0"),
    (["--jobs", "0"], "error: --jobs must be >= 1, got 0"),
    (["--format", "xls"], "error: --format must be one of 'npy'"),
    (["--delimiter", "ab"], "error: --delimiter must be one character"),
])
def test_fit_refusals_name_the_flags(counts, tmp_path, capsys, args, message):
    """fit's one-line refusals name its flags, never fit_design's or the reader's Python arguments
    (n_samples, jobs, format, delimiter), and come before the work."""
    out = tmp_path / "d.toml"
    assert main(["fit", str(counts), *args, "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and message in err, err
    assert "n_samples" not in err and "jobs=" not in err and "format=" not in err and not out.exists()


def test_a_bad_value_is_named_as_the_tables_not_as_a_python_argument(tmp_path, capsys):
    (tmp_path / "neg.csv").write_text("-1,2\n3,4\n5,6\n")
    assert main(["fit", str(tmp_path / "neg.csv"), "--kind", "poisson", "-o", str(tmp_path / "d.toml")]) == 2
    err = capsys.readouterr().err
    assert "not a table of poisson blocks: its values must be non-negative" in err and "X must" not in err, err


def test_a_table_too_large_to_read_is_refused_naming_max_memory(counts, tmp_path, capsys):
    """The reader's memory guard names max_memory=; fit, its --max-memory."""
    out = tmp_path / "d.toml"
    assert main(["fit", str(counts), "--max-memory", "1K", "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1
    assert err.startswith(f"lbm-bench fit: error: {counts}: reading the ")
    assert "allowed by --max-memory;" in err and "max_memory=" not in err and not out.exists()


def test_fit_refuses_a_certification_that_cannot_fit_before_the_work(counts, tmp_path, capsys):
    """``fit --samples 100000000`` allocated 7.45 GiB after the selection (issue 48, item 1)."""
    import time

    start = time.perf_counter()
    assert main(["fit", str(counts), "--samples", "100000000", "--max-memory", "2G", "-o",
                 str(tmp_path / "d.toml")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "allowed by --max-memory; use fewer Gibbs label sets (--samples)" in err
    assert time.perf_counter() - start < 10 and not (tmp_path / "d.toml").exists()
