"""Scoring co-clusterings against a table's Gibbs label sets, one table (:func:`evaluate`)
or a whole release on one of the benchmark's tracks (:func:`run_benchmark`, :data:`TRACKS`)."""

from lbm_bench.scoring.benchmark import TRACKS, get_track, run_benchmark, track_names
from lbm_bench.scoring.evaluate import evaluate
from lbm_bench.scoring.harness import Track
from lbm_bench.scoring.report import Report

__all__ = ["TRACKS", "Report", "Track", "evaluate", "get_track", "run_benchmark", "track_names"]
