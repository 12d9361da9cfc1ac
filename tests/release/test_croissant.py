"""The Croissant description of a built release (lbm_bench.release.croissant): mlcroissant
validates it, reads the ``tables`` records back with the manifest's values, and its
FileObjects carry the right paths, sizes and SHA-256 digests."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lbm_bench.release.croissant import TABLE_FIELDS, croissant_metadata, tables_csv_text, write_croissant

mlc = pytest.importorskip("mlcroissant")


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_build_writes_croissant_and_tables_csv(built):
    sums = dict(reversed(line.split("  ")) for line in (built / "SHA256SUMS").read_text().splitlines())
    for name in ("croissant.json", "tables.csv"):
        assert (built / name).is_file()
        assert sums[name] == _sha256(built / name)


@pytest.mark.real_client
def test_mlcroissant_cli_validates_it(built):
    cli = Path(sys.executable).with_name("mlcroissant")
    if not cli.is_file():
        pytest.skip("the mlcroissant command is not installed next to this Python")
    done = subprocess.run([str(cli), "validate", "--jsonld", str(built / "croissant.json")],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    broken = json.loads((built / "croissant.json").read_text())
    broken["recordSet"][0]["field"][0]["source"]["fileObject"]["@id"] = "missing.csv"  # a dangling reference
    bad = built.parent / "broken-croissant.json"
    bad.write_text(json.dumps(broken))
    done = subprocess.run([str(cli), "validate", "--jsonld", str(bad)], capture_output=True, text=True, timeout=300)
    assert done.returncode != 0


def test_records_read_back_equal_the_manifest(built):
    manifest = json.loads((built / "manifest.json").read_text())
    dataset = mlc.Dataset(jsonld=str(built / "croissant.json"))
    records = list(dataset.records("tables"))
    assert len(records) == len(manifest["tables"]) == 5

    def text(value):
        return value.decode() if isinstance(value, bytes) else value

    for record, entry in zip(records, manifest["tables"], strict=True):
        assert text(record["tables/id"]) == entry["id"]
        assert text(record["tables/kind"]) == entry["kind"]
        assert [record["tables/n_rows"], record["tables/n_cols"]] == entry["shape"]
        assert [record["tables/n_row_clusters"], record["tables/n_col_clusters"]] == entry["clusters"]
        for name in ("target_risk", "risk", "risk_mcse", "risk_rhat", "row_loss", "col_loss",
                     "bayes_risk", "bayes_risk_mcse", "bayes_risk_rhat"):
            assert record[f"tables/{name}"] == entry[name], name  # exact: the CSV holds repr(float)
        assert text(record["tables/criterion"]) == entry["criterion"] == "bayes"
        assert record["tables/seed"] == entry["seed"]
        assert text(record["tables/file"]) == entry["file"]
        assert text(record["tables/sha256"]) == entry["sha256"]


def test_file_objects_describe_the_files(built):
    metadata = json.loads((built / "croissant.json").read_text())
    assert metadata["conformsTo"] == "http://mlcommons.org/croissant/1.0"
    assert metadata["@type"] == "sc:Dataset"
    manifest = json.loads((built / "manifest.json").read_text())
    assert metadata["name"] == manifest["release"]["name"] and metadata["version"] == manifest["release"]["version"]
    assert metadata["license"] == manifest["release"]["license"] and metadata["citeAs"]
    objects = {o["contentUrl"]: o for o in metadata["distribution"]}
    assert set(objects) == {"manifest.json", "tables.csv", "spec.toml"} | {e["file"] for e in manifest["tables"]}
    for url, obj in objects.items():
        assert obj["@type"] == "cr:FileObject"
        assert obj["sha256"] == _sha256(built / url)
        assert obj["contentSize"] == f"{(built / url).stat().st_size} B"
        assert obj["encodingFormat"] == {"json": "application/json", "csv": "text/csv", "h5": "application/x-hdf5",
                                         "toml": "application/toml"}[
            url.rsplit(".", 1)[1]]
    (records,) = metadata["recordSet"]
    assert [f["name"] for f in records["field"]] == [name for name, _, _ in TABLE_FIELDS]
    assert "datePublished" not in metadata  # the spec gives no date: no timestamp is invented


def test_fields_say_which_risk_is_certified(built):
    """The floor and the criterion sit next to the MAP's risk, and the descriptions say
    which one is the certified difficulty."""
    metadata = json.loads((built / "croissant.json").read_text())
    fields = {f["name"]: f for f in metadata["recordSet"][0]["field"]}
    names = list(fields)
    assert names.index("criterion") < names.index("bayes_risk") < names.index("bayes_risk_mcse") < names.index("risk")
    assert fields["criterion"]["dataType"] == "sc:Text" and fields["bayes_risk"]["dataType"] == "sc:Float"
    assert "'bayes' (bayes_risk, the floor) or 'map' (risk" in fields["criterion"]["description"]
    assert "the certified difficulty when criterion is 'bayes'" in fields["bayes_risk"]["description"]
    assert "the certified difficulty when criterion is 'map'" in fields["risk"]["description"]
    assert "MAP" in fields["risk"]["description"] and "MAP" not in fields["bayes_risk"]["description"]


def test_tables_without_a_floor_get_nan_and_the_map_criterion(built):
    """A manifest entry of a format 1.0 table (no floor): criterion map, NaN floor."""
    manifest = json.loads((built / "manifest.json").read_text())
    for key in ("criterion", "bayes_risk", "bayes_risk_mcse", "bayes_risk_rhat"):
        del manifest["tables"][0][key]
    header, first = tables_csv_text(manifest).splitlines()[:2]
    row = dict(zip(header.split(","), first.split(","), strict=True))
    assert (row["criterion"], row["bayes_risk"], row["bayes_risk_mcse"]) == ("map", "nan", "nan")


def test_citation_of_the_spec_is_cited(built, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(built, copy)
    manifest = json.loads((copy / "manifest.json").read_text())
    manifest["spec"]["release"]["citation"] = "Doe, J. The tiny release. 2026."
    assert croissant_metadata(manifest, copy)["citeAs"] == "Doe, J. The tiny release. 2026."


def test_spec_date_creator_and_url_are_used(built, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(built, copy)
    manifest = json.loads((copy / "manifest.json").read_text())
    manifest["spec"]["release"].update(date="2026-11-23", creator=["A. Lomet", "Y. Grandvalet"],
                                       url="https://example.org/tiny")
    metadata = croissant_metadata(manifest, copy)
    assert metadata["datePublished"] == "2026-11-23"
    assert [c["name"] for c in metadata["creator"]] == ["A. Lomet", "Y. Grandvalet"]
    assert metadata["url"] == "https://example.org/tiny"


def test_same_manifest_same_bytes(built, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(built, copy)
    manifest = json.loads((copy / "manifest.json").read_text())
    assert write_croissant(manifest, copy) == ["tables.csv", "croissant.json"]
    assert (copy / "croissant.json").read_bytes() == (built / "croissant.json").read_bytes()
    assert (copy / "tables.csv").read_text() == tables_csv_text(manifest)
    header = tables_csv_text(manifest).splitlines()[0]
    assert header.split(",") == [name for name, _, _ in TABLE_FIELDS]


def test_verify_checks_croissant_and_tables_csv(built, tmp_path):
    from lbm_bench.release import verify_release
    from lbm_bench.release.croissant import croissant_problems

    copy = tmp_path / "copy"
    shutil.copytree(built, copy)
    manifest = json.loads((copy / "manifest.json").read_text())
    assert croissant_problems(copy, manifest) == []
    metadata = json.loads((copy / "croissant.json").read_text())
    metadata["distribution"][2]["sha256"] = "0" * 64
    (copy / "croissant.json").write_text(json.dumps(metadata))
    (copy / "tables.csv").write_text("id\n")
    problems = verify_release(copy)
    assert f"croissant.json: SHA-256 of {metadata['distribution'][2]['contentUrl']} differs from the file's" in problems
    assert "tables.csv: differs from the manifest's tables" in problems
    assert "croissant.json: SHA-256 mismatch" in problems  # and SHA256SUMS sees both edits
    sums = [line for line in (copy / "SHA256SUMS").read_text().splitlines() if not line.endswith("croissant.json")]
    (copy / "SHA256SUMS").write_text("\n".join(sums) + "\n")
    assert "croissant.json: not listed in SHA256SUMS" in verify_release(copy)


def test_spec_publication_keys(tmp_path):
    import sys

    from lbm_bench.release import parse_spec
    from tests.release.helpers import TINY_SPEC

    tomllib = pytest.importorskip("tomllib" if sys.version_info >= (3, 11) else "tomli")
    text = TINY_SPEC.replace('seed = 42', 'seed = 42\ndate = 2026-11-23\ncreator = ["A. Lomet"]\n'
                             'url = "https://example.org/tiny"')
    spec = parse_spec(tomllib.loads(text))
    assert spec.source["release"]["date"] == "2026-11-23"  # a TOML date becomes ISO text (JSON-able)
    json.dumps(spec.source)
    for key, value, message in (("date", "23/11/2026", "date"), ("creator", [], "creator"),
                                ("url", "example.org", "url"), ("date", 2026, "date")):
        source = tomllib.loads(TINY_SPEC)
        source["release"][key] = value
        with pytest.raises(ValueError, match=message):
            parse_spec(source)


def test_layout_1_0_releases_still_verify_and_1_1_requires_the_new_files(built, tmp_path):
    """A release of layout 1.0 (tables, manifest.json, README.md) verifies without the
    Croissant and HTML files; a 1.2 release that lost them (and its spec.toml) from
    SHA256SUMS does not."""
    from lbm_bench.release import verify_release

    copy = tmp_path / "copy"
    shutil.copytree(built, copy)
    for name in ("croissant.json", "tables.csv", "index.html"):
        (copy / name).unlink()
    shutil.rmtree(copy / "thumbnails")
    kept = [line for line in (copy / "SHA256SUMS").read_text().splitlines()
            if line.split("  ")[1].startswith("tables/") or line.endswith("  README.md")]
    (copy / "SHA256SUMS").write_text("\n".join(kept) + "\n")
    problems = verify_release(copy)
    assert sorted(problems) == [f"{name}: not listed in SHA256SUMS"
                                for name in ("croissant.json", "index.html", "manifest.json", "spec.toml",
                                             "tables.csv")]
    manifest = json.loads((copy / "manifest.json").read_text())
    manifest["format_version"] = "1.0"
    (copy / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    (copy / "SHA256SUMS").write_text("\n".join(sorted(
        [*kept, f"{_sha256(copy / 'manifest.json')}  manifest.json"], key=lambda s: s.split("  ")[1])) + "\n")
    assert verify_release(copy) == []
