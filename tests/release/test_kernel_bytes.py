"""The same bytes whichever kernel sums the sparse tables (issue 46): a small release of every
family and storage (dense tables of the four families; sparse Bernoulli and Poisson tables,
with row and column effects, with entries missing at random and by block) built with scipy's
kernel, with the compiled one (``kernel="compiled"``: whatever the tables' size, in this process
and in the workers of ``--jobs 2``, where the choice travels with the tasks), and in a process
where numba does not import, and with the compiled kernel at numpy's and OpenBLAS's lower
dispatch levels (tests/cpu_levels.py): the same ``SHA256SUMS``, file for file. A large sparse
table, whose chains and MAP starts run as tasks, is compared alike."""

import subprocess
import sys

import numpy as np
import pytest

from lbm_bench.inference import kernels
from lbm_bench.inference.compiled_sums import CompiledStatistics
from lbm_bench.release import build_release, compare_releases
from tests.cpu_levels import REPO, available_levels, run_at_level

#: Skipped without numba, except in CI (CI=true), where the skip fails the run (tests/conftest.py).
pytestmark = pytest.mark.numba


@pytest.fixture(autouse=True)
def _numba_installed():
    pytest.importorskip("numba", reason="numba is not installed (pip install 'lbm-bench[fast]')")

KERNEL_SPEC = """
[release]
name = "kernels"
version = "0.1"
seed = 46

[defaults]
tolerance = 0.03
n_samples = 200
n_chains = 4
burn_in = 10
screen_samples = 40
n_calibration_tables = 12
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
kinds = ["bernoulli", "poisson"]
shapes = ["150x90"]
clusters = ["2x2"]
risks = [0.1]
model_options = { density = 0.1 }

[[grid]]
kinds = ["poisson"]
shapes = ["160x90"]
clusters = ["2x2"]
risks = [0.1]
model_options = { density = 0.1, effects = true }

[[grid]]
kinds = ["bernoulli"]
shapes = ["170x90"]
clusters = ["2x2"]
risks = [0.1]
model_options = { density = 0.1, missing = 0.05 }

[[grid]]
kinds = ["poisson"]
shapes = ["180x90"]
clusters = ["2x2"]
risks = [0.1]
model_options = { density = 0.1, missing = 0.05, missing_mechanism = "block" }
"""

#: A table from which the chains and the MAP's starts run as tasks (``is_large``).
LARGE_SPEC = """
[release]
name = "large-kernels"
version = "0.1"
seed = 46

[defaults]
tolerance = 0.03
n_samples = 200
n_chains = 4
burn_in = 10
screen_samples = 40
n_calibration_tables = 4
n_init = 3

[[grid]]
kinds = ["bernoulli"]
shapes = ["4200x1000"]
clusters = ["2x2"]
risks = [0.1]
model_options = { density = 0.004 }
"""

#: The build of a release in a process where ``import numba`` fails.
_WITHOUT_NUMBA = """
import sys
sys.modules["numba"] = None  # import numba: ImportError
from lbm_bench.cli import main
from lbm_bench.inference.kernel_choice import use_compiled
assert not use_compiled(10**9)
sys.exit(main(["build", sys.argv[1], "--out", sys.argv[2], "-q"] + sys.argv[3:]))
"""


def _build(folder, spec, name, **options):
    out = folder / name
    report = build_release(folder / spec, out, **options)
    assert report.ok, report.summary()
    return out


@pytest.fixture(scope="module")
def specs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("kernels")
    (folder / "kernels.toml").write_text(KERNEL_SPEC)
    (folder / "large.toml").write_text(LARGE_SPEC)
    return folder


@pytest.fixture(scope="module")
def with_scipy(specs):
    return _build(specs, "kernels.toml", "scipy", kernel="scipy")


def test_the_compiled_kernel_builds_the_same_release(specs, with_scipy, monkeypatch):
    built = []

    class Counted(CompiledStatistics):
        def __init__(self, *args):
            super().__init__(*args)
            built.append(self.shape)

    monkeypatch.setattr(kernels, "CompiledStatistics", Counted)
    mine = _build(specs, "kernels.toml", "compiled", kernel="compiled")
    assert compare_releases(mine, with_scipy) == []
    assert {shape[1] for shape in built} == {150, 160, 170, 180}  # the sparse tables, all
    assert len(built) > 10


def test_the_compiled_kernel_in_the_workers_builds_the_same_release(specs, with_scipy):
    mine = _build(specs, "kernels.toml", "compiled-j2", kernel="compiled", n_jobs=2)
    assert compare_releases(mine, with_scipy) == []


def test_without_numba_the_same_release(specs, with_scipy):
    out = specs / "no-numba"
    done = subprocess.run([sys.executable, "-c", _WITHOUT_NUMBA, str(specs / "kernels.toml"),
                           str(out)], cwd=REPO, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert compare_releases(out, with_scipy) == []
    refused = subprocess.run([sys.executable, "-c", _WITHOUT_NUMBA, str(specs / "kernels.toml"),
                              str(specs / "refused"), "--kernel", "compiled"], cwd=REPO,
                             capture_output=True, text=True, timeout=600)
    assert refused.returncode == 2
    assert refused.stderr.strip().startswith("lbm-bench build: error: --kernel compiled needs "
                                             "numba (pip install 'lbm-bench[fast]')")


def test_a_large_table_s_tasks_carry_the_kernel(specs):
    """Its chains and MAP starts as tasks of two workers, compiled there; scipy's in one
    process: the same file."""
    scipy_release = _build(specs, "large.toml", "large-scipy", kernel="scipy")
    compiled_release = _build(specs, "large.toml", "large-compiled", kernel="compiled", n_jobs=2)
    assert compare_releases(compiled_release, scipy_release) == []
    assert np.any([p.suffix == ".h5" for p in (scipy_release / "tables").iterdir()])


@pytest.mark.parametrize("level", available_levels())
def test_the_compiled_kernel_at_another_dispatch_level_builds_the_same_release(specs, with_scipy, level):
    out = specs / f"compiled-{level}"
    code = ("import json\nfrom lbm_bench.cli import main\n"
            f"print(json.dumps(main(['build', {str(specs / 'kernels.toml')!r}, '--out', {str(out)!r}, '-q', "
            "'--kernel', 'compiled'])))")
    assert run_at_level(level, code) == 0
    assert compare_releases(out, with_scipy) == []
