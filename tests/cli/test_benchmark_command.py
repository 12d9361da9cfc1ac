"""``lbm-bench benchmark`` (lbm_bench.cli.benchmark_command): the tracks and their options on the
command line, and the refusals before any run (the harness: tests/scoring/)."""

import pytest

from lbm_bench.cli import build_parser, main
from lbm_bench.cli.benchmark_command import track_options
from lbm_bench.scoring.benchmark import TRACKS
from tests.cli.helpers import REPO

DATA = REPO / "tests" / "data"


def test_a_tracks_options_are_parsed_and_refused_on_another_track():
    args = build_parser().parse_args(["benchmark", "r", "--algorithm", "cem", "--out", "o",
                                      "--max-clusters", "4x3"])
    assert track_options(args, TRACKS["unknown-clusters"]) == {"max_clusters": (4, 3)}
    with pytest.raises(ValueError, match="^--max-clusters goes with --track unknown-clusters"):
        track_options(args, TRACKS["known-clusters"])
    args.max_clusters = "0x4"
    with pytest.raises(ValueError, match="^--max-clusters must be at least 1x1, got '0x4'"):
        track_options(args, TRACKS["unknown-clusters"])


@pytest.mark.parametrize("args, message", [
    (["--algorithm", "cem", "--track", "nosuch"],
     "--track must be known-clusters or unknown-clusters, got 'nosuch'"),
    (["--algorithm", "cem", "--timeout", "0"],
     "--timeout must be a positive number of seconds, got 0"),
    (["--algorithm", "cem-icl"],
     "'cem-icl' is an algorithm of the unknown-clusters track, called as fit(X, max_row_clusters, "
     "max_col_clusters, *, rng) (--track unknown-clusters); the known-clusters track's"),
])
def test_refusals_before_any_run(args, message, tmp_path, capsys):
    assert main(["benchmark", str(DATA), *args, "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"lbm-bench benchmark: error: {message}") and len(err.splitlines()) == 1


def test_a_refusal_of_the_workers_names_the_jobs_flag():
    from lbm_bench.cli.program import error_line

    args = build_parser().parse_args(["benchmark", "r", "--algorithm", "cem", "--out", "o", "--jobs", "0"])
    refusal = ValueError("jobs must be >= 1, got 0")  # as the task service says it
    assert error_line("benchmark", refusal, args.arguments) == (
        "lbm-bench benchmark: error: --jobs must be >= 1, got 0")
