"""Release specs and builds: validation, determinism across jobs and backends,
resume after a kill, verification."""

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lbm_bench.release import (
    build_release,
    load_release,
    load_release_table,
    parse_spec,
    read_spec,
    verify_release,
    write_archive,
)

REPO = Path(__file__).resolve().parents[1]

TINY_SPEC = """
[release]
name = "tiny"
version = "0.1"
seed = 42

[defaults]
tolerance = 0.03
n_samples = 120
n_chains = 4
burn_in = 10
screen_samples = 40
n_calibration_tables = 20
n_init = 3

[[grid]]
kinds = ["gaussian", "bernoulli"]
shapes = ["30x20"]
clusters = ["2x2"]
risks = [0.1]
replicates = 2

[[grid]]
kinds = ["poisson"]
shapes = ["24x24"]
clusters = ["3x2"]
risks = [0.15]
"""


@pytest.fixture(scope="module")
def spec_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("spec") / "tiny.toml"
    path.write_text(TINY_SPEC)
    return path


@pytest.fixture(scope="module")
def built(spec_path, tmp_path_factory):
    out = tmp_path_factory.mktemp("release") / "tiny"
    report = build_release(spec_path, out, n_jobs=1)
    assert report.ok, report.summary()
    return out


def _equal(x, y) -> bool:
    """Equal values, NaN equal to NaN, for HDF5 datasets and attributes."""
    import numpy as np

    x, y = np.asarray(x), np.asarray(y)
    if x.dtype.kind in "fc" and y.dtype.kind in "fc":
        return x.shape == y.shape and bool(np.array_equal(x, y, equal_nan=True))
    return bool(np.array_equal(x, y))


def _h5_differences(fa, fb) -> list[str]:
    """Paths, attributes, dtypes and storage settings that differ between two HDF5 files."""
    import h5py

    def items(f):
        paths = ["/"]
        f.visit(paths.append)
        return paths

    out = []
    for path in sorted(set(items(fa)) | set(items(fb))):
        x, y = fa.get(path), fb.get(path)
        if x is None or y is None:
            out.append(f"{path} (only in {'b' if x is None else 'a'})")
            continue
        if isinstance(x, h5py.Dataset):
            for what in ("dtype", "shape", "chunks", "compression", "compression_opts", "shuffle", "fillvalue"):
                if getattr(x, what) != getattr(y, what):
                    out.append(f"{path} {what} {getattr(x, what)} vs {getattr(y, what)}")
            if not _equal(x[()], y[()]):
                out.append(f"{path} values")
        for key in sorted(set(x.attrs) | set(y.attrs)):
            if key not in x.attrs or key not in y.attrs:
                out.append(f"{path}@{key} (missing on one side)")
            elif getattr(x.attrs[key], "dtype", None) != getattr(y.attrs[key], "dtype", None):
                out.append(f"{path}@{key} dtype {getattr(x.attrs[key], 'dtype', None)} vs "
                           f"{getattr(y.attrs[key], 'dtype', None)}")
            elif not _equal(x.attrs[key], y.attrs[key]):
                out.append(f"{path}@{key} values {x.attrs[key]!r} vs {y.attrs[key]!r}")
    return out


def _same_bytes(a: Path, b: Path) -> None:
    """Assert two release directories hold the same files with the same bytes, naming
    the files that differ (and, for tables, the datasets) when they do not."""
    da, db = _digests(a), _digests(b)
    differing = sorted(k for k in set(da) | set(db) if da.get(k) != db.get(k))
    details = []
    for name in differing:
        if name.endswith(".h5") and name in da and name in db:
            import h5py

            with h5py.File(a / name, "r") as fa, h5py.File(b / name, "r") as fb:
                details.extend(f"{name}:{d}" for d in _h5_differences(fa, fb))
            keep = os.environ.get("LBM_BENCH_KEEP_DIFF")
            if keep:  # debugging aid: keep both versions of the differing file
                import shutil

                Path(keep).mkdir(parents=True, exist_ok=True)
                shutil.copy(a / name, Path(keep) / (Path(name).name + ".a"))
                shutil.copy(b / name, Path(keep) / (Path(name).name + ".b"))
    assert not differing, f"files differ: {differing}; datasets/attributes: {details}"


def _digests(out: Path) -> dict[str, str]:
    return {
        p.relative_to(out).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(out.rglob("*"))
        if p.is_file()
    }


def test_committed_specs_are_valid_and_large_enough():
    paper = read_spec(REPO / "repository" / "paper.toml")
    assert len(paper.tables) >= 100
    assert {t.kind for t in paper.tables} == {"gaussian", "poisson", "bernoulli"}
    shapes = {t.shape for t in paper.tables}
    assert len(shapes) >= 3 and (50, 50) in shapes
    assert max(n * d for n, d in shapes) >= 1000 * 1000
    assert any(n != d for n, d in shapes)
    clusters = {t.clusters for t in paper.tables}
    assert len(clusters) >= 2 and any(g != m for g, m in clusters)
    assert len({t.risk for t in paper.tables}) >= 3
    mini = read_spec(REPO / "repository" / "mini.toml")
    assert 1 <= len(mini.tables) <= 12


def test_spec_expansion_and_seeds(spec_path):
    spec = read_spec(spec_path)
    assert [t.id for t in spec.tables] == sorted(t.id for t in spec.tables)
    assert len(spec.tables) == 5
    assert len(spec.configurations()) == 3
    ids = {t.id: t for t in spec.tables}
    a, b = ids["gaussian-30x20-2x2-r0.1-01"], ids["gaussian-30x20-2x2-r0.1-02"]
    assert a.calibration_seed == b.calibration_seed and a.seed != b.seed
    # seeds depend on identity, not on the order of the grid
    swapped = TINY_SPEC.replace('kinds = ["gaussian", "bernoulli"]', 'kinds = ["bernoulli", "gaussian"]')
    import tomllib

    again = {t.id: t.seed for t in parse_spec(tomllib.loads(swapped)).tables}
    assert again == {t.id: t.seed for t in spec.tables}


@pytest.mark.parametrize(
    "edit, match",
    [
        (lambda s: s.replace("replicates = 2", "replicates = 2\ncolour = 1"), "unknown key.*colour"),
        (lambda s: s.replace('shapes = ["30x20"]', 'shapes = ["1x20"]'), "do not fit"),
        (lambda s: s.replace("risks = [0.1]", "risks = [1.5]"), "risks must be in"),
        (lambda s: s.replace('kinds = ["poisson"]', 'kinds = ["cauchy"]'), "kind must be one of"),
        (lambda s: s.replace('clusters = ["2x2"]', 'clusters = ["5x2"]'), "distinct binary modes"),
        (lambda s: s.replace("seed = 42", ""), "missing required key 'seed'"),
        (lambda s: s.replace("n_samples = 120", "n_samples = 2"), "n_chains .* exceeds n_samples"),
        (lambda s: s + s[s.index("[[grid]]"):], "defined twice"),
        (lambda s: s.replace('shapes = ["30x20"]', 'shapes = ["30by20"]'), "like '200x100'"),
    ],
)
def test_spec_errors(tmp_path, edit, match):
    path = tmp_path / "bad.toml"
    path.write_text(edit(TINY_SPEC))
    with pytest.raises(ValueError, match=match):
        read_spec(path)


def test_spec_not_toml(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text("[release\nname=")
    with pytest.raises(ValueError, match="not valid TOML"):
        read_spec(path)


def test_build_outputs(built):
    manifest = load_release(built)
    assert manifest["release"]["name"] == "tiny"
    assert len(manifest["tables"]) == 5
    entry = manifest["tables"][0]
    for key in ("id", "kind", "shape", "clusters", "target_risk", "risk", "risk_mcse",
                "acceptance_rate", "file", "size", "sha256"):
        assert key in entry
    for entry in manifest["tables"]:
        assert abs(entry["risk"] - entry["target_risk"]) <= 0.03
    sums = (built / "SHA256SUMS").read_text().splitlines()
    assert len(sums) == 7  # 5 tables, manifest, README
    card = (built / "README.md").read_text()
    assert "gaussian-30x20-2x2-r0.1-01" in card and "lbm-bench build" in card
    table = load_release_table(built, entry["id"])
    assert table.shape == tuple(entry["shape"])
    assert verify_release(built) == []


def test_rebuild_with_two_jobs_is_byte_identical(built, spec_path, tmp_path):
    out = tmp_path / "tiny"
    report = build_release(spec_path, out, n_jobs=2)
    assert report.ok
    _same_bytes(out, built)


def test_resume_skips_complete_tables(built, spec_path):
    report = build_release(spec_path, built, n_jobs=1)
    assert report.built == [] and len(report.skipped) == 5


def test_resume_after_kill_gives_same_bytes(built, spec_path, tmp_path):
    out = tmp_path / "tiny"
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.Popen(
        [sys.executable, "-m", "lbm_bench.cli", "build", str(spec_path), "--out", str(out), "-q"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    deadline = time.time() + 120
    while time.time() < deadline and not list((out / "tables").glob("*.h5")):
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    finished = list((out / "tables").glob("*.h5"))
    assert 1 <= len(finished) < 5, "the build should have been killed part-way"
    assert not (out / "manifest.json").exists()
    report = build_release(spec_path, out, n_jobs=1)
    assert report.ok and len(report.skipped) >= 1
    _same_bytes(out, built)


def test_verify_catches_problems(built, tmp_path):
    import shutil

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


def test_archive_is_deterministic(built, tmp_path):
    first = write_archive(built).read_bytes()
    time.sleep(1.1)
    assert write_archive(built).read_bytes() == first


def test_stale_temporaries_are_removed(built, spec_path):
    stale = built / "tables" / ".gaussian-30x20-2x2-r0.1-01.h5.tmp-999"
    stale.write_bytes(b"half a file")
    build_release(spec_path, built, n_jobs=1)
    assert not stale.exists()


def test_dask_backend_gives_same_bytes(built, spec_path, tmp_path):
    pytest.importorskip("dask.distributed")
    out = tmp_path / "tiny"
    report = build_release(spec_path, out, n_jobs=2, backend="dask")
    assert report.ok, report.summary()
    _same_bytes(out, built)


def test_sha256sums_is_coreutils_format(built):
    import shutil

    if shutil.which("sha256sum") is None:
        pytest.skip("sha256sum not installed")
    result = subprocess.run(["sha256sum", "-c", "--quiet", "SHA256SUMS"], cwd=built, capture_output=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_cli_build_with_timings(built, spec_path, tmp_path, capsys):
    """`lbm-bench build --timings` prints where the time went per configuration, and the
    CLI builds the same bytes as the library."""
    from lbm_bench.cli import main

    out = tmp_path / "tiny"
    assert main(["build", str(spec_path), "--out", str(out), "--timings", "-q"]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].split()[:3] == ["configuration", "tables", "tries"]
    rows = {line.split()[0]: line.split() for line in printed[2:]}
    assert set(rows) == {"gaussian-30x20-2x2-r0.1", "bernoulli-30x20-2x2-r0.1", "poisson-24x24-3x2-r0.15", "total"}
    assert rows["gaussian-30x20-2x2-r0.1"][1] == "2" and rows["total"][1] == "5"
    assert int(rows["total"][2]) >= 5  # at least one attempt per kept table
    per_table = [float(r[-1]) for r in rows.values()]
    assert all(s > 0 for s in per_table)
    _same_bytes(out, built)


def test_timings_by_configuration_arithmetic(tmp_path):
    from lbm_bench.release import BuildReport

    report = BuildReport(out_dir=tmp_path)
    report.calibration_seconds = {"gaussian-30x20-2x2-r0.1": 6.0}
    report.attempts = {"gaussian-30x20-2x2-r0.1-01": 1, "gaussian-30x20-2x2-r0.1-02": 3}
    report.table_seconds = {
        t: {"rejection": 1.0, "gibbs": 0.5, "writing": 0.5} for t in report.attempts
    }
    (row,) = report.timings_by_configuration()
    assert row["tables"] == 2 and row["attempts"] == 4
    assert row["per_kept_table"] == (6.0 + 2 * 2.0) / 2
    assert report.format_timings().splitlines()[-1].split()[-1] == "5.00"
