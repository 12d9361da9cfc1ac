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
