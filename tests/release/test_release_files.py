"""lbm_bench.release.release_files: the files of a release beside its tables."""

import shutil

from lbm_bench.release import read_spec, release_files, verify_release
from tests.release.helpers import same_bytes


def test_release_file_writers_are_called_after_the_manifest_and_checksummed(built, spec_path, tmp_path, monkeypatch):
    """A writer added to RELEASE_FILE_WRITERS gets the manifest, its file is listed in
    SHA256SUMS and verified; the other files keep their bytes."""
    copy = tmp_path / "tiny"
    shutil.copytree(built, copy)
    spec = read_spec(spec_path)
    # the writers as they are rewrite the same bytes
    release_files.write_release_files(spec, copy, spec_path=str(spec_path))
    same_bytes(copy, built)

    seen = []

    def write_extra(manifest, out, *, spec_path=None):
        seen.append((manifest["release"]["name"], (out / "manifest.json").is_file()))
        (out / "extra.txt").write_text(f"{len(manifest['tables'])} tables\n")
        return "extra.txt"

    monkeypatch.setattr(release_files, "RELEASE_FILE_WRITERS", (*release_files.RELEASE_FILE_WRITERS, write_extra))
    release_files.write_release_files(spec, copy, spec_path=str(spec_path))
    assert seen == [("tiny", True)]
    sums = (copy / "SHA256SUMS").read_text().splitlines()
    # 5 tables, spec.toml, manifest.json, README.md, tables.csv, croissant.json, 5 thumbnails, index.html,
    # extra.txt
    assert any(line.endswith("  extra.txt") for line in sums) and len(sums) == 17
    for name in ("manifest.json", "README.md"):
        assert (copy / name).read_bytes() == (built / name).read_bytes()
    assert verify_release(copy) == []
    (copy / "extra.txt").write_text("changed\n")
    assert verify_release(copy) == ["extra.txt: SHA-256 mismatch"]
