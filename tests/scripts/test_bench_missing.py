"""scripts/benchmarks/bench_missing.py --quick: a complete and an incomplete 120x80 table side
by side, with the mask's bytes per entry (one in memory, less on disk)."""

import re

from tests.scripts.helpers import run_script


def test_quick():
    out = run_script("benchmarks", "bench_missing", "--quick", "--seeds", "3").stdout
    lines = out.splitlines()
    assert lines[0].startswith("gaussian 120x80 3x3 at 0.1: complete against 30% missing (random)")
    rows = [line for line in lines if line.startswith("| 3 |")]
    assert len(rows) == 3 and "| 3 | ratio |" in rows[2]
    cells = [c.strip() for c in rows[1].split("|")[1:-1]]
    assert cells[1] == "30%" and float(cells[10]) == 1.0 and 0 < float(cells[11]) < 0.5
    assert re.search(r"ratio \(missing / complete\) over the seeds: time [\d.]+x \(summed\), CPU [\d.]+x "
                     r"\(summed\), peak RSS [\d.]+x", out)
