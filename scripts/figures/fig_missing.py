"""Block CEM as entries go missing, at one certified difficulty
============================================================

Beyond the paper: how block CEM degrades as entries go missing, on tables of one certified
difficulty.

For each kind and missing rate (entries missing completely at random), tables of 120x80
entries with 3x2 clusters are generated with their floor (the risk of the Bayes labels for
l_item given the observed entries) at 10%: the Bayes rule faces the same difficulty at
every rate, while an algorithm that estimates the parameters has fewer entries to estimate
them from. The seeds are the same at every rate, so each kind's tables share one design
(proportions, pattern, dispersions) whose scale is calibrated anew for each rate. On each
table, block CEM (the built-in ``cem``, fitted on the observed entries only, its family
given) and double k-means (which imputes column means) are scored by
:func:`lbm_bench.evaluate`: their excess conditional risk over the table's floor, with its
paired Monte Carlo standard error.

* left: CEM's mean excess risk over the floor against the missing rate, one curve per kind,
  +- the standard error over the tables;
* right: the same for double k-means (imputation), for contrast.

Also printed: per (kind, rate) the mean excess of both, the tables' floors and missing
fractions, and the calibrated scales (higher rates need larger scales for the same floor).

Usage: ``python scripts/figures/fig_missing.py [--seed S] [--quick] [--out DIR]``
(full: Gaussian, Poisson and Bernoulli at 0, 10, 30 and 50% missing, 6 tables each;
quick: Gaussian 60x40 at 0 and 30%, 2 tables each, 200 label sets).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _figures as F  # noqa: E402  (first: limits BLAS threads before numpy loads)
import numpy as np  # noqa: E402

import lbm_bench  # noqa: E402
from lbm_bench.algorithms import cem, double_kmeans  # noqa: E402

NAME = "fig_missing.png"
TARGET = 0.1
FULL = {"kinds": ("gaussian", "poisson", "bernoulli"), "rates": (0.0, 0.1, 0.3, 0.5), "shape": (120, 80),
        "tables": 6, "settings": {}}
QUICK = {"kinds": ("gaussian",), "rates": (0.0, 0.3), "shape": (60, 40), "tables": 2,
         "settings": {"n_samples": 200, "tolerance": 0.03}}


def main(argv=None) -> dict:
    args = F.parse_args(__doc__.splitlines()[0], argv)
    with F.one_blas_thread():
        return _main(args)


def _score(table, rng) -> dict:
    g, m = table.n_row_clusters, table.n_col_clusters
    out = {"floor": table.bayes_risk.risk, "missing": table.table_data().missing_fraction}
    for name, fit in (("cem", lambda X: cem(X, g, m, kind=table.kind, rng=rng)),
                      ("kmeans", lambda X: double_kmeans(X, g, m, rng=rng))):
        report = lbm_bench.evaluate(table, *fit(table.data))
        out[name], out[f"{name}_mcse"] = report.excess_risk, report.excess_mcse
    return out


def _main(args) -> dict:
    out = F.Printer("Excess risk of block CEM over the floor as entries go missing (floor at 10%)")
    cfg = QUICK if args.quick else FULL
    n, d = cfg["shape"]
    out("tables", f"{n}x{d}, 3x2 clusters, floor target {TARGET}, {cfg['tables']} tables per kind and rate")
    results: dict[tuple[str, float], list[dict]] = {}
    for k, kind in enumerate(cfg["kinds"]):
        for j, rate in enumerate(cfg["rates"]):
            options = {"missing": rate} if rate else {}
            request = lbm_bench.TableRequest(kind, n, d, 3, 2, TARGET, model_options=options)
            settings = lbm_bench.GenerationSettings(**cfg["settings"])
            # the same seeds at every rate: the same design (the random mechanism draws nothing
            # more), and each table's labels and noise from the same streams
            seed = int(F.stream(args.seed, k).integers(2**31))
            first = lbm_bench.generate_table(request, settings=settings, rng=seed)
            tables = [first] + [
                lbm_bench.generate_table(request, settings=settings, calibration=first.calibration,
                                         rng=int(F.stream(args.seed, k, t).integers(2**31)))
                for t in range(1, cfg["tables"])
            ]
            rows = [_score(table, F.stream(args.seed, 9, k, j, t)) for t, table in enumerate(tables)]
            results[(kind, rate)] = rows
            out(f"{kind}_missing={rate:g}",
                f"cem excess {np.mean([r['cem'] for r in rows]):+.4f} (paired MCSE max "
                f"{max(r['cem_mcse'] for r in rows):.4f}), double-kmeans excess "
                f"{np.mean([r['kmeans'] for r in rows]):+.4f}; floor mean {np.mean([r['floor'] for r in rows]):.4f}"
                f", missing {np.mean([r['missing'] for r in rows]):.3f}, scale {first.scale:.4g}")
    rates = list(cfg["rates"])
    for kind in cfg["kinds"]:
        out(f"cem_mean_excess_{kind}", [float(np.mean([r["cem"] for r in results[(kind, rate)]])) for rate in rates])
        out(f"kmeans_mean_excess_{kind}",
            [float(np.mean([r["kmeans"] for r in results[(kind, rate)]])) for rate in rates])
    out("missing_rates", rates, ".2f")

    plt = F.pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    for ax, name, title in ((axes[0], "cem", "block CEM (observed entries)"),
                            (axes[1], "kmeans", "double k-means (column means imputed)")):
        for kind, marker in zip(cfg["kinds"], "os^", strict=False):
            values = [[r[name] for r in results[(kind, rate)]] for rate in rates]
            mean = np.array([np.mean(v) for v in values])
            se = np.array([np.std(v, ddof=1) / np.sqrt(len(v)) if len(v) > 1 else 0.0 for v in values])
            ax.errorbar(rates, mean, yerr=se, fmt=marker + "-", capsize=3, label=kind)
        ax.axhline(0, color="k", lw=0.5)
        ax.set_xticks(rates)
        ax.set_xticklabels([f"{rate:.0%}" for rate in rates])
        ax.set_xlabel("entries missing (completely at random)")
        ax.set_title(title)
        ax.legend(frameon=False, fontsize=8)
    axes[0].set_ylabel(f"excess conditional risk over the floor ({TARGET:.0%})")
    fig.tight_layout()
    return out.done(F.save(fig, args.out, NAME))


if __name__ == "__main__":
    main()
