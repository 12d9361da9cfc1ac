"""A MAP started from the generating labels is biased
==================================================

Beyond the paper: a MAP started from the generating labels has a biased
apparent error; the X-only MAP has not.

For any classifier ``h`` that is a function of the table alone, the generating
labels are, given ``X``, a draw from the posterior ``p(z, w | X)``, so
``E[l_item((z0, w0), h(X))] = E[r_item(h(X) | X)]``: the apparent error is an
unbiased (if noisy) estimate of the conditional risk, and the calibration of
step 3, which centres the mean apparent error on the target, centres the mean
conditional risk on it too. A MAP started from ``(z0, w0)`` depends on the
labels, the identity fails, and its apparent error is biased low: Algorithm 1
stops at the local optimum nearest to the truth.

On 50x50 Gaussian tables with 3x3 clusters whose scale is calibrated to a 30%
mean apparent error of the X-only MAP, for each table: the X-only MAP (10
random + 2 entrywise starts) and the MAP started from the generating labels
(``init=(z0, w0), n_init=0``), their apparent errors and their conditional
risks on the same 2,000 Gibbs label sets.

* left: apparent error against conditional risk for both, with the diagonal;
* right: histograms of apparent error - conditional risk.

A second, larger check (4,000 tables, 400 Gibbs sets from chains started at
the generating labels, which need no burn-in) pins both biases down. Also: the
scale a calibration on the truth-started MAP would choose (a
dichotomy with common random numbers on the same number of tables) and the
mean conditional risk of the tables it would then produce.

Usage: ``python scripts/figures/fig_truth_start_bias.py [--seed S] [--quick] [--out DIR]``
(500 tables in full mode, 12 in quick mode; 250 more tables at the scale
of the truth-started calibration).
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _figures as F  # noqa: E402  (first: limits BLAS threads before numpy loads)
import numpy as np  # noqa: E402

import lbm_bench  # noqa: E402
from lbm_bench.metrics import l_item  # noqa: E402
from lbm_bench.protocol.common_random_numbers import CommonRandomNumbers  # noqa: E402

NAME = "fig_truth_start_bias.png"
TARGET = 0.3


def _truth_start_errors(crn: CommonRandomNumbers, scale: float) -> np.ndarray:
    """Apparent error of the truth-started MAP on the common tables at ``scale``."""
    model = crn.design.model(scale)
    errors = np.empty(crn.n_tables)
    for t in range(crn.n_tables):
        z, w = crn.labels[t]
        X = model.table_from_noise(crn.noise(t), z, w)
        result = lbm_bench.map_labels(model, X, init=(z, w), n_init=0)
        errors[t] = l_item(z, w, result.rows, result.cols, match=False)
    return errors


def _truth_calibration(crn: CommonRandomNumbers, start: float, target: float) -> tuple[float, float]:
    """Dichotomy on the log scale until the truth-started mean error is within 0.005 of target."""
    low, high = None, None  # low: error above target (too hard)
    scale, error = start, math.nan
    for _ in range(40):
        error = float(_truth_start_errors(crn, scale).mean())
        if abs(error - target) <= 0.005:
            break
        if error > target:
            low = scale
        else:
            high = scale
        scale = scale * 2 if high is None else scale / 2 if low is None else math.sqrt(low * high)
    return scale, error


def main(argv=None) -> dict:
    args = F.parse_args(__doc__.splitlines()[0], argv)
    with F.one_blas_thread():
        return _main(args)


def _mean_se(values: np.ndarray) -> str:
    return f"{values.mean():.4f} +- {values.std(ddof=1) / math.sqrt(values.size):.4f}"


def _main(args) -> dict:
    out = F.Printer("Truth-started vs X-only MAP: apparent error against conditional risk")
    n_tables = 12 if args.quick else 500
    n_samples = 300 if args.quick else 2000
    cal = F.reference_calibration(args.seed, args.quick, out, target=TARGET)
    model = cal.design.model(cal.scale)
    rows = []
    for t in range(n_tables):
        rng = F.stream(args.seed, 4, t)
        X, z, w = model.sample(50, 50, rng=rng)
        rows.append(F.score_table(model, X, z, w, rng, n_samples=n_samples, truth_start=True))
    get = lambda key: np.array([r[key] for r in rows])  # noqa: E731
    x_app, x_risk = get("apparent"), get("risk")
    t_app, t_risk = get("truth_apparent"), get("truth_risk")
    out("n_tables", n_tables)
    out("gibbs_sets_per_table", n_samples)
    out("xonly_apparent_mean", _mean_se(x_app))
    out("xonly_risk_mean", _mean_se(x_risk))
    out("xonly_bias_apparent_minus_risk", _mean_se(x_app - x_risk))
    out("truth_apparent_mean", _mean_se(t_app))
    out("truth_risk_mean", _mean_se(t_risk))
    out("truth_bias_apparent_minus_risk", _mean_se(t_app - t_risk))
    out("truth_apparent_minus_xonly_apparent", _mean_se(t_app - x_app))
    out("truth_risk_minus_xonly_risk", _mean_se(t_risk - x_risk))
    out("truth_map_equals_truth_share", float(np.mean(t_app == 0)))
    out("truth_map_lower_likelihood_share",
        float(np.mean(get("truth_log_likelihood") < get("log_likelihood") - 1e-9)))
    out("truth_map_higher_likelihood_share",
        float(np.mean(get("truth_log_likelihood") > get("log_likelihood") + 1e-9)))
    out("xonly_bias_mean", float(np.mean(x_app - x_risk)))
    out("truth_bias_mean", float(np.mean(t_app - t_risk)))
    out("xonly_map_iterations_mean", float(get("n_iter").mean()), ".2f")
    out("truth_map_iterations_mean", float(get("truth_n_iter").mean()), ".2f")
    out("truth_map_iterations_max", int(get("truth_n_iter").max()))

    # A tighter check of the two biases on many more tables, with shorter
    # exact chains: one chain per table started at the generating labels (a
    # posterior draw, so no burn-in is needed) and the MAP's random starts
    # drawn from a stream of their own.
    n_check = 20 if args.quick else 4000
    check = []
    for t in range(n_check):
        rng = F.stream(args.seed, 9, t)
        X, z, w = model.sample(50, 50, rng=rng)
        xonly = lbm_bench.map_labels(model, X, rng=F.stream(args.seed, 10, t))
        truth = lbm_bench.map_labels(model, X, init=(z, w), n_init=0)
        samples = lbm_bench.gibbs_labels(model, X, n_samples=400, n_chains=2, init=(z, w), burn_in=0, rng=rng)
        check.append((
            l_item(z, w, xonly.rows, xonly.cols, match=False) - samples.risk(xonly.rows, xonly.cols).risk,
            l_item(z, w, truth.rows, truth.cols, match=False) - samples.risk(truth.rows, truth.cols).risk,
        ))
    check = np.array(check)
    out("check_tables", n_check)
    out("check_xonly_bias", _mean_se(check[:, 0]))
    out("check_truth_bias", _mean_se(check[:, 1]))

    # What a calibration on the truth-started MAP would do.
    crn = CommonRandomNumbers(cal.design, 50, 50, 20 if args.quick else 200,
                              np.random.SeedSequence([args.seed, 5]))
    truth_scale, truth_error = _truth_calibration(crn, cal.scale, TARGET)
    out("xonly_calibrated_scale", cal.scale)
    out("truth_start_calibrated_scale", truth_scale)
    out("truth_start_calibration_mean_error", truth_error)
    biased = cal.design.model(truth_scale)
    biased_risks = []
    for t in range(n_tables // 2):
        rng = F.stream(args.seed, 6, t)
        X, z, w = biased.sample(50, 50, rng=rng)
        biased_risks.append(F.score_table(biased, X, z, w, rng, n_samples=n_samples)["risk"])
    biased_risks = np.array(biased_risks)
    out("risk_at_truth_start_scale", _mean_se(biased_risks))
    out("risk_at_truth_start_scale_mean", float(biased_risks.mean()))

    plt = F.pyplot()
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.6))
    left.scatter(x_risk, x_app, s=12, alpha=0.7, color="tab:blue",
                 label=f"X-only MAP (bias {np.mean(x_app - x_risk):+.3f})")
    left.scatter(t_risk, t_app, s=12, alpha=0.7, color="tab:red", marker="^",
                 label=f"MAP started at $(z^0, w^0)$ (bias {np.mean(t_app - t_risk):+.3f})")
    top = max(x_app.max(), t_app.max(), x_risk.max(), t_risk.max()) + 0.02
    left.plot([0, top], [0, top], color="k", lw=1, label="apparent = risk")
    left.set_xlim(0, top)
    left.set_ylim(0, top)
    left.set_aspect("equal")
    left.set_xlabel("conditional risk (2,000 Gibbs sets)" if not args.quick else "conditional risk")
    left.set_ylabel(r"apparent error $\ell_{item}((z^0, w^0), \cdot)$")
    left.legend(fontsize=8, loc="upper left", framealpha=0.9)
    diff_x, diff_t = x_app - x_risk, t_app - t_risk
    lim = max(np.abs(diff_x).max(), np.abs(diff_t).max()) + 0.01
    bins = np.linspace(-lim, lim, 31)
    right.hist(diff_x, bins=bins, alpha=0.6, color="tab:blue", label="X-only MAP")
    right.hist(diff_t, bins=bins, alpha=0.6, color="tab:red", label="started at truth")
    right.axvline(0, color="k", lw=1)
    right.axvline(diff_x.mean(), color="tab:blue", ls="--", lw=1)
    right.axvline(diff_t.mean(), color="tab:red", ls="--", lw=1)
    right.set_xlabel("apparent error - conditional risk")
    right.set_ylabel("tables")
    right.legend(frameon=False, fontsize=8)
    fig.suptitle(
        f"{n_tables} tables 50x50, 3x3 Gaussian clusters, scale {cal.scale:.3f} "
        f"(X-only MAP's apparent error calibrated at {TARGET:.0%})",
        fontsize=9,
    )
    fig.tight_layout()
    return out.done(F.save(fig, args.out, NAME))


if __name__ == "__main__":
    main()
