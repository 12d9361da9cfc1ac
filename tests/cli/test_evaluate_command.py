"""``lbm-bench evaluate`` (lbm_bench.cli.evaluate_command): labels files scored against a table,
as text and JSON, and the one-line refusals of bad labels."""

import json

import numpy as np
import pytest

from lbm_bench import load_table
from lbm_bench.cli import main
from tests.cli.helpers import REPO, run_cli


def test_evaluate_text_and_npy(table_file, tmp_path, capsys):
    table = load_table(table_file)
    rows, cols = tmp_path / "rows.txt", tmp_path / "cols.npy"
    rows.write_text("\n".join(str(v + 1) for v in table.map_rows) + "\n")  # 1-based, as R writes
    np.save(cols, table.map_cols)
    assert main(["evaluate", str(table_file), "--rows", str(rows), "--cols", str(cols), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["risk"] == pytest.approx(table.risk.risk, abs=1e-12)
    assert report["map_excess_risk"] == pytest.approx(0.0, abs=1e-12)
    assert report["bayes_risk"] == table.bayes_risk.risk and report["map_risk"] == table.risk.risk
    assert report["excess_risk"] == pytest.approx(table.risk.risk - table.bayes_risk.risk, abs=1e-12)
    assert report["reference"] == "bayes" and report["note"] == ""
    assert main(["evaluate", str(table_file), "--rows", str(rows), "--cols", str(cols)]) == 0
    out = capsys.readouterr().out
    assert "excess risk" in out and "floor (Bayes, l_item)" in out and "MAP labels (paper)" in out


def test_evaluate_a_format_1_0_file_says_it_has_no_floor(tmp_path, capsys):
    sample = REPO / "tests" / "data" / "table_v1.h5"
    table = load_table(sample)
    rows, cols = tmp_path / "rows.txt", tmp_path / "cols.txt"
    rows.write_text("\n".join(map(str, table.map_rows)))
    cols.write_text("\n".join(map(str, table.map_cols)))
    assert main(["evaluate", str(sample), "--rows", str(rows), "--cols", str(cols), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["reference"] == "map" and "no floor" in report["note"]
    assert report["bayes_risk"] == report["map_risk"] == table.risk.risk
    assert main(["evaluate", str(sample), "--rows", str(rows), "--cols", str(cols)]) == 0
    out = capsys.readouterr().out
    assert "note: format 1.0 file: no floor stored" in out and "reference (MAP; no floor)" in out


def test_evaluate_errors(table_file, tmp_path):
    bad = tmp_path / "rows.txt"
    bad.write_text("0\n1\n")
    good = tmp_path / "cols.txt"
    good.write_text("\n".join("0" for _ in range(24)))
    result = run_cli("evaluate", table_file, "--rows", bad, "--cols", good)
    assert result.returncode == 2 and "rows must have length 30" in result.stderr
    bad.write_text("a\nb\nc\n")
    result = run_cli("evaluate", table_file, "--rows", bad, "--cols", good)
    assert result.returncode == 2 and "not an integer label" in result.stderr
    result = run_cli("evaluate", REPO / "pyproject.toml", "--rows", good, "--cols", good)
    assert result.returncode == 2 and "Traceback" not in result.stderr


def test_evaluate_names_the_jobs_flag(table_file, tmp_path, capsys):
    labels = tmp_path / "labels.txt"
    labels.write_text("\n".join("0" for _ in range(30)))
    assert main(["evaluate", str(table_file), "--rows", str(labels), "--cols", str(labels), "--jobs", "0"]) == 2
    assert capsys.readouterr().err == "lbm-bench evaluate: error: --jobs must be >= 1, got 0\n"


def test_evaluate_refuses_a_complete_table_holding_nan(table_file, tmp_path):
    import shutil

    import h5py

    bad = tmp_path / "nan.h5"
    shutil.copyfile(table_file, bad)
    with h5py.File(bad, "r+") as f:  # a Bernoulli table cannot even hold NaN: write a Gaussian one's
        data = f["data"][()].astype(np.float64)
        data[0, 0] = np.nan
        del f["data"]
        f.create_dataset("data", data=data)
        f.attrs["kind"] = "gaussian"
    rows = tmp_path / "rows.txt"
    rows.write_text("\n".join("0" for _ in range(30)))
    result = run_cli("evaluate", bad, "--rows", rows, "--cols", rows)
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1
    assert "NaN" in result.stderr and "stores 0 there, under its observed mask" in result.stderr


def test_evaluate_json_is_strict_json_for_a_nan_floor(table_file, tmp_path, capsys):
    """A table file whose ``@bayes_risk`` is NaN: ``evaluate --json`` printed ``NaN`` (issue 48)."""
    import shutil

    import h5py

    path = tmp_path / "nan.h5"
    shutil.copy(table_file, path)
    with h5py.File(path, "r+") as file:
        file.attrs["bayes_risk"] = float("nan")
    table = load_table(path)
    np.savetxt(tmp_path / "r.txt", table.map_rows, fmt="%d")
    np.savetxt(tmp_path / "c.txt", table.map_cols, fmt="%d")
    assert main(["evaluate", str(path), "--rows", str(tmp_path / "r.txt"), "--cols", str(tmp_path / "c.txt"),
                 "--json"]) == 0

    def refuse(constant):
        raise ValueError(f"{constant} is not JSON")

    report = json.loads(capsys.readouterr().out, parse_constant=refuse)
    assert report["bayes_risk"] is None
