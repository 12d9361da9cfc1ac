"""A release is self-describing (issue 27, item 2): it carries its spec as spec.toml, byte for
byte, and the versions that built it; ``lbm-bench build RELEASE/spec.toml --out NEW`` (or the
release folder, or its manifest.json) rebuilds it, and ``verify NEW --against RELEASE``
compares the two."""

import json
import shutil
import sys

import pytest

from lbm_bench.cli import main
from lbm_bench.release import build_release, compare_releases, parse_spec, read_spec, spec_toml, verify_release
from lbm_bench.release.spec import tomllib
from tests.release.helpers import REPO, same_bytes


def test_the_release_carries_its_spec_and_versions(built, spec_path):
    assert (built / "spec.toml").read_bytes() == spec_path.read_bytes()
    manifest = json.loads((built / "manifest.json").read_text())
    assert manifest["spec_file"] == "spec.toml" and manifest["format_version"] == "1.2"
    assert set(manifest["built_with"]) == {"python", "numpy", "scipy", "h5py", "hdf5", "matplotlib"}
    import numpy

    assert manifest["built_with"]["numpy"] == numpy.__version__
    assert "spec.toml" in (built / "index.html").read_text()


@pytest.mark.parametrize("source", ["spec.toml", ".", "manifest.json"])
def test_rebuild_from_the_release_gives_the_same_bytes(built, tmp_path, capsys, source):
    """The printed command, and its variants (the folder, the manifest), rebuild the release
    byte for byte; verify --against says so."""
    out = tmp_path / "rebuilt"
    assert main(["build", str(built / source), "--out", str(out), "-q"]) == 0
    same_bytes(out, built)
    capsys.readouterr()
    assert main(["verify", str(out), "--against", str(built)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines == ["OK: 5 table(s), checksums, formats and manifest agree",
                     f"same bytes as {built}: 16 file(s), identical SHA256SUMS"]


def test_a_release_without_spec_toml_rebuilds_from_its_manifest(built, tmp_path):
    """A release built before releases carried their spec: build its manifest.json; the tables
    come out byte for byte, and the rebuild carries the recorded spec as TOML."""
    old = tmp_path / "old"
    shutil.copytree(built, old)
    (old / "spec.toml").unlink()
    spec = read_spec(old / "manifest.json")
    assert spec.source == json.loads((built / "manifest.json").read_text())["spec"]
    assert spec.text == spec_toml(spec.source)
    report = build_release(old / "manifest.json", tmp_path / "new")
    assert report.ok and report.built
    for entry in json.loads((built / "manifest.json").read_text())["tables"]:
        assert (tmp_path / "new" / entry["file"]).read_bytes() == (built / entry["file"]).read_bytes()
    assert (tmp_path / "new" / "spec.toml").read_text() == spec.text
    assert verify_release(tmp_path / "new") == []


def test_spec_toml_is_copied_byte_for_byte(tmp_path, spec_path):
    """Comments, spacing and line endings are kept: the file is copied, not re-written."""
    crlf = tmp_path / "crlf.toml"
    crlf.write_bytes(b"# a comment\r\n" + spec_path.read_bytes().replace(b"\n", b"\r\n"))
    spec = read_spec(crlf)
    assert spec.text.encode() == crlf.read_bytes() and spec.source == read_spec(spec_path).source
    from lbm_bench.release.release_files import write_spec_file

    write_spec_file(spec, tmp_path)
    assert (tmp_path / "spec.toml").read_bytes() == crlf.read_bytes()


@pytest.mark.parametrize("name", ["mini.toml", "paper.toml"])
def test_spec_toml_round_trips_the_committed_specs(name):
    source = read_spec(REPO / "repository" / name).source
    assert parse_spec(tomllib.loads(spec_toml(source))).source == source


def test_build_names_what_it_cannot_read(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="has neither spec.toml nor manifest.json"):
        read_spec(tmp_path / "empty")
    (tmp_path / "other.json").write_text('{"a": 1}')
    with pytest.raises(ValueError, match="is not a release manifest"):
        read_spec(tmp_path / "other.json")


def test_verify_checks_the_spec_against_the_manifest(built, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(built, copy)
    from lbm_bench.release.verify import spec_problems

    manifest = json.loads((copy / "manifest.json").read_text())
    assert spec_problems(copy, manifest) == []
    text = (copy / "spec.toml").read_text()
    (copy / "spec.toml").write_text(text.replace("seed = 42", "seed = 43"))
    assert spec_problems(copy, manifest) == ["spec.toml: differs from the spec the manifest records"]
    (copy / "spec.toml").write_text("not toml [")
    assert spec_problems(copy, manifest)[0].startswith("spec.toml: spec ")
    (copy / "spec.toml").unlink()
    assert "spec.toml: missing" in verify_release(copy)


def test_verify_against_names_the_files_that_differ(built, tmp_path, capsys):
    copy = tmp_path / "copy"
    shutil.copytree(built, copy)
    assert compare_releases(copy, built) == []
    sums = (copy / "SHA256SUMS").read_text().replace("  README.md", "  README.txt")
    (copy / "SHA256SUMS").write_text(sums)
    manifest = json.loads((copy / "manifest.json").read_text())
    manifest["built_with"]["numpy"] = "0.0"
    (copy / "manifest.json").write_text(json.dumps(manifest))
    differences = compare_releases(copy, built)
    assert differences[:2] == [f"README.txt: only in {copy}", f"README.md: only in {built}"]
    assert differences[-1] == f"built with other versions: numpy 0.0 vs {sys.modules['numpy'].__version__}"
    capsys.readouterr()
    assert main(["verify", str(copy), "--against", str(built)]) == 1
    captured = capsys.readouterr()
    assert "DIFFERS README.md: only in" in captured.out
    assert captured.err.strip().endswith(f"difference(s) from {built}")


def test_build_archive_prints_its_path_and_sha256(spec_path, tmp_path, capsys):
    """build --archive says where the archive is and its SHA-256, what to publish (item 7)."""
    import hashlib

    out = tmp_path / "tiny"
    assert main(["build", str(spec_path), "--out", str(out), "--archive"]) == 0
    lines = capsys.readouterr().out.splitlines()
    archive = tmp_path / "tiny.tar.gz"
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    assert lines[-3:] == [f"archive {archive}", f"SHA-256 {digest}",
                          "publish both: lbm-bench fetch URL --sha256 DIGEST downloads and checks it"]


def test_the_mini_release_rebuilds_from_its_own_spec(mini_release, tmp_path):
    """The sample release of the README, rebuilt by the command its README prints: the same
    SHA256SUMS, and verify --against agrees."""
    out = tmp_path / "lbm-bench-mini-rebuilt"
    readme = (mini_release / "README.md").read_text()
    assert "lbm-bench build spec.toml --out ../lbm-bench-mini-rebuilt --jobs 2" in readme
    report = build_release(mini_release / "spec.toml", out, n_jobs=2)
    assert report.ok, report.summary()
    assert (out / "SHA256SUMS").read_bytes() == (mini_release / "SHA256SUMS").read_bytes()
    assert (out / "spec.toml").read_bytes() == (REPO / "repository" / "mini.toml").read_bytes()
    assert compare_releases(out, mini_release) == [] and verify_release(out) == []
