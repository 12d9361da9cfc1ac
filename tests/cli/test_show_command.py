"""``lbm-bench show`` (lbm_bench.cli.show_command) on a user's own table: as stored, grouped by
labels or by a design file's fitted model, and the one-line refusals of files it cannot read."""

import numpy as np
import pytest

from lbm_bench import get_family
from lbm_bench.cli import main


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
    ("a,b,c\n1,2\n3,4,5\n", [], "line 2: 2 cells, expected 3 (ragged rows)"),
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


def test_show_takes_header_and_row_names_and_prints_the_notes(tmp_path, capsys):
    """Issue 47: --header/--row-names on every command that reads a user table, show among them;
    what the rules assumed is one note on stderr, and nothing when the flags say it."""
    pytest.importorskip("matplotlib")
    path = tmp_path / "years.csv"
    path.write_text("2001,2002,2003,2004\n1,4,7,9\n2,5,8,8\n3,6,9,1\n")
    out = tmp_path / "y.png"
    assert main(["show", str(path), "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert err == (f"note: {path}: first line '2001,2002,2003,2004' read as a header of numbers (they step "
                   "evenly up, as years or column numbers do); --header no reads it as data\n")
    for header in ("yes", "no"):
        assert main(["show", str(path), "--header", header, "--row-names", "no", "--force", "-o", str(out)]) == 0
        assert capsys.readouterr().err == ""
    with pytest.raises(SystemExit) as info:
        main(["show", str(path), "--row-names", "maybe", "-o", str(out)])
    assert info.value.code == 2
