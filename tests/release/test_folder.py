"""One release per folder, one build at a time (issue 35, item 7): a second build of a folder
being built is refused in one line; a spec of another release (another seed, a smaller grid)
is refused unless --force, which says what it replaced and leaves no stray table; a build
never reports success on a release its own verify rejects."""

import subprocess
import sys

import pytest

from lbm_bench.release import build_release, verify_release
from lbm_bench.release.folder import locked_folder

SPEC = """
[release]
name = "pair"
version = "0.1"
seed = {seed}

[defaults]
tolerance = 0.05
n_samples = 200
n_chains = 4
burn_in = 10
screen_samples = 0
n_calibration_tables = 6
n_init = 2

[[grid]]
kinds = ["bernoulli"]
shapes = ["30x20"]
clusters = ["2x2"]
risks = [0.1]
replicates = {replicates}
"""


def _spec(folder, name, seed=7, replicates=2):
    path = folder / f"{name}.toml"
    path.write_text(SPEC.format(seed=seed, replicates=replicates))
    return path


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    folder = tmp_path_factory.mktemp("folder")
    report = build_release(_spec(folder, "pair"), folder / "release")
    assert report.ok, report.summary()
    return folder


def _copy(built, tmp_path):
    import shutil

    shutil.copytree(built / "release", tmp_path / "release")
    return tmp_path / "release"


def test_a_folder_being_built_is_refused_in_one_line(built, tmp_path):
    out = tmp_path / "busy"
    with locked_folder(out):  # another build holds it
        with pytest.raises(ValueError, match=r"^release folder .*busy is being built by another process; wait for"):
            build_release(_spec(tmp_path, "pair"), out)
        done = subprocess.run([sys.executable, "-m", "lbm_bench.cli", "build", str(_spec(tmp_path, "pair")), "--out",
                               str(out), "-q"], capture_output=True, text=True)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1
    assert "is being built by another process" in done.stderr
    assert list(out.iterdir()) == []  # nothing written meanwhile


@pytest.mark.parametrize("seed, replicates, removed", [(8, 2, 2), (7, 1, 1)])
def test_another_spec_is_refused_unless_forced(built, tmp_path, seed, replicates, removed):
    """Another seed (every table replaced) or a smaller grid (a table left over, 'not in the
    manifest'): refused without --force; with it, the command says what it replaced and the
    folder passes verify with only the new spec's tables."""
    out = _copy(built, tmp_path)
    before = sorted(p.name for p in (out / "tables").iterdir())
    other = _spec(tmp_path, "other", seed=seed, replicates=replicates)
    done = subprocess.run([sys.executable, "-m", "lbm_bench.cli", "build", str(other), "--out", str(out), "-q"],
                          capture_output=True, text=True)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().endswith("holds release pair 0.1 (2 table(s), seed 7), not this spec's release "
                                        f"(pair 0.1: {replicates} table(s), seed {seed}): build into another --out, "
                                        "or give --force to replace it")
    assert sorted(p.name for p in (out / "tables").iterdir()) == before and verify_release(out) == []
    done = subprocess.run([sys.executable, "-m", "lbm_bench.cli", "build", str(other), "--out", str(out), "-q",
                           "--force"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip() == (f"--force: replaced release pair 0.1 (2 table(s), seed 7) in {out} by pair 0.1: "
                                   f"{replicates} table(s), seed {seed}: removed {removed} table file(s) and the "
                                   f"release files, kept {2 - removed} table file(s) of this spec")
    assert len(list((out / "tables").iterdir())) == replicates and verify_release(out) == []


def test_an_interrupted_build_of_another_spec_is_refused(built, tmp_path):
    """A folder with tables but no manifest yet (a build interrupted) still names its spec."""
    out = _copy(built, tmp_path)
    for name in ("manifest.json", "SHA256SUMS"):
        (out / name).unlink()
    with pytest.raises(ValueError, match="holds release pair 0.1 .* seed 7"):
        build_release(_spec(tmp_path, "other", seed=9), out)
    (out / "spec.toml").unlink()  # no spec at all: the tables themselves are not the new spec's
    with pytest.raises(ValueError, match=r"holds 2 table file\(s\) that are not tables of spec pair 0.1"):
        build_release(_spec(tmp_path, "other", seed=9), out)
    report = build_release(_spec(tmp_path, "pair"), out)  # the same spec resumes
    assert report.ok and report.skipped and verify_release(out) == []


def test_a_build_never_succeeds_on_a_release_its_verify_rejects(built, tmp_path):
    out = _copy(built, tmp_path)
    (out / "thumbnails" / "stray.png").write_bytes(b"not a picture of this release")
    report = build_release(_spec(tmp_path, "pair"), out)
    assert not report.ok and report.problems == ["thumbnails/stray.png: not listed in SHA256SUMS"]
    assert "VERIFY thumbnails/stray.png: not listed in SHA256SUMS" in report.summary()
    done = subprocess.run([sys.executable, "-m", "lbm_bench.cli", "build", str(_spec(tmp_path, "pair")), "--out",
                           str(out), "-q"], capture_output=True, text=True)
    assert done.returncode == 1 and "does not pass verify (1 problem(s))" in done.stderr


def test_a_build_verifies_its_tables_in_its_pool_and_never_succeeds_on_a_rejected_one(built, tmp_path):
    """A table whose @risk was edited still loads with its kind and seed, so a resumed build
    keeps it and writes the edited risk into the manifest; the re-derivation from its label
    sets, run as a task of the build's two workers, rejects it as verify does."""
    import h5py

    out = _copy(built, tmp_path)
    victim = sorted((out / "tables").glob("*.h5"))[1]
    with h5py.File(victim, "a") as f:
        f.attrs["risk"] = f.attrs["risk"] + 0.01
    report = build_release(_spec(tmp_path, "pair"), out, n_jobs=2)
    assert len(report.skipped) == 2 and not report.built
    assert not report.ok and len(report.problems) == 1
    assert report.problems[0].startswith(f"tables/{victim.name}: @risk ")
    assert "differs from the MAP labels' risk re-derived from the label sets" in report.problems[0]
    assert report.problems == verify_release(out) == verify_release(out, jobs=2)
