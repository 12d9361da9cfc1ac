"""scripts/benchmarks/bench_effects.py on a small table: both packages (HEAD and the working
tree), the CPU table, the same table and MAP labels."""

import re

from tests.scripts.helpers import run_script


def test_small_table_against_head_gives_the_same_bytes():
    out = run_script("benchmarks", "bench_effects", "--against", "HEAD", "--shape", "3000x800",
                     "--repeat", "1").stdout
    assert re.search(r"3000x800, 3x3 clusters, density 0\.01, scale 0\.3: [\d,]+ stored entries", out)
    for label in ("draw \\(noise, table twice\\)", "MAP \\(10 random starts\\)"):
        assert re.search(rf"\| {label} \| [\d.]+ \| [\d.]+ \| [\d.]+ \|", out), out
    assert "same table (CSR arrays) in every run and both packages: yes" in out
    assert "same MAP labels in every run and both packages: yes" in out


def test_bad_arguments_are_refused():
    done = run_script("benchmarks", "bench_effects", "--shape", "3000", check=False)
    assert done.returncode == 2 and "expected AxB" in done.stderr
    done = run_script("benchmarks", "bench_effects", "--density", "0", check=False)
    assert done.returncode == 2 and "--density takes a value in (0, 1], got 0.0" in done.stderr
