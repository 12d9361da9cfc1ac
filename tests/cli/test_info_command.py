"""``lbm-bench info`` (lbm_bench.cli.info_command): a table's summary, and its attributes as
strict JSON."""

import json

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


def test_json_ready_values_are_strict_json():
    from pathlib import Path

    import numpy as np

    from lbm_bench.cli.info_command import json_ready

    value = {"a": np.float64("nan"), "b": np.arange(3), "c": (np.int64(2), float("inf")),
             "d": Path("t.h5")}
    assert json.dumps(json_ready(value), allow_nan=False) == (
        '{"a": null, "b": [0, 1, 2], "c": [2, null], "d": "t.h5"}')


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
