"""Is a calibration on fewer first tables as good? Old and new side by side, over many seeds.

    python scripts/checks/calibration_first_tables.py [--seeds 20] [--first 10 5 5/10] [--truth 24]
        [--table KIND NxD GxM RISK ...] [--kept]

For each request and seed, the calibration (``calibrate_scale`` at its defaults,
``criterion="bayes"``) runs once per number of first tables (``--first``: ``K``, the
search's ``k``, :func:`lbm_bench.protocol.scale_search.first_tables` patched; or ``K/L``,
the search's steps on ``K`` tables completed to ``L`` once within reach, so that a stop is
decided on at least ``L`` tables as with ``L`` first tables; the first is the baseline),
on the same design and the same common random numbers (the ``k`` tables of a smaller
``k`` are the first of a larger one). Its calibrated scale is then judged on
``--truth`` fresh tables of the same design (an independent seed; the same tables at
every variant's scale, so the comparison is paired): their mean short-run floor minus
the target is the *calibration's error* (what the calibration is for: centring the
tables' risks on the target). With ``--kept``, the rejection step runs on each
calibration too (``generate_table(calibration=...)``, the same candidates' seeds), and
the kept table's floor and the attempts are compared.

Printed per request, one row per variant: the calibration's error (mean, standard
deviation, mean absolute, root mean square; and the paired difference of the absolute
errors against the baseline with its standard error), the relative distance of the scale
to the baseline's, the calibration's tables (evaluated, in all; its cost) and, with
``--kept``, the kept floor's distance to the target (mean absolute, sd) and the attempts.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

import lbm_bench.protocol.scale_search as scale_search
from lbm_bench import calibrate_scale, generate_table
from lbm_bench.protocol.common_random_numbers import CommonRandomNumbers
from lbm_bench.protocol.scale_search import _Secant as Secant

#: (kind, n_rows, n_cols, g, m, target): tables whose search starts on 10 tables today.
REQUESTS = [
    ("gaussian", 150, 120, 3, 3, 0.1),
    ("bernoulli", 200, 150, 3, 3, 0.1),
    ("poisson", 200, 200, 6, 6, 0.1),
    ("poisson", 500, 500, 10, 10, 0.1),
]
#: Root of the truth tables' seeds (independent of the calibrations').
TRUTH_SEED = 20261127


def tables_evaluated(history: np.ndarray) -> int:
    """Tables a calibration evaluated in all: at each scale, the most tables asked for there.

    >>> tables_evaluated(np.array([[1.0, 0.1, 0.0, 5], [0.9, 0.1, 0.0, 5], [0.9, 0.1, 0.0, 10]]))
    15
    """
    most: dict[float, int] = {}
    for scale, _, _, n in history:
        most[scale] = max(most.get(scale, 0), int(n))
    return sum(most.values())


def parse_variant(text: str) -> tuple[int, int]:
    """``"K"`` (the search and its stops on ``K`` first tables) or ``"K/L"`` (the search's
    steps on ``K`` tables, completed to ``L`` once the mean is within reach, so that a stop
    is decided on at least ``L``) as ``(K, L)``.

    >>> parse_variant("10"), parse_variant("5/10")
    ((10, 10), (5, 10))
    """
    search, _, least = text.partition("/")
    return int(search), int(least or search)


def calibrated(request, seed: int, variant: str):
    """The calibration of ``request`` at ``seed`` with the first tables of ``variant``."""
    search, least = parse_variant(variant)
    first_tables, init, needed = scale_search.first_tables, Secant.__init__, Secant.tables_needed

    def patched_first(n_rows, n_cols, most=least):
        return first_tables(n_rows, n_cols, most)

    def patched_init(self, crn, *args, **kwargs):
        init(self, crn, *args, **kwargs)
        self.least = self.k
        self.k = min(self.k, search) if self.auto else self.k

    def patched_needed(self, sd, n):  # max(n, wanted, least) within the same bounds
        return max(needed(self, sd, n), min(self.crn.n_tables, 2 * n, self.least))

    scale_search.first_tables, Secant.__init__, Secant.tables_needed = patched_first, patched_init, patched_needed
    try:
        return calibrate_scale(*request, rng=seed)
    finally:
        scale_search.first_tables, Secant.__init__, Secant.tables_needed = first_tables, init, needed


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=20, help="seeds per request (1, 2, ...)")
    parser.add_argument("--first", nargs="+", default=["10", "5", "5/10"],
                        help="first tables (K, or K/L: see parse_variant); the first is the baseline")
    parser.add_argument("--truth", type=int, default=24, help="fresh tables judging a calibrated scale")
    parser.add_argument("--table", nargs=4, action="append", metavar=("KIND", "NxD", "GxM", "RISK"))
    parser.add_argument("--kept", action="store_true", help="run the rejection step on each calibration too")
    args = parser.parse_args(argv)
    requests = REQUESTS
    if args.table:
        requests = []
        for kind, shape, clusters, risk in args.table:
            n, d = (int(v) for v in shape.lower().split("x"))
            g, m = (int(v) for v in clusters.lower().split("x"))
            requests.append((kind, n, d, g, m, float(risk)))
    for request in requests:
        target = request[-1]
        rows = {first: [] for first in args.first}
        start = time.process_time()
        for seed in range(1, args.seeds + 1):
            results = {first: calibrated(request, seed, first) for first in args.first}
            design = results[args.first[0]].design
            truth = CommonRandomNumbers(design, request[1], request[2], args.truth,
                                        np.random.SeedSequence([TRUTH_SEED, seed]), criterion="bayes")
            base_scale = results[args.first[0]].scale
            for first, result in results.items():
                error = float(truth.floors(result.scale, 10).mean()) - target
                row = [error, math.log(result.scale / base_scale), tables_evaluated(result.history)]
                if args.kept:
                    table = generate_table(*request, calibration=result, rng=seed)
                    row += [table.bayes_risk.risk - target, table.rejection.attempts]
                rows[first].append(row)
        print(f"{request[0]} {request[1]}x{request[2]} {request[3]}x{request[4]}, target {target}: "
              f"{args.seeds} seeds, {args.truth} truth tables ({time.process_time() - start:.0f} CPU s)")
        head = ("| first tables | error mean | error sd | mean abs error | rms error | abs error - baseline's "
                "(se) | mean abs log(scale / baseline's) | tables evaluated (mean) |")
        if args.kept:
            head += " kept floor: mean abs (sd) | attempts (mean) |"
        print(head)
        print("|" + " ---: |" * (head.count("|") - 1))
        base = np.array(rows[args.first[0]])
        for first in args.first:
            a = np.array(rows[first])
            err = a[:, 0]
            diff = np.abs(err) - np.abs(base[:, 0])
            se = diff.std(ddof=1) / math.sqrt(len(diff))
            line = (f"| {first} | {err.mean():+.4f} | {err.std(ddof=1):.4f} | {np.abs(err).mean():.4f} | "
                    f"{math.sqrt(np.mean(err ** 2)):.4f} | {diff.mean():+.4f} ({se:.4f}) | "
                    f"{np.abs(a[:, 1]).mean():.4f} | {a[:, 2].mean():.1f} |")
            if args.kept:
                line += f" {np.abs(a[:, 3]).mean():.4f} ({a[:, 3].std(ddof=1):.4f}) | {a[:, 4].mean():.2f} |"
            print(line, flush=True)
        print()


if __name__ == "__main__":
    main()
