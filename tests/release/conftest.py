"""Fixtures of the release tests: the tiny spec on disk and one build of it, shared by
every module of this folder (session scope: the tiny release is built once)."""

import pytest

from lbm_bench.release import build_release
from tests.release.helpers import TINY_SPEC


@pytest.fixture(scope="session")
def spec_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("spec") / "tiny.toml"
    path.write_text(TINY_SPEC)
    return path


@pytest.fixture(scope="session")
def built(spec_path, tmp_path_factory):
    out = tmp_path_factory.mktemp("release") / "tiny"
    report = build_release(spec_path, out, n_jobs=1)
    assert report.ok, report.summary()
    return out
