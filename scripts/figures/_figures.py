"""Shared helpers of the figure scripts ``scripts/figures/fig_*.py``.

Every figure script:

* takes ``--seed`` (default :data:`DEFAULT_SEED`, shared by the scripts so that
  Figures 1-3 use the same reference distribution), ``--quick`` (a small
  version run by ``tests/scripts/test_figures.py``) and ``--out`` (the directory of the
  PNG, ``docs/figures`` by default);
* prints every number it plots as ``key: value`` lines, so that the
  documentation can quote them;
* exposes ``main(argv=None) -> dict`` returning those numbers.

The reference distribution of Figures 1-3 is the paper's: 3x3 clusters of
Gaussian entries whose scale is calibrated so that the X-only MAP's mean
apparent error on 50x50 tables is 20% (:func:`reference_calibration`).

OpenBLAS is limited to one thread: the label steps multiply small matrices,
where a second BLAS thread only adds synchronisation, and on a loaded 2-core
machine it made ``map_labels`` on a 100x100 table about 60 times slower.
"""

from __future__ import annotations

import os

# Before numpy is imported by the script (no effect when it already is: then
# threadpoolctl below does the job).
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import contextlib  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable, Sequence  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

import lbm_bench  # noqa: E402
from lbm_bench.metrics import l_item  # noqa: E402

#: Default seed of every figure script.
DEFAULT_SEED = 2012
#: Where the committed figures live.
FIGURE_DIR = Path(__file__).resolve().parents[2] / "docs" / "figures"

#: The reference distribution of Figures 1-3 (the paper's Figure 1 setting).
REFERENCE = dict(kind="gaussian", n_rows=50, n_cols=50, g=3, m=3, target=0.2)


def parse_args(description: str, argv: Sequence[str] | None) -> argparse.Namespace:
    """``--seed``, ``--quick`` and ``--out``."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help=f"root seed (default {DEFAULT_SEED})")
    parser.add_argument("--quick", action="store_true", help="small, fast version (for the tests)")
    parser.add_argument("--out", type=Path, default=FIGURE_DIR, help="output directory (default docs/figures)")
    return parser.parse_args(argv)


def pyplot():
    """matplotlib's pyplot on the Agg backend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update({"figure.dpi": 100, "savefig.dpi": 120, "font.size": 10})
    return plt


@contextlib.contextmanager
def one_blas_thread():
    """Limit BLAS to one thread for the duration (see the module docstring)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - the env variables did it at import
        yield
        return
    with threadpool_limits(limits=1, user_api="blas"):
        yield


def stream(seed: int, *keys: int) -> np.random.Generator:
    """An independent random stream for ``(seed, *keys)``."""
    return np.random.default_rng(np.random.SeedSequence([seed, *keys]))


class Printer:
    """Prints ``key: value`` lines and keeps them in a dict."""

    def __init__(self, title: str) -> None:
        self.values: dict[str, Any] = {}
        self.start = time.perf_counter()
        print(f"# {title}", flush=True)

    def __call__(self, key: str, value: Any, fmt: str = ".4f") -> None:
        self.values[key] = value
        if isinstance(value, (float, np.floating)):
            text = format(float(value), fmt)
        elif isinstance(value, (list, tuple, np.ndarray)):
            text = "[" + ", ".join(
                format(float(v), fmt) if isinstance(v, (float, np.floating)) else str(v) for v in value
            ) + "]"
        else:
            text = str(value)
        print(f"{key}: {text}", flush=True)

    def done(self, path: Path) -> dict[str, Any]:
        self("figure", str(path))
        self("seconds", time.perf_counter() - self.start, ".1f")
        return self.values


def save(fig, out: Path, name: str) -> Path:
    """Save ``fig`` as ``out/name`` and close it."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / name
    fig.savefig(path, bbox_inches="tight")
    import matplotlib.pyplot as plt

    plt.close(fig)
    return path


def describe(values: Sequence[float]) -> dict[str, float]:
    """Mean, standard deviation (ddof=1), quartiles, min and max."""
    a = np.asarray(values, dtype=np.float64)
    q1, med, q3 = np.percentile(a, [25, 50, 75])
    return {
        "mean": float(a.mean()),
        "sd": float(a.std(ddof=1)) if a.size > 1 else 0.0,
        "q1": float(q1),
        "median": float(med),
        "q3": float(q3),
        "min": float(a.min()),
        "max": float(a.max()),
    }


def reference_calibration(seed: int, quick: bool, out: Printer | None = None, **overrides: Any):
    """Calibrate the reference distribution (:data:`REFERENCE`, with ``overrides``).

    200 tables per dichotomy step as in the paper (20 in quick mode).
    """
    spec = {**REFERENCE, **overrides}
    # the paper's protocol: the X-only MAP's mean apparent error is centred on the target
    # (the package's default, criterion="bayes", would centre the floor, lower by the gap)
    result = lbm_bench.calibrate_scale(
        spec["kind"], spec["n_rows"], spec["n_cols"], spec["g"], spec["m"], spec["target"],
        n_tables=20 if quick else 200, criterion="map", rng=seed,
    )
    if out is not None:
        out("calibration", f"{spec['kind']} {spec['n_rows']}x{spec['n_cols']}, "
            f"{spec['g']}x{spec['m']} clusters, target {spec['target']}")
        out("calibration_scale", result.scale)
        out("calibration_mean_apparent_error", result.mean_error)
        out("calibration_steps", result.n_steps)
    return result


def score_table(
    model,
    X: np.ndarray,
    z: np.ndarray,
    w: np.ndarray,
    rng: np.random.Generator,
    *,
    n_samples: int = 2000,
    truth_start: bool = False,
) -> dict[str, Any]:
    """X-only MAP of one table and the Gibbs conditional risk of its labels.

    The Gibbs chains start half at the generating labels and half at the MAP,
    as in :func:`lbm_bench.generate_table`. With ``truth_start``, the MAP
    started from the generating labels (``init=(z, w), n_init=0``) is scored
    on the same label sets.
    """
    result = lbm_bench.map_labels(model, X, rng=rng)
    samples = lbm_bench.gibbs_labels(
        model, X, n_samples=n_samples, init=[(z, w), (result.rows, result.cols)], rng=rng
    )
    estimate = samples.risk(result.rows, result.cols)
    best = result.start_log_likelihoods.max()
    row = {
        "apparent": float(l_item(z, w, result.rows, result.cols, match=False)),
        "risk": estimate.risk,
        "mcse": estimate.mcse,
        "rhat": estimate.rhat,
        "row_loss": estimate.row_loss,
        "col_loss": estimate.col_loss,
        "n_iter": result.n_iter,
        "converged": result.converged,
        # share of the starts that end at the best complete-data likelihood
        "stable": float(np.mean(result.start_log_likelihoods >= best - 1e-8 * max(1.0, abs(best)))),
        "matched_apparent": float(l_item(z, w, result.rows, result.cols, match=True)),
        "map_rows": result.rows,
        "map_cols": result.cols,
    }
    if truth_start:
        truth = lbm_bench.map_labels(model, X, init=(z, w), n_init=0)
        t_est = samples.risk(truth.rows, truth.cols)
        row.update(
            truth_apparent=float(l_item(z, w, truth.rows, truth.cols, match=False)),
            truth_risk=t_est.risk,
            truth_mcse=t_est.mcse,
            truth_log_likelihood=truth.log_likelihood,
            truth_n_iter=truth.n_iter,
            log_likelihood=result.log_likelihood,
        )
    return row


def run(main: Callable[[Sequence[str] | None], dict], argv: Sequence[str] | None = None) -> dict:
    """Run a script's body with one BLAS thread."""
    with one_blas_thread():
        return main(argv)
