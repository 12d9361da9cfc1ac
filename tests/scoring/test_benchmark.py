"""The registry of the benchmark's tracks (lbm_bench.scoring.benchmark): every track is an object the
package reads, run_benchmark dispatches on it, and the command line takes its choices and options
from it (issue 32, item 5)."""

import csv
import dataclasses
from pathlib import Path

import numpy as np
import pytest

from lbm_bench import cli
from lbm_bench._records import Record, count, setting
from lbm_bench.algorithms import catalog as algorithm_catalog
from lbm_bench.scoring import benchmark
from lbm_bench.scoring.harness import Track


def test_every_track_has_its_algorithms_contract():
    assert benchmark.track_names() == tuple(algorithm_catalog.CONTRACTS) == ("known-clusters", "unknown-clusters")
    for name, track in benchmark.TRACKS.items():
        assert track.name == name and track.contract is algorithm_catalog.CONTRACTS[name]
        assert track.signature.startswith("fit(X, ") and track.signature.endswith(", *, rng)")
        assert issubclass(track.options, Record)
    assert benchmark.DEFAULT_TRACK == "known-clusters"
    assert benchmark.get_track("unknown-clusters").options.names() == ("max_clusters",)
    assert benchmark.get_track("known-clusters").options.names() == ()
    with pytest.raises(ValueError, match="track must be one of 'known-clusters', 'unknown-clusters', got 'unknown-c"):
        benchmark.get_track("unknown-cluster")


def test_options_are_the_tracks(release, tmp_path):
    """An option is checked by the track that declares it, defaults filled in; another track's is
    refused saying whose it is, before anything is written."""
    unknown = benchmark.get_track("unknown-clusters")
    assert unknown.option_values({}) == {"max_clusters": (8, 8)}
    assert unknown.option_values({"max_clusters": [3, 4]}) == {"max_clusters": (3, 4)}
    assert unknown.option_values({"max_clusters": None}) == {"max_clusters": (8, 8)}
    with pytest.raises(ValueError, match=r"max_clusters\[0\]"):
        unknown.option_values({"max_clusters": (0, 4)})
    with pytest.raises(ValueError, match="the unknown-clusters track has no option colour"):
        unknown.option_values({"colour": 1})
    with pytest.raises(ValueError, match="unknown option|has no option colour"):
        benchmark.run_benchmark(release, ["cem"], tmp_path / "x", colour=1)
    with pytest.raises(ValueError, match=r"max_clusters is an option of the unknown-clusters track"):
        benchmark.run_benchmark(release, ["cem"], tmp_path / "x", max_clusters=(3, 3))
    assert not (tmp_path / "x").exists()


# -- a track of the test's own: the registry is what run_benchmark and the CLI read ----------------


def _toy_fit(X, n_levels, *, rng):
    return np.zeros(X.shape[0], int), np.zeros(X.shape[1], int)


@dataclasses.dataclass(frozen=True)
class _ToyOptions(Record):
    levels: int = setting(2, count(1), "--levels", "how many levels the toy asks for", metavar="N", parse=int)


def _toy_run(release_dir, algorithms, out_dir, *, n_jobs, seed, progress, timeout, levels):
    rows = [{"algorithm": name, "levels": levels, "seed": seed, "error": ""} for name in algorithms]
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "summary.md").write_text(f"toy: {len(rows)} runs at {levels} levels\n", encoding="utf-8")
    with open(out / "results.csv", "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=["algorithm", "levels"], extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    return rows


@pytest.fixture()
def toy_track(monkeypatch):
    contract = algorithm_catalog.Contract("toy-levels", "fit(X, n_levels, *, rng)", {"toy": _toy_fit})
    track = Track(contract=contract, description="the toy is told a number of levels", run=_toy_run,
                  columns=lambda rows: ["algorithm", "levels"], summarise=lambda rows: "toy", options=_ToyOptions)
    monkeypatch.setitem(algorithm_catalog.CONTRACTS, contract.track, contract)
    monkeypatch.setitem(benchmark.TRACKS, track.name, track)
    return track


def test_run_benchmark_dispatches_on_the_registry(toy_track, tmp_path):
    rows = benchmark.run_benchmark(tmp_path / "release", ["toy"], tmp_path / "out", track="toy-levels", levels=3,
                                   seed=4)
    assert rows == [{"algorithm": "toy", "levels": 3, "seed": 4, "error": ""}]
    assert benchmark.run_benchmark(tmp_path / "release", ["toy"], tmp_path / "out", track="toy-levels")[0][
        "levels"] == 2
    with pytest.raises(ValueError, match="levels is an option of the toy-levels track"):
        benchmark.run_benchmark(tmp_path / "release", ["cem"], tmp_path / "out", levels=3)
    # numpy said "expected non-negative integer" after the folder was made (issue 48)
    with pytest.raises(ValueError, match="seed must be a non-negative seed, got -1"):
        benchmark.run_benchmark(tmp_path / "release", ["toy"], tmp_path / "refused", track="toy-levels",
                                seed=-1)
    assert not (tmp_path / "refused").exists()


def test_the_command_line_reads_the_registry(toy_track, tmp_path, capsys, monkeypatch):
    """A registered track is a --track choice, its options are flags (help and default from the
    option's field), parsed and refused on another track without a line of the CLI naming them."""
    monkeypatch.setenv("COLUMNS", "1000")  # argparse's help on one line per option
    text = cli.build_parser().parse_args(["benchmark", "r", "--algorithm", "a", "--out", "o"])
    assert text.track == "known-clusters" and text.levels is None and text.max_clusters is None
    usage = " ".join(cli.build_parser()._subparsers._group_actions[0].choices["benchmark"].format_help().split())
    assert "toy-levels (the toy is told a number of levels)" in usage
    assert "--levels N with --track toy-levels: how many levels the toy asks for (default 2)" in usage
    assert "toy-levels: toy" in usage  # its built-ins
    status = cli.main(["benchmark", str(tmp_path), "--track", "toy-levels", "--algorithm", "toy", "--levels", "5",
                       "--out", str(tmp_path / "out")])
    assert status == 0 and "toy: 1 runs at 5 levels" in capsys.readouterr().out
    assert cli.main(["benchmark", str(tmp_path), "--algorithm", "cem", "--levels", "5", "--out",
                     str(tmp_path / "known")]) == 2
    assert capsys.readouterr().err.strip() == (
        "lbm-bench benchmark: error: --levels goes with --track toy-levels (on the known-clusters track every "
        "algorithm is told the table's numbers of clusters)")
    assert cli.main(["benchmark", str(tmp_path), "--track", "toy-levels", "--algorithm", "toy", "--levels", "x",
                     "--out", str(tmp_path / "out")]) == 2
    assert "--levels invalid literal for int()" in capsys.readouterr().err
    assert not (tmp_path / "known").exists()
