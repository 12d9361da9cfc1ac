"""Figure 3: more columns, better separated rows
=============================================

Figure 3 of Lomet et al.: the same entry distribution, more columns, better
separated rows.

Two tables with n = 200 rows are drawn from the distribution of Figures 1-2
(Gaussian, 3x3 clusters, scale calibrated on 50x50 tables at 20%), one with
d = 50 columns and one with d = 500. Each row (a d-dimensional vector) is
projected on the first two principal axes of the centred table and coloured by
its generating row class.

Printed per table: the variance share of the two axes, the share of the
projected variance explained by the row classes (between-class / total, 1 is
perfect separation), the X-only MAP's row error against the generating labels
and its Gibbs conditional risk (with its row and column parts).

Usage: ``python scripts/figures/fig_projection.py [--seed S] [--quick] [--out DIR]``
(quick mode: 20-table calibration and 200 Gibbs sets).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _figures as F  # noqa: E402  (first: limits BLAS threads before numpy loads)
import numpy as np  # noqa: E402

from lbm_bench.metrics import l_row  # noqa: E402

NAME = "fig3_projection.png"
N_ROWS = 200
WIDTHS = (50, 500)


def _project(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Scores on the first two principal axes and the variance share of each axis."""
    centred = X - X.mean(axis=0)
    u, s, _ = np.linalg.svd(centred, full_matrices=False)
    share = s**2 / np.sum(s**2)
    return u[:, :2] * s[:2], share[:2]


def _class_share(scores: np.ndarray, labels: np.ndarray) -> float:
    """Between-class share of the total variance of the projected points."""
    total = np.sum((scores - scores.mean(axis=0)) ** 2)
    between = sum(
        np.sum(labels == k) * np.sum((scores[labels == k].mean(axis=0) - scores.mean(axis=0)) ** 2)
        for k in np.unique(labels)
    )
    return float(between / total)


def main(argv=None) -> dict:
    args = F.parse_args(__doc__.splitlines()[0], argv)
    with F.one_blas_thread():
        return _main(args)


def _main(args) -> dict:
    out = F.Printer("Figure 3: rows projected on the first two principal axes, d = 50 and d = 500")
    cal = F.reference_calibration(args.seed, args.quick, out)
    model = cal.design.model(cal.scale)
    n_samples = 200 if args.quick else 2000
    plt = F.pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.4))
    colors = ["tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple"]
    markers = ["o", "s", "^", "D", "v"]
    for ax, d in zip(axes, WIDTHS, strict=True):
        rng = F.stream(args.seed, 3, d)
        X, z, w = model.sample(N_ROWS, d, rng=rng)
        scores, share = _project(X)
        separation = _class_share(scores, z)
        row = F.score_table(model, X, z, w, rng, n_samples=n_samples)
        out(f"d={d}_axis_variance_share", [float(v) for v in share])
        out(f"d={d}_class_share_of_projected_variance", separation)
        out(f"d={d}_map_row_error", float(l_row(z, row["map_rows"], match=False)))
        out(f"d={d}conditional_risk_of_sets", row["risk"])
        out(f"d={d}_conditional_row_loss", row["row_loss"])
        out(f"d={d}_conditional_col_loss", row["col_loss"])
        for k in range(model.n_row_clusters):
            sel = z == k
            ax.scatter(scores[sel, 0], scores[sel, 1], s=14, alpha=0.8, color=colors[k],
                       marker=markers[k], label=f"row class {k + 1}")
        ax.set_title(f"n = {N_ROWS}, d = {d}: conditional row loss {row['row_loss']:.3f}")
        ax.set_xlabel(f"principal axis 1 ({100 * share[0]:.1f}% of variance)")
        ax.set_ylabel(f"principal axis 2 ({100 * share[1]:.1f}%)")
        ax.set_aspect("equal", adjustable="datalim")
    axes[0].legend(frameon=False, fontsize=8)
    fig.suptitle(
        f"same Gaussian 3x3 entry distribution (scale {cal.scale:.3f}, as in Figures 1-2); rows coloured "
        "by generating class",
        fontsize=9,
    )
    fig.tight_layout()
    return out.done(F.save(fig, args.out, NAME))


if __name__ == "__main__":
    main()
