"""scripts/checks/calibration_first_tables.py on a tiny request: one row per variant, the
baseline's paired difference zero, a search on fewer tables evaluating fewer of them."""

import re

from tests.scripts.helpers import load_script, run_script


def test_tiny_request_rows_per_variant():
    out = run_script("checks", "calibration_first_tables", "--seeds", "2", "--truth", "3",
                     "--table", "gaussian", "40x30", "2x2", "0.15", "--first", "10", "4", "4/10").stdout
    lines = out.splitlines()
    assert lines[0].startswith("gaussian 40x30 2x2, target 0.15: 2 seeds, 3 truth tables")
    rows = {line.split("|")[1].strip(): [c.strip() for c in line.strip("|").split("|")] for line in lines[3:6]}
    assert list(rows) == ["10", "4", "4/10"]
    assert rows["10"][5] == "+0.0000 (0.0000)" and rows["10"][6] == "0.0000"
    assert float(rows["4"][7]) < float(rows["10"][7])  # fewer tables evaluated
    assert all(re.fullmatch(r"[+-]\d\.\d{4}", row[1]) for row in rows.values())


def test_variants_and_tables_evaluated():
    script = load_script("checks", "calibration_first_tables")
    assert script.parse_variant("10") == (10, 10) and script.parse_variant("5/10") == (5, 10)
    import numpy as np

    history = np.array([[1.0, 0.2, 0.0, 4], [0.8, 0.1, 0.0, 4], [0.8, 0.1, 0.0, 10], [0.7, 0.1, 0.0, 4]])
    assert script.tables_evaluated(history) == 4 + 10 + 4
