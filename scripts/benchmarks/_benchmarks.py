"""What the speed benchmarks of ``scripts/benchmarks/`` share: the table record, best-of
timing, peak memory, the command line.

Not a script: the benchmarks import it as a sibling module (``from _benchmarks import ...``,
their own folder put first on ``sys.path``; see scripts/README.md).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["TableSpec", "add_output_argument", "best_time", "bench_parser", "finish", "peak_mib"]


@dataclass(frozen=True)
class TableSpec:
    """A benchmark table's family, shape and clusters (each benchmark adds its own fields)."""

    kind: str
    n_rows: int
    n_cols: int
    g: int
    m: int


def best_time(func: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    """Best wall-clock seconds of ``repeats`` calls of ``func``, and the last call's value."""
    best, result = math.inf, None
    for _ in range(repeats):
        start = time.perf_counter()
        result = func()
        best = min(best, time.perf_counter() - start)
    return best, result


def peak_mib(func: Callable[[], Any]) -> float:
    """Peak memory traced by ``tracemalloc`` during one call of ``func``, in MiB."""
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        func()
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def bench_parser(prog: str, description: str, *, repeats: str) -> argparse.ArgumentParser:
    """The options every benchmark takes: ``--quick``, ``--seed``, ``--repeats`` (timed ``repeats``)."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("--quick", action="store_true", help="tiny version (seconds)")
    parser.add_argument("--seed", type=int, default=0, help="seed (default 0)")
    parser.add_argument("--repeats", type=int, default=None, help=f"timed runs per {repeats}")
    return parser


def add_output_argument(parser: argparse.ArgumentParser) -> None:
    """The ``--json PATH`` option, read by :func:`finish`."""
    parser.add_argument("--json", metavar="PATH", help="also write the rows as JSON")


def finish(json_path: str | None, rows: Any) -> None:
    """Write ``rows`` as JSON to ``json_path`` when given, and flush the printed tables."""
    if json_path:
        with open(json_path, "w") as handle:
            json.dump(rows, handle, indent=2)
    sys.stdout.flush()
