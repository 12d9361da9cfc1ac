"""scripts/benchmarks/bench_evaluate.py at a tiny shape: info and evaluate of the working tree
against HEAD (git archive), with a floor, at --jobs 2: the same reports."""

from tests.scripts.helpers import run_script


def test_tiny_table_against_head(tmp_path):
    out = run_script("benchmarks", "bench_evaluate", "--shape", "300x200", "--density", "0.05", "--samples", "16",
                     "--floor", "--against", "HEAD", "--jobs", "2", "--keep", tmp_path / "t.h5").stdout
    lines = {line.split()[0] + " " + " ".join(line.split()[1:3]): line for line in out.splitlines()}
    assert "floor yes" in out and "floor stored" in out, out
    for name in ("info", "evaluate --jobs 2"):
        row = next(line for key, line in lines.items() if key.startswith(name + " ") or key == name)
        assert row.endswith("same report"), out
