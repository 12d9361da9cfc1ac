"""scripts/benchmarks/acceptance.py: the spec copy changes only the master seed, and the pooled
acceptance rate over seeds is sum kept / sum attempts of real builds (a tiny spec, two
seeds, built in subprocesses with this checkout's code)."""

from __future__ import annotations

import doctest
import json
import math
import sys
from pathlib import Path

import pytest

from tests.scripts.helpers import ROOT, load_script

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

#: Two configurations of one small table each, few samples: a build takes about a second.
SPEC = """\
# a comment that stays
[release]
name = "tiny-acceptance"
version = "0.1"
seed = 42  # replaced
description = "seed = 7 in a string stays"

[defaults]
tolerance = 0.03
n_samples = 200
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
"""


@pytest.fixture(scope="module")
def acceptance():
    return load_script("benchmarks", "acceptance")


def test_docstring_examples(acceptance):
    results = doctest.testmod(acceptance, verbose=False)
    assert results.attempted >= 2 and results.failed == 0


def test_spec_copy_changes_only_the_seed(acceptance):
    new = acceptance.spec_with_seed(SPEC, 7)
    assert tomllib.loads(new)["release"]["seed"] == 7
    changed = [(a, b) for a, b in zip(SPEC.splitlines(), new.splitlines(), strict=True) if a != b]
    assert changed == [("seed = 42  # replaced", "seed = 7  # replaced")]
    with pytest.raises(ValueError, match="one 'seed = ...' line"):
        acceptance.spec_with_seed(SPEC.replace("seed = 42  # replaced\n", ""), 7)
    # a seed key of another table is not the master seed
    other = SPEC.replace("seed = 42  # replaced\n", "") + "\n[extra]\nseed = 3\n"
    with pytest.raises(ValueError, match="one 'seed = ...' line"):
        acceptance.spec_with_seed(other, 7)


def test_parse_seeds(acceptance):
    assert acceptance.parse_seeds("1-3,7,2") == [1, 2, 3, 7]
    for bad in ("3-1", "a", "1,,2"):
        with pytest.raises(ValueError):
            acceptance.parse_seeds(bad)


def test_pooled_rate_standard_error(acceptance):
    units = [(1, 3), (2, 4), (1, 1), (3, 12)]
    rate, se = acceptance.pooled_rate(units)
    assert rate == 7 / 20
    # the cluster-robust delta-method variance of a ratio, written out
    residuals = [k - rate * a for k, a in units]
    assert se == pytest.approx(math.sqrt(4 / 3 * sum(r * r for r in residuals)) / 20, rel=1e-12)
    assert math.isnan(acceptance.pooled_rate([(1, 3)])[1])


def test_two_seeds_pool_to_sum_over_sum(acceptance, tmp_path, capsys):
    spec = tmp_path / "tiny.toml"
    spec.write_text(SPEC)
    out = tmp_path / "counts.json"
    summary = acceptance.main([str(spec), "--seeds", "1-2", "--jobs", "1", "--pythonpath", str(ROOT),
                               "--workdir", str(tmp_path / "work"), "--json", str(out)])
    printed = capsys.readouterr().out
    data = json.loads(out.read_text())
    runs = data["runs"]
    assert [r["seed"] for r in runs] == [1, 2]
    assert all(Path(r["lbm_bench"]) == ROOT / "lbm_bench" for r in runs)  # this checkout's code was built
    for run, row in zip(runs, summary["seeds"], strict=True):
        assert sorted(run["attempts"]) == ["bernoulli-30x20-2x2-r0.1-01", "gaussian-30x20-2x2-r0.1-01"]
        assert all(a >= 1 for a in run["attempts"].values()) and not run["failed"]
        assert row["kept"] == 2 and row["attempts"] == sum(run["attempts"].values())
        # the build's own summary line says the same
        assert f"{row['attempts']} attempt(s) for 2 table(s)" in run["summary"]
        assert f"seed {row['seed']}: 2 kept, {row['attempts']} attempts" in printed
        # the spec copy holds the seed, and the built release (deleted) is gone
        folder = tmp_path / "work" / f"seed-{run['seed']}"
        assert tomllib.loads((folder / "spec.toml").read_text())["release"]["seed"] == run["seed"]
        assert not (folder / "release").exists()
    total_kept = sum(r["kept"] for r in summary["seeds"])
    total_attempts = sum(r["attempts"] for r in summary["seeds"])
    assert summary["kept"] == total_kept == 4
    assert summary["attempts"] == total_attempts
    assert summary["rate"] == total_kept / total_attempts
    assert f"pooled: 4 kept / {total_attempts} attempts = {total_kept / total_attempts:.4f}" in printed
    configs = {r["config"]: r for r in summary["configs"]}
    assert set(configs) == {"bernoulli-30x20-2x2-r0.1", "gaussian-30x20-2x2-r0.1"}
    assert sum(r["attempts"] for r in configs.values()) == total_attempts
    assert all(r["kept"] == 2 and r["lost"] == r["attempts"] - 2 for r in configs.values())
    assert data["summary"]["rate"] == summary["rate"]

    # a second measurement compares with the first: a difference of 0 against itself
    acceptance.main(["--compare", str(out), str(out)])
    assert "new - old: +0.0000" in capsys.readouterr().out


def test_refuses_a_resumed_build(acceptance, tmp_path):
    (tmp_path / "seed-1" / "release").mkdir(parents=True)
    with pytest.raises(ValueError, match="resumed build"):
        acceptance.build_counts(SPEC, 1, tmp_path)
