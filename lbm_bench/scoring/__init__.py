"""Scoring co-clusterings against a table's Gibbs label sets, one table (:func:`evaluate`)
or a whole release (:func:`run_benchmark`)."""

from lbm_bench.scoring.benchmark import run_benchmark
from lbm_bench.scoring.evaluate import Report, evaluate

__all__ = ["Report", "evaluate", "run_benchmark"]
