"""Where the time of ``generate_table`` goes, at its defaults, on issue 15's tables.

    python scripts/benchmarks/generate_timings.py [--seed 5] [--quick] [--clock cpu] [--phases]
    python scripts/benchmarks/generate_timings.py --table gaussian 200x100 3x3 0.1 [--table ...]

Issue 15 measured ``generate_table`` at default settings on four tables (a
Gaussian 1000x1000 at 5% and at 20%, a Poisson 500x500 with 10x10 clusters at
10%, a Bernoulli 2000x1000 at 10%): 54 to 226 s, all but a second or two of it
calibration. This script re-measures the same four requests at today's
defaults (``criterion="bayes"``: the floor is the target; the Bernoulli row of
the issue used 50 calibration tables, here ``"auto"`` like the others) and
prints the issue's table: total seconds (calibration included), calibration
seconds, the seconds of the Gibbs runs (the screening runs and the certifying
run of 2,000 label sets) and the ratio of the total to them (issue 26 asks for
at most 3), the candidates drawn (and the acceptance rate, kept tables over
candidates), and the kept table's certified risk.
``--quick`` runs two of them only (the Gaussian at 5% and the Poisson); ``--table
KIND NxD GxM RISK`` (repeatable) times other requests at the same defaults instead.
``--clock cpu`` counts the process's CPU seconds (all its threads) instead of wall
seconds, in the total and in the table's timings alike: on a shared machine whose
load changes during the run, the ratio of CPU seconds holds where wall seconds stretch
each part by the load of its moment (``generate_table`` runs in this one process at
its default ``jobs=1``).
``--phases`` adds a line under each table: where its calibration's seconds went (on the
same clock: the tables drawn at each scale, their short Gibbs runs, the floor's estimator
on each run, the first guess, the design) and its evaluations (scale, mean floor, tables).
"""

from __future__ import annotations

import argparse
import collections
import time
import types
from collections.abc import Callable

#: (kind, n_rows, n_cols, g, m, target risk) of issue 15's table.
ISSUE_TABLES = [
    ("gaussian", 1000, 1000, 3, 3, 0.05),
    ("gaussian", 1000, 1000, 3, 3, 0.2),
    ("poisson", 500, 500, 10, 10, 0.1),
    ("bernoulli", 2000, 1000, 3, 3, 0.1),
]


def parse_table(kind: str, shape: str, clusters: str, risk: str) -> tuple[str, int, int, int, int, float]:
    """One ``--table KIND NxD GxM RISK`` request as ``(kind, n_rows, n_cols, g, m, risk)``.

    >>> parse_table("gaussian", "200x100", "3x2", "0.1")
    ('gaussian', 200, 100, 3, 2, 0.1)
    """
    n, d = (int(v) for v in shape.lower().split("x"))
    g, m = (int(v) for v in clusters.lower().split("x"))
    return kind, n, d, g, m, float(risk)


#: (module, function, phase) timed by ``--phases``: each call's seconds go to its phase.
PHASES = [
    ("lbm_bench.protocol.table_risks", "batch_tables", "tables"),
    ("lbm_bench.protocol.table_risks", "short_runs", "short runs"),
    ("lbm_bench.protocol.table_risks", "floor_risk", "floor estimator"),
    ("lbm_bench.protocol.scale_search", "first_guess", "first guess"),
    ("lbm_bench.protocol.calibration", "random_design", "design"),
]


def time_phases(clock: Callable[[], float]) -> dict[str, float]:
    """Wrap the functions of :data:`PHASES` (in the modules that call them) so that their
    seconds on ``clock`` add up in the returned dictionary, by phase."""
    import importlib

    seconds: dict[str, float] = collections.defaultdict(float)
    for module_name, name, phase in PHASES:
        module = importlib.import_module(module_name)
        function = getattr(module, name)

        def timed(*args, _function=function, _phase=phase, **kwargs):
            start = clock()
            try:
                return _function(*args, **kwargs)
            finally:
                seconds[_phase] += clock() - start

        setattr(module, name, timed)
    return seconds


def describe_phases(seconds: dict[str, float], history) -> str:
    """The ``--phases`` line: the calibration's seconds by phase and its evaluations."""
    parts = ", ".join(f"{phase} {seconds[phase]:.2f} s" for _, _, phase in PHASES)
    evaluations = "; ".join(f"{scale:.4g}: {mean:.4f} on {int(n)}" for scale, mean, _, n in history)
    return f"  calibration: {parts}; evaluations (scale: mean floor on tables): {evaluations}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="the Gaussian 1000x1000 at 5%% and the Poisson only")
    parser.add_argument("--table", nargs=4, action="append", metavar=("KIND", "NxD", "GxM", "RISK"),
                        help="time this request instead of issue 15's (repeatable)")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                        help="wall seconds (default) or the process's CPU seconds")
    parser.add_argument("--phases", action="store_true",
                        help="also print where each calibration's seconds went, and its evaluations")
    args = parser.parse_args(argv)
    import lbm_bench.protocol.generate as generate
    from lbm_bench import generate_table

    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    if args.clock == "cpu":  # the table's timings on the same clock
        generate.time = types.SimpleNamespace(perf_counter=time.process_time)

    seconds = time_phases(clock) if args.phases else None
    if args.table:
        try:
            requests = [parse_table(*table) for table in args.table]
        except ValueError as exc:
            parser.error(f"--table: {exc}")
    else:
        requests = [ISSUE_TABLES[0], ISSUE_TABLES[2]] if args.quick else ISSUE_TABLES
    print("| table | total | calibration | Gibbs (screening + 2,000 sets) | total / Gibbs | attempts "
          "(acceptance) | floor (target) |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for kind, n, d, g, m, risk in requests:
        if seconds is not None:
            seconds.clear()
        start = clock()
        table = generate_table(kind, n, d, g, m, risk, rng=args.seed)
        total = clock() - start
        t = table.timings
        attempts = table.rejection.attempts
        print(f"| {kind} {n}x{d} {g}x{m}, {risk:.0%} | {total:.1f} s | {t['calibration']:.1f} s | "
              f"{t['gibbs']:.1f} s | {total / t['gibbs']:.1f} | {attempts} ({1 / attempts:.2f}) | "
              f"{table.bayes_risk.risk:.4f} ({risk}) |", flush=True)
        if seconds is not None:
            print(describe_phases(seconds, table.calibration.history), flush=True)


if __name__ == "__main__":
    main()
