"""How often the last bits of the engine's class scores decide a label (issue 46).

    python scripts/benchmarks/logit_rounding.py                          # repository/mini.toml
    python scripts/benchmarks/logit_rounding.py --spec repository/paper.toml
    python scripts/benchmarks/logit_rounding.py --quick                  # two tiny tables (seconds)

Every label the MAP classifier and the Gibbs sampler choose is a decision on class-major
logits, ``eta @ block_sums`` minus the log-partitions plus the log-prior
(:meth:`~lbm_bench.inference.side.Side.logits`): the first largest class (the MAP), or the
class whose cumulative ``exp`` first exceeds a uniform times the total (a draw). Block sums
of counts and binary entries are exact by every route, but the product with ``eta`` is a BLAS
product (OpenBLAS's kernels, which round in their own order, with fused multiply-adds) and
``exp`` is numpy's (SIMD loops chosen by CPU): a compiled sweep, or another CPU, would round
them differently in the last bit. This script measures what that changes, on a real build.

It builds ``--spec`` (in a temporary folder, one process, one BLAS thread) with every call of
``Side.logits`` watched: the build goes on with the engine's own logits, and for each call
the script also computes

- the products summed in plain order (one multiply and one add per term, each rounded:
  numpy's elementwise operations, no fused multiply-add), with the same model terms added
  (:meth:`~lbm_bench.inference.side.Side.add_model_terms`);
- the MAP's choice (first largest class) on both logits;
- a draw on both with the same uniforms (the script's own stream, not the build's), and a
  draw on the engine's logits with another ``exp`` (fdlibm's, :func:`lbm_bench._portable.exp`).

It prints the logits seen, how many the plain-order products round differently, and how many
MAP choices and draws change: a label a compiled sweep with its own dot products and its own
``exp`` (libm's, or a vector one) would choose differently from the engine's.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from lbm_bench import _portable
from lbm_bench.inference.side import Side
from lbm_bench.release import build_release
from lbm_bench.tasks.threads import single_blas_thread

sys.path.insert(0, str(Path(__file__).resolve().parent))  # sibling modules (scripts/README.md)

from _benchmarks import add_output_argument, finish  # noqa: E402

__all__ = ["QUICK_SPEC", "RoundingCounts", "draw", "main", "plain_products"]

ROOT = Path(__file__).resolve().parents[2]

#: ``--quick``: two tiny tables.
QUICK_SPEC = """[release]
name = "logit-rounding-quick"
version = "1.0"
seed = 5
description = "Two tiny tables."
license = "CC-BY-4.0"

[defaults]
tolerance = 0.05
n_samples = 200
n_chains = 4

[[grid]]
kinds = ["poisson", "bernoulli"]
shapes = ["30x20"]
clusters = ["3x2"]
risks = [0.1]
"""


def plain_products(eta: np.ndarray, sums: np.ndarray) -> np.ndarray:
    """``eta @ sums`` summed in plain order: ``eta`` (k, t), ``sums`` (R, t, n) -> (R, k, n),
    ``eta[:, 0] * sums[:, 0] + eta[:, 1] * sums[:, 1] + ...``, every product and sum rounded."""
    out = eta[None, :, 0, None] * sums[:, None, 0, :]
    for q in range(1, eta.shape[1]):
        out += eta[None, :, q, None] * sums[:, None, q, :]
    return out


def draw(logits: np.ndarray, u: np.ndarray, exp: Any = np.exp) -> np.ndarray:
    """:func:`~lbm_bench.inference.side.sample_class_major`'s draw, operation for operation,
    with ``exp`` for numpy's (``logits`` (..., k, n) is not overwritten)."""
    k = logits.shape[-2]
    shifted = logits - logits.max(axis=-2, keepdims=True)
    cdf = np.asarray(exp(shifted), dtype=np.float64)
    for r in range(1, k):
        cdf[..., r, :] += cdf[..., r - 1, :]
    threshold = u * cdf[..., k - 1, :]
    return (cdf[..., : k - 1, :] <= threshold[..., None, :]).sum(axis=-2)


def first_largest(logits: np.ndarray) -> np.ndarray:
    """The MAP's choice: the first largest class of class-major logits (..., k, n)."""
    return logits.argmax(axis=-2)


class RoundingCounts:
    """The counters of a watched build (see the module documentation)."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.calls = self.logits = self.products_differ = self.decisions = 0
        self.map_changes = self.draw_changes = self.exp_draw_changes = 0

    def watch(self, side: Side, sums: np.ndarray, other: np.ndarray, logits: np.ndarray) -> None:
        """Count what plain-order products and another ``exp`` change on one call's logits."""
        B, C, o, p, n = sums.shape
        flat = sums.reshape(B * C, o * p, n)
        engine = np.matmul(side.eta, flat)
        plain = plain_products(side.eta, flat)
        self.calls += 1
        self.logits += engine.size
        self.products_differ += int(np.count_nonzero(engine != plain))
        other_logits = side.add_model_terms(plain.reshape(logits.shape), other)
        u = self.rng.random(logits.shape[:2] + logits.shape[3:])
        self.decisions += u.size
        self.map_changes += int(np.count_nonzero(first_largest(logits) != first_largest(other_logits)))
        drawn = draw(logits, u)
        self.draw_changes += int(np.count_nonzero(drawn != draw(other_logits, u)))
        self.exp_draw_changes += int(np.count_nonzero(drawn != draw(logits, u, _portable.exp)))

    def row(self, spec: str) -> dict[str, Any]:
        return {"spec": spec, "calls": self.calls, "logits": self.logits,
                "products_differ": self.products_differ, "decisions": self.decisions,
                "map_changes": self.map_changes, "draw_changes": self.draw_changes,
                "exp_draw_changes": self.exp_draw_changes}


def watched_build(spec: Path, seed: int) -> RoundingCounts:
    """Build ``spec`` in a temporary folder with every ``Side.logits`` call watched."""
    counts = RoundingCounts(seed)
    engine_logits = Side.logits

    def logits(side: Side, sums: np.ndarray, other: np.ndarray) -> np.ndarray:
        result = engine_logits(side, sums, other)
        counts.watch(side, sums, other, result)
        return result

    folder = Path(tempfile.mkdtemp(prefix="lbm-bench-rounding-"))
    Side.logits = logits
    try:
        with single_blas_thread():
            report = build_release(spec, folder / "release", n_jobs=1)
        if not report.ok:
            raise RuntimeError(report.summary())
    finally:
        Side.logits = engine_logits
        shutil.rmtree(folder, ignore_errors=True)
    return counts


def format_row(row: dict[str, Any]) -> str:
    def share(count: int, total: int) -> str:
        return f"{count:,} ({count / total:.1%})" if total else "0"

    return "\n".join([
        f"{row['spec']}: {row['calls']:,} calls of Side.logits (MAP and Gibbs), one process",
        f"logits computed                               {row['logits']:,}",
        f"products rounded otherwise in plain order     {share(row['products_differ'], row['logits'])}",
        f"labels chosen (each as MAP choice and draw)   {row['decisions']:,}",
        f"MAP choices changed by plain-order products   {row['map_changes']:,}",
        f"draws changed by plain-order products         {row['draw_changes']:,}",
        f"draws changed by another exp (fdlibm's)       {row['exp_draw_changes']:,}",
    ])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="logit_rounding.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--spec", default=str(ROOT / "repository" / "mini.toml"),
                        help="release spec to build (default repository/mini.toml)")
    parser.add_argument("--quick", action="store_true", help="two tiny tables (seconds)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the script's uniforms (default 0)")
    add_output_argument(parser)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="lbm-bench-rounding-spec-") as folder:
        spec = Path(args.spec)
        if args.quick:
            spec = Path(folder) / "quick.toml"
            spec.write_text(QUICK_SPEC)
        row = watched_build(spec, args.seed).row("--quick" if args.quick else args.spec)
    print(format_row(row))
    finish(args.json, row)
    return 0


if __name__ == "__main__":
    sys.exit(main())
