"""The manifest (lbm_bench.release.manifest: one entry per table, certified risks) and SHA256SUMS."""

import shutil
import subprocess

import pytest

from lbm_bench.release import load_release


def test_manifest_entries(built):
    manifest = load_release(built)
    entry = manifest["tables"][0]
    for key in ("id", "kind", "shape", "clusters", "target_risk", "risk", "risk_mcse",
                "acceptance_rate", "file", "size", "sha256", "criterion", "bayes_risk", "bayes_risk_mcse"):
        assert key in entry
    for entry in manifest["tables"]:
        certified = entry["bayes_risk"] if entry["criterion"] == "bayes" else entry["risk"]
        assert abs(certified - entry["target_risk"]) <= 0.03
        assert entry["bayes_risk"] <= entry["risk"] + 3 * entry["bayes_risk_mcse"]
    sums = (built / "SHA256SUMS").read_text().splitlines()
    assert len(sums) == 16  # 5 tables, spec.toml, manifest, README, tables.csv, croissant.json, 5 thumbnails,
    # index.html


@pytest.mark.real_client
def test_sha256sums_is_coreutils_format(built):
    if shutil.which("sha256sum") is None:
        pytest.skip("sha256sum not installed")
    result = subprocess.run(["sha256sum", "-c", "--quiet", "SHA256SUMS"], cwd=built, capture_output=True)
    assert result.returncode == 0, result.stdout + result.stderr
