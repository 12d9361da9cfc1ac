"""Acceptance rate of rejection sampling against table size
========================================================

Beyond the paper: acceptance rate of the rejection sampling (step 4) against
table size, at a fixed target risk.

For each square size n x n (3x3 clusters, target conditional risk 10%,
tolerance 0.01), one calibration is computed (step 3 at the package's default
criterion: the floor's mean centred on 10%) and shared by several calls to
:func:`lbm_bench.generate_table` with different seeds. Each call draws
candidate tables until one has a certified floor within 0.01 of 10%;
``table.rejection.attempts`` counts the candidates. The acceptance rate of a
size is the number of tables over the total number of candidates (with the
binomial standard error), the rejection rate its complement.

The paper reports rejection rates up to 70% for small tables, decreasing with
size.

* left: acceptance rate against n, one curve per kind, with (dotted) the
  acceptance predicted if the candidates' risks were normal with their
  observed mean and standard deviation;
* right: standard deviation of the candidates' conditional risks against n
  (the screening estimate for candidates rejected at screening), with the
  tolerance band.

Also printed per size and kind: the mean apparent error of the X-only MAP at
a scale of 0.001 (20 tables with common random numbers), the largest target
the design could be calibrated to.

Usage: ``python scripts/figures/fig_acceptance.py [--seed S] [--quick] [--out DIR]``
(full: Gaussian, Poisson and Bernoulli at n = 20, 30, 50, 100, 200, 400 with
30 tables per size and kind (15 at n = 400), 200 calibration tables per size
(50 at n = 400); quick: Gaussian at n = 20, 40 with 3 tables each).
"""

from __future__ import annotations

import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _figures as F  # noqa: E402  (first: limits BLAS threads before numpy loads)
import numpy as np  # noqa: E402

import lbm_bench  # noqa: E402
from lbm_bench.protocol.common_random_numbers import CommonRandomNumbers  # noqa: E402

NAME = "fig_acceptance.png"
TARGET = 0.1
TOLERANCE = 0.01
MAX_ATTEMPTS = 300
#: A scale near 0: the mean apparent error there is the largest risk a design can be calibrated to.
SCALE_LIMIT = 1e-3
FULL = {
    "kinds": ("gaussian", "poisson", "bernoulli"),
    "sizes": {20: 30, 30: 30, 50: 30, 100: 30, 200: 30, 400: 15},
    "calibration_tables": {400: 50},
    "n_samples": 2000,
    "screen_samples": 200,
}
QUICK = {
    "kinds": ("gaussian",),
    "sizes": {20: 3, 40: 3},
    "calibration_tables": {},
    "n_samples": 300,
    "screen_samples": 100,
}


def main(argv=None) -> dict:
    args = F.parse_args(__doc__.splitlines()[0], argv)
    with F.one_blas_thread():
        return _main(args)


def _main(args) -> dict:
    out = F.Printer(f"Acceptance rate of rejection sampling at target {TARGET}, tolerance {TOLERANCE}")
    cfg = QUICK if args.quick else FULL
    out("gibbs_sets", cfg["n_samples"])
    out("screening_sets", cfg["screen_samples"])
    results: dict[str, dict[int, dict]] = {}
    for k, kind in enumerate(cfg["kinds"]):
        results[kind] = {}
        for n, n_tables in cfg["sizes"].items():
            start = time.perf_counter()
            n_cal = 20 if args.quick else cfg["calibration_tables"].get(n, 200)
            cal = lbm_bench.calibrate_scale(kind, n, n, 3, 3, TARGET, n_tables=n_cal, rng=F.stream(args.seed, 7, k, n))
            # The hardest this design can get: the mean apparent error as the scale -> 0
            # (for every kind the blocks then coincide: Gaussian stds = dispersion ** scale
            # tend to 1 with the means, so this should be the risk of guessing).
            crn = CommonRandomNumbers(cal.design, n, n, 10 if args.quick else 20,
                                      np.random.SeedSequence([args.seed, 11, k, n]))
            ceiling = float(crn.apparent_errors(SCALE_LIMIT, n_init=10).mean())
            attempts, screened, risks, kept, failures = [], 0, [], [], 0
            for t in range(n_tables):
                seed = int(F.stream(args.seed, 8, k, n, t).integers(2**31))
                try:
                    table = lbm_bench.generate_table(
                        kind, n, n, 3, 3, TARGET, tolerance=TOLERANCE, n_samples=cfg["n_samples"],
                        screen_samples=cfg["screen_samples"], max_attempts=MAX_ATTEMPTS,
                        calibration=cal, rng=seed,
                    )
                except lbm_bench.RejectionError:
                    failures += 1
                    attempts.append(MAX_ATTEMPTS)
                    continue
                rec = table.rejection
                attempts.append(rec.attempts)
                screened += rec.screened_out
                risks.extend(rec.candidate_risks.tolist())
                kept.append(table.risk)
            total = int(np.sum(attempts))
            accepted = n_tables - failures
            rate = accepted / total
            se = math.sqrt(rate * (1 - rate) / total)
            risks_arr = np.array(risks)
            mu, sd = float(risks_arr.mean()), float(risks_arr.std(ddof=1))
            # acceptance if the candidates' risks were Normal(mu, sd)
            normal = 0.5 * (math.erf((TARGET + TOLERANCE - mu) / (sd * math.sqrt(2)))
                            - math.erf((TARGET - TOLERANCE - mu) / (sd * math.sqrt(2))))
            r = {
                "scale": cal.scale,
                "calibration_error": cal.mean_error,
                "tables": n_tables,
                "attempts": total,
                "acceptance": rate,
                "acceptance_se": se,
                "rejection": 1 - rate,
                "screened_share_of_rejections": screened / max(1, total - accepted),
                "candidate_risk_mean": mu,
                "candidate_risk_sd": sd,
                "normal_acceptance": normal,
                "max_attempts_seen": int(max(attempts)),
                "kept_mcse_max": float(max(e.mcse for e in kept)) if kept else math.nan,
                "kept_rhat_max": float(max(e.rhat for e in kept)) if kept else math.nan,
                "failures": failures,
                "ceiling": ceiling,
                "seconds": time.perf_counter() - start,
            }
            results[kind][n] = r
            out(f"{kind}_n={n}",
                f"acceptance {rate:.3f} +- {se:.3f} (rejection {1 - rate:.2f}; {accepted} tables / {total} "
                f"candidates, max {r['max_attempts_seen']}, failures {failures}); screened "
                f"{r['screened_share_of_rejections']:.2f} of rejections; candidate risk mean "
                f"{r['candidate_risk_mean']:.4f} sd {r['candidate_risk_sd']:.4f} (normal acceptance "
                f"{normal:.3f}); scale {cal.scale:.4f} "
                f"(calibration error {cal.mean_error:.4f}, {n_cal} tables); kept MCSE max "
                f"{r['kept_mcse_max']:.5f}, R-hat max {r['kept_rhat_max']:.3f}; error at scale "
                f"{SCALE_LIMIT:g} {ceiling:.4f}; {r['seconds']:.1f} s")
    for kind in results:
        out(f"{kind}_acceptance", [results[kind][n]["acceptance"] for n in cfg["sizes"]], ".3f")
        out(f"{kind}_normal_acceptance", [results[kind][n]["normal_acceptance"] for n in cfg["sizes"]], ".3f")
        out(f"{kind}_error_at_scale_{SCALE_LIMIT:g}", [results[kind][n]["ceiling"] for n in cfg["sizes"]], ".4f")
        out(f"{kind}_candidate_risk_sd", [results[kind][n]["candidate_risk_sd"] for n in cfg["sizes"]], ".4f")

    plt = F.pyplot()
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    ns = np.array(list(cfg["sizes"]))
    for kind, marker in zip(results, "os^", strict=False):
        acc = np.array([results[kind][n]["acceptance"] for n in ns])
        se = np.array([results[kind][n]["acceptance_se"] for n in ns])
        left.errorbar(ns, acc, yerr=se, fmt=marker + "-", capsize=3, label=kind)
        predicted = [results[kind][n]["normal_acceptance"] for n in ns]
        left.plot(ns, predicted, ":", color=left.lines[-1].get_color(), lw=1)
        sd = [results[kind][n]["candidate_risk_sd"] for n in ns]
        right.plot(ns, sd, marker + "-", label=kind)
    left.plot([], [], "k:", lw=1, label="normal approximation")
    right.axhline(TOLERANCE, color="k", ls=":", lw=1, label="tolerance")
    for ax in (left, right):
        ax.set_xscale("log")
        ax.set_xticks(ns)
        ax.set_xticklabels([str(n) for n in ns])
        ax.minorticks_off()
        ax.set_xlabel("table size n (n x n, 3x3 clusters)")
        ax.legend(frameon=False, fontsize=8)
    left.set_ylim(0, 1.05)
    left.set_ylabel("acceptance rate (tables / candidates)")
    left.set_title(f"rejection sampling, target {TARGET:.0%} +- {TOLERANCE}")
    right.set_yscale("log")
    right.set_yticks([0.005, 0.01, 0.02, 0.05, 0.1])
    right.yaxis.set_major_formatter(plt.FormatStrFormatter("%.3g"))
    right.yaxis.set_minor_formatter(plt.NullFormatter())
    right.set_ylabel("sd of the candidates' conditional risk")
    right.set_title("spread of the conditional risk at the calibrated scale")
    fig.tight_layout()
    return out.done(F.save(fig, args.out, NAME))


if __name__ == "__main__":
    main()
