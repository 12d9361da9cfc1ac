"""The command line of issue 34: ``lbm-bench fit`` and ``lbm-bench generate --design``, their
round trip and their one-line refusals (exit 2, nothing written)."""

import numpy as np
import pytest

from lbm_bench import get_family, load_table, read_design_file
from lbm_bench.cli import main


@pytest.fixture(scope="module")
def counts(tmp_path_factory):
    folder = tmp_path_factory.mktemp("fit")
    X, _, _ = get_family("poisson").model([0.6, 0.4], [0.5, 0.5], [[0.5, 4.0], [3.0, 1.0]]).sample(120, 80, rng=0)
    np.save(folder / "counts.npy", X)
    return folder / "counts.npy"


@pytest.fixture(scope="module")
def design_file(counts):
    out = counts.with_name("design.toml")
    assert main(["fit", str(counts), "--max-clusters", "4x4", "--samples", "200", "-o", str(out), "-q"]) == 0
    return out


def test_fit_writes_a_design_file_and_prints_its_summary(counts, tmp_path, capsys):
    out = tmp_path / "d.toml"
    assert main(["fit", str(counts), "--max-clusters", "4x4", "--samples", "200", "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert "counts: 120x80 table, poisson blocks" in text and "counts 2x2 by exact-icl" in text
    assert "a table like yours, if it followed the model, has a floor of" in text and "wrote" in text
    record = read_design_file(out)
    assert record.design.block_shape == (2, 2) and record.source_name == "counts"
    assert record.source_shape == (120, 80) and len(record.source_sha256) == 64


def test_generate_from_a_design_file(design_file, tmp_path):
    out = tmp_path / "t.h5"
    assert main(["generate", "--design", str(design_file), "--risk", "0.1", "--samples", "200",
                 "--tolerance", "0.03", "--seed", "1", "-o", str(out), "-q"]) == 0
    table = load_table(out)
    assert table.data.shape == (120, 80) and abs(table.bayes_risk.risk - 0.1) <= 0.03
    assert table.design.digest == read_design_file(design_file).digest
    assert main(["generate", "--design", str(design_file), "--risk", "0.2", "--shape", "60x40", "--samples", "200",
                 "--tolerance", "0.03", "--seed", "1", "-o", str(tmp_path / "s.h5"), "-q"]) == 0
    assert load_table(tmp_path / "s.h5").data.shape == (60, 40)


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


def _edited(design_file, tmp_path, old, new):
    text = design_file.read_text()
    assert old in text
    path = tmp_path / "edited.toml"
    path.write_text(text.replace(old, new, 1))
    return path


@pytest.mark.parametrize("old,new,message", [
    ('format = "lbm-bench-design/1.1"', 'format = "lbm-bench-design/2.0"', "newer than this lbm-bench reads"),
    ("row_proportions = [", "row_proportions = [0.9, ", "must have shape (2,)"),
    ("rates = [[", "rates = [[-", "rates must be > 0.0"),
    ("counts = [2, 2]", "counts = [2, 3]", "must have shape (3,)"),
])
def test_generate_refuses_a_design_file_edited_badly(design_file, tmp_path, capsys, old, new, message):
    path = _edited(design_file, tmp_path, old, new)
    out = tmp_path / "t.h5"
    assert main(["generate", "--design", str(path), "--risk", "0.1", "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and str(path) in err and message in err, err
    assert not out.exists()


@pytest.mark.parametrize("args,message", [
    (["--kind", "gaussian"], "error: --kind gaussian but the design is of poisson blocks"),
    (["--clusters", "3x3"], "the design has 2x2 clusters, not 3x3"),
    (["--density", "0.1"], "--density: the design fixes its design options"),
])
def test_generate_refuses_what_the_design_contradicts(design_file, tmp_path, capsys, args, message):
    out = tmp_path / "t.h5"
    assert main(["generate", "--design", str(design_file), "--risk", "0.1", *args, "-o", str(out)]) == 2
    assert message in capsys.readouterr().err and not out.exists()


def test_generate_without_a_design_still_needs_kind_shape_and_clusters(tmp_path, capsys):
    assert main(["generate", "--risk", "0.1", "--kind", "poisson", "-o", str(tmp_path / "t.h5")]) == 2
    assert "--shape, --clusters required (or --design DESIGN.toml)" in capsys.readouterr().err


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


def _user_files(folder, X):
    """The same counts as .npy, .csv (a missing entry), .mtx (sparse) and .h5ad files."""
    import scipy.io
    import scipy.sparse as sp

    np.save(folder / "t.npy", X)
    text = X.astype(object)
    text[0, 1] = ""
    (folder / "t.csv").write_text("\n".join(",".join(str(v) for v in row) for row in text) + "\n")
    scipy.io.mmwrite(folder / "t.mtx", sp.coo_matrix(X))
    return [folder / name for name in ("t.npy", "t.csv", "t.mtx")]


def test_show_draws_a_users_table_as_stored_and_grouped_by_a_design(counts, design_file, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    X = np.load(counts)
    for path in _user_files(tmp_path, X):
        out = tmp_path / f"{path.suffix[1:]}.png"
        assert main(["show", str(path), "-o", str(out), "--max-cells", "50"]) == 0, capsys.readouterr().err
        assert out.read_bytes().startswith(b"\x89PNG")
    out = tmp_path / "grouped.png"
    assert main(["show", str(counts), "--design", str(design_file), "-o", str(out)]) == 0
    assert out.stat().st_size > 0


def test_show_groups_by_the_design_models_map_labels(counts, design_file):
    from lbm_bench.fitting import design_labels
    from lbm_bench.protocol.from_design import load_design
    from lbm_bench.storage.user_data import read_user_table

    X, z, w = get_family("poisson").model([0.6, 0.4], [0.5, 0.5], [[0.5, 4.0], [3.0, 1.0]]).sample(120, 80, rng=0)
    rows, cols = design_labels(load_design(design_file)[0], read_user_table(counts), rng=0)
    agree = lambda a, b: max(np.mean(a == b), np.mean(a == 1 - b))  # noqa: E731  (two classes: up to a swap)
    assert agree(rows, z) > 0.95 and agree(cols, w) > 0.95


@pytest.mark.parametrize("content,args,message", [
    ("a,b,c\n1,2\n3,4,5\n", [], "the header has 3"),
    ("", [], "is empty"),
    ("1,2,3\n2,x,4\n5,6,7\n", [], "'x'"),
    ("1,2\n3,4\n5,6\n", ["--labels", "L", "L"], "labels[0] (rows) must have length 3"),
])
def test_show_refuses_bad_user_files_in_one_line(tmp_path, capsys, content, args, message):
    pytest.importorskip("matplotlib")
    (tmp_path / "bad.csv").write_text(content)
    (tmp_path / "L").write_text("0\n1\n")
    args = [str(tmp_path / a) if a == "L" else a for a in args]
    out = tmp_path / "x.png"
    assert main(["show", str(tmp_path / "bad.csv"), *args, "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and err.startswith("lbm-bench show: error:") and message in err, err
    assert not out.exists()
