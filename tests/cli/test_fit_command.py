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
    "ragged.csv": ("a,b,c\n1,2\n3,4,5\n", [], "line 2: 2 cells, expected 3 (ragged rows)"),
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


def test_fit_takes_the_kernel_and_names_it_in_its_refusals(counts, tmp_path, capsys, monkeypatch):
    from lbm_bench.inference import kernel_choice

    monkeypatch.setattr(kernel_choice, "numba_status", lambda: (None, "ImportError: hidden"))
    out = tmp_path / "d.toml"
    assert main(["fit", str(counts), "--kernel", "compiled", "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.strip().startswith("lbm-bench fit: error: --kernel compiled needs numba") and not out.exists()


# -- issue 47: the reading said, the kind from the values, limits said, names kept ----------------------------
def _binary_h5ad(path, X, rows, cols):
    import h5py
    import numpy as np
    import scipy.sparse as sp

    strings = h5py.string_dtype("utf-8")
    X = sp.csr_array(X.astype(np.float32))  # AnnData's float32 0/1, stored as csr_matrix
    with h5py.File(path, "w") as file:
        file.attrs.update({"encoding-type": "anndata", "encoding-version": "0.1.0"})
        group = file.create_group("X")
        group.attrs.update({"encoding-type": "csr_matrix", "encoding-version": "0.1.0", "shape": X.shape})
        for name in ("data", "indices", "indptr"):
            group[name] = getattr(X, name)
        for key, names in (("obs", rows), ("var", cols)):
            frame = file.create_group(key)
            frame.attrs.update({"encoding-type": "dataframe", "_index": "_index"})
            frame.create_dataset("_index", data=np.array(names, dtype=object), dtype=strings)


def test_a_float32_binary_h5ad_fits_as_bernoulli_and_keeps_its_names(tmp_path, capsys):
    """AnnData's float32 0/1 was inferred Gaussian, then refused with advice for the Python API."""
    from lbm_bench import get_family

    model = get_family("bernoulli").model([0.5, 0.5], [0.4, 0.6], [[0.05, 0.6], [0.5, 0.1]])
    X, z, w = model.sample(60, 40, rng=0)
    rows, cols = [f"cell{i}" for i in range(60)], [f"gene{j}" for j in range(40)]
    _binary_h5ad(tmp_path / "cells.h5ad", X, rows, cols)
    out = tmp_path / "d.toml"
    assert main(["fit", str(tmp_path / "cells.h5ad"), "--max-clusters", "3x3", "--no-certify", "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert (f"{tmp_path / 'cells.h5ad'}: 60x40 table, bernoulli blocks (inferred from the values: binaries, 0 to 1, "
            "whole numbers); sparse (the h5ad file stores a sparse table);") in text
    record = read_design_file(out)
    assert record.design.kind == "bernoulli" and record.row_names == tuple(rows) and record.col_names == tuple(cols)
    assert record.row_classes.shape == (60,) and set(record.col_classes) == {0, 1}


def test_a_sparse_real_table_is_densified_for_gaussian_blocks(tmp_path, capsys):
    """'cem with gaussian blocks does not accept sparse tables ...; densify it (X.toarray())' on the command line."""
    import numpy as np
    import scipy.sparse as sp

    rng = np.random.default_rng(1)
    X = rng.normal(0, 1, (40, 30)) + 3 * np.outer(np.repeat([0, 1], 20), np.repeat([1, 0], 15))
    sp.save_npz(tmp_path / "reals.npz", sp.csr_array(X))
    assert main(["fit", str(tmp_path / "reals.npz"), "--max-clusters", "3x3", "--no-certify",
                 "-o", str(tmp_path / "d.toml")]) == 0
    text = capsys.readouterr().out
    assert "gaussian blocks (inferred from the values: reals" in text
    assert "dense (gaussian blocks need a dense table: the file's sparse one densified)" in text


def test_counts_that_stop_at_the_limit_are_said(counts, tmp_path, capsys):
    assert main(["fit", str(counts), "--max-clusters", "2x2", "--no-certify", "-o", str(tmp_path / "d.toml")]) == 0
    text = capsys.readouterr().out
    assert "the counts stopped at the limit on the rows and columns: exact-icl " in text
    assert "raise --max-clusters past 2x2 for a finer design" in text and " over 1x2" in text


@pytest.mark.parametrize("constant_column, sides", [(False, "rows and columns"), (True, "rows")])
def test_no_block_structure_is_refused_naming_the_table(tmp_path, capsys, constant_column, sides):
    """fit on pure noise (or noise with a constant column) wrote a 1x1 design that generate refused
    naming --clusters, never given."""
    import numpy as np

    X = np.random.default_rng(2).normal(size=(40, 30))
    if constant_column:
        X[:, 0] = 3.0
    np.save(tmp_path / "noise.npy", X)
    out = tmp_path / "d.toml"
    args = ["fit", str(tmp_path / "noise.npy"), "--max-clusters", "3x3", "--no-certify", "-q", "-o", str(out)]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert f"noise.npy: exact-icl chose 1x{1 + constant_column} clusters: the table shows no block structure " \
           f"on its {sides} (" in err
    assert "no design file written" in err and not out.exists() and "--clusters" not in err


def test_header_and_row_names_flags(tmp_path, capsys):
    """A named first header cell above numeric years was read as data (a 2x1 design of that one row)."""
    import numpy as np

    rng = np.random.default_rng(5)
    years = list(range(1960, 1990))
    lines = ["country," + ",".join(map(str, years))]
    for i in range(40):
        level = 6.0 if i < 20 else 2.0
        lines.append(f"c{i}," + ",".join(f"{level + rng.normal(0, 0.3) - (j > 15) * 1.5:.2f}" for j in range(30)))
    (tmp_path / "fertility.csv").write_text("\n".join(lines) + "\n")
    out = tmp_path / "d.toml"
    assert main(["fit", str(tmp_path / "fertility.csv"), "--max-clusters", "3x3", "--no-certify", "-q",
                 "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert err.startswith(f"note: {tmp_path / 'fertility.csv'}: first line 'country,1960,1961") and "--header no" in err
    record = read_design_file(out)
    assert record.source_shape == (40, 30) and record.col_names[0] == "1960" and record.row_names[0] == "c0"
    assert main(["fit", str(tmp_path / "fertility.csv"), "--header", "yes", "--row-names", "yes", "--max-clusters",
                 "3x3", "--no-certify", "-q", "--force", "-o", str(out)]) == 0
    assert capsys.readouterr().err == ""  # nothing assumed: no note


def test_a_sparse_table_too_large_to_densify_names_the_kind_flag(tmp_path, capsys, monkeypatch):
    """Issue 47, item 2: the refusal of a sparse table a family of dense tables needs densified names
    the command line's fix (--kind bernoulli, --kind poisson) on the command line, and the API's
    (kind='bernoulli', kind='poisson') in the library."""
    import numpy as np
    import scipy.io
    import scipy.sparse as sp

    from lbm_bench import check_user_values, read_user_table
    from lbm_bench.storage import user_formats

    X = sp.random(3000, 1000, density=0.01, format="coo", random_state=0)
    X.data = np.round(X.data * 3) + 0.5  # reals: Gaussian blocks, which need a dense table
    scipy.io.mmwrite(tmp_path / "reals.mtx", X)
    with pytest.raises(ValueError, match=r"a family whose tables can be sparse \(kind='bernoulli' for 0/1 values, "
                                         r"kind='poisson' for counts\)"):
        check_user_values(read_user_table(tmp_path / "reals.mtx"), "gaussian", max_memory="170M")
    monkeypatch.setattr(user_formats, "available_memory", lambda: 170 * 2**20)
    assert main(["fit", str(tmp_path / "reals.mtx"), "--no-certify", "-o", str(tmp_path / "d.toml")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "(--kind bernoulli for 0/1 values, --kind poisson for counts)" in err, err


def test_fit_refuses_a_certification_that_cannot_fit_before_the_work(counts, tmp_path, capsys):
    """``fit --samples 100000000`` allocated 7.45 GiB after the selection (issue 48, item 1)."""
    import time

    start = time.perf_counter()
    assert main(["fit", str(counts), "--samples", "100000000", "--max-memory", "2G", "-o",
                 str(tmp_path / "d.toml")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "allowed by --max-memory; use fewer Gibbs label sets (--samples)" in err
    assert time.perf_counter() - start < 10 and not (tmp_path / "d.toml").exists()
