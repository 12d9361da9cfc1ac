"""scripts/benchmarks/bench_kmeans.py at a tiny size: our k-means against scipy's (and
scikit-learn's when installed) on both sides of one table per family."""

from tests.scripts.helpers import run_script


def test_tiny_sizes():
    out = run_script("benchmarks", "bench_kmeans", "--sizes", "30", "--repeat", "1", "--scipy-iters", "10").stdout
    lines = out.splitlines()
    for kind in ("gaussian", "bernoulli"):
        for side in ("rows", "cols"):
            assert any(line.startswith(f"{kind} 30x30 {side} |") for line in lines), out
    assert any(line.startswith("scipy10: time / ours geometric mean") for line in lines)
