"""Benchmark of the choice of the numbers of clusters (issue 28's Done-when): recovery, cost, scale.

Part ``recovery``: ``cem-icl`` (:func:`lbm_bench.algorithms.select_lbm` at its defaults, up
to 8x8) run on the unknown-clusters track of a release (``lbm-bench benchmark RELEASE
--track unknown-clusters --max-clusters 8x8 --algorithm cem-icl``, through the library, its
results and identifiability cached in ``--out``), and, on the tables at a target risk of at
most ``--risk`` (5%) and at least 200x100, by family: the tables whose counts were found,
and among the tables whose counts are identifiable (the Bayes labels at the true counts
beat every labelling of the reference search at other counts), those found. With
``--gaussian-criteria``, the Gaussian tables also by the BIC-type ICL (``bic-icl``), to
compare with the exact ICL (the family's ``default_icl``).

Part ``grid``: the full grid of :func:`select_lbm` (every cell of 8x8, 10 k-means++ starts
each) on the same tables as the part ``recovery``, with the same seeds, beside the path
search (the default, the track's ``cem-icl`` rows read back from ``--out``): counts found.

Part ``cost``: on every dense table of the release at 300x200 and that risk, the wall time
of ``select_lbm(X, (8, 8))`` over that of one CEM fit at the true counts
(``fit_lbm(X, g, m, method="cem", n_init=10)``, what the issue calls a single fit), the two
alternating, best of ``--repeats``, one process (``jobs=1``); the median ratio by family and
over all. The EM runs of the selection over the fit's 10 (a count, whatever the load).

Part ``sparse``: a 20000x2000 sparse Bernoulli table (5x4 clusters, 1% of entries nonzero),
``select_lbm(X, (8, 8), jobs=2)`` timed once, every densification of scipy's sparse arrays
refused (``toarray`` and ``todense`` raise), and the process's peak resident memory against
the 305 MiB of a float64 copy of the table.

Usage::

    lbm-bench build scripts/benchmarks/selection_tables.toml --out selection-measure --jobs 2
    python scripts/benchmarks/bench_selection.py selection-measure --out selection-runs
    python scripts/benchmarks/bench_selection.py selection-measure --out selection-runs --parts cost sparse
    python scripts/benchmarks/bench_selection.py --quick      # tiny version (seconds): parts cost and sparse

The machine's load average is printed before and after each part (the machine may be shared).
"""

from __future__ import annotations

import contextlib
import os
import resource
import statistics
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from lbm_bench import random_model
from lbm_bench.algorithms import fit_lbm, select_lbm
from lbm_bench.metrics import ari
from lbm_bench.release import load_release
from lbm_bench.scoring.unknown_clusters import run_unknown_clusters
from lbm_bench.storage import load_table

sys.path.insert(0, str(Path(__file__).resolve().parent))  # sibling modules (scripts/README.md)
from _benchmarks import add_output_argument, bench_parser, finish  # noqa: E402

PARTS = ("recovery", "grid", "cost", "sparse")
COST_HEADER = ("| table | selection s | fit s | ratio | selection EM runs / 10 | counts chosen |\n"
               "| --- | --- | --- | --- | --- | --- |")


def _load() -> str:
    return "load average " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


def _selected(entry: dict, risk: float, shape: tuple[int, int]) -> bool:
    (n, d) = entry["shape"]
    return entry["target_risk"] <= risk + 1e-12 and n >= shape[0] and d >= shape[1]


def recovery(release: Path, out: Path, risk: float, jobs: int, seed: int, gaussian_criteria: bool,
             min_shape: tuple[int, int] = (200, 100), max_clusters: tuple[int, int] = (8, 8)) -> list[dict]:
    """The unknown-clusters track's cem-icl rows on the release, aggregated by family."""
    manifest = load_release(release)
    chosen = {e["id"] for e in manifest["tables"] if _selected(e, risk, min_shape)}
    start = time.perf_counter()
    rows = run_unknown_clusters(release, ["cem-icl"], out, max_clusters=max_clusters, n_jobs=jobs, seed=seed)
    print(f"# track run (or read back from {out}): {time.perf_counter() - start:.1f} s; {_load()}")
    rows = [r for r in rows if r["table"] in chosen and not r["error"]]
    print(f"cem-icl, up to {max_clusters[0]}x{max_clusters[1]}, tables at a target risk <= {risk:g} and "
          f">= {min_shape[0]}x{min_shape[1]} "
          f"({len(rows)} tables):")
    print("| family | tables | counts found | identifiable | found where identifiable | misses: criterion "
          "| misses: search |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    out_rows = []
    for kind in sorted({r["kind"] for r in rows}):
        items = [r for r in rows if r["kind"] == kind]
        found = sum(r["counts"] == "found" for r in items)
        ident = [r for r in items if r["identifiable"]]
        found_ident = sum(r["counts"] == "found" for r in ident)
        misses = {m: sum(r["miss"] == m for r in items) for m in ("criterion", "search")}
        print(f"| {kind} | {len(items)} | {found}/{len(items)} ({found / len(items):.0%}) | {len(ident)} "
              f"| {found_ident}/{len(ident)} | {misses['criterion']} | {misses['search']} |")
        out_rows.append({"part": "recovery", "kind": kind, "tables": len(items), "found": found,
                         "identifiable": len(ident), "found_identifiable": found_ident, **misses})
    if gaussian_criteria:
        out_rows += _gaussian_criteria(release, manifest, chosen, rows, seed, max_clusters)
    return out_rows


def _gaussian_criteria(release: Path, manifest: dict, chosen: set, rows: list[dict], seed: int,
                       max_clusters: tuple[int, int]) -> list[dict]:
    """The Gaussian tables again by the BIC-type ICL (the same search and seeds as cem-icl's)."""
    from lbm_bench.release import derive_seed

    entries = [e for e in manifest["tables"] if e["id"] in chosen and e["kind"] == "gaussian"]
    exact = {r["table"]: r["counts"] == "found" for r in rows if r["kind"] == "gaussian"}
    bic = {}
    for entry in entries:
        table = load_table(release / entry["file"])
        rng = np.random.default_rng(derive_seed(seed, f"cem-icl:{entry['id']}"))
        pick = select_lbm(table.data, max_clusters, kind="gaussian", criterion="bic-icl", rng=rng)
        bic[entry["id"]] = (pick.n_row_clusters, pick.n_col_clusters) == tuple(entry["clusters"])
    print(f"gaussian tables, counts found: exact ICL {sum(exact.values())}/{len(exact)}, "
          f"BIC-type ICL {sum(bic.values())}/{len(bic)}")
    return [{"part": "gaussian-criteria", "exact_icl": sum(exact.values()), "bic_icl": sum(bic.values()),
             "tables": len(bic)}]


def _grid_row(release: Path, entry: dict, seed: int, max_clusters: tuple[int, int]) -> dict:
    from lbm_bench.release import derive_seed

    table = load_table(release / entry["file"])
    rng = np.random.default_rng(derive_seed(seed, f"cem-icl:{entry['id']}"))
    start = time.perf_counter()
    pick = select_lbm(table.data, max_clusters, kind=entry["kind"], search="grid", rng=rng)
    return {"table": entry["id"], "kind": entry["kind"], "seconds": time.perf_counter() - start, "runs": pick.n_runs,
            "found": (pick.n_row_clusters, pick.n_col_clusters) == tuple(entry["clusters"])}


def grid(release: Path, out: Path, risk: float, jobs: int, seed: int,
         min_shape: tuple[int, int] = (200, 100), max_clusters: tuple[int, int] = (8, 8)) -> list[dict]:
    """The full grid (every cell, 10 starts) against the path search (the track's cem-icl rows,
    read from ``out``: run the part recovery first) on the same tables: counts found and EM runs."""
    from joblib import Parallel, delayed

    manifest = load_release(release)
    entries = [e for e in manifest["tables"] if _selected(e, risk, min_shape)]
    path_rows = {r["table"]: r for r in run_unknown_clusters(release, ["cem-icl"], out, max_clusters=max_clusters,
                                                            n_jobs=jobs, seed=seed)}
    rows = Parallel(n_jobs=jobs)(delayed(_grid_row)(release, entry, seed, max_clusters) for entry in entries)
    print(f"search of cem-icl up to {max_clusters[0]}x{max_clusters[1]}, tables at a target risk <= {risk:g} "
          f"and >= {min_shape[0]}x{min_shape[1]}:")
    print("| family | tables | found by the path | found by the grid | grid: EM runs per table | grid: median s |")
    print("| --- | --- | --- | --- | --- | --- |")
    for kind in sorted({r["kind"] for r in rows}):
        items = [r for r in rows if r["kind"] == kind]
        path_found = sum(path_rows[r["table"]]["counts"] == "found" for r in items)
        print(f"| {kind} | {len(items)} | {path_found}/{len(items)} | {sum(r['found'] for r in items)}/{len(items)} "
              f"| {items[0]['runs']} | {statistics.median(r['seconds'] for r in items):.1f} |")
    return [{"part": "grid", **r} for r in rows]


def cost(release: Path, risk: float, repeats: int, seed: int) -> list[dict]:
    """Wall time of an 8x8 selection over one CEM fit at the true counts, on 300x200 dense tables."""
    manifest = load_release(release)
    entries = [e for e in manifest["tables"] if e["target_risk"] <= risk + 1e-12 and tuple(e["shape"]) == (300, 200)]
    print(f"# {_load()}")
    print(COST_HEADER)
    out_rows = []
    for entry in entries:
        table = load_table(release / entry["file"])
        if sp.issparse(table.data):
            continue
        out_rows.append(_cost_row(entry["id"], table.data, entry["kind"], tuple(entry["clusters"]), repeats, seed))
    _cost_summary(out_rows)
    print(f"# {_load()}")
    return out_rows


def _cost_row(name: str, X, kind: str, clusters: tuple[int, int], repeats: int, seed: int) -> dict:
    best_sel = best_fit = np.inf
    for _ in range(repeats):  # alternating, so that a change of load hits both
        start = time.perf_counter()
        pick = select_lbm(X, (8, 8), kind=kind, rng=seed)
        best_sel = min(best_sel, time.perf_counter() - start)
        start = time.perf_counter()
        fit_lbm(X, *clusters, method="cem", kind=kind, n_init=10, rng=seed)
        best_fit = min(best_fit, time.perf_counter() - start)
    row = {"part": "cost", "table": name, "kind": kind, "selection_s": best_sel, "fit_s": best_fit,
           "ratio": best_sel / best_fit, "runs_ratio": pick.n_runs / 10,
           "chosen": f"{pick.n_row_clusters}x{pick.n_col_clusters}"}
    print(f"| {name} | {best_sel:.2f} | {best_fit:.3f} | {row['ratio']:.1f} | {row['runs_ratio']:.1f} "
          f"| {row['chosen']} |", flush=True)
    return row


def _cost_summary(rows: list[dict]) -> None:
    if not rows:
        return
    for kind in sorted({r["kind"] for r in rows}):
        ratios = [r["ratio"] for r in rows if r["kind"] == kind]
        print(f"{kind}: median ratio {statistics.median(ratios):.1f} (max {max(ratios):.1f}, {len(ratios)} tables)")
    ratios = [r["ratio"] for r in rows]
    print(f"all: median ratio {statistics.median(ratios):.1f} (max {max(ratios):.1f}, {len(ratios)} tables); "
          f"median EM runs / 10: {statistics.median(r['runs_ratio'] for r in rows):.1f}")


@contextlib.contextmanager
def _densifying_refused() -> Iterator[None]:
    """``toarray`` and ``todense`` of scipy's sparse arrays and matrices raise within the block."""

    def refuse(*args, **kwargs):
        raise RuntimeError("the sparse table was densified")

    classes = (sp.csr_array, sp.csc_array, sp.coo_array, sp.csr_matrix, sp.csc_matrix, sp.coo_matrix)
    saved = [(cls, name, cls.__dict__.get(name)) for cls in classes for name in ("toarray", "todense")]
    for cls, name, _ in saved:
        setattr(cls, name, refuse)
    try:
        yield
    finally:
        for cls, name, method in saved:
            if method is None:
                delattr(cls, name)
            else:
                setattr(cls, name, method)


def sparse(shape: tuple[int, int], seed: int, jobs: int) -> list[dict]:
    """An 8x8 selection on a large sparse Bernoulli table, densification refused."""
    model = random_model("bernoulli", 5, 4, scale=2.5, density=0.01, rng=seed)
    X, z, w = model.sample(*shape, rng=seed + 1)
    if not sp.issparse(X):
        raise RuntimeError("the table was drawn dense")
    print(f"# {shape[0]}x{shape[1]} Bernoulli, 5x4 clusters, nnz {X.nnz}; jobs {jobs}; {_load()}")
    with _densifying_refused():
        start = time.perf_counter()
        pick = select_lbm(X, (8, 8), jobs=jobs, rng=seed)
        seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    dense = shape[0] * shape[1] * 8 / 2**20
    print(f"selection {seconds:.1f} s, counts chosen {pick.n_row_clusters}x{pick.n_col_clusters} (true 5x4), "
          f"ARI rows {ari(z, pick.rows):.3f} cols {ari(w, pick.cols):.3f}, {pick.n_runs} EM runs; peak RSS of the "
          f"main process {peak:.0f} MiB (a float64 copy of the table: {dense:.0f} MiB); {_load()}")
    return [{"part": "sparse", "seconds": seconds, "chosen": [pick.n_row_clusters, pick.n_col_clusters],
             "nnz": int(X.nnz), "peak_rss_mib": peak, "runs": pick.n_runs, "jobs": jobs}]


def main(argv: list[str] | None = None) -> None:
    parser = bench_parser("bench_selection.py", __doc__.splitlines()[0], repeats="table (cost part)")
    parser.add_argument("release", nargs="?", type=Path, help="a built release (parts recovery and cost)")
    parser.add_argument("--out", type=Path, default=Path("selection-runs"), help="the track's results folder")
    parser.add_argument("--parts", nargs="+", choices=PARTS, default=list(PARTS))
    parser.add_argument("--risk", type=float, default=0.05, help="largest target risk of the tables (0.05)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--gaussian-criteria", action="store_true", help="also the BIC-type ICL on Gaussian tables")
    add_output_argument(parser)
    args = parser.parse_args(argv)
    repeats = args.repeats or (1 if args.quick else 2)
    rows: list[dict] = []
    if args.quick:
        print("## cost (quick: one 100x80 Gaussian table, 3x3)")
        print(COST_HEADER)
        X, _, _ = random_model("gaussian", 3, 3, scale=1.5, rng=args.seed).sample(100, 80, rng=args.seed + 1)
        rows.append(_cost_row("quick", X, "gaussian", (3, 3), repeats, args.seed))
        print("## sparse (quick: 2000x500)")
        rows += sparse((2000, 500), args.seed, 1)
        finish(args.json, rows)
        return
    if set(args.parts) & {"recovery", "grid", "cost"} and args.release is None:
        parser.error("the parts recovery, grid and cost need a release")
    if "recovery" in args.parts:
        print("## recovery")
        rows += recovery(args.release, args.out, args.risk, args.jobs, args.seed, args.gaussian_criteria)
    if "grid" in args.parts:
        print("## grid")
        rows += grid(args.release, args.out, args.risk, args.jobs, args.seed)
    if "cost" in args.parts:
        print("## cost")
        rows += cost(args.release, args.risk, repeats, args.seed)
    if "sparse" in args.parts:
        print("## sparse")
        rows += sparse((20000, 2000), args.seed, args.jobs)
    finish(args.json, rows)


if __name__ == "__main__":
    main()
