"""Fixtures shared by the scoring tests."""

import pytest

from lbm_bench.release import build_release
from tests.release.helpers import TINY_SPEC


@pytest.fixture(scope="session")
def release(tmp_path_factory):
    """The tiny release of tests/release/helpers.py, built once for both benchmark tracks'
    tests (read only: results go to each test's own folder)."""
    folder = tmp_path_factory.mktemp("scoring-release")
    (folder / "tiny.toml").write_text(TINY_SPEC)
    report = build_release(folder / "tiny.toml", folder / "tiny")
    assert report.ok, report.summary()
    return folder / "tiny"
