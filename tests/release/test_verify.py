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


def _damage_tables(copy):
    """Damage the tiny release's tables in every way verify tells apart: an attribute the
    manifest also records (a valid file of another seed), items removed (several format
    problems), a truncated file (not HDF5 any more), a risk edited (the manifest's and the
    re-derived risk disagree), a missing file, and a stray table outside the manifest."""
    import h5py

    tables = sorted((copy / "tables").glob("*.h5"))
    assert len(tables) >= 5
    with h5py.File(tables[0], "a") as f:
        f.attrs["seed"] = f.attrs["seed"] + 1
    with h5py.File(tables[1], "a") as f:
        del f["bayes/rows"]
        del f.attrs["risk"]
    data = tables[2].read_bytes()
    tables[2].write_bytes(data[: len(data) // 2])
    with h5py.File(tables[3], "a") as f:
        f.attrs["risk"] = f.attrs["risk"] + 0.01
    shutil.copy(tables[4], copy / "tables" / "stray.h5")
    tables[4].unlink()


def _problems_read_three_times(out):
    """The checks of verify up to the tables', each table read as it was before verify read
    it once: check_file, then read_info, then load_table (the reference of its messages)."""
    from lbm_bench._validation import describe_value
    from lbm_bench.release._files import sha256_file
    from lbm_bench.release.manifest import read_manifest
    from lbm_bench.release.verify import _floor_manifest_problems, _missing_manifest_problems, rederived_risk_problems
    from lbm_bench.storage import check_file, load_table, read_info

    manifest = read_manifest(out)
    listed = dict(reversed(line.split("  ", 1)) for line in (out / "SHA256SUMS").read_text().splitlines())
    problems = []
    for name, digest in sorted(listed.items()):
        if not (out / name).is_file():
            problems.append(f"{name}: missing")
        elif sha256_file(out / name) != digest:
            problems.append(f"{name}: SHA-256 mismatch")
    for entry in manifest["tables"]:
        file, path = entry["file"], out / entry["file"]
        if not path.is_file():
            problems += [] if file in listed else [f"{file}: missing"]
            continue
        problems += [] if file in listed else [f"{file}: not listed in SHA256SUMS"]
        if path.stat().st_size != entry["size"]:
            problems.append(f"{file}: size {path.stat().st_size} differs from the manifest's {entry['size']}")
        if sha256_file(path) != entry["sha256"]:
            problems.append(f"{file}: SHA-256 differs from the manifest")
        file_problems = check_file(path)
        problems += [f"{file}: {p}" for p in file_problems]
        if file_problems:
            continue
        info = read_info(path)
        for key in ("kind", "seed"):
            if info.get(key) != entry[key]:
                problems.append(f"{file}: {key} {describe_value(info.get(key))} differs from the manifest's "
                                f"{describe_value(entry[key])}")
        if [int(info["n_rows"]), int(info["n_cols"])] != entry["shape"]:
            problems.append(f"{file}: shape differs from the manifest")
        if abs(float(info["risk"]) - entry["risk"]) > 1e-12:
            problems.append(f"{file}: risk differs from the manifest")
        problems += [f"{file}: {p}" for p in _floor_manifest_problems(info, entry)]
        problems += [f"{file}: {p}" for p in _missing_manifest_problems(info, entry)]
        problems += [f"{file}: {p}" for p in rederived_risk_problems(load_table(path))]
    return problems


def test_verify_reads_each_table_once_with_the_same_problems(built, tmp_path):
    """Each table's file is read once (its checks, its table and its attributes together);
    the problems are the lines, in the order, that check_file, read_info and load_table give."""
    copy = tmp_path / "copy"
    shutil.copytree(built, copy)
    _damage_tables(copy)
    expected = _problems_read_three_times(copy)
    problems = verify_release(copy)
    assert problems[: len(expected)] == expected
    names = sorted(p.name for p in (built / "tables").glob("*.h5"))
    for name, what in ((names[0], "seed"), (names[1], "bayes/rows"), (names[1], "risk"),
                       (names[2], "not a readable HDF5 file"), (names[3], "@risk")):
        assert any(p.startswith(f"tables/{name}: ") and what in p for p in expected), (name, what, expected)
    assert f"tables/{names[4]}: missing" in expected
    assert "tables/stray.h5: not in the manifest" in problems[len(expected):]


def test_verify_gives_the_same_problems_whatever_the_jobs(built, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(built, copy)
    _damage_tables(copy)
    problems = verify_release(copy)
    assert len(problems) > 8
    assert verify_release(copy, jobs=2) == problems
    assert verify_release(built, jobs=2) == []


@pytest.mark.parametrize("jobs, error", [(0, ValueError), (-1, ValueError), (1.5, TypeError), (True, TypeError),
                                         ("2", TypeError)])
def test_verify_refuses_a_bad_number_of_jobs(built, jobs, error):
    with pytest.raises(error, match="jobs"):
        verify_release(built, jobs=jobs)


def test_the_verify_command_prints_the_same_problems_whatever_the_jobs(built, tmp_path, capsys):
    from lbm_bench.cli import main

    copy = tmp_path / "copy"
    shutil.copytree(built, copy)
    _damage_tables(copy)
    outputs = []
    for jobs in ("1", "2"):
        assert main(["verify", str(copy), "--jobs", jobs]) == 1
        outputs.append(capsys.readouterr())
    assert outputs[0] == outputs[1]
    assert outputs[0].out.splitlines() == [f"PROBLEM {p}" for p in verify_release(copy)]
    assert main(["verify", str(built), "--jobs", "2"]) == 0
    assert capsys.readouterr().out.startswith("OK: 5 table(s)")
