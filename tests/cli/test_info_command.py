"""``lbm-bench info`` (lbm_bench.cli.info_command): a table's summary, and its attributes as
strict JSON."""

import json

import pytest

from lbm_bench import load_table
from lbm_bench.cli import main


def test_info_json_is_strict_json(table_file, capsys):
    """JSON has no NaN: a value that is not a number (here the rejection's balance, not
    measured for this table) is printed as null, which every JSON parser reads."""
    assert load_table(table_file).rejection.balance is None  # stored as NaN
    assert main(["info", "--json", str(table_file)]) == 0

    def refuse(constant):
        raise ValueError(f"{constant} is not JSON")

    info = json.loads(capsys.readouterr().out, parse_constant=refuse)
    assert info["balance"] is None and info["n_rows"] == 30


def test_info_versions_says_which_kernel_sums_sparse_tables(table_file, capsys, monkeypatch):
    monkeypatch.setenv("LBM_BENCH_KERNEL", "scipy")
    assert main(["info", "--versions"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("lbm-bench ") and lines[1].startswith("python ")
    assert [line.split()[0] for line in lines[2:6]] == ["numpy", "scipy", "h5py", "joblib"]
    assert lines[6].startswith("numba")
    assert "sparse kernel: scipy's (kernel='scipy'; LBM_BENCH_KERNEL='scipy')" in lines
    assert main(["info", "--versions", str(table_file)]) == 0  # then the table's summary
    assert "bernoulli table 30x24" in capsys.readouterr().out


def test_info_without_a_table_or_versions_is_refused(capsys, monkeypatch):
    assert main(["info"]) == 2
    assert capsys.readouterr().err.strip() == "lbm-bench info: error: info needs a table file (or --versions)"
    monkeypatch.setenv("LBM_BENCH_KERNEL", "fast")
    assert main(["info", "--versions"]) == 2
    assert "LBM_BENCH_KERNEL must be one of 'auto', 'compiled', 'scipy', got 'fast'" in capsys.readouterr().err


# -- a user's own table (issue 47, item 3) ------------------------------------------------------------------
def _user_files(folder):
    """The same 0/1 table in every format read_user_table reads, with names where the format has them."""
    import h5py
    import numpy as np
    import scipy.io
    import scipy.sparse as sp

    X = (np.random.default_rng(3).random((12, 9)) < 0.3).astype(np.float32)
    X[0, :2] = 1
    rows, cols = [f"cell{i}" for i in range(12)], [f"gene{j}" for j in range(9)]
    np.save(folder / "t.npy", X)
    sp.save_npz(folder / "t.npz", sp.csr_array(X))
    scipy.io.mmwrite(folder / "t.mtx", sp.coo_array(X))
    text = "," + ",".join(cols) + "\n" + "".join(r + "," + ",".join(f"{v:g}" for v in row) + "\n"
                                                 for r, row in zip(rows, X, strict=True))
    (folder / "t.csv").write_text(text)
    (folder / "t.tsv").write_text(text.replace(",", "\t"))
    strings = h5py.string_dtype("utf-8")
    with h5py.File(folder / "t.h5ad", "w") as file:
        file.attrs.update({"encoding-type": "anndata", "encoding-version": "0.1.0"})
        file["X"] = X
        for key, names in (("obs", rows), ("var", cols)):
            frame = file.create_group(key)
            frame.attrs.update({"encoding-type": "dataframe", "_index": "_index"})
            frame.create_dataset("_index", data=np.array(names, dtype=object), dtype=strings)
    return X, rows, cols


def test_info_on_every_user_format(tmp_path, capsys):
    """`lbm-bench info wine.csv` said 'not a readable HDF5 file'."""
    X, rows, cols = _user_files(tmp_path)
    for name in ("t.npy", "t.npz", "t.mtx", "t.csv", "t.tsv", "t.h5ad"):
        assert main(["info", str(tmp_path / name)]) == 0, name
        text = capsys.readouterr().out
        assert text.startswith(f"{tmp_path / name}: 12x9 table of ")
        assert "kind: bernoulli (inferred from the values" in text
        assert "missing entries: 0" in text and "values: 0 to 1" in text and "memory: about" in text
        named = name.endswith((".csv", ".tsv", ".h5ad"))
        assert ("row names: 12 ('cell0'" in text) == named and ("column names: 9 ('gene0'" in text) == named
        assert ("storage: sparse" in text) == name.endswith((".npz", ".mtx")), text
        assert main(["info", "--json", str(tmp_path / name)]) == 0
        info = json.loads(capsys.readouterr().out)
        assert info["shape"] == [12, 9] and info["kind"] == "bernoulli" and info["n_missing"] == 0
        assert info["density"] == float((X != 0).mean()) and info["read_memory"] > 0
        assert info["row_names"] == (rows if named else None)


def test_info_takes_the_reading_options_and_prints_notes(tmp_path, capsys):
    path = tmp_path / "years.csv"
    path.write_text("2001,2002,2003,2004\n1,4,7,9\n2,5,8,8\n3,6,9,1\n")
    assert main(["info", str(path)]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith(f"{path}: 3x4 table")
    assert captured.err == (f"note: {path}: first line '2001,2002,2003,2004' read as a header of numbers (they step "
                            "evenly up, as years or column numbers do); --header no reads it as data\n")
    assert main(["info", str(path), "--header", "no"]) == 0
    assert capsys.readouterr().out.startswith(f"{path}: 4x4 table")
    assert main(["info", str(tmp_path / "missing.csv")]) == 2
    with pytest.raises(SystemExit) as info:
        main(["info", str(path), "--header", "maybe"])
    assert info.value.code == 2
