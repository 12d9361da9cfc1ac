"""scripts/benchmarks/bench_kernel.py on tiny tables: both kernels side by side, the same values,
and the compiled kernel's one-off costs."""

import json
import re

import pytest

from tests.scripts.helpers import run_script


@pytest.mark.numba
def test_quick_run_compares_both_kernels(tmp_path):
    pytest.importorskip("numba", reason="numba is not installed (pip install 'lbm-bench[fast]')")
    out = run_script("benchmarks", "bench_kernel", "--quick", "--json", tmp_path / "rows.json").stdout
    assert re.search(r"compiled kernel, once per process: import numba [\d.]+ s; compiling its loops into an "
                     r"empty cache [\d.]+ s; in the next process, import [\d.]+ s and loading them from the cache", out)
    for kind in ("bernoulli", "poisson"):
        assert f"{kind} 2000x500 3x3 @0.05: " in out
    for part in ("rows product", "cols product", "both products", "index updates", "start scores", "Gibbs run",
                 "MAP"):
        assert len(re.findall(rf"^\| {part} \| [^|]+ \| [\d.]+ \| [\d.]+ \| [\d.]+ \| yes \|$", out, re.M)) == 2
    rows = json.loads((tmp_path / "rows.json").read_text())
    assert len(rows["tables"]) == 2 and all(all(row["same"].values()) for row in rows["tables"])
    assert set(rows["compile"]) == {"cold", "warm"}


@pytest.mark.numba
def test_threshold_run_times_generate_with_both_kernels():
    pytest.importorskip("numba", reason="numba is not installed (pip install 'lbm-bench[fast]')")
    out = run_script("benchmarks", "bench_kernel", "--threshold", "--quick").stdout
    rows = re.findall(r"^\| (\d+x\d+) \| [\d.]+ \| [\d,]+ \| [\d.]+ \| [\d.]+ \| [-+][\d.]+ \| yes \|$", out, re.M)
    assert rows == ["600x200", "1000x400"]
