"""A release of sparse tables: spec keys density and effects, build, verify, benchmark."""

import json

import pytest
import scipy.sparse as sp

from lbm_bench.release import build_release, load_release_table, verify_release
from lbm_bench.scoring.benchmark import run_benchmark
from lbm_bench.storage import read_info

SPARSE_SPEC = """
[release]
name = "tiny-sparse"
version = "0.1"
seed = 11

[defaults]
tolerance = 0.05
n_samples = 200
n_chains = 4
burn_in = 10
screen_samples = 0
n_calibration_tables = 10
n_init = 3

[[grid]]
kinds = ["bernoulli"]
shapes = ["80x60"]
clusters = ["2x2"]
risks = [0.1]
model_options = { density = 0.1 }

[[grid]]
kinds = ["poisson"]
shapes = ["80x60"]
clusters = ["2x2"]
risks = [0.1]
model_options = { density = 0.1, effects = true, effects_spread = 0.2 }
"""


@pytest.mark.slow
def test_sparse_release_builds_verifies_and_benchmarks(tmp_path):
    spec = tmp_path / "sparse.toml"
    spec.write_text(SPARSE_SPEC, encoding="utf-8")
    out = tmp_path / "release"
    report = build_release(spec, out)
    assert report.ok, report.summary()
    assert verify_release(out) == []
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    for entry in manifest["tables"]:
        info = read_info(out / entry["file"])
        assert info["sparse"] and info["format_version"] == "1.4"  # a sparse design: its density (1.4)
        table = load_release_table(out, entry["id"])
        assert isinstance(table.data, sp.csr_array) and table.data.nnz < 0.3 * 80 * 60
        if entry["kind"] == "poisson":
            assert table.model.row_effects is not None and table.model.row_effects.shape == (80,)
    names = ["cem", "vem", "double-kmeans"]
    try:
        import sparsebm  # noqa: F401

        names.append("sparsebm")
    except ImportError:
        pass
    rows = run_benchmark(out, names, tmp_path / "results")
    by_run = {(r["algorithm"], r["kind"]): r for r in rows}
    for name in ("cem", "vem", "double-kmeans"):
        for kind in ("bernoulli", "poisson"):
            assert not by_run[name, kind]["error"], by_run[name, kind]
    if "sparsebm" in names:
        assert not by_run["sparsebm", "bernoulli"]["error"]
        assert "sparsebm fits Bernoulli (0/1) tables only" in by_run["sparsebm", "poisson"]["error"]
