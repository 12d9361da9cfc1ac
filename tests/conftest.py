"""Fixtures shared across test folders: the committed sample release built once per session,
by the command the docs print (``lbm-bench build repository/mini.toml --out mini-release
--jobs 2 --timings``, about 10 s on 2 cores), in the work folder of scripts/checks/docs_numbers.py,
so that the check of the docs' numbers reuses it and the rebuild test reads it."""

import importlib.util
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


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
