"""Verification of a release (lbm_bench.release.verify): corrupted, missing and mismatched files are reported."""

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


def _rewrite_consistently(copy, table_file, edit_file, edit_entry=None):
    """Edit one table file (and its manifest entry), then rewrite the manifest's size and
    SHA-256, tables.csv, croissant.json, README.md and SHA256SUMS to match: only what
    verify re-derives from the file can catch the edit."""
    import hashlib

    import h5py

    from lbm_bench.release.croissant import write_croissant
    from lbm_bench.release.manifest import write_checksums
    from lbm_bench.release.readme import write_readme

    path = copy / table_file
    with h5py.File(path, "a") as f:
        edit_file(f)
    manifest = json.loads((copy / "manifest.json").read_text())
    entry = next(e for e in manifest["tables"] if e["file"] == table_file)
    entry.update(size=path.stat().st_size, sha256=hashlib.sha256(path.read_bytes()).hexdigest())
    if edit_entry:
        edit_entry(entry)
    (copy / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    names = ["spec.toml", "manifest.json", write_readme(manifest, copy), *write_croissant(manifest, copy),
             "index.html"]
    names += [p.relative_to(copy).as_posix() for p in sorted((copy / "thumbnails").glob("*.png"))]
    write_checksums(copy, manifest, names)


def test_verify_catches_a_floor_that_disagrees_with_the_manifest(built, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(built, copy)
    manifest = json.loads((copy / "manifest.json").read_text())
    entry = manifest["tables"][0]
    entry["bayes_risk"] += 0.01
    entry["criterion"] = "map"
    (copy / "manifest.json").write_text(json.dumps(manifest))
    problems = verify_release(copy)
    assert f"{entry['file']}: floor (bayes_risk) differs from the manifest" in problems
    assert f"{entry['file']}: criterion 'bayes' differs from the manifest's 'map'" in problems
    del manifest["tables"][1]["bayes_risk_mcse"]
    (copy / "manifest.json").write_text(json.dumps(manifest))
    assert (f"{manifest['tables'][1]['file']}: bayes_risk_mcse missing from the manifest (the file holds the floor)"
            in verify_release(copy))


def test_verify_rederives_a_tampered_floor_from_the_label_sets(built, tmp_path):
    """@bayes_risk edited in the file, with the manifest, its digests and SHA256SUMS
    rewritten to match: the floor re-derived from the stored Gibbs sets differs."""
    copy = tmp_path / "copy"
    shutil.copytree(built, copy)
    manifest = json.loads((copy / "manifest.json").read_text())
    table_file = manifest["tables"][0]["file"]
    tampered = manifest["tables"][0]["bayes_risk"] - 0.02

    def edit(f):
        f.attrs["bayes_risk"] = tampered

    _rewrite_consistently(copy, table_file, edit, lambda e: e.update(bayes_risk=tampered))
    problems = verify_release(copy)
    assert len(problems) == 1, problems
    assert problems[0].startswith(f"{table_file}: @bayes_risk {tampered!r} differs from the floor re-derived")


def test_verify_rederives_the_map_risk_and_the_bayes_labels(built, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(built, copy)
    manifest = json.loads((copy / "manifest.json").read_text())
    table_file = manifest["tables"][1]["file"]

    def edit(f):
        f.attrs["row_loss"] = f.attrs["row_loss"] + 0.01
        rows = f["bayes/rows"][()]
        rows[0] = (rows[0] + 1) % (rows.max() + 1)
        f["bayes/rows"][...] = rows

    _rewrite_consistently(copy, table_file, edit)
    problems = verify_release(copy)
    assert any(p.startswith(f"{table_file}: @row_loss ") and "the MAP labels' risk re-derived" in p
               for p in problems), problems
    assert f"{table_file}: bayes/rows differs from the Bayes labels re-derived from the label sets" in problems


@pytest.mark.parametrize("damage, message", [
    (lambda m: m.pop("tables"), "'tables' is missing, not a list"),
    (lambda m: m.update(tables={"a": 1}), "'tables' is dict {\"a\": 1}, not a list"),
    (lambda m: m["tables"].__setitem__(0, 3), "tables[0] is int 3, not an object"),
    (lambda m: m["tables"][1].pop("sha256"), "tables[1].sha256 is missing, not a string"),
    (lambda m: m["tables"][0].update(seed=True), "tables[0].seed is bool true, not an integer"),
    (lambda m: m["tables"][0].update(risk="0.1"), "tables[0].risk is str \"0.1\", not a number"),
])
def test_a_damaged_manifest_is_named_not_a_key_error(built, tmp_path, damage, message):
    """A manifest.json whose fields are missing or of another JSON type is refused with a
    ValueError naming the field (a fuzz case found ``KeyError: 'tables'`` escaping verify)."""
    copy = tmp_path / "copy"
    shutil.copytree(built, copy)
    manifest = json.loads((copy / "manifest.json").read_text())
    damage(manifest)
    (copy / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(ValueError, match="manifest") as caught:
        verify_release(copy)
    assert message in str(caught.value)
