"""How close are tables like a source to it, measured against the model's own spread (issue 34).

For designs fitted to a source of each family (``fit_design``), and per target risk, it
generates certified tables at the source's shape from one calibration (``generate_table(...,
calibration=...)`` with seeds ``--seed`` to ``--seed + --draws - 1``: each is the table
``lbm-bench generate --design --seed S`` gives when its calibration lands on the same scale)
and prints, for the row means and the column means (``lbm_bench.fitting.degree_ks``), three
distributions of two-sample Kolmogorov-Smirnov statistics:

- ``src-gen``: the source against each generated table;
- ``gen-gen``: two generated tables of the same design and risk against each other (every
  pair of the draws): the reference spread, the distance between two tables of the model;
- ``src-s1``: the source against tables drawn from the fitted model itself (scale 1, no
  calibration, labels drawn from the proportions), and ``src-s1*`` at the fitted labels
  (the source's own classes, only the entries drawn again).

A source whose ``src-gen`` median lies within the ``gen-gen`` spread (at most its 90th
percentile) is a typical draw of the generated tables' model: ``typical``; otherwise the
line says ``beyond`` and the ratio of the median to that percentile, and ``sd`` gives the
standard deviation of the source's row or column means beside the generated tables'
median one (a path that must shrink the classes' totals to reach the risk narrows them).

Sources: scikit-learn's digits (the design of ``fig_digits_design.py``, seed 2012, up to 8x8
clusters), and 150x100 tables drawn from known 2x2 models (those of
tests/protocol/test_from_design.py): Poisson with row and column effects, Poisson,
Gaussian, dense Bernoulli, sparse Bernoulli, and Gaussian with 20% of its entries missing.

Usage: ``python scripts/checks/degree_spread.py [--sources poisson-effects,gaussian]
[--risks 0.05,0.1,0.2] [--draws 8] [--seed 2012] [--quick]`` (the digits need scikit-learn;
quick: the first 300 digits up to 4x4 clusters, the 150x100 Poisson with effects and
Gaussian sources, 10% only, 4 draws, 200 Gibbs label sets).
"""

from __future__ import annotations

import argparse
import itertools
import time

import numpy as np

from lbm_bench import fit_design, generate_table, get_family

# The one place it reaches past the public API: the degree statistic, and the missing-entry mask
# of a table drawn from a model (as fit_design's own certificate draws it).
from lbm_bench.fitting import degree_ks
from lbm_bench.models.missing import MaskNoise, mask_table

SIDES = ("rows", "cols")
#: 150x100 sources: 2x2 models (proportions 0.6/0.4 and 0.5/0.5), with effects or missing entries.
MODELS = {
    "poisson-effects": ("poisson", {"rates": [[0.5, 4.0], [3.0, 1.0]]}),
    "poisson": ("poisson", {"rates": [[0.5, 4.0], [3.0, 1.0]]}),
    "gaussian": ("gaussian", {"means": [[0.0, 2.0], [2.0, 0.0]], "stds": [[1.0, 1.5], [1.0, 0.7]]}),
    "bernoulli": ("bernoulli", {"probs": [[0.2, 0.7], [0.6, 0.15]]}),
    "bernoulli-sparse": ("bernoulli", {"probs": [[0.02, 0.2], [0.15, 0.03]], "sparse": True}),
    "gaussian-missing": ("gaussian", {"means": [[0.0, 2.0], [2.0, 0.0]], "stds": [[1.0, 1.5], [1.0, 0.7]]}),
}
ALL = ("digits", *MODELS)


def source_table(name: str, *, quick: bool = False):
    """The source table ``name`` and its family."""
    if name == "digits":
        from sklearn.datasets import load_digits

        return load_digits().data.astype(np.int64)[: 300 if quick else None], "poisson"
    kind, params = MODELS[name]
    rng = np.random.default_rng(0)
    effects = {}
    if name == "poisson-effects":  # log-normal effects, sd 0.5 (tests/protocol/test_from_design.py)
        mu, nu = rng.lognormal(0, 0.5, 150), rng.lognormal(0, 0.5, 100)
        effects = {"row_effects": mu / mu.mean(), "col_effects": nu / nu.mean()}
    model = get_family(kind).model([0.6, 0.4], [0.5, 0.5], **params, **effects)
    X = model.sample(150, 100, rng=rng)[0]
    if name == "gaussian-missing":
        X = X.astype(np.float64)
        X[np.random.default_rng(1).uniform(size=X.shape) < 0.2] = np.nan
    return X, kind


def _model_draw(design, scale, shape, rng, labels=None):
    """A table drawn from ``design`` at ``scale``, without calibration: labels drawn from the
    proportions (or the ``labels`` given), the entries, and the missing entries."""
    model = design.model(scale)
    z, w = model.sample_labels(*shape, rng=rng) if labels is None else labels
    X = model.table_from_noise(model.draw_noise(*shape, rng=rng), z, w)
    if design.missing is not None:
        mask = MaskNoise(*shape, design.missing, model.sparse, rng=rng)
        X = mask_table(X, mask, design.missing_probs(scale), z, w, copy=False)
    return X


def _degree_sd(table, side: str) -> float:
    """Standard deviation of a table's row (or column) means over its observed entries."""
    dense = table.with_nan() if hasattr(table, "with_nan") else table
    dense = dense.toarray() if hasattr(dense, "toarray") else np.asarray(dense, dtype=np.float64)
    return float(np.std(np.nanmean(dense, axis=1 if side == "rows" else 0)))


def _spread(values) -> str:
    values = np.asarray(values)
    return f"{np.median(values):.3f} ({values.min():.3f}-{values.max():.3f})"


def measure(X, kind: str, max_clusters, risks, seeds, *, n_samples: int, fit_seed: int):
    """Per risk and side: the KS statistics of the source against the generated tables, of the
    generated tables against each other, and the source's and tables' degree spreads; and per side
    the source against tables of the fitted model (scale 1), with labels drawn or as fitted."""
    fitted = fit_design(X, max_clusters, kind=kind, certify=False, rng=fit_seed)
    design, shape = fitted.design, X.shape
    g, m = design.block_shape
    s1 = [_model_draw(design, 1.0, shape, np.random.default_rng(s)) for s in seeds]
    s1_fixed = [_model_draw(design, 1.0, shape, np.random.default_rng(s), (fitted.selection.rows,
                                                                          fitted.selection.cols)) for s in seeds]
    out = {"counts": (g, m), "knee": design.path.knee if design.path is not None else None,
           "scale1": {side: [degree_ks(X, t)[side] for t in s1] for side in SIDES},
           "scale1_fixed": {side: [degree_ks(X, t)[side] for t in s1_fixed] for side in SIDES},
           "scale1_pairs": {side: [degree_ks(a, b)[side] for a, b in itertools.combinations(s1, 2)]
                            for side in SIDES}, "risks": {}}
    for risk in risks:
        first = generate_table(design=design, n_rows=shape[0], n_cols=shape[1], target_risk=risk,
                               n_samples=n_samples, tolerance=0.02, rng=seeds[0])
        tables = [first] + [generate_table(kind, shape[0], shape[1], g, m, risk, calibration=first.calibration,
                                           n_samples=n_samples, tolerance=0.02, rng=s) for s in seeds[1:]]
        data = [t.data for t in tables]
        out["risks"][risk] = {
            "scale": first.scale, "floors": [t.bayes_risk.risk for t in tables],
            "src_gen": {side: [degree_ks(X, t)[side] for t in data] for side in SIDES},
            "gen_gen": {side: [degree_ks(a, b)[side] for a, b in itertools.combinations(data, 2)] for side in SIDES},
            "sd_source": {side: _degree_sd(X, side) for side in SIDES},
            "sd_gen": {side: float(np.median([_degree_sd(t, side) for t in data])) for side in SIDES},
        }
    return out


def report(name: str, found) -> list[str]:
    """The lines printed for one source."""
    g, m = found["counts"]
    knee = "straight path" if found["knee"] is None else f"knee {found['knee']:g}"
    lines = [f"{name}: {g}x{m} clusters, {knee}"]
    for side in SIDES:
        lines.append(f"  scale 1  {side:4s} src-s1 {_spread(found['scale1'][side])}  s1-s1 "
                     f"{_spread(found['scale1_pairs'][side])}  src-s1* (fitted labels) "
                     f"{_spread(found['scale1_fixed'][side])}")
    for risk, r in found["risks"].items():
        floors = np.array(r["floors"])
        lines.append(f"  {risk:4.0%} scale {r['scale']:.4f}, floors {floors.min():.3f}-{floors.max():.3f}")
        for side in SIDES:
            src, ref = np.array(r["src_gen"][side]), np.array(r["gen_gen"][side])
            q90 = float(np.quantile(ref, 0.9))
            verdict = ("typical" if np.median(src) <= q90 else f"beyond (median {np.median(src) / q90:.2f}x the q90)")
            lines.append(f"    {side:4s} src-gen {_spread(src)}  gen-gen {_spread(ref)} q90 {q90:.3f}  "
                         f"sd source {r['sd_source'][side]:.3f} gen {r['sd_gen'][side]:.3f}  {verdict}")
    return lines


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sources", default=",".join(ALL), help=f"among {', '.join(ALL)}")
    parser.add_argument("--risks", default="0.05,0.1,0.2")
    parser.add_argument("--draws", type=int, default=8)
    parser.add_argument("--seed", type=int, default=2012)
    parser.add_argument("--samples", type=int, default=300, help="Gibbs label sets of a generated table")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    if args.quick:
        args.sources, args.risks, args.draws, args.samples = "digits,poisson-effects,gaussian", "0.1", 4, 200
    names = args.sources.split(",")
    unknown = sorted(set(names) - set(ALL))
    if unknown:
        parser.error(f"unknown sources {unknown}: choose among {', '.join(ALL)}")
    risks = [float(r) for r in args.risks.split(",")]
    seeds = list(range(args.seed, args.seed + args.draws))
    for name in names:
        start = time.perf_counter()
        X, kind = source_table(name, quick=args.quick)
        max_clusters = ((4, 4) if args.quick else (8, 8)) if name == "digits" else (3, 3)
        found = measure(X, kind, max_clusters, risks, seeds, n_samples=args.samples,
                        fit_seed=2012 if name == "digits" else 0)
        print("\n".join(report(name, found)) + f"\n  ({time.perf_counter() - start:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
