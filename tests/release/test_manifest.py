"""The manifest (one entry per table, certified risks) and SHA256SUMS."""

import shutil
import subprocess

import pytest

from lbm_bench.release import load_release


def test_manifest_entries(built):
    manifest = load_release(built)
    entry = manifest["tables"][0]
    for key in ("id", "kind", "shape", "clusters", "target_risk", "risk", "risk_mcse",
                "acceptance_rate", "file", "size", "sha256"):
        assert key in entry
    for entry in manifest["tables"]:
        assert abs(entry["risk"] - entry["target_risk"]) <= 0.03
    sums = (built / "SHA256SUMS").read_text().splitlines()
    assert len(sums) == 15  # 5 tables, manifest, README, tables.csv, croissant.json, 5 thumbnails, index.html


def test_sha256sums_is_coreutils_format(built):
    if shutil.which("sha256sum") is None:
        pytest.skip("sha256sum not installed")
    result = subprocess.run(["sha256sum", "-c", "--quiet", "SHA256SUMS"], cwd=built, capture_output=True)
    assert result.returncode == 0, result.stdout + result.stderr
