"""Thin wrapper around ``bench_gibbs_map.py``, plus a before/after comparison.

    python scripts/benchmarks/bench_gibbs.py [--quick] [--json out.json] ...   # = bench_gibbs_map.py
    python scripts/benchmarks/bench_gibbs.py --against HEAD [--quick] [--only TEXT ...]

``--against REF`` extracts ``lbm_bench/`` at git revision ``REF`` into a
temporary directory (``git archive``; the working tree is not touched),
imports it as ``lbm_bench_ref`` and times, on the benchmark's tables (same
scale search), its ``map_labels`` and ``gibbs_labels`` against the working
tree's ``map_labels``, ``gibbs_labels(method="full")`` and
``gibbs_labels(method="incremental")``, in turn (best of ``--repeats`` rounds); it
also reports whether the label sets are identical. ``--only TEXT`` keeps the
configurations whose name contains ``TEXT``.
"""

from __future__ import annotations

import argparse
import importlib
import math
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from lbm_bench import gibbs_labels, map_labels, random_design

# The engine's pieces timed against the reference's: the one place this script reaches
# past the public API (the reference package is imported by name, whatever its layout).
from lbm_bench.inference.engine import Sweeper, sample_categorical
from lbm_bench.inference.side import onehot_t as _onehot_t
from lbm_bench.inference.side import sample_class_major as _sample_class_major

sys.path.insert(0, str(Path(__file__).resolve().parent))  # sibling modules (scripts/README.md)

import bench_gibbs_map as bench  # noqa: E402


def _load_ref(ref: str, root: Path, into: Path):
    archive = subprocess.run(
        ["git", "-C", str(root), "archive", ref, "lbm_bench"], check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    (into / "lbm_bench").rename(into / "lbm_bench_ref")
    # Absolute imports inside the package must name the copy, not the working tree.
    for path in (into / "lbm_bench_ref").rglob("*.py"):
        text = path.read_text()
        path.write_text(re.sub(r"\blbm_bench\b(?=[. ])", "lbm_bench_ref", text))
    sys.path.insert(0, str(into))
    return importlib.import_module("lbm_bench_ref")


def ref_module(old, *names: str):
    """The first of ``names`` (dotted, under the reference package) that exists: the
    layout of the package changed (flat modules before 769a08f, subpackages after)."""
    for name in names:
        try:
            return importlib.import_module(f"{old.__name__}.{name}")
        except ModuleNotFoundError:
            continue
    raise ModuleNotFoundError(f"none of {names} in {old.__name__}")


def _best_interleaved(funcs, repeats):
    """Best time and last result of each function, run in turn ``repeats`` times (so that
    all see the same machine load on a shared machine)."""
    best, out = [math.inf] * len(funcs), [None] * len(funcs)
    for _ in range(repeats):
        for i, func in enumerate(funcs):
            start = time.perf_counter()
            out[i] = func()
            best[i] = min(best[i], time.perf_counter() - start)
    return list(zip(best, out, strict=True))


def _engine_pieces(old, n: int, seed: int) -> None:
    """Per-call times (microseconds, best of many) of the engine's pieces, REF vs now."""
    import timeit

    old_engine = ref_module(old, "inference.engine", "_engine")
    # the one-hot helper was renamed after a5aaaea, and moved to inference/side.py by the house's second pass
    names = ("_onehot_flat", "_onehot_t", "onehot_t")
    old_onehot = next(getattr(old_engine, name) for name in names if hasattr(old_engine, name))

    model = random_design("gaussian", 3, 3, equal_dispersions=True, rng=seed).model(0.15)
    X, _, _ = model.sample(n, n, rng=seed)
    old_model = old.model_from_parameters(
        "gaussian", model.row_proportions, model.col_proportions, **model.block_parameters()
    )
    rng = np.random.default_rng(seed)
    C = 8
    w = rng.integers(0, 3, (1, C, n))
    z = rng.integers(0, 3, (1, C, n))
    new_s, old_s = Sweeper(model, X[None]), old_engine.Sweeper(old_model, X[None])
    logits = new_s.row_logits(w)
    class_major = np.ascontiguousarray(logits.swapaxes(-1, -2))

    def per_call(func, number=20):
        return 1e6 * min(timeit.repeat(func, number=number, repeat=5)) / number

    rows = [
        ("Sweeper(model, X)", lambda: old_engine.Sweeper(old_model, X[None]),
         lambda: Sweeper(model, X[None])),
        ("one-hot (1, 8, n)", lambda: old_onehot(w, 3), lambda: _onehot_t(w, 3)),
        ("row_logits(w), 8 chains", lambda: old_s.row_logits(w), lambda: new_s.row_logits(w)),
        ("col_logits(z), 8 chains", lambda: old_s.col_logits(z), lambda: new_s.col_logits(z)),
        ("complete_log_likelihood", lambda: old_s.complete_log_likelihood(z, w),
         lambda: new_s.complete_log_likelihood(z, w)),
        ("categorical draws (8 x n x 3)",
         lambda: old_engine.sample_categorical(logits, np.random.default_rng(0)),
         lambda: _sample_class_major(class_major.copy(), np.random.default_rng(0).random((1, C, n)))),
        ("sample_categorical (public)",
         lambda: old_engine.sample_categorical(logits, np.random.default_rng(0)),
         lambda: sample_categorical(logits, np.random.default_rng(0))),
    ]
    print(f"engine pieces on a {n}x{n} 3x3 Gaussian table (microseconds per call)")
    print(f"{'piece':<32} {'ref':>10} {'now':>10} {'ratio':>6}")
    for name, before, after in rows:
        t_old, t_new = per_call(before), per_call(after)
        print(f"{name:<32} {t_old:>10.0f} {t_new:>10.0f} {t_old / t_new:>6.2f}")
    print()


def against(ref: str, quick: bool, seed: int, repeats: int, only: list[str] | None = None) -> None:
    root = Path(__file__).resolve().parents[2]  # the checkout (scripts/benchmarks/ is two below)
    with tempfile.TemporaryDirectory() as tmp:
        old = _load_ref(ref, root, Path(tmp))
        _engine_pieces(old, 300 if quick else 1000, seed)
        print(
            f"{'configuration':<34} {'MAP ref':>8} {'MAP new':>8} {'Gibbs ref':>10} "
            f"{'full new':>9} {'incr new':>9} {'same labels':>12}"
        )
        configs = bench.QUICK_CONFIGS if quick else bench.CONFIGS
        for config in [c for c in configs if not only or any(text in c.name for text in only)]:
            found = bench.find_scale(config, seed=seed, max_probes=4 if quick else 14)
            model, X, result = found["model"], found["X"], found["map"]
            old_model = old.model_from_parameters(
                model.kind, model.row_proportions, model.col_proportions, **model.block_parameters()
            )
            init = (result.rows, result.cols)
            options = dict(n_samples=config.n_samples, init=init, rng=seed)
            (t_map_old, map_old), (t_map_new, map_new), (t_old, g_old), (t_full, g_full), (
                t_inc, g_inc
            ) = _best_interleaved(
                [
                    lambda: old.map_labels(old_model, X, rng=seed),
                    lambda: map_labels(model, X, rng=seed),
                    lambda: old.gibbs_labels(old_model, X, **options),
                    lambda: gibbs_labels(model, X, method="full", **options),
                    lambda: gibbs_labels(model, X, method="incremental", **options),
                ],
                repeats,
            )
            same = (
                np.array_equal(map_old.rows, map_new.rows)
                and np.array_equal(map_old.cols, map_new.cols)
                and all(
                    np.array_equal(g_old.rows, g.rows) and np.array_equal(g_old.cols, g.cols)
                    for g in (g_full, g_inc)
                )
            )
            print(
                f"{config.name:<34} {t_map_old:>8.3f} {t_map_new:>8.3f} {t_old:>10.3f} "
                f"{t_full:>9.3f} {t_inc:>9.3f} {str(same):>12}",
                flush=True,
            )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--against", metavar="REF")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=None)
    parser.add_argument("--only", action="append", help="configurations whose name contains TEXT")
    known, rest = parser.parse_known_args(argv)
    if known.against is None:
        passthrough = rest + (["--quick"] if known.quick else []) + ["--seed", str(known.seed)]
        if known.repeats is not None:
            passthrough += ["--repeats", str(known.repeats)]
        for text in known.only or []:
            passthrough += ["--only", text]
        return bench.main(passthrough)
    against(known.against, known.quick, known.seed, known.repeats or 2, known.only)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
