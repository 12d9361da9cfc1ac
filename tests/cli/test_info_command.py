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
