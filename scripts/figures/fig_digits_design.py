"""Tables like scikit-learn's handwritten digits
=============================================

Tables like scikit-learn's handwritten digits: a design fitted to a real table,
and tables like it generated at 5%, 10% and 20%, from the command line.

The source is ``sklearn.datasets.load_digits``: 1,797 images of 8x8 pixels, one row per
image and one column per pixel, counts 0-16 (Poisson blocks, inferred). The script runs
what a user runs:

    lbm-bench fit digits.npy --max-clusters 8x8 -o digits.toml
    lbm-bench generate --design digits.toml --risk R --seed S -o digits-rR.h5    (R = 0.05, 0.1, 0.2)
    lbm-bench show digits.npy --design digits.toml --view ordered --max-cells 400 -o source.png
    lbm-bench show digits-r0.1.h5 --view ordered --max-cells 400 -o generated.png

and puts the two pictures side by side: the source grouped by the MAP labels of the fitted
model, and the generated 10% table grouped by its Bayes labels. It prints the fit's summary,
and per risk the calibrated scale, the certified floor and the two-sample Kolmogorov-Smirnov
statistics of the generated table's row and column means against the source's
(``lbm_bench.fitting.degree_ks``).

Usage: ``python scripts/figures/fig_digits_design.py [--seed S] [--quick] [--out DIR]``
(needs scikit-learn and matplotlib: the ``test`` or ``sklearn`` and ``plots`` extras; quick:
the first 300 images, up to 4x4 clusters, 10% only, 200 label sets).
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _figures as F  # noqa: E402  (first: limits BLAS threads before numpy loads)
import numpy as np  # noqa: E402

import lbm_bench  # noqa: E402

# The one place it reaches past the public API: the degree statistics.
from lbm_bench.fitting import degree_ks  # noqa: E402

NAME = "fig_digits_design.png"
FULL = {"rows": None, "max_clusters": "8x8", "risks": (0.05, 0.1, 0.2), "samples": []}
QUICK = {"rows": 300, "max_clusters": "4x4", "risks": (0.1,), "samples": ["--samples", "200"]}


def _lbm_bench(*args: str, cwd: Path) -> str:
    """Run ``lbm-bench ARGS`` as a user does; its standard output."""
    done = subprocess.run([sys.executable, "-m", "lbm_bench", *args], cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"lbm-bench {' '.join(args)} failed: {done.stderr.strip()}")
    return done.stdout


def main(argv=None) -> dict:
    args = F.parse_args(__doc__.splitlines()[0], argv)
    with F.one_blas_thread():
        return _main(args)


def _main(args) -> dict:
    from sklearn.datasets import load_digits

    out = F.Printer("Tables like scikit-learn's handwritten digits: a fitted design at 5%, 10% and 20%")
    cfg = QUICK if args.quick else FULL
    X = load_digits().data.astype(np.int64)[: cfg["rows"]]
    work = Path(tempfile.mkdtemp(prefix="digits-design-"))
    np.save(work / "digits.npy", X)
    summary = _lbm_bench("fit", "digits.npy", "--max-clusters", cfg["max_clusters"], "--seed", str(args.seed),
                         *cfg["samples"], "-o", "digits.toml", cwd=work)
    for line in summary.strip().splitlines():
        print(f"  {line}")
    record = lbm_bench.read_design_file(work / "digits.toml")
    g, m = record.design.block_shape
    out("source", f"{X.shape[0]}x{X.shape[1]} counts 0-16")
    out("counts", f"{g}x{m}")
    tables = {}
    for risk in cfg["risks"]:
        path = f"digits-r{risk:g}.h5"
        _lbm_bench("generate", "--design", "digits.toml", "--risk", f"{risk:g}", "--seed", str(args.seed),
                   *cfg["samples"], "-q", "-o", path, cwd=work)
        table = tables[risk] = lbm_bench.load_table(work / path)
        ks = degree_ks(X, table.data)
        out(f"scale_r{risk:g}", table.scale)
        out(f"floor_r{risk:g}", table.bayes_risk.risk)
        out(f"ks_rows_r{risk:g}", ks["rows"])
        out(f"ks_cols_r{risk:g}", ks["cols"])
    shown = 0.1 if 0.1 in tables else cfg["risks"][0]
    _lbm_bench("show", "digits.npy", "--design", "digits.toml", "--view", "ordered",
               "--max-cells", "400", "-o", "source.png", cwd=work)
    _lbm_bench("show", f"digits-r{shown:g}.h5", "--view", "ordered", "--max-cells", "400", "-o", "generated.png",
               cwd=work)
    return out.done(F.save(_figure(work / "source.png", work / "generated.png", shown), args.out, NAME))


def _figure(source_png: Path, generated_png: Path, risk: float):
    """The two ``lbm-bench show`` pictures side by side."""
    plt = F.pyplot()
    import matplotlib.image as mpimg

    fig, axes = plt.subplots(1, 2, figsize=(13, 5.2))
    for ax, path, title in ((axes[0], source_png, "lbm-bench show digits.npy --design digits.toml"),
                            (axes[1], generated_png, f"lbm-bench show of a table like it, floor {risk:.0%}")):
        ax.imshow(mpimg.imread(path))
        ax.set_axis_off()
        ax.set_title(title, fontsize=9)
    fig.tight_layout()
    return fig


if __name__ == "__main__":
    main()
