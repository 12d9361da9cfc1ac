"""Loading a release (lbm_bench.release.load): the manifest and a table by id."""

import pytest

from lbm_bench.release import load_release, load_release_table


def test_load_release_table(built):
    manifest = load_release(built)
    for entry in manifest["tables"]:
        table = load_release_table(built, entry["id"])
        assert table.shape == tuple(entry["shape"])


def test_load_errors(built, tmp_path):
    with pytest.raises(ValueError, match="no table 'nope'"):
        load_release_table(built, "nope")
    (tmp_path / "manifest.json").write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        load_release(tmp_path)
