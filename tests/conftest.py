"""Fixtures shared across test folders: the committed sample release, built once per session
(``repository/mini.toml``, about 10 s on 2 cores): the rebuild test and the check of the
numbers quoted in the docs both read it."""

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def mini_release(tmp_path_factory):
    """``lbm-bench build repository/mini.toml --out mini-release --jobs 2``, in a temporary folder."""
    from lbm_bench.release import build_release

    out = tmp_path_factory.mktemp("mini") / "mini-release"
    report = build_release(REPO / "repository" / "mini.toml", out, n_jobs=2)
    assert report.ok, report.summary()
    return out
