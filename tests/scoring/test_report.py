"""The scores of one co-clustering on one table (lbm_bench.scoring.report): a record whose dict is
JSON, and a summary that names the floor, or the MAP when the table has none."""

import dataclasses
import json

from lbm_bench.scoring.report import Report


def _report(**changes):
    values = {}
    for field in dataclasses.fields(Report):
        if field.type in ("float", "int"):
            values[field.name] = 0.125
        elif field.type == "list":
            values[field.name] = [3, 2]
        else:
            values[field.name] = ""
    values.update(reference="bayes", table="t.h5", criterion="bayes", n_samples=2000)
    return Report(**{**values, **changes})


def test_a_report_is_json_and_its_summary_names_its_reference():
    report = _report()
    assert json.loads(report.to_json()) == report.to_dict()
    text = report.summary()
    assert text.splitlines()[0] == "table: t.h5" and "floor (Bayes, l_item)    0.1250 +- 0.1250" in text
    assert "(over the floor)" in text and "warning" not in text
    other = _report(reference="map", warning="4x2 clusters, the table has 3x2").summary()
    assert "reference (MAP; no floor)" in other and "(over the MAP)" in other
    assert other.splitlines()[1] == "warning: 4x2 clusters, the table has 3x2"


def test_a_score_that_is_not_a_number_is_null_in_the_json():
    """``evaluate --json`` printed ``NaN`` for a NaN floor, which JSON parsers refuse; ``info --json``
    prints null (issue 48)."""
    report = _report(bayes_risk=float("nan"), ari_rows=float("inf"))

    def refuse(constant):
        raise ValueError(f"{constant} is not JSON")

    values = json.loads(report.to_json(), parse_constant=refuse)
    assert values["bayes_risk"] is None and values["ari_rows"] is None and values["risk"] == 0.125
