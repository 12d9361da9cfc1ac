"""Release builds: outputs, determinism across jobs and backends, resume after a kill,
timings, and the release file writers called after the manifest."""

import dataclasses
import math
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from lbm_bench.release import (
    build_release,
    load_release,
    parse_spec,
    read_spec,
    verify_release,
)
from lbm_bench.release.card import can_draw_thumbnails
from tests.release.helpers import REPO, same_bytes


def test_build_outputs(built):
    manifest = load_release(built)
    assert manifest["release"]["name"] == "tiny"
    assert len(manifest["tables"]) == 5
    assert sorted(p.name for p in built.iterdir()) == [
        "README.md", "SHA256SUMS", "croissant.json", "index.html", "manifest.json", "spec.toml", "tables",
        "tables.csv", "thumbnails",
    ]
    assert manifest["format_version"] == "1.2" and manifest["spec_file"] == "spec.toml"
    assert verify_release(built) == []


def test_rebuild_with_two_jobs_is_byte_identical(built, spec_path, tmp_path):
    out = tmp_path / "tiny"
    report = build_release(spec_path, out, n_jobs=2)
    assert report.ok
    same_bytes(out, built)


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
    same_bytes(out, built)


_CLI_WITH_CTRL_C = (  # whatever SIGINT disposition the test runner left (a background job ignores it)
    "import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler)\n"
    "from lbm_bench.cli import main\n"
    "sys.exit(main(sys.argv[1:]))\n"
)


@pytest.mark.skipif(sys.platform == "win32", reason="process groups and SIGINT are POSIX")
def test_ctrl_c_during_a_parallel_build_prints_one_line_and_resumes(built, spec_path, tmp_path):
    """Ctrl-C in a terminal sends SIGINT to the build and its workers (one process
    group). The user sees "lbm-bench: interrupted" and nothing else: before, the
    workers' progress-bar locks, never unregistered, made multiprocessing's resource
    tracker warn "There appear to be 2 leaked semaphore objects". The finished tables
    are kept and the resumed build gives the bytes of an uninterrupted one."""
    out = tmp_path / "tiny"
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.Popen(
        [sys.executable, "-c", _CLI_WITH_CTRL_C, "build", str(spec_path), "--out", str(out), "--jobs", "2", "-q"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )
    deadline = time.time() + 120
    while time.time() < deadline and not list((out / "tables").glob("*.h5")):
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGINT)
    _, stderr = proc.communicate(timeout=120)
    assert (proc.returncode, stderr) == (130, "lbm-bench: interrupted\n")
    finished = list((out / "tables").glob("*.h5"))
    assert 1 <= len(finished) < 5, "the build should have been interrupted part-way"
    report = build_release(spec_path, out, n_jobs=1)
    assert report.ok and len(report.skipped) == len(finished)
    same_bytes(out, built)


def test_resume_rebuilds_a_table_and_its_thumbnail_and_draws_missing_ones(built, spec_path, tmp_path, monkeypatch):
    """A resumed build: the table rebuilt (a second replicate, so phase 1 builds it with
    its configuration's calibration) gets a new thumbnail from its worker, whatever
    picture was there; a deleted thumbnail of a complete table is drawn by the card; the
    others are not redrawn; the bytes are those of a fresh build."""
    pytest.importorskip("matplotlib")
    from lbm_bench.release import card

    out = tmp_path / "tiny"
    shutil.copytree(built, out)
    rebuilt = "gaussian-30x20-2x2-r0.1-02"
    (out / "tables" / f"{rebuilt}.h5").unlink()
    (out / "thumbnails" / f"{rebuilt}.png").write_bytes(b"a stale picture")
    (out / "thumbnails" / "poisson-24x24-3x2-r0.15-01.png").unlink()
    drawn = []
    draw = card.draw_thumbnail
    monkeypatch.setattr(card, "draw_thumbnail", lambda table, path: drawn.append(path.name) or draw(table, path))
    report = build_release(spec_path, out, n_jobs=1)
    assert report.ok and report.built == [rebuilt] and list(report.calibration_seconds) == ["gaussian-30x20-2x2-r0.1"]
    assert "thumbnail" in report.table_seconds[rebuilt]
    assert drawn == ["poisson-24x24-3x2-r0.15-01.png"]  # the card drew the missing one only
    same_bytes(out, built)


def test_tasks_are_submitted_longest_first(spec_path):
    from lbm_bench.release.build import task_order

    order = [t.id for t in task_order(read_spec(spec_path).tables)]
    assert order == [
        "bernoulli-30x20-2x2-r0.1-01", "bernoulli-30x20-2x2-r0.1-02", "gaussian-30x20-2x2-r0.1-01",
        "gaussian-30x20-2x2-r0.1-02", "poisson-24x24-3x2-r0.15-01",
    ]  # 600 entries before 576; equal entries and risk: by id
    paper = task_order(read_spec(REPO / "repository" / "paper.toml").tables)
    assert [t.id for t in paper[:3]] == [
        "bernoulli-1000x1000-3x3-r0.2-01", "gaussian-1000x1000-3x3-r0.2-01", "poisson-1000x1000-3x3-r0.2-01",
    ]
    costs = [(t.shape[0] * t.shape[1], t.risk) for t in paper]
    assert costs == sorted(costs, reverse=True) and paper[-1].id == "poisson-50x50-3x3-r0.05-02"


def _without_poisson(spec_path):
    """The tiny spec without its Poisson grid, parsed from a dict (so the release's spec.toml
    is written by spec_toml)."""
    source = read_spec(spec_path).source
    return parse_spec({**source, "grid": [g for g in source["grid"] if g["kinds"] != ["poisson"]]})


def test_a_spec_whose_tables_are_not_its_source_s_is_refused(spec_path, tmp_path):
    """A release must carry a spec that rebuilds it: a ReleaseSpec whose tables were edited
    away from what its source describes is refused before anything is built."""
    spec = read_spec(spec_path)
    edited = dataclasses.replace(spec, tables=spec.tables[:2])
    with pytest.raises(ValueError, match="its tables are not the ones its source describes"):
        build_release(edited, tmp_path / "x")
    assert not (tmp_path / "x").exists()


def test_build_without_matplotlib_draws_no_thumbnail(spec_path, tmp_path, monkeypatch):
    """Without matplotlib the workers draw nothing (their thumbnail time is unknown, '-')
    and the card says so; tasks run longest first (one worker: in submission order)."""
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    spec = _without_poisson(spec_path)
    out = tmp_path / "tiny"
    report = build_release(spec, out, n_jobs=1)
    assert report.ok, report.summary()
    assert list(report.calibration_seconds) == ["bernoulli-30x20-2x2-r0.1", "gaussian-30x20-2x2-r0.1"]
    assert list(report.table_seconds) == [  # phase 1, then phase 2, each longest first
        "bernoulli-30x20-2x2-r0.1-01", "gaussian-30x20-2x2-r0.1-01",
        "bernoulli-30x20-2x2-r0.1-02", "gaussian-30x20-2x2-r0.1-02",
    ]
    assert not any("thumbnail" in t for t in report.table_seconds.values())
    assert not (out / "thumbnails").exists()
    # the build says so in one line (issue 27, item 7), as the card does
    assert [ln for ln in report.summary().splitlines() if "thumbnail" in ln] == [
        "thumbnails skipped: matplotlib is not installed (pip install 'lbm-bench[plots]'); "
        "index.html is written without them"]
    assert "matplotlib was not installed" in (out / "index.html").read_text()
    assert verify_release(out) == []


def test_a_failed_table_is_reported_and_fail_fast_stops(spec_path, tmp_path, monkeypatch):
    """A table whose generation fails is reported and the others are built (no manifest);
    with fail_fast the build stops at it: the first task (longest first) fails, so the
    other configurations are not calibrated."""
    from lbm_bench.protocol import generate

    spec = _without_poisson(spec_path)
    victim = next(t for t in spec.tables if t.id == "bernoulli-30x20-2x2-r0.1-01")
    real = generate.generate_table

    def failing(*args, rng=None, **kwargs):
        if rng == victim.seed:
            raise RuntimeError("no table")
        return real(*args, rng=rng, **kwargs)

    monkeypatch.setattr(generate, "generate_table", failing)
    report = build_release(spec, tmp_path / "fast", n_jobs=1, fail_fast=True)
    assert report.failed == {victim.id: "RuntimeError: no table"} and report.built == []
    assert list(report.calibration_seconds) == ["bernoulli-30x20-2x2-r0.1"]
    assert not (tmp_path / "fast" / "manifest.json").exists()
    report = build_release(spec, tmp_path / "all", n_jobs=1)
    assert list(report.failed) == [victim.id] and len(report.built) == 3 and not report.ok
    assert not (tmp_path / "all" / "manifest.json").exists()


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
    same_bytes(out, built)


def test_large_tables_spread_over_the_pool_with_the_same_bytes_at_every_jobs_and_backend(
        built, spec_path, tmp_path, monkeypatch):
    """A large table (LARGE_TABLE_ENTRIES entries or more) is certified over the whole pool (its chains,
    MAP starts, floor descents and calibration tables as tasks), before the pool's own
    tables; the release has the same bytes at every --jobs and on Dask. The threshold is
    lowered here, in the build's process, where a large table's tasks are formed: the
    30x20 configurations spread, the 24x24 one stays one task of the pool."""
    from lbm_bench.release.build import spreads_over_workers
    from lbm_bench.tasks import large

    monkeypatch.setattr(large, "LARGE_TABLE_ENTRIES", 600)
    assert [spreads_over_workers(t) for t in read_spec(spec_path).tables] == [True] * 4 + [False]
    one = build_release(spec_path, tmp_path / "one", n_jobs=1)
    assert one.ok, one.summary()
    spread = ["bernoulli-30x20-2x2-r0.1-01", "bernoulli-30x20-2x2-r0.1-02", "gaussian-30x20-2x2-r0.1-01",
              "gaussian-30x20-2x2-r0.1-02"]  # longest first, a configuration's replicates together
    assert one.spread == spread and len(one.built) == 5
    assert set(one.calibration_seconds) == {"bernoulli-30x20-2x2-r0.1", "gaussian-30x20-2x2-r0.1",
                                            "poisson-24x24-3x2-r0.15"}
    two = build_release(spec_path, tmp_path / "two", n_jobs=2)
    assert two.ok and two.spread == spread, two.summary()
    same_bytes(tmp_path / "two", tmp_path / "one")
    for name in ("bernoulli-30x20-2x2-r0.1-01.h5", "poisson-24x24-3x2-r0.15-01.h5"):  # integer sums: any grouping
        assert (tmp_path / "one" / "tables" / name).read_bytes() == (built / "tables" / name).read_bytes()
    pytest.importorskip("dask.distributed")
    dask = build_release(spec_path, tmp_path / "dask", n_jobs=2, backend="dask")
    assert dask.ok and dask.spread == spread, dask.summary()
    same_bytes(tmp_path / "dask", tmp_path / "one")


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
    assert printed[0].split()[3:] == ["calib", "s", "reject", "s", "gibbs", "s", "floor", "s", "write", "s",
                                      "thumb", "s", "s/table"]
    floor = [float(r[6]) for r in rows.values()]  # the Bayes labels and cross-fitting of every kept table
    assert all(s > 0 for s in floor)
    if can_draw_thumbnails():  # drawn by the workers, right after each table: timed (NaN when not drawn),
        assert all(float(r[8]) >= 0 and not math.isnan(float(r[8])) for r in rows.values())  # ms, printed 0.00
    same_bytes(out, built)


def test_a_release_of_a_design_file_copies_it_and_verifies(tmp_path):
    """design = "path.toml" (issue 34): the build copies the design file beside the release's
    spec.toml, so that the release's own spec rebuilds and verifies it; every table names it."""
    import numpy as np

    from lbm_bench import fit_design, get_family, load_table, read_design_file
    from lbm_bench.release import build_release, verify_release

    X, _, _ = get_family("bernoulli").model([0.6, 0.4], [0.5, 0.5], [[0.1, 0.7], [0.6, 0.2]]).sample(60, 40, rng=0)
    (tmp_path / "spec" / "designs").mkdir(parents=True)
    fit_design(np.asarray(X), (3, 3), certify=False, rng=0).save(tmp_path / "spec" / "designs" / "d.toml")
    (tmp_path / "spec" / "spec.toml").write_text(
        '[release]\nname = "like"\nversion = "1"\nseed = 3\n\n[defaults]\ntolerance = 0.03\nn_samples = 200\n\n'
        '[[grid]]\ndesign = "designs/d.toml"\nrisks = [0.1]\n')
    out = tmp_path / "release"
    report = build_release(tmp_path / "spec" / "spec.toml", out)
    assert report.failed == {} and len(report.built) == 1
    digest = read_design_file(out / "designs" / "d.toml").digest
    assert (out / "designs" / "d.toml").read_bytes() == (tmp_path / "spec" / "designs" / "d.toml").read_bytes()
    tables = sorted((out / "tables").glob("*.h5"))
    assert len(tables) == 1 and load_table(tables[0]).design.digest == digest
    assert verify_release(out) == []
    assert build_release(out / "spec.toml", out).skipped == report.built  # the release's own spec resumes it


def test_a_spec_whose_table_cannot_fit_is_refused_before_the_folder_is_touched(tmp_path):
    """A spec declaring a 100000x100000 dense table: build wrote spec.toml and tables/, then died in a
    MemoryError traceback at its first draw (issue 48, item 1)."""
    spec = tmp_path / "huge.toml"
    spec.write_text("""[release]
name = "huge"
version = "1.0"
seed = 1
license = "CC-BY-4.0"
description = "too large for any machine of the suite"

[[grid]]
kinds = ["bernoulli"]
shapes = ["100000x100000"]
clusters = ["2x2"]
risks = [0.1]
""")
    with pytest.raises(ValueError, match=r"^table bernoulli-100000x100000-2x2-r0.1-01 of the spec: the dense "
                                         r"bernoulli 100000x100000 table needs about [0-9.]+ TiB .* available"):
        build_release(spec, tmp_path / "out")
    assert not (tmp_path / "out").exists()
