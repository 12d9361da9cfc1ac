"""scripts/benchmarks/bench_million_phases.py on a tiny sparse table: the phases' peak RSS of
the command's process and its workers, the sum and the bytes per stored entry, and the file."""

import re

import pytest

from tests.scripts.helpers import run_script


def test_tiny_table_phases(tmp_path):
    pytest.importorskip("psutil")
    out = run_script("benchmarks", "bench_million_phases", "120x80", "0.3", "2", tmp_path / "t.h5").stdout
    assert re.search(r"bernoulli 120x80 density 0\.3 jobs 2: nnz [\d,]+ wall \d+s timings \{\"calibration\"", out), out
    rows = {line.split()[0]: line.split()[1:] for line in out.splitlines()[2:-1]}
    assert "calibration" in rows, out  # the other phases of so small a table may fall between two polls
    for name, values in rows.items():  # sum >= parent and >= every worker
        total, parent, worker = (float(v) for v in values[:3])
        assert total >= parent > 0.05 and total >= worker, (name, out)
    assert int(rows["calibration"][-1]) >= 1, out  # the calibration's workers were seen
    assert re.search(r"peak sum [\d.]+ GiB = [\d.]+ B/nnz", out.splitlines()[-1]), out
    assert (tmp_path / "t.h5").stat().st_size > 0
