"""The path search of select_lbm against the full grid (issue 34, item 5): criterion and cost, old vs new.

On every table of a release (issue 34's measurement: ``scripts/benchmarks/search_tables.toml``,
60 tables at a floor of 20%: Gaussian, Poisson and Bernoulli, five count pairs, 200x100 and
300x200, two tables each), ``select_lbm(X, (8, 8))`` at its defaults (the path search) is
compared with the full grid (``search="grid"``: every cell of 8x8, 10 k-means++ starts each),
same table and seed: the path's criterion value minus the grid's (the issue's Done-when: at
least the grid's on at least 95% of tables), the counts each chooses, and the path's cost in
single fits: the wall time of the selection over that of one CEM fit at the true counts
(``fit_lbm(X, g, m, method="cem", n_init=10)``), the two alternating in one process, best of
``--repeats`` (the load hits both), and its EM runs over the fit's 10 (a count, whatever the load).

With ``--against REV`` the package at that git revision (``git archive``) runs the same
path search in a second process on the same tables and seeds, alternating with the working
tree table by table: old and new side by side, and the grid (which neither changed) once.

Seeds: the selection and the fit of table ``id`` use ``derive_seed(--seed, "path-search:" + id)``
(printed with the master seed).

Usage::

    lbm-bench build scripts/benchmarks/search_tables.toml --out search-measure --jobs 2
    python scripts/benchmarks/bench_path_search.py search-measure --against 9ac5e13
    python scripts/benchmarks/bench_path_search.py --quick [--against HEAD]   # two small drawn tables (seconds)

On a shared machine the tables can be split across processes (``--match``, each with
``--json``) and the saved runs printed together (``--results a.json b.json``); each table's
old and new runs still alternate in one process.

With ``--bounds 6x6 8x8 12x12`` (issue 47, item 4) the path search of the working tree runs on
each table at each of these limits instead (no grid, no old version; the limits at most the
table's shape): the criterion and counts at each, and whether the criterion never falls as
the limit rises (monotone), with the cost in EM runs at each limit.

    python scripts/benchmarks/bench_path_search.py search-measure --bounds 6x6 8x8 12x12
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # sibling modules (scripts/README.md)
from _benchmarks import add_output_argument, bench_parser, finish  # noqa: E402

#: Relative tolerance of "at least the grid's criterion" (the two are sums of the same terms).
TOLERANCE = 1e-9

#: The worker: one process of one package version, reading one JSON request per line on
#: stdin ({"file" or "draw", "kind", "clusters", "seed", "repeats", "grid", "bounds"}) and
#: writing one JSON result per line.
_WORKER = r"""
import json, sys, time
import numpy as np
import lbm_bench
from lbm_bench.algorithms import fit_lbm, select_lbm

print(json.dumps({"package": lbm_bench.__file__}), flush=True)

def table_of(request):
    if "file" in request:
        from lbm_bench.storage import load_table
        return load_table(request["file"]).data
    from lbm_bench import random_model
    kind, (g, m), (n, d), scale = request["kind"], request["clusters"], request["draw"], request["scale"]
    return random_model(kind, g, m, scale=scale, rng=request["seed"]).sample(n, d, rng=request["seed"] + 1)[0]

for line in sys.stdin:
    request = json.loads(line)
    X, kind, bounds, seed = table_of(request), request["kind"], tuple(request["bounds"]), request["seed"]
    g, m = request["clusters"]
    best_sel = best_fit = float("inf")
    for _ in range(request["repeats"]):
        start = time.perf_counter()
        pick = select_lbm(X, bounds, kind=kind, rng=seed)
        best_sel = min(best_sel, time.perf_counter() - start)
        start = time.perf_counter()
        fit_lbm(X, g, m, method="cem", kind=kind, n_init=10, rng=seed)
        best_fit = min(best_fit, time.perf_counter() - start)
    out = {"value": pick.value, "counts": [pick.n_row_clusters, pick.n_col_clusters], "runs": pick.n_runs,
           "ratio": best_sel / best_fit}
    if request["grid"]:
        grid = select_lbm(X, bounds, kind=kind, search="grid", rng=seed)
        out["grid_value"], out["grid_counts"] = grid.value, [grid.n_row_clusters, grid.n_col_clusters]
    print(json.dumps(out), flush=True)
"""


class Worker:
    """A persistent process of the package at ``root`` (its ``lbm_bench`` folder's parent).

    It runs in ``root``: ``python -c`` puts its working directory first on ``sys.path``,
    ahead of ``PYTHONPATH``, so a worker started from the checkout would import the
    checkout's package whatever the revision asked. It says which package it imported,
    and a worker of another one is refused."""

    def __init__(self, root: str) -> None:
        env = dict(os.environ, PYTHONPATH=root)
        self.process = subprocess.Popen([sys.executable, "-c", _WORKER], env=env, cwd=root, stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, text=True)
        package = Path(json.loads(self.process.stdout.readline())["package"]).resolve()
        if package.parent.parent != Path(root).resolve():
            self.close()
            raise RuntimeError(f"the worker of {root} imported {package}")

    def ask(self, request: dict) -> dict:
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"the worker stopped (exit {self.process.wait()})")
        return json.loads(line)

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait()


def _requests(release: Path | None, seed: int, repeats: int) -> list[tuple[str, dict]]:
    from lbm_bench.release import derive_seed, load_release

    if release is None:  # --quick: two small drawn tables, bounds 4x4
        draws = [("gaussian", (3, 2), (60, 40), 1.2), ("poisson", (2, 3), (60, 40), 1.0)]
        return [(f"{kind}-{n}x{d}-{g}x{m}", {"draw": [n, d], "kind": kind, "clusters": [g, m], "scale": scale,
                                             "seed": derive_seed(seed, f"path-search:{kind}"), "bounds": [4, 4],
                                             "repeats": repeats})
                for kind, (g, m), (n, d), scale in draws]
    release = release.resolve()  # the workers run in their package's folder
    manifest = load_release(release)
    return [(entry["id"], {"file": str(release / entry["file"]), "kind": entry["kind"], "clusters": entry["clusters"],
                           "seed": derive_seed(seed, "path-search:" + entry["id"]), "bounds": [8, 8],
                           "repeats": repeats})
            for entry in manifest["tables"]]


def _load() -> str:
    return "load average " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


def _at_least(value: float, grid: float) -> bool:
    return value >= grid - TOLERANCE * max(1.0, abs(grid))


def _row(name: str, grid: dict, results: dict[str, dict]) -> str:
    cells = [name, f"{'x'.join(map(str, grid['grid_counts']))} {grid['grid_value']:.1f}"]
    for result in results.values():
        cells.append(f"{'x'.join(map(str, result['counts']))} {result['value'] - grid['grid_value']:+.1f} "
                     f"| {result['runs'] / 10:.1f} | {result['ratio']:.1f}")
    return "| " + " | ".join(cells) + " |"


def _summary(label: str, rows: list[dict]) -> str:
    good = sum(_at_least(r["value"], r["grid_value"]) for r in rows)
    return (f"{label}: criterion at least the grid's on {good}/{len(rows)} tables ({good / len(rows):.0%}); "
            f"median cost {statistics.median(r['ratio'] for r in rows):.1f} single fits (max "
            f"{max(r['ratio'] for r in rows):.1f}); median EM runs / 10: "
            f"{statistics.median(r['runs'] for r in rows) / 10:.1f}")


def _report(saved: list[dict]) -> None:
    """The table and the summaries of saved rows (``--json``), tables in name order."""
    rows: dict[str, dict[str, dict]] = {}
    for row in saved:
        rows.setdefault(row["version"], {})[row["table"]] = row
    labels = sorted(rows, key=lambda label: label == "new")  # old first
    names = sorted(rows["new"])
    print(f"# {len(names)} tables (saved runs)")
    header = ["table", "grid: counts ICL"] + [f"{label}: counts, ICL - grid | EM runs / 10 | single fits"
                                               for label in labels]
    print("| " + " | ".join(header) + " |")
    print("|" + " --- |" * (len(header) + 2 * len(labels)))
    for name in names:
        print(_row(name, rows["new"][name], {label: rows[label][name] for label in labels}))
    for label in labels:
        print(_summary(label, [rows[label][name] for name in names]))


def _pair(text: str) -> tuple[int, int]:
    g, m = (int(part) for part in text.lower().split("x"))
    return g, m


def _monotone(requests: list[tuple[str, dict]], bounds: list[tuple[int, int]], root: Path) -> list[dict]:
    """The path search at each limit of ``bounds`` on every table: criterion never falling as the limit rises."""
    worker = Worker(str(root))
    labels = ["x".join(map(str, b)) for b in bounds]
    print(f"# {len(requests)} tables; the path search at {', '.join(labels)}; {_load()}")
    print("| table | " + " | ".join(f"{label}: counts ICL (EM runs / 10)" for label in labels) + " | monotone |")
    print("|" + " --- |" * (len(labels) + 2))
    rows = []
    for name, request in requests:
        results = [worker.ask({**request, "bounds": list(b), "grid": False, "repeats": 1}) for b in bounds]
        values = [r["value"] for r in results]
        monotone = all(b >= a - TOLERANCE * max(1.0, abs(a)) for a, b in zip(values[:-1], values[1:], strict=True))
        cells = [f"{'x'.join(map(str, r['counts']))} {r['value']:.1f} ({r['runs'] / 10:.1f})" for r in results]
        print(f"| {name} | " + " | ".join(cells) + f" | {'yes' if monotone else 'NO'} |", flush=True)
        rows.append({"table": name, "bounds": labels, "values": values, "runs": [r["runs"] for r in results],
                     "counts": [r["counts"] for r in results], "monotone": monotone})
    worker.close()
    good = sum(row["monotone"] for row in rows)
    runs = [statistics.median(row["runs"][i] for row in rows) / 10 for i in range(len(bounds))]
    print(f"monotone on {good}/{len(rows)} tables; median EM runs / 10 at "
          + ", ".join(f"{label}: {r:.1f}" for label, r in zip(labels, runs, strict=True)))
    print(f"# {_load()}")
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = bench_parser("bench_path_search.py", __doc__.splitlines()[0], repeats="table")
    parser.add_argument("release", nargs="?", type=Path, help="a built release (search_tables.toml)")
    parser.add_argument("--against", help="git revision of the old path search, run side by side")
    parser.add_argument("--match", nargs="+", help="only the tables whose id contains one of these texts")
    parser.add_argument("--results", nargs="+", type=Path, metavar="JSON",
                        help="no run: the table and summaries of runs saved with --json (several: one run split "
                             "by --match into processes)")
    parser.add_argument("--grid-from", nargs="+", type=Path, metavar="JSON",
                        help="the grid's results of runs saved with --json, same tables and seed (the grid is "
                             "most of the cost; it is not rerun for a table found there)")
    parser.add_argument("--bounds", nargs="+", type=_pair, metavar="GxM",
                        help="the path search at each of these limits (criterion monotone in the limit)")
    add_output_argument(parser)
    args = parser.parse_args(argv)
    if args.results:
        _report([row for path in args.results for row in json.loads(path.read_text())])
        return
    if args.release is None and not args.quick:
        parser.error("give a release, or --quick")
    repeats = args.repeats or (1 if args.quick else 2)
    root = Path(__file__).resolve().parents[2]  # the checkout (scripts/benchmarks/ is two below)
    requests = [(name, request) for name, request in _requests(None if args.quick else args.release, args.seed, repeats)
                if args.match is None or any(text in name for text in args.match)]
    if args.bounds:
        finish(args.json, _monotone(requests, args.bounds, root))
        return
    saved_grid = {row["table"]: {"grid_value": row["grid_value"], "grid_counts": row["grid_counts"]}
                  for path in args.grid_from or () for row in json.loads(path.read_text())
                  if row.get("seed", args.seed) == args.seed}
    with tempfile.TemporaryDirectory() as old_root:
        workers = {"new": Worker(str(root))}
        if args.against:
            archive = subprocess.run(["git", "-C", str(root), "archive", args.against, "lbm_bench"],
                                     check=True, capture_output=True).stdout
            subprocess.run(["tar", "-x", "-C", old_root], input=archive, check=True)
            workers = {f"old ({args.against})": Worker(old_root), "new": workers["new"]}
        print(f"# {len(requests)} tables; master seed {args.seed} (table seeds: derive_seed(seed, "
              f"'path-search:' + id)); best of {repeats}; {_load()}")
        header = ["table", "grid: counts ICL"] + [f"{label}: counts, ICL - grid | EM runs / 10 | single fits"
                                                   for label in workers]
        print("| " + " | ".join(header) + " |")
        print("|" + " --- |" * (len(header) + 2 * len(workers)))
        rows: dict[str, list[dict]] = {label: [] for label in workers}
        for name, request in requests:
            results = {}
            for label, worker in workers.items():  # old then new, table by table
                results[label] = worker.ask({**request, "grid": label == "new" and name not in saved_grid})
            results["new"] = {**saved_grid.get(name, {}), **results["new"]}
            grid = results["new"]
            for label, result in results.items():
                rows[label].append({"table": name, "seed": args.seed, **result, "grid_value": grid["grid_value"],
                                    "grid_counts": grid["grid_counts"]})
            print(_row(name, grid, results), flush=True)
        for worker in workers.values():
            worker.close()
    for label, items in rows.items():
        print(_summary(label, items))
    print(f"# {_load()}")
    finish(args.json, [{"version": label, **row} for label, items in rows.items() for row in items])


if __name__ == "__main__":
    main()
