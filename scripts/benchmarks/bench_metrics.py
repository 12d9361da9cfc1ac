"""Timings of lbm_bench.metrics: CARI and conditional_risk.

Prints, in one run:

1. CARI on 10^6 x 10^6 labels with 1,000 x 1,000 clusters (exact, factorised);
2. CARI against a naive baseline that forms the Kronecker product of the two
   contingency tables and applies the float formula, at sizes where that fits
   in memory, with the speed ratio and the difference of the values; the
   relative error of the float formula on the factorised sums is shown too;
3. CARI against sparsebm's ``CARI`` when sparsebm is importable;
4. ``conditional_risk`` of one co-clustering against 2,000 label sets of a
   1000 x 1000 table.

Usage: ``python scripts/benchmarks/bench_metrics.py [--repeat 3] [--seed 0] [--quick]``
(``--quick``: the smallest size of each part, 10^4 labels and 200 label sets of a
200 x 200 table; seconds).
Each timing is the best of ``--repeat`` runs measured with ``time.perf_counter``.
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from lbm_bench.metrics import cari, conditional_risk, contingency


def best_time(
    function: Callable[..., Any], repeat: int, *args: Any, **kwargs: Any
) -> tuple[float, Any]:
    """Best wall-clock time of ``repeat`` calls ``function(*args, **kwargs)`` and the value."""
    best, value = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        value = function(*args, **kwargs)
        best = min(best, time.perf_counter() - start)
    return best, value


def comb2(x: np.ndarray | float) -> np.ndarray | float:
    return x * (x - 1.0) / 2.0


def ari_float(t: float, p: float, q: float, n: float) -> float:
    """Hubert-Arabie formula in float64."""
    expected = p * q / comb2(n)
    return (t - expected) / ((p + q) / 2.0 - expected)


def cari_kronecker(z: np.ndarray, w: np.ndarray, zp: np.ndarray, wp: np.ndarray) -> float:
    """Naive CARI: dense Kronecker product of the two tables, float64 formula."""
    table = np.kron(contingency(z, zp), contingency(w, wp)).astype(np.float64)
    return ari_float(
        float(comb2(table).sum()),
        float(comb2(table.sum(axis=1)).sum()),
        float(comb2(table.sum(axis=0)).sum()),
        float(table.sum()),
    )


def cari_float_factorised(z: np.ndarray, w: np.ndarray, zp: np.ndarray, wp: np.ndarray) -> float:
    """The factorised sums of squares, but combined in float64 (for the error column)."""
    a = contingency(z, zp).astype(np.float64)
    b = contingency(w, wp).astype(np.float64)
    n = float(z.size) * float(w.size)

    def pairs(x: np.ndarray, y: np.ndarray) -> float:
        return (float(np.square(x).sum()) * float(np.square(y).sum()) - n) / 2.0

    return ari_float(
        pairs(a, b), pairs(a.sum(axis=1), b.sum(axis=1)), pairs(a.sum(axis=0), b.sum(axis=0)), n
    )


def related(rng: np.random.Generator, labels: np.ndarray, k: int, noise: float) -> np.ndarray:
    """A prediction that keeps each label with probability 1 - noise."""
    return np.where(rng.random(labels.size) < noise, rng.integers(0, k, labels.size), labels)


def table(rows: list[list[str]], header: list[str]) -> str:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    line = "  ".join("-" * w for w in widths)
    out = ["  ".join(h.rjust(w) for h, w in zip(header, widths, strict=True)), line]
    out += ["  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    return "\n".join(out)


def bench_cari(rng: np.random.Generator, repeat: int, quick: bool = False) -> None:
    print("CARI (exact, factorised) vs naive Kronecker product + float64 formula")
    rows = []
    sizes = [(10_000, 10)] if quick else [(10_000, 10), (10_000, 30), (100_000, 100), (1_000_000, 1000)]
    for n, k in sizes:
        z, w = rng.integers(0, k, n), rng.integers(0, k, n)
        zp, wp = related(rng, z, k, 0.5), related(rng, w, k, 0.5)
        fast, value = best_time(cari, repeat, z, w, zp, wp)
        float_error = abs(cari_float_factorised(z, w, zp, wp) - value) / abs(value)
        if k ** 4 <= 10**8:
            slow, naive = best_time(cari_kronecker, max(1, repeat // 2), z, w, zp, wp)
            cells = [f"{slow:.4f}", f"{slow / fast:.0f}x", f"{abs(naive - value):.1e}"]
        else:
            cells = ["infeasible", "-", "-"]  # kron table of k**4 = 10**12 cells
        rows.append(
            [f"{n:,}", f"{k}", f"{value:.6f}", f"{fast:.4f}", *cells, f"{float_error:.1e}"]
        )
    header = [
        "rows=cols", "clusters", "CARI", "exact s", "kron s", "ratio", "|diff|", "float rel.err",
    ]
    print(table(rows, header))
    print()
    n, size = (10_000, "10^4") if quick else (1_000_000, "10^6")
    print(f"CARI, independent {size} x {size} labels with 2 x 2 clusters (cancellation):")
    z, w, zp, wp = (rng.integers(0, 2, n) for _ in range(4))
    exact = cari(z, w, zp, wp)
    approx = cari_float_factorised(z, w, zp, wp)
    error = abs(approx - exact) / abs(exact)
    print(f"  exact {exact:.12e}  float64 {approx:.12e}  rel. error {error:.1e}")
    print()


def bench_sparsebm(rng: np.random.Generator, repeat: int, quick: bool = False) -> None:
    try:
        from sparsebm.utils import CARI as sparsebm_cari  # type: ignore[import-not-found]
    except ImportError:
        print("sparsebm is not importable: comparison with sparsebm.utils.CARI skipped.")
        print()
        return
    print("CARI vs sparsebm.utils.CARI")
    rows = []
    for n, k in [(10_000, 10)] if quick else [(10_000, 10), (100_000, 100)]:
        z, w = rng.integers(0, k, n), rng.integers(0, k, n)
        zp, wp = related(rng, z, k, 0.5), related(rng, w, k, 0.5)
        fast, value = best_time(cari, repeat, z, w, zp, wp)
        slow, other = best_time(sparsebm_cari, repeat, z, w, zp, wp)
        rows.append([f"{n:,}", f"{k}", f"{fast:.4f}", f"{slow:.4f}", f"{slow / fast:.0f}x",
                     f"{abs(float(other) - value):.1e}"])
    print(table(rows, ["rows=cols", "clusters", "lbm_bench s", "sparsebm s", "ratio", "|diff|"]))
    print()


def bench_conditional_risk(rng: np.random.Generator, repeat: int, quick: bool = False) -> None:
    n_sets, size = (200, 200) if quick else (2000, 1000)
    print(f"conditional_risk: one co-clustering vs {n_sets:,} label sets of a {size} x {size} table")
    rows = []
    for g, g_pred in [(5, 6)] if quick else [(5, 6), (10, 10)]:
        z0, w0 = rng.integers(0, g, size), rng.integers(0, g, size)
        gibbs_rows, gibbs_cols = np.tile(z0, (n_sets, 1)), np.tile(w0, (n_sets, 1))
        for labels, k in ((gibbs_rows, g), (gibbs_cols, g)):
            mask = rng.random(labels.shape) < 0.3
            labels[mask] = rng.integers(0, k, int(mask.sum()))
        z_pred = related(rng, z0, g_pred, 0.2)
        w_pred = related(rng, w0, g, 0.2)
        elapsed, result = best_time(
            conditional_risk, repeat, gibbs_rows, gibbs_cols, z_pred, w_pred, n_chains=4
        )
        rows.append([f"{g}x{g}", f"{g_pred}x{g}", f"{elapsed:.4f}", f"{result.risk:.4f}",
                     f"{result.mcse:.1e}", f"{result.cari_mean:.4f}", str(result.exact),
                     str(result.n_steps)])
    header = ["g x m", "pred", "seconds", "risk", "mcse", "CARI mean", "exact", "steps"]
    print(table(rows, header))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="timings: best of this many runs")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="the smallest size of each part (seconds)")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, numpy {np.__version__}"
    )
    print()
    bench_cari(rng, args.repeat, args.quick)
    bench_sparsebm(rng, args.repeat, args.quick)
    bench_conditional_risk(rng, args.repeat, args.quick)


if __name__ == "__main__":
    main()
