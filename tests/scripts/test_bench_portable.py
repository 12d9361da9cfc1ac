"""scripts/benchmarks/bench_portable.py: the portable functions against numpy's (--quick), their
bits at the emulated dispatch levels (--dispatch --quick), generate_table against HEAD."""

import shutil

import pytest

from tests.cpu_levels import available_levels
from tests.scripts.helpers import ROOT, run_script


def test_quick_timings():
    lines = run_script("benchmarks", "bench_portable", "--quick", "--repeats", "1").stdout.splitlines()
    assert lines[1].split() == ["function", "size", "numpy", "us", "portable", "us", "ratio"]
    rows = [line.split() for line in lines[3:]]
    assert [(r[0], r[1]) for r in rows] == [(f, s) for f in ("exp", "log", "log1p", "expm1", "tanh", "power")
                                            for s in ("6", "4096")]
    assert all(float(r[4]) > 0 for r in rows)


@pytest.mark.skipif(not available_levels(), reason="emulates x86-64 dispatch levels")
def test_dispatch_portable_never_differs():
    lines = run_script("benchmarks", "bench_portable", "--dispatch", "--quick").stdout.splitlines()
    levels = [*available_levels(), "no-fma"]
    assert lines[1].split() == ["function", *levels]
    for line in lines[2:]:
        cells = line.split()  # per level: numpy's / _portable's / math's
        assert [cells[k] for k in range(3, len(cells), 5)] == ["0.00%"] * len(levels), line


def test_against_head():
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs a git checkout")
    lines = run_script("benchmarks", "bench_portable", "--against", "HEAD", "--quick", "--repeats", "1").stdout
    lines = lines.splitlines()
    assert lines[3].startswith("poisson sparse effects") and lines[4].startswith("gaussian")
    assert lines[3].split()[-2:] == ["same", "same"] and lines[4].split()[-2:] == ["same", "same"]
    assert lines[5].startswith("all tables")
