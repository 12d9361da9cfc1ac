"""Our k-means against library k-means, on the inputs of double k-means.

    python scripts/benchmarks/bench_kmeans.py [--sizes 50 200 500 1000] [--repeat 3] [--seed 0]

Double k-means clusters the rows of an (n_rows, n_cols) table as n_rows points of
R^n_cols, and its columns as n_cols points of R^n_rows. For each square table
size, each family and each side, this script samples a table from a
3x3-cluster latent block model (:func:`lbm_bench.random_model`, ``--scale``,
default 0.5: hard enough that the methods do not all reach ARI 1)
and runs, on the same points and with the same settings as
:func:`lbm_bench.algorithms.double_kmeans` (best of 10 runs, k-means++
seeding):

* ``ours``: :func:`lbm_bench.algorithms.kmeans.kmeans` (numpy Lloyd
  iterations until the labels stop changing, at most 300);
* ``scipyN``: best of 10 ``scipy.cluster.vq.kmeans2(..., iter=N, minit="++",
  rng=Generator)`` runs, for each N of ``--scipy-iters`` (default 10, scipy's
  default, and 300, our cap; kmeans2 runs exactly ``iter`` Lloyd iterations,
  there is no convergence test);
* ``sklearn``: ``sklearn.cluster.KMeans(n_clusters=k, n_init=10,
  max_iter=300, random_state=<int drawn from the Generator>)``, when
  scikit-learn is installed.

It prints, per input, the best-of-``--repeat`` wall time of each method as a
ratio to ours (runs interleaved in one process), and the quality: the
inertia (sum of squared distances to the centers) relative to ours and the
ARI of the labels to the generating labels.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from scipy.cluster.vq import kmeans2

from lbm_bench import random_model
from lbm_bench.algorithms.kmeans import kmeans as _kmeans
from lbm_bench.metrics import ari

N_INIT, MAX_ITER, K = 10, 300, 3


def inertia(data: np.ndarray, labels: np.ndarray) -> float:
    """Sum of squared distances of the points to the mean of their cluster."""
    total = 0.0
    for label in np.unique(labels):
        members = data[labels == label]
        total += float(((members - members.mean(0)) ** 2).sum())
    return total


def ours(data: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    return _kmeans(data, k, n_init=N_INIT, max_iter=MAX_ITER, rng=rng)


def scipy_kmeans2(iterations: int):
    def fit(data: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
        best, best_inertia = None, np.inf
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "One of the clusters is empty"
            for _ in range(N_INIT):
                _, labels = kmeans2(data, k, iter=iterations, minit="++", rng=rng)
                value = inertia(data, labels)
                if value < best_inertia:
                    best, best_inertia = labels, value
        return np.asarray(best, dtype=np.int64)

    return fit


def sklearn_kmeans(data: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    from sklearn.cluster import KMeans

    seed = int(rng.integers(2**31 - 1))
    model = KMeans(n_clusters=k, n_init=N_INIT, max_iter=MAX_ITER, random_state=seed)
    return model.fit(data).labels_.astype(np.int64)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[50, 200, 500, 1000])
    parser.add_argument("--kinds", nargs="+", default=["gaussian", "bernoulli"])
    parser.add_argument("--repeat", type=int, default=3, help="timing repeats (best kept)")
    parser.add_argument("--scale", type=float, default=0.5, help="separation of the clusters")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--scipy-iters", type=int, nargs="+", default=[10, MAX_ITER])
    args = parser.parse_args(argv)

    methods = {"ours": ours}
    methods.update({f"scipy{n}": scipy_kmeans2(n) for n in args.scipy_iters})
    try:
        import sklearn  # noqa: F401

        methods["sklearn"] = sklearn_kmeans
    except ImportError:
        print("scikit-learn is not installed: sklearn column skipped")
    others = [name for name in methods if name != "ours"]
    print(f"scale={args.scale}, k={K}, best of {N_INIT} runs per fit, timing best of {args.repeat}, interleaved")
    print("time: method / ours (lower is faster); inertia: method / ours; ARI to the truth")
    header = ["input", "ours s"] + [f"{n} time" for n in others]
    header += ["ours ARI"] + [f"{n} inertia" for n in others] + [f"{n} ARI" for n in others]
    print(" | ".join(header))
    summary = {name: [] for name in others}
    for size in args.sizes:
        for kind in args.kinds:
            model = random_model(kind, K, K, scale=args.scale, rng=args.seed)
            X, z, w = model.sample(size, size, rng=args.seed + 1)
            data = np.asarray(X, dtype=np.float64)
            for side, points, truth in (("rows", data, z), ("cols", data.T.copy(), w)):
                best = dict.fromkeys(methods, np.inf)
                labels = {}
                for _ in range(args.repeat):
                    for name, fit in methods.items():
                        rng = np.random.default_rng(args.seed)
                        start = time.perf_counter()
                        labels[name] = fit(points, K, rng)
                        best[name] = min(best[name], time.perf_counter() - start)
                for name, fit in methods.items():  # same rng, same labels
                    again = fit(points, K, np.random.default_rng(args.seed))
                    assert np.array_equal(again, labels[name]), name
                base = inertia(points, labels["ours"])
                row = [f"{kind} {size}x{size} {side}", f"{best['ours']:.3f}"]
                row += [f"{best[n] / best['ours']:.2f}" for n in others]
                row += [f"{ari(truth, labels['ours']):.3f}"]
                row += [f"{inertia(points, labels[n]) / base:.4f}" for n in others]
                row += [f"{ari(truth, labels[n]):.3f}" for n in others]
                print(" | ".join(row), flush=True)
                for n in others:
                    summary[n].append(
                        (best[n] / best["ours"], inertia(points, labels[n]) / base)
                    )
    for name, values in summary.items():
        times, inertias = np.array(values).T
        print(
            f"{name}: time / ours geometric mean {np.exp(np.mean(np.log(times))):.2f} "
            f"(min {times.min():.2f}, max {times.max():.2f}); inertia / ours max "
            f"{inertias.max():.4f}, worse than ours on {int(np.sum(inertias > 1 + 1e-9))} "
            f"of {len(inertias)} inputs"
        )


if __name__ == "__main__":
    main()
