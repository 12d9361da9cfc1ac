"""Comparison of partitions and of co-clusterings, and the conditional risk (being split)."""

from lbm_bench.metrics.partition import *  # noqa: F403
from lbm_bench.metrics.partition import __all__  # noqa: F401
