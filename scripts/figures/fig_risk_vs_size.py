"""Figure 2: the conditional risk varies between tables and falls with size
========================================================================

Figure 2 of Lomet et al.: the conditional risk varies from table to table and
falls as the table grows, the entry distribution being fixed.

The distribution is the one of Figure 1 (Gaussian, 3x3 clusters, scale
calibrated on 50x50 tables to a 20% mean apparent error of the X-only MAP).
For square tables of growing size n x n drawn from that same distribution, the
conditional risk ``r_item(MAP(X) | X)`` of the X-only MAP is estimated from
2,000 Gibbs label sets per table.

* left: histogram of the conditional risk over the 50x50 tables;
* middle: its mean and inter-quartile range against n (log axis);
* right: the mean on a log scale (sizes whose estimates are all zero omitted).

Usage: ``python scripts/figures/fig_risk_vs_size.py [--seed S] [--quick] [--out DIR]``
(full: n = 25, 35, 50, 70, 100, 140, 200, 280, 400 with 200 tables each and
n = 800 with 100 tables; quick: n = 25, 50, 100 with 8 tables each).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _figures as F  # noqa: E402  (first: limits BLAS threads before numpy loads)
import numpy as np  # noqa: E402

NAME = "fig2_risk_vs_size.png"
FULL_SIZES = {25: 200, 35: 200, 50: 200, 70: 200, 100: 200, 140: 200, 200: 200, 280: 200, 400: 200, 800: 100}
QUICK_SIZES = {25: 8, 50: 8, 100: 8}


def main(argv=None) -> dict:
    args = F.parse_args(__doc__.splitlines()[0], argv)
    with F.one_blas_thread():
        return _main(args)


def _main(args) -> dict:
    out = F.Printer("Figure 2: conditional risk against table size, one entry distribution")
    sizes = QUICK_SIZES if args.quick else FULL_SIZES
    n_samples = 200 if args.quick else 2000
    cal = F.reference_calibration(args.seed, args.quick, out)
    model = cal.design.model(cal.scale)
    out("gibbs_sets_per_table", n_samples)
    risks: dict[int, np.ndarray] = {}
    summary = {}
    for n, n_tables in sizes.items():
        values, mcse = [], []
        for t in range(n_tables):
            rng = F.stream(args.seed, 2, n, t)
            X, z, w = model.sample(n, n, rng=rng)
            row = F.score_table(model, X, z, w, rng, n_samples=n_samples)
            values.append(row["risk"])
            mcse.append(row["mcse"])
        risks[n] = np.array(values)
        d = F.describe(values)
        summary[n] = d
        out(f"n={n}", f"tables {n_tables}  mean {d['mean']:.5f}  sd {d['sd']:.5f}  "
            f"quartiles [{d['q1']:.5f}, {d['median']:.5f}, {d['q3']:.5f}]  IQR {d['q3'] - d['q1']:.5f}  "
            f"share zero {np.mean(risks[n] == 0):.2f}  max MCSE {max(mcse):.5f}")
    out("sizes", list(sizes))
    out("mean_risk", [summary[n]["mean"] for n in sizes], ".5f")
    out("iqr_width", [summary[n]["q3"] - summary[n]["q1"] for n in sizes], ".5f")
    d50 = summary[50]
    out("risk_50x50_mean", d50["mean"])
    out("risk_50x50_sd", d50["sd"])
    out("risk_50x50_range", [d50["min"], d50["max"]])

    plt = F.pyplot()
    fig, (left, mid, right) = plt.subplots(1, 3, figsize=(13, 3.8))
    left.hist(risks[50], bins=np.arange(0, risks[50].max() + 0.03, 0.02), color="tab:blue", edgecolor="white")
    left.set_xlabel(r"conditional risk $r_{item}(\tilde h_{full}(X))$")
    left.set_ylabel("tables")
    left.set_title(f"50x50 tables (mean {d50['mean']:.3f}, sd {d50['sd']:.3f})")
    ns = np.array(list(sizes))
    means = np.array([summary[n]["mean"] for n in sizes])
    q1 = np.array([summary[n]["q1"] for n in sizes])
    q3 = np.array([summary[n]["q3"] for n in sizes])
    medians = np.array([summary[n]["median"] for n in sizes])
    # the IQR as bars from q1 to q3 (the mean can lie above q3 when most estimates are 0)
    mid.vlines(ns, q1, q3, color="tab:blue", lw=6, alpha=0.35, label="inter-quartile range")
    mid.plot(ns, means, "o-", color="tab:blue", label="mean")
    mid.plot(ns, medians, "_", color="k", ms=10, label="median")
    mid.legend(frameon=False)
    mid.set_xscale("log")
    mid.set_xticks(ns)
    mid.set_xticklabels([str(n) for n in ns], fontsize=8)
    mid.minorticks_off()
    mid.set_xlabel("table size n (n x n)")
    mid.set_ylabel("conditional risk")
    mid.set_title("mean and inter-quartile range")
    positive = means > 0
    right.plot(ns[positive], means[positive], "o-", color="tab:blue", label="mean")
    right.set_yscale("log")
    right.set_xscale("log")
    right.set_xticks(ns)
    right.set_xticklabels([str(n) for n in ns], fontsize=8)
    right.minorticks_off()
    right.set_xlabel("table size n (n x n)")
    right.set_title("mean, log scale")
    fig.suptitle(
        f"one Gaussian 3x3 entry distribution (scale {cal.scale:.3f}, calibrated on 50x50 at 20%); "
        f"{n_samples} Gibbs sets per table",
        fontsize=9,
    )
    fig.tight_layout()
    return out.done(F.save(fig, args.out, NAME))


if __name__ == "__main__":
    main()
