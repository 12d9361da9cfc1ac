"""scripts/checks/first_guess_error.py: the first guess's side error against the error measured
with the other side's labels known (seeded; the tolerances are about three standard errors)."""

import re

import numpy as np

from tests.scripts.helpers import load_script, run_script


def test_rows_of_a_small_run():
    out = run_script("checks", "first_guess_error", "--tables", "3", "--design", "gaussian", "120x100", "4x3").stdout
    lines = out.splitlines()
    assert lines[0].startswith("row error with the column labels known") and "3 tables per design" in lines[0]
    assert re.fullmatch(r"\| gaussian 120x100 4x3 \| \d\.\d{4} \| \d\.\d{4} \(\d\.\d{4}\) \| \d\.\d{4} \| \d\.\d{4} \|",
                        lines[3])


def test_ten_classes_are_predicted_closer_than_by_the_union_bound():
    """Ten row classes: the sum of the pairwise errors overstates the measured row error; the
    jointly normal ratios come closer (measured 0.0331 (se 0.0022) over 20 tables, union bound
    0.0456, now 0.0385, at the defaults of the script)."""
    script = load_script("checks", "first_guess_error")
    from lbm_bench import random_design
    from lbm_bench.protocol import separation

    design = random_design("gaussian", 10, 10, rng=0)
    scale, _ = separation.first_guess(design, 500, 500, 0.1)
    rows = separation._separations(separation.block_divergences(design, scale), design.col_proportions, 500)
    union = script.union_bound_error(rows, design.row_proportions)
    joint = separation.SideError(rows, design.row_proportions).error()
    measured, se = script.measured_row_error(design, 500, 500, scale, 10, np.random.default_rng(0))
    assert joint < union
    assert abs(joint - measured) < abs(union - measured)
    assert abs(joint - measured) < 0.006 + 3 * se
