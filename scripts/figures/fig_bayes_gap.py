"""The gap between the MAP's risk and the floor
============================================

Beyond the paper: how far the MAP's conditional risk lies above the floor (the
Bayes rule for l_item), by table size and risk level.

For each kind, square size n x n (3x3 clusters) and risk level, the scale is
calibrated on the X-only MAP (``criterion="map"``: the paper's level), then
tables are drawn from the calibrated model as rejection-sampling candidates
are (no rejection). On each table: the X-only MAP, 2,000 Gibbs label sets
(8 chains, half started at the generating labels, half at the MAP, as
``generate_table`` does), the MAP's conditional risk and the floor
(:func:`lbm_bench.floor_certificate`: the Bayes labels for l_item, cross-fitted
risk). The gap is ``risk(MAP) - floor`` with its paired MCSE (same sets).

* left: mean gap against n, one curve per risk level (all kinds pooled), with
  the standard error of the mean;
* right: the gap of every table against its MAP risk, by kind.

Also printed: per (kind, n, level) the mean and max gap, the share of tables
whose gap exceeds the rejection tolerance (0.01), and the seconds of the Gibbs
run and of the floor certificate (what certifying the floor costs).

Usage: ``python scripts/figures/fig_bayes_gap.py [--seed S] [--quick] [--out DIR]``
(full: Gaussian, Poisson and Bernoulli at n = 50, 100, 200, 500, 1000 and risk
levels 5, 10, 20 and 30%, tables per setting 5, 4, 3, 2, 1; quick: Gaussian at
n = 30, 50, levels 10 and 20%, 2 tables each, 400 sets).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _figures as F  # noqa: E402  (first: limits BLAS threads before numpy loads)
import numpy as np  # noqa: E402

import lbm_bench  # noqa: E402
from lbm_bench.metrics.mcmc import chain_diagnostics  # noqa: E402

NAME = "fig_bayes_gap.png"
TOLERANCE = 0.01
FULL = {
    "kinds": ("gaussian", "poisson", "bernoulli"),
    "sizes": {50: 5, 100: 4, 200: 3, 500: 2, 1000: 1},
    "levels": (0.05, 0.1, 0.2, 0.3),
    "n_samples": 2000,
}
QUICK = {
    "kinds": ("gaussian",),
    "sizes": {30: 2, 50: 2},
    "levels": (0.1, 0.2),
    "n_samples": 400,
}


def main(argv=None) -> dict:
    args = F.parse_args(__doc__.splitlines()[0], argv)
    with F.one_blas_thread():
        return _main(args)


def _one_table(model, n: int, n_samples: int, rng: np.random.Generator) -> dict:
    X, z, w = model.sample(n, n, rng=rng)
    result = lbm_bench.map_labels(model, X, rng=rng)
    start = time.perf_counter()
    samples = lbm_bench.gibbs_labels(model, X, n_samples=n_samples, init=[(z, w), (result.rows, result.cols)],
                                     rng=rng)
    gibbs_s = time.perf_counter() - start
    start = time.perf_counter()
    g, m = model.block_shape
    floor = lbm_bench.floor_certificate(samples, starts=[(result.rows, result.cols)], n_row_clusters=g,
                                        n_col_clusters=m)
    floor_s = time.perf_counter() - start
    map_risk = samples.risk(result.rows, result.cols)
    rows_loss = np.mean(samples.rows != result.rows, axis=1)
    cols_loss = np.mean(samples.cols != result.cols, axis=1)
    map_losses = rows_loss + cols_loss - rows_loss * cols_loss
    paired, _ = chain_diagnostics(map_losses - floor.losses, samples.chain_lengths)
    return {"map": map_risk.risk, "floor": floor.risk.risk, "gap": map_risk.risk - floor.risk.risk,
            "gap_mcse": paired, "gibbs_s": gibbs_s, "floor_s": floor_s}


def _main(args) -> dict:
    out = F.Printer("Gap between the MAP's conditional risk and the floor (Bayes rule for l_item)")
    cfg = QUICK if args.quick else FULL
    out("gibbs_sets", cfg["n_samples"])
    records = []
    for k, kind in enumerate(cfg["kinds"]):
        for n, n_tables in cfg["sizes"].items():
            for j, level in enumerate(cfg["levels"]):
                cal = lbm_bench.calibrate_scale(kind, n, n, 3, 3, level, criterion="map",
                                                n_tables=20 if args.quick else "auto",
                                                rng=F.stream(args.seed, 1, k, n, j))
                model = cal.design.model(cal.scale)
                rows = [_one_table(model, n, cfg["n_samples"], F.stream(args.seed, 2, k, n, j, t))
                        for t in range(n_tables)]
                gaps = np.array([r["gap"] for r in rows])
                record = {"kind": kind, "n": n, "level": level, "tables": rows}
                records.append(record)
                out(f"{kind}_n={n}_level={level:g}",
                    f"gap mean {gaps.mean():+.4f} max {gaps.max():+.4f} (paired MCSE max "
                    f"{max(r['gap_mcse'] for r in rows):.4f}); MAP risk mean "
                    f"{np.mean([r['map'] for r in rows]):.4f}, floor mean {np.mean([r['floor'] for r in rows]):.4f}; "
                    f"share of gaps > {TOLERANCE}: {np.mean(gaps > TOLERANCE):.2f}; gibbs "
                    f"{np.mean([r['gibbs_s'] for r in rows]):.2f} s, floor "
                    f"{np.mean([r['floor_s'] for r in rows]):.2f} s per table")
    sizes, levels = list(cfg["sizes"]), list(cfg["levels"])
    table = {}
    for level in levels:
        means = []
        for n in sizes:
            gaps = [t["gap"] for r in records if r["n"] == n and r["level"] == level for t in r["tables"]]
            means.append(float(np.mean(gaps)))
            table[(level, n)] = (float(np.mean(gaps)), float(np.std(gaps, ddof=1) / np.sqrt(len(gaps)))
                                 if len(gaps) > 1 else 0.0, float(np.max(gaps)))
        out(f"mean_gap_level={level:g}", means)
    all_gaps = np.array([t["gap"] for r in records for t in r["tables"]])
    out("mean_gap", float(all_gaps.mean()))
    out("max_gap", float(all_gaps.max()))
    out("min_gap", float(all_gaps.min()))
    out("share_above_tolerance", float(np.mean(all_gaps > TOLERANCE)))
    ratio = [t["floor_s"] / t["gibbs_s"] for r in records for t in r["tables"]]
    out("floor_seconds_over_gibbs_seconds", float(np.median(ratio)))
    print("| level | " + " | ".join(f"{n}x{n}" for n in sizes) + " |")
    print("| --- |" + " --- |" * len(sizes))
    for level in levels:
        cells = [f"{table[(level, n)][0]:+.4f} (max {table[(level, n)][2]:+.3f})" for n in sizes]
        print(f"| {level:.0%} | " + " | ".join(cells) + " |")

    plt = F.pyplot()
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    for level, marker in zip(levels, "osD^", strict=False):
        mean = np.array([table[(level, n)][0] for n in sizes])
        se = np.array([table[(level, n)][1] for n in sizes])
        left.errorbar(sizes, mean, yerr=se, fmt=marker + "-", capsize=3, label=f"risk level {level:.0%}")
    left.axhline(TOLERANCE, color="k", ls=":", lw=1, label="rejection tolerance")
    left.axhline(0, color="k", lw=0.5)
    left.set_xscale("log")
    left.set_xticks(sizes)
    left.set_xticklabels([str(n) for n in sizes])
    left.minorticks_off()
    left.set_xlabel("table size n (n x n, 3x3 clusters)")
    left.set_ylabel("risk(MAP) - floor")
    left.set_title("mean gap (all kinds), +- standard error")
    left.legend(frameon=False, fontsize=8)
    for kind, marker in zip(cfg["kinds"], "os^", strict=False):
        xs = [t["map"] for r in records if r["kind"] == kind for t in r["tables"]]
        ys = [t["gap"] for r in records if r["kind"] == kind for t in r["tables"]]
        right.scatter(xs, ys, marker=marker, s=16, label=kind, alpha=0.7)
    right.axhline(TOLERANCE, color="k", ls=":", lw=1)
    right.axhline(0, color="k", lw=0.5)
    right.set_xlabel("conditional risk of the MAP labels")
    right.set_ylabel("risk(MAP) - floor")
    right.set_title("every table")
    right.legend(frameon=False, fontsize=8)
    fig.tight_layout()
    return out.done(F.save(fig, args.out, NAME))


if __name__ == "__main__":
    main()
