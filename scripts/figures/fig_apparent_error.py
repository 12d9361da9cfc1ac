"""Figure 1: the apparent error of the MAP is a noisy measure
==========================================================

Figure 1 of Lomet et al.: the apparent error of the MAP is a noisy measure.

On 50x50 tables with 3x3 clusters drawn from ONE Gaussian latent block model
whose scale is calibrated so that the X-only MAP's mean apparent error is 20%
(the paper's "estimated (unconditional) Bayes' risk of 20%"):

* left: histogram of the apparent error ``l_item((z0, w0), MAP(X))`` of the
  X-only MAP (Algorithm 1, 10 random + 2 entrywise starts);
* right: histogram of ``apparent error - conditional risk``, the conditional
  risk ``r_item(MAP(X) | X)`` being estimated from 2,000 Gibbs label sets.

Also prints the Gibbs Monte Carlo standard errors and R-hats (the paper: MCSE
below 1%) and the iterations of Algorithm 1 (the paper: always fewer than 10,
typically 2-3, and a final solution stable with respect to initialisation).

Usage: ``python scripts/figures/fig_apparent_error.py [--seed S] [--quick] [--out DIR]``
(200 tables in full mode, 12 in quick mode).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _figures as F  # noqa: E402  (first: limits BLAS threads before numpy loads)
import numpy as np  # noqa: E402

NAME = "fig1_apparent_error.png"


def main(argv=None) -> dict:
    args = F.parse_args(__doc__.splitlines()[0], argv)
    with F.one_blas_thread():
        return _main(args)


def _main(args) -> dict:
    out = F.Printer("Figure 1: apparent error vs conditional risk of the X-only MAP")
    n_tables = 12 if args.quick else 200
    n_samples = 300 if args.quick else 2000
    cal = F.reference_calibration(args.seed, args.quick, out)
    model = cal.design.model(cal.scale)
    rows = []
    for t in range(n_tables):
        rng = F.stream(args.seed, 1, t)
        X, z, w = model.sample(50, 50, rng=rng)
        rows.append(F.score_table(model, X, z, w, rng, n_samples=n_samples))
    apparent = np.array([r["apparent"] for r in rows])
    risk = np.array([r["risk"] for r in rows])
    diff = apparent - risk
    mcse = np.array([r["mcse"] for r in rows])
    rhat = np.array([r["rhat"] for r in rows])
    n_iter = np.array([r["n_iter"] for r in rows])
    stable = np.array([r["stable"] for r in rows])
    matched = np.array([r["matched_apparent"] for r in rows])

    out("n_tables", n_tables)
    out("gibbs_sets_per_table", n_samples)
    for key, values in (("apparent_error", apparent), ("conditional_risk", risk), ("difference", diff)):
        d = F.describe(values)
        out(f"{key}_mean", d["mean"])
        out(f"{key}_sd", d["sd"])
        out(f"{key}_quartiles", [d["q1"], d["median"], d["q3"]])
        out(f"{key}_range", [d["min"], d["max"]])
    out("mean_abs_difference", float(np.mean(np.abs(diff))))
    out("share_abs_difference_above_0.05", float(np.mean(np.abs(diff) > 0.05)))
    out("corr_apparent_risk", float(np.corrcoef(apparent, risk)[0, 1]))
    out("apparent_error_matched_differs", int(np.sum(matched != apparent)))
    out("mcse_mean", float(mcse.mean()), ".5f")
    out("mcse_max", float(mcse.max()), ".5f")
    out("rhat_max", float(np.nanmax(rhat)))
    out("rhat_share_above_1.05", float(np.mean(rhat > 1.05)))
    out("map_iterations_mean", float(n_iter.mean()), ".2f")
    out("map_iterations_max", int(n_iter.max()))
    out("map_iterations_counts", {int(k): int(v) for k, v in zip(*np.unique(n_iter, return_counts=True), strict=True)})
    out("map_share_starts_at_best", float(stable.mean()))
    out("map_tables_all_starts_agree", float(np.mean(stable == 1.0)))

    plt = F.pyplot()
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.8))
    bins = np.arange(0, max(0.5, apparent.max()) + 0.03, 0.025)
    left.hist(apparent, bins=bins, color="tab:blue", edgecolor="white")
    left.axvline(apparent.mean(), color="k", ls="--", lw=1, label=f"mean {apparent.mean():.3f}")
    left.set_xlabel(r"apparent error $\ell_{item}((z^0, w^0), \tilde h_{full}(X))$")
    left.set_ylabel("tables")
    left.set_title(f"apparent error (sd {apparent.std(ddof=1):.3f})")
    left.legend(frameon=False)
    lim = max(0.05, np.abs(diff).max() + 0.01)
    right.hist(diff, bins=np.linspace(-lim, lim, 26), color="tab:orange", edgecolor="white")
    right.axvline(0, color="k", lw=1)
    right.set_xlabel(r"apparent error $-$ conditional risk $r_{item}(\tilde h_{full}(X))$")
    right.set_title(f"difference (sd {diff.std(ddof=1):.3f})")
    fig.suptitle(
        f"{n_tables} tables 50x50, 3x3 Gaussian clusters, one distribution "
        f"(calibrated apparent error {cal.mean_error:.3f}); {n_samples} Gibbs sets per table",
        fontsize=9,
    )
    fig.tight_layout()
    return out.done(F.save(fig, args.out, NAME))


if __name__ == "__main__":
    main()
