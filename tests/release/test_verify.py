"""Verification of a release: corrupted, missing and mismatched files are reported."""

import json
import shutil

import pytest

from lbm_bench.release import verify_release


def test_verify_intact_release(built):
    assert verify_release(built) == []


def test_verify_catches_problems(built, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(built, copy)
    first = sorted((copy / "tables").glob("*.h5"))[0]
    data = bytearray(first.read_bytes())
    data[len(data) // 2] ^= 0xFF
    first.write_bytes(bytes(data))
    problems = verify_release(copy)
    assert any(first.name in p and "SHA-256" in p for p in problems)

    shutil.rmtree(copy)
    shutil.copytree(built, copy)
    victim = sorted((copy / "tables").glob("*.h5"))[1]
    victim.unlink()
    assert any(victim.name in p and "missing" in p for p in verify_release(copy))

    shutil.rmtree(copy)
    shutil.copytree(built, copy)
    manifest = json.loads((copy / "manifest.json").read_text())
    manifest["tables"][0]["risk"] += 0.01
    (copy / "manifest.json").write_text(json.dumps(manifest))
    problems = verify_release(copy)
    assert any("manifest.json" in p and "SHA-256" in p for p in problems)
    assert any("risk differs" in p for p in problems)


def test_verify_not_a_release(tmp_path):
    with pytest.raises(ValueError, match="no manifest.json"):
        verify_release(tmp_path)
