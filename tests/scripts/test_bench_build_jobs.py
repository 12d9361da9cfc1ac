"""scripts/benchmarks/bench_build_jobs.py on the tiny release spec: both packages at two worker
counts, the same bytes, the table of wall times and critical paths."""

import re

from tests.release.helpers import TINY_SPEC
from tests.scripts.helpers import load_script, run_script


def test_tiny_release_against_head_at_two_worker_counts(tmp_path):
    spec = tmp_path / "tiny.toml"
    spec.write_text(TINY_SPEC)
    out = run_script("benchmarks", "bench_build_jobs", "--spec", spec, "--against", "HEAD", "--jobs", "1", "2").stdout
    assert "old: same SHA256SUMS (every file) at every --jobs: yes" in out
    assert "new: same SHA256SUMS (every file) at every --jobs: yes" in out
    assert "same tables (manifest SHA-256) in both packages: yes" in out
    rows = [line for line in out.splitlines() if re.match(r"\| (old|new) \| [12] \|", line)]
    assert [row.split(" | ")[:2] for row in rows] == [["| old", "1"], ["| old", "2"], ["| new", "1"], ["| new", "2"]]
    path = r"[\d.]+ \((bernoulli|gaussian|poisson)-[^)]+\)"
    assert re.fullmatch(rf"\| new \| 2 \| [\d.]+ \| [\d.]+ \| [\d.]+ \| {path} \| [\d.]+ \| 0 \| .+ \|", rows[3])


def test_critical_path_is_a_configuration_s_calibration_and_longest_table():
    critical_path = load_script("benchmarks", "bench_build_jobs").critical_path
    run = {"calibration_seconds": {"a-2x2": 3.0, "b-2x2": 0.5},
           "table_seconds": {"a-2x2-01": {"gibbs": 1.0, "writing": 0.5}, "a-2x2-02": {"gibbs": 2.0},
                             "b-2x2-01": {"gibbs": 4.0, "floor": float("nan")}}}
    assert critical_path(run) == (5.0, "a-2x2")


def test_rounds_give_medians_and_every_round_s_ratio(tmp_path):
    spec = tmp_path / "tiny.toml"
    spec.write_text(TINY_SPEC)
    out = run_script("benchmarks", "bench_build_jobs", "--spec", spec, "--against", "HEAD", "--jobs", "1",
                     "--repeat", "2").stdout
    assert [line.split(":")[1].strip() for line in out.splitlines() if line.startswith("  built:")] == [
        "old --jobs 1 (round 1 of 2)", "new --jobs 1 (round 1 of 2)",
        "old --jobs 1 (round 2 of 2)", "new --jobs 1 (round 2 of 2)"]
    rows = {cells[0]: cells for cells in ([c.strip() for c in line.strip().strip("|").split("|")]
                                          for line in out.splitlines() if re.match(r"\| (old|new) \| 1 \|", line))}
    walls = [float(w) for w in rows["new"][9].split()]
    ratios = [float(r) for r in rows["new"][10].split()]
    old_walls = [float(w) for w in rows["old"][9].split()]
    assert len(walls) == len(ratios) == len(old_walls) == 2 and rows["old"][10] == ""
    assert abs(float(rows["new"][2]) - sum(walls) / 2) <= 0.1  # the median of two, from unrounded walls
    for wall, old_wall, ratio in zip(walls, old_walls, ratios, strict=True):
        assert abs(wall / old_wall - ratio) <= 0.01 + 0.1 / old_wall  # rounded walls, rounded ratio
    assert "same tables (manifest SHA-256) in both packages: yes" in out


def test_repeat_must_be_positive(tmp_path):
    done = run_script("benchmarks", "bench_build_jobs", "--repeat", "0", check=False)
    assert done.returncode == 2 and "--repeat takes a positive count, got 0" in done.stderr


def test_seeds_build_the_spec_reseeded_and_sum_them(tmp_path):
    spec = tmp_path / "tiny.toml"
    spec.write_text(TINY_SPEC)
    out = run_script("benchmarks", "bench_build_jobs", "--spec", spec, "--against", "HEAD", "--jobs", "1",
                     "--seeds", "3", "4").stdout
    assert "## tiny-seed3.toml" in out and "## tiny-seed4.toml" in out
    summary = out.split("## over the seeds")[1].splitlines()
    rows = [[c.strip() for c in line.strip().strip("|").split("|")] for line in summary if line.startswith("| ")]
    seeds = [row for row in rows if row[0] in ("3", "4", "all")]
    assert [row[:2] for row in seeds] == [["3", "1"], ["4", "1"], ["all", "1"]]
    parse = [[re.fullmatch(r"([\d.]+) \((\d+)\)", cell).groups() for cell in row[2:4]] for row in seeds]
    for k in (0, 1):  # old, new: the sums of the seeds' walls (rounded) and candidates
        assert abs(sum(float(p[k][0]) for p in parse[:2]) - float(parse[2][k][0])) <= 0.15
        assert sum(int(p[k][1]) for p in parse[:2]) == int(parse[2][k][1]) >= 2
    assert all(float(row[4]) > 0 for row in seeds)
    assert out.count("same tables (manifest SHA-256) in both packages: yes") == 2


def test_with_seed_replaces_the_release_seed_only(tmp_path):
    with_seed = load_script("benchmarks", "bench_build_jobs").with_seed
    spec = tmp_path / "s.toml"
    spec.write_text('[release]\nname = "x"\nseed = 12\n\n[defaults]\nseed = 5\n')
    copy = with_seed(spec, 99, tmp_path)
    assert copy.read_text() == '[release]\nname = "x"\nseed = 99\n\n[defaults]\nseed = 5\n'
