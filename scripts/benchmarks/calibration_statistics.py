"""What the calibration measures on each table, what it costs, and what it centres.

    python scripts/benchmarks/calibration_statistics.py [--tables 100] [--large-tables 8]
    python scripts/benchmarks/calibration_statistics.py --config gaussian 200x100 3x3 0.1 [--config ...]

For each configuration, a design (``random_design(kind, g, m, rng=1)``) at the scale of
its first guess for the target (``protocol.separation.first_guess``: near the calibrated
scale), and the same tables as a calibration draws them (``CommonRandomNumbers``, seed 7),
this prints, over the tables:

- ``apparent``: the X-only MAP's apparent error (the statistic of ``criterion="map"``),
  its spread over the tables and the CPU milliseconds per table (the table and its MAP);
- ``short floor``: the short-run floor (200 sets from 4 chains started at the generating
  labels; the statistic of ``criterion="bayes"``), spread and CPU ms per table;
- ``certificate``: the floor as ``generate_table`` certifies it (2,000 sets, 8 chains
  started half at the generating labels and half at the X-only MAP, 50 burn-in sweeps);
- ``short - cert``: the mean paired difference and its standard error: what the
  calibration of the floor would be off by.

BLAS runs on one thread (as the release build's workers). CPU times are
``time.process_time`` of this process. Large tables (above a million entries) use
``--large-tables`` tables.
"""

from __future__ import annotations

import argparse
import math
import time

#: (kind, n_rows, n_cols, g, m, target risk): small to large tables, at high risks.
CONFIGS = [
    ("gaussian", 50, 50, 3, 3, 0.2),
    ("poisson", 50, 50, 3, 3, 0.2),
    ("bernoulli", 50, 50, 3, 2, 0.2),
    ("gaussian", 100, 80, 4, 3, 0.2),
    ("bernoulli", 200, 100, 3, 3, 0.1),
    ("poisson", 500, 500, 10, 10, 0.1),
    ("gaussian", 1000, 1000, 3, 3, 0.2),
]


def parse_config(kind: str, shape: str, clusters: str, risk: str) -> tuple[str, int, int, int, int, float]:
    """One ``--config KIND NxD GxM RISK`` as ``(kind, n_rows, n_cols, g, m, risk)``.

    >>> parse_config("poisson", "50x40", "3x2", "0.1")
    ('poisson', 50, 40, 3, 2, 0.1)
    """
    n, d = (int(v) for v in shape.lower().split("x"))
    g, m = (int(v) for v in clusters.lower().split("x"))
    return kind, n, d, g, m, float(risk)


def measure(kind: str, n: int, d: int, g: int, m: int, risk: float, n_tables: int) -> dict:
    """The three statistics of ``n_tables`` tables of one configuration (see the module doc)."""
    import numpy as np

    from lbm_bench import floor_certificate, gibbs_labels, random_design
    from lbm_bench.protocol.common_random_numbers import CommonRandomNumbers
    from lbm_bench.protocol.separation import first_guess
    from lbm_bench.protocol.table_risks import batch_tables, classifier_labels, short_run_floors

    design = random_design(kind, g, m, rng=1)
    scale = first_guess(design, n, d, risk)[0]
    crn = CommonRandomNumbers(design, n, d, n_tables, np.random.SeedSequence(7))
    model = design.model(scale)
    rows = []
    cpu_apparent = cpu_short = 0.0
    for t in range(n_tables):
        labels, seed, noise = crn.table_labels(t), crn.table_seeds[t], crn.noise(t)
        start = time.process_time()  # as the calibration: the table, then its MAP
        tables = batch_tables(model, [labels], [noise])
        found = classifier_labels(model, tables, [seed], 10)[0]
        cpu_apparent += time.process_time() - start
        start = time.process_time()  # the table, then its short run and floor
        short = short_run_floors(model, batch_tables(model, [labels], [noise]), [labels], [seed])[0]
        cpu_short += time.process_time() - start
        X, (z0, w0) = tables[0], labels
        row, col = np.mean(found[0] != z0), np.mean(found[1] != w0)
        samples = gibbs_labels(model, X, n_samples=2000, n_chains=8, burn_in=50, init=[(z0, w0), found],
                               rng=np.random.default_rng(1000 + t))
        certificate = floor_certificate(samples, starts=[found], n_row_clusters=g, n_col_clusters=m).risk.risk
        rows.append((row + col - row * col, short, certificate))
    values = np.array(rows)
    difference = values[:, 1] - values[:, 2]
    return {
        "config": f"{kind} {n}x{d} {g}x{m} @{risk:g}", "scale": scale, "tables": n_tables,
        "apparent": (values[:, 0].mean(), values[:, 0].std(ddof=1), 1000 * cpu_apparent / n_tables),
        "short": (values[:, 1].mean(), values[:, 1].std(ddof=1), 1000 * cpu_short / n_tables),
        "certificate": (values[:, 2].mean(), values[:, 2].std(ddof=1)),
        "difference": (difference.mean(), difference.std(ddof=1) / math.sqrt(n_tables)),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=100, help="tables per configuration (default 100)")
    parser.add_argument("--large-tables", type=int, default=8, help="tables above a million entries (default 8)")
    parser.add_argument("--config", nargs=4, action="append", metavar=("KIND", "NxD", "GxM", "RISK"),
                        help="measure this configuration instead of the default ones (repeatable)")
    args = parser.parse_args(argv)
    from threadpoolctl import threadpool_limits

    try:
        configs = [parse_config(*c) for c in args.config] if args.config else CONFIGS
    except ValueError as exc:
        parser.error(f"--config: {exc}")
    print(f"{'configuration':30} {'tables':>6} {'apparent mean  sd   ms':>22} {'short floor mean  sd   ms':>25} "
          f"{'certificate mean  sd':>20} {'short - cert':>16}")
    with threadpool_limits(limits=1, user_api="blas"):
        for kind, n, d, g, m, risk in configs:
            k = args.large_tables if n * d > 10**6 - 1 else args.tables
            r = measure(kind, n, d, g, m, risk, k)
            a, s, c, diff = r["apparent"], r["short"], r["certificate"], r["difference"]
            print(f"{r['config']:30} {r['tables']:6d} {a[0]:10.4f} {a[1]:6.4f} {a[2]:5.1f} "
                  f"{s[0]:13.4f} {s[1]:6.4f} {s[2]:5.1f} {c[0]:15.4f} {c[1]:6.4f} {diff[0]:+9.4f} +- {diff[1]:.4f}",
                  flush=True)


if __name__ == "__main__":
    main()
