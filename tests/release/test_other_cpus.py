"""A release rebuilt on another CPU is the same, byte for byte (issue 35; docs/releases.md,
"The same bytes on another CPU").

A small release with every family and storage (Gaussian, Poisson, Bernoulli and
categorical blocks, a sparse Poisson table with effects and entries missing by block, a
Gaussian table with entries missing at random) is built here, then rebuilt from its
``spec.toml`` with numpy's AVX2 loops and OpenBLAS's Haswell kernels, as on a CPU without
AVX-512, and with numpy's baseline loops and OpenBLAS's Nehalem kernels
(tests/cpu_levels.py): the same ``SHA256SUMS``. At d94874f three of its six tables
differed at the AVX2 level (with ``n_samples = 120``, before certifying runs needed 200 sets).
"""

import hashlib
import shutil

import h5py
import numpy as np
import pytest

from lbm_bench.cli import main
from lbm_bench.release import build_release, compare_releases
from tests.cpu_levels import available_levels, run_at_level

VARIED_SPEC = """
[release]
name = "varied"
version = "0.1"
seed = 35

[defaults]
tolerance = 0.03
n_samples = 200
n_chains = 4
burn_in = 10
screen_samples = 40
n_calibration_tables = 20
n_init = 3

[[grid]]
kinds = ["gaussian", "poisson", "bernoulli"]
shapes = ["30x20"]
clusters = ["2x2"]
risks = [0.1]

[[grid]]
kinds = ["categorical"]
shapes = ["30x20"]
clusters = ["2x2"]
risks = [0.1]
model_options = { categories = 3 }

[[grid]]
kinds = ["poisson"]
shapes = ["120x80"]
clusters = ["2x2"]
risks = [0.1]
model_options = { density = 0.1, effects = true, missing = 0.05, missing_mechanism = "block" }

[[grid]]
kinds = ["gaussian"]
shapes = ["30x20"]
clusters = ["2x2"]
risks = [0.1]
model_options = { missing = 0.1 }
"""


@pytest.fixture(scope="module")
def varied(tmp_path_factory):
    folder = tmp_path_factory.mktemp("varied")
    (folder / "varied.toml").write_text(VARIED_SPEC)
    report = build_release(folder / "varied.toml", folder / "release", n_jobs=1)
    assert report.ok, report.summary()
    return folder / "release"


@pytest.mark.parametrize("level", available_levels())
def test_rebuilt_at_another_dispatch_level_with_the_same_bytes(varied, tmp_path, level):
    out = tmp_path / "rebuilt"
    code = ("import json\nfrom lbm_bench.cli import main\n"
            f"print(json.dumps(main(['build', {str(varied / 'spec.toml')!r}, '--out', {str(out)!r}, '-q'])))")
    assert run_at_level(level, code) == 0
    assert compare_releases(out, varied) == []


def test_verify_against_tells_rounding_from_another_table(varied, tmp_path, capsys):
    """Where the bytes cannot be the same (a C library that rounds differently, docs/releases.md),
    ``verify --against`` says which tables are the same up to rounding and which are other tables."""
    copy = tmp_path / "copy"
    shutil.copytree(varied, copy)
    rounded, other = "tables/gaussian-30x20-2x2-r0.1-01.h5", "tables/poisson-30x20-2x2-r0.1-01.h5"
    with h5py.File(copy / rounded, "r+") as f:  # the scale and the block means an ulp away
        f.attrs["scale"] = np.nextafter(f.attrs["scale"], np.inf)
        f["params/means"][...] = np.nextafter(f["params/means"][()], np.inf)
    with h5py.File(copy / other, "r+") as f:  # a label moved
        f["map/rows"][0] = 1 - f["map/rows"][0]
    sums = (copy / "SHA256SUMS").read_text().splitlines()
    sums = [f"{hashlib.sha256((copy / name).read_bytes()).hexdigest()}  {name}" if name in (rounded, other) else line
            for line in sums for name in [line.partition("  ")[2]]]
    (copy / "SHA256SUMS").write_text("\n".join(sums) + "\n")
    differences = compare_releases(copy, varied)
    assert f"{rounded}: SHA-256 differs from {varied}'s: the same table up to rounding: " in "\n".join(differences)
    assert f"{other}: SHA-256 differs from {varied}'s: another table: map/rows differ" in differences
    capsys.readouterr()
    assert main(["verify", str(copy), "--against", str(varied)]) == 1
    out = capsys.readouterr().out
    assert f"DIFFERS {rounded}: SHA-256 differs from {varied}'s: the same table up to rounding" in out
