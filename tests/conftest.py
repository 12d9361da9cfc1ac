"""Configuration of the whole test session.

Fixtures shared across test folders: the committed sample release built once per session,
by the command the docs print (``lbm-bench build repository/mini.toml --out mini-release
--jobs 2 --timings``, about 10 s on 2 cores), in the work folder of scripts/checks/docs_numbers.py,
so that the check of the docs' numbers reuses it and the rebuild test reads it.

Tests that run a real client (headless Chromium, R with hdf5r and Matrix, h5dump...:
marker ``real_client``), the sparsebm package (marker ``sparsebm``) or numba (the compiled
kernel, marker ``numba``) skip themselves when it is missing, so that the suite runs
anywhere. In CI (environment ``CI=true``, which ``.ci/run`` sets) such a skip fails the
test instead: CI installs them, and a path that silently stopped being tested would
otherwise pass unnoticed.
"""

import importlib.util
import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

#: Markers of the tests that CI must run: a skip of one of them fails under CI=true.
REQUIRED_IN_CI = ("real_client", "sparsebm", "numba")


def _docs_numbers():
    script = REPO / "scripts" / "checks" / "docs_numbers.py"
    spec = importlib.util.spec_from_file_location("_docs_numbers_fixture", script)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def mini_docs_workdir(tmp_path_factory):
    """A work folder of scripts/checks/docs_numbers.py holding ``mini-release/``, built by the docs' command."""
    module = _docs_numbers()
    folder = tmp_path_factory.mktemp("docs-numbers")
    module.Workdir(folder).fixture(module.MINI)
    return folder


@pytest.fixture(scope="session")
def mini_release(mini_docs_workdir):
    """The sample release of ``repository/mini.toml``."""
    return mini_docs_workdir / "mini-release"


def in_ci() -> bool:
    """True when the environment says this is a CI run (``CI=true``, as most CI services set)."""
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


def _skip_reason(report: pytest.TestReport) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:  # (file, line, "Skipped: reason")
        return str(longrepr[2]).removeprefix("Skipped: ")
    return str(longrepr)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    outcome = yield
    report = outcome.get_result()
    if not (report.skipped and in_ci()) or hasattr(report, "wasxfail"):
        return
    required = [name for name in REQUIRED_IN_CI if item.get_closest_marker(name) is not None]
    if required:
        report.outcome = "failed"
        report.longrepr = (f"CI=true: this {required[0]} test must run in CI, but it was skipped: "
                           f"{_skip_reason(report)}")
