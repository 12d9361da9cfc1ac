"""Acceptance rate of rejection sampling over several master seeds of a release spec.

One build's acceptance rate (kept tables / candidates drawn, the ``rejection
sampling: N attempt(s) for K table(s), acceptance rate R`` line of
``lbm-bench build``) is a noisy number: the mini release keeps 12 tables. This
script rebuilds a spec under several master seeds and pools the counts.

For each seed it writes a copy of the spec with only ``[release] seed``
replaced (every other line kept verbatim) under a temporary directory, builds
it in a fresh output folder with ``lbm_bench.build_release(spec, out,
n_jobs=N)`` in a subprocess, and reads the build report's per-table candidate
counts (``BuildReport.attempts``). The subprocess runs this same file with the
interpreter of ``--python`` and the ``PYTHONPATH`` of ``--pythonpath``, and
uses only ``build_release`` and the report's ``attempts``, ``built`` and
``failed``, which exist unchanged since commit 4c07ee5: the same script
measures older code (give it that commit's own spec file, e.g. ``git show
4c07ee5:repository/mini.toml > old-mini.toml``).

Printed: per seed, kept tables, candidates drawn and the acceptance rate;
then the pooled rate ``sum kept / sum attempts`` with two standard errors, and
the pooled counts per configuration (kind, shape, clusters, risk), the
configurations that lose the most candidates first.

Standard errors. The pooled rate is a ratio estimator ``r = K / A`` over
independent units ``u`` with ``k_u`` kept tables and ``a_u`` candidates; its
linearised (delta-method, cluster-robust) standard error is::

    se(r) = sqrt(m / (m - 1) * sum_u (k_u - r a_u) ** 2) / A      (m units)

* **by configuration** (the headline): a unit is one configuration of one
  seed. The tables of a configuration share one calibration (a miscentred
  scale lowers the acceptance of all of them), so they are not independent;
  two configurations, or two seeds, have independently seeded calibrations
  and tables (seeds derived from the master seed and the configuration or
  table id), so these units are.
* **by seed**: a unit is one whole build (few units: a rough check, it
  should agree with the first within its own noise).

Two runs (old code and new, same seeds) are independent samples, so the
difference of their pooled rates has standard error ``sqrt(se1**2 + se2**2)``:
``--compare OLD.json NEW.json`` prints it from two ``--json`` outputs.

A table that fails (no candidate accepted within ``max_attempts``) reports no
count: it is listed per seed and left out of the rates, which would then be
biased up; a run with failures says so.

Usage::

    PYTHONPATH=. python scripts/benchmarks/acceptance.py repository/mini.toml --seeds 1-10 --jobs 2 \\
        --json notes/mini-main.json
    git show 4c07ee5:repository/mini.toml > /tmp/mini-4c07ee5.toml
    python scripts/benchmarks/acceptance.py /tmp/mini-4c07ee5.toml --seeds 1-10 --jobs 2 \\
        --pythonpath /tmp/old4c --json notes/mini-old.json
    python scripts/benchmarks/acceptance.py --compare notes/mini-old.json notes/mini-main.json

Only the standard library (and tomli on Python 3.10) is imported here; ``lbm_bench`` is imported by the
build subprocess only.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10 (tomli is a dependency of lbm-bench there)
    import tomli as tomllib

__all__ = [
    "parse_seeds",
    "spec_with_seed",
    "build_counts",
    "pooled_rate",
    "summarise",
    "format_summary",
    "format_comparison",
    "main",
]

_RELEASE_HEADER = re.compile(r"^\s*\[release\]\s*(#.*)?$")
_TABLE_HEADER = re.compile(r"^\s*\[")
_SEED_LINE = re.compile(r"^(\s*seed\s*=\s*)(\S+)(.*)$")


def parse_seeds(text: str) -> list[int]:
    """Seeds from ``"1-10"``, ``"3,5,8"`` or ``"1-3,7"`` (ranges inclusive), in order, no repeats.

    >>> parse_seeds("1-3,7")
    [1, 2, 3, 7]
    """
    seeds: list[int] = []
    for part in text.split(","):
        part = part.strip()
        match = re.fullmatch(r"(\d+)(?:-(\d+))?", part)
        if not match:
            raise ValueError(f"--seeds: expected N, N-M or a comma-separated list of them, got {text!r}")
        first = int(match.group(1))
        last = int(match.group(2)) if match.group(2) else first
        if last < first:
            raise ValueError(f"--seeds: range {part!r} runs backwards")
        seeds += [s for s in range(first, last + 1) if s not in seeds]
    return seeds


def spec_with_seed(text: str, seed: int) -> str:
    """The spec's TOML text with ``[release] seed`` set to ``seed``, every other line unchanged.

    Parameters
    ----------
    text : str
        A release spec (TOML) with a ``[release]`` table holding ``seed = <int>``
        on a line of its own.
    seed : int
        The new master seed (non-negative).

    Returns
    -------
    str
        The new text; checked to parse to the same TOML document but for the seed.
    """
    if not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    lines = text.splitlines(keepends=True)
    in_release = False
    replaced = 0
    for i, line in enumerate(lines):
        if _RELEASE_HEADER.match(line):
            in_release = True
            continue
        if _TABLE_HEADER.match(line):
            in_release = False
            continue
        match = _SEED_LINE.match(line) if in_release else None
        if match:
            ending = line[len(line.rstrip("\r\n")):]
            lines[i] = f"{match.group(1)}{seed}{match.group(3)}{ending}"
            replaced += 1
    if replaced != 1:
        raise ValueError(f"spec: expected one 'seed = ...' line in [release], found {replaced}")
    new = "".join(lines)
    before, after = tomllib.loads(text), tomllib.loads(new)
    if after["release"]["seed"] != seed or {**after, "release": {**after["release"], "seed": None}} != {
        **before, "release": {**before["release"], "seed": None}
    }:
        raise ValueError("spec: replacing the seed line changed more than [release] seed")
    return new


def _worker(spec: str, out: str, jobs: int, result: str) -> int:
    """Build one spec and write its report's counts as JSON (runs in the subprocess)."""
    import lbm_bench

    report = lbm_bench.build_release(spec, out, n_jobs=jobs)
    data = {
        "lbm_bench": str(Path(lbm_bench.__file__).resolve().parent),
        "attempts": {k: int(v) for k, v in report.attempts.items()},
        "built": list(report.built),
        "skipped": list(report.skipped),
        "failed": dict(report.failed),
        "summary": report.summary(),
    }
    Path(result).write_text(json.dumps(data), encoding="utf-8")
    return 0


def _code_version(package_dir: str) -> str:
    """``git describe``-like identity of the checkout holding ``package_dir`` (empty if not git)."""
    try:
        out = subprocess.run(
            ["git", "-C", package_dir, "log", "-1", "--format=%h", "--"], capture_output=True, text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", package_dir, "status", "--porcelain", "--untracked-files=no", "--", "."],
            capture_output=True, text=True, check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""
    return out + ("+changes" if dirty else "")


def build_counts(
    spec_text: str,
    seed: int,
    work_dir: Path,
    *,
    jobs: int = 1,
    python: str = sys.executable,
    pythonpath: str | None = None,
    keep: bool = False,
) -> dict[str, Any]:
    """Build the spec under master seed ``seed`` in a subprocess and return its counts.

    Parameters
    ----------
    spec_text : str
        The release spec (TOML text).
    seed : int
        Master seed written into ``[release] seed``.
    work_dir : Path
        Where ``seed-<seed>/spec.toml`` and ``seed-<seed>/release/`` are written;
        the release folder must not exist yet (a resumed build reports no counts).
    jobs : int, default=1
        ``n_jobs`` of the build.
    python : str
        Interpreter of the subprocess.
    pythonpath : str, optional
        ``PYTHONPATH`` of the subprocess (the checkout whose code is measured);
        inherited when omitted.
    keep : bool, default=False
        Keep the built release (otherwise deleted once counted).

    Returns
    -------
    dict
        ``seed``, ``attempts`` (table id -> candidates drawn), ``failed``
        (table id -> error), ``summary`` (the report's summary text),
        ``lbm_bench`` (the package directory used), ``code`` (its git commit)
        and ``seconds`` (wall time).
    """
    folder = Path(work_dir).resolve() / f"seed-{seed}"
    out = folder / "release"
    if out.exists():
        raise ValueError(f"{out} exists: a resumed build would skip its tables and report no counts")
    folder.mkdir(parents=True, exist_ok=True)
    spec = folder / "spec.toml"
    spec.write_text(spec_with_seed(spec_text, seed), encoding="utf-8")
    result = folder / "counts.json"
    env = dict(os.environ)
    if pythonpath is None:
        pythonpath = env.get("PYTHONPATH", "")
    # absolute: the build runs in ``folder``, where "." would mean something else
    env["PYTHONPATH"] = os.pathsep.join(str(Path(p).resolve()) for p in pythonpath.split(os.pathsep) if p)
    start = time.perf_counter()
    proc = subprocess.run(
        [python, str(Path(__file__).resolve()), "--worker", str(spec), str(out), str(jobs), str(result)],
        env=env, cwd=folder, capture_output=True, text=True,  # cwd: never import from the caller's folder
    )
    seconds = time.perf_counter() - start
    if proc.returncode != 0 or not result.is_file():
        raise RuntimeError(f"build of seed {seed} failed (exit {proc.returncode}):\n{proc.stderr[-4000:]}")
    data = json.loads(result.read_text(encoding="utf-8"))
    if data["skipped"]:
        raise RuntimeError(f"seed {seed}: {len(data['skipped'])} table(s) skipped as already built")
    if not keep:
        import shutil

        shutil.rmtree(out, ignore_errors=True)
    return {"seed": seed, "attempts": data["attempts"], "failed": data["failed"], "summary": data["summary"],
            "lbm_bench": data["lbm_bench"], "code": _code_version(data["lbm_bench"]), "seconds": seconds}


def _config_of(table_id: str) -> str:
    """A release table id is ``<configuration id>-<replicate, two digits>``."""
    return table_id.rsplit("-", 1)[0]


def pooled_rate(units: list[tuple[int, int]]) -> tuple[float, float]:
    """Pooled rate ``sum k / sum a`` of units ``(k, a)`` and its delta-method standard error.

    ``se = sqrt(m / (m - 1) * sum (k - r a)**2) / sum a`` (m units; NaN if m < 2).

    >>> pooled_rate([(1, 2), (1, 4)])[0]
    0.3333333333333333
    """
    kept = sum(k for k, _ in units)
    drawn = sum(a for _, a in units)
    if drawn == 0:
        return float("nan"), float("nan")
    rate = kept / drawn
    m = len(units)
    if m < 2:
        return rate, float("nan")
    spread = sum((k - rate * a) ** 2 for k, a in units)
    return rate, math.sqrt(m / (m - 1) * spread) / drawn


def summarise(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Per-seed rows, the pooled rate with its standard errors, and per-configuration counts.

    Parameters
    ----------
    runs : list of dict
        Outputs of :func:`build_counts` (``seed``, ``attempts``, ``failed``).

    Returns
    -------
    dict
        ``seeds`` (one row per run: ``seed``, ``kept``, ``attempts``, ``rate``,
        ``failed``), ``kept``, ``attempts``, ``rate`` (pooled: sum kept / sum
        attempts), ``se_config`` and ``se_seed`` (see the module docstring),
        ``failed`` (count), and ``configs`` (``config``, ``kept``, ``attempts``,
        ``lost`` = attempts - kept, ``rate``; most lost first).
    """
    seeds, config_units, seed_units = [], [], []
    configs: dict[str, dict[str, Any]] = {}
    for run in runs:
        kept, drawn = len(run["attempts"]), sum(run["attempts"].values())
        seeds.append({"seed": run["seed"], "kept": kept, "attempts": drawn,
                      "rate": kept / drawn if drawn else float("nan"), "failed": len(run["failed"])})
        seed_units.append((kept, drawn))
        per_config: dict[str, list[int]] = {}
        for table_id, attempts in run["attempts"].items():
            counts = per_config.setdefault(_config_of(table_id), [0, 0])
            counts[0] += 1
            counts[1] += attempts
        for config_id, (k, a) in per_config.items():
            config_units.append((k, a))
            row = configs.setdefault(config_id, {"config": config_id, "kept": 0, "attempts": 0})
            row["kept"] += k
            row["attempts"] += a
    for row in configs.values():
        row["lost"] = row["attempts"] - row["kept"]
        row["rate"] = row["kept"] / row["attempts"]
    rate, se_config = pooled_rate(config_units)
    _, se_seed = pooled_rate(seed_units)
    return {
        "seeds": seeds,
        "kept": sum(r["kept"] for r in seeds),
        "attempts": sum(r["attempts"] for r in seeds),
        "rate": rate,
        "se_config": se_config,
        "se_seed": se_seed,
        "failed": sum(r["failed"] for r in seeds),
        "configs": sorted(configs.values(), key=lambda r: (-r["lost"], r["config"])),
    }


def format_summary(summary: dict[str, Any], runs: list[dict[str, Any]] | None = None) -> str:
    """The summary as text: per-seed lines, the pooled line, the per-configuration table."""
    lines = [f"{'seed':>10} {'kept':>6} {'attempts':>8} {'rate':>6} {'failed':>6}"]
    for row in summary["seeds"]:
        lines.append(f"{row['seed']:>10} {row['kept']:>6} {row['attempts']:>8} {row['rate']:>6.3f} "
                     f"{row['failed']:>6}")
    lines.append(
        f"pooled: {summary['kept']} kept / {summary['attempts']} attempts = {summary['rate']:.4f} "
        f"(se {summary['se_config']:.4f} by configuration, {summary['se_seed']:.4f} by seed; "
        f"{len(summary['seeds'])} seed(s))"
    )
    if summary["failed"]:
        lines.append(f"WARNING: {summary['failed']} failed table(s) left out: the rates are biased up")
        for run in runs or []:
            for table_id, error in sorted(run["failed"].items()):
                lines.append(f"  seed {run['seed']} FAILED {table_id}: {error}")
    lines.append("")
    lines.append(f"{'configuration':<34} {'kept':>5} {'attempts':>8} {'lost':>5} {'rate':>6}")
    for row in summary["configs"]:
        lines.append(f"{row['config']:<34} {row['kept']:>5} {row['attempts']:>8} {row['lost']:>5} "
                     f"{row['rate']:>6.3f}")
    return "\n".join(lines)


def format_comparison(old: dict[str, Any], new: dict[str, Any]) -> str:
    """Pooled rates of two runs and their difference (new - old) with its standard error."""
    diff = new["rate"] - old["rate"]
    se = math.hypot(old["se_config"], new["se_config"])
    lines = []
    for name, s in (("old", old), ("new", new)):
        lines.append(f"{name}: {s['kept']} / {s['attempts']} = {s['rate']:.4f} (se {s['se_config']:.4f}, "
                     f"{len(s['seeds'])} seed(s))")
    lines.append(f"new - old: {diff:+.4f} (se {se:.4f}, z {diff / se:+.2f})" if se > 0 else
                 f"new - old: {diff:+.4f}")
    return "\n".join(lines)


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("spec", type=Path, nargs="?", help="release spec (TOML)")
    p.add_argument("--seeds", default="1-10", help="master seeds: N, N-M, comma-separated (default 1-10)")
    p.add_argument("--jobs", type=int, default=1, help="n_jobs of each build (default 1)")
    p.add_argument("--python", default=sys.executable, help="interpreter of the builds (default: this one)")
    p.add_argument("--pythonpath", default=None,
                   help="PYTHONPATH of the builds: the checkout to measure (default: inherited)")
    p.add_argument("--workdir", type=Path, default=None,
                   help="where the spec copies and releases go (default: a temporary directory, removed)")
    p.add_argument("--keep", action="store_true", help="keep the built releases (needs --workdir)")
    p.add_argument("--json", type=Path, default=None, help="also write the runs and the summary as JSON")
    p.add_argument("--compare", nargs=2, type=Path, metavar=("OLD", "NEW"),
                   help="compare two --json outputs instead of building")
    args = p.parse_args(argv)
    if args.compare is None and args.spec is None:
        p.error("a spec is required (or --compare OLD NEW)")
    if args.jobs < 1:
        p.error(f"--jobs must be >= 1, got {args.jobs}")
    if args.keep and args.workdir is None:
        p.error("--keep needs --workdir")
    return args


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Run the measurement (or the comparison) and print it; returns the summary."""
    args = _parse_args(argv)
    if args.compare:
        old, new = (json.loads(p.read_text(encoding="utf-8"))["summary"] for p in args.compare)
        print(format_comparison(old, new))
        return {"old": old, "new": new}
    seeds = parse_seeds(args.seeds)
    text = args.spec.read_text(encoding="utf-8")
    spec_with_seed(text, 0)  # refuse a spec without one [release] seed line before building anything
    runs = []
    with tempfile.TemporaryDirectory(prefix="acceptance-") as tmp:
        work = args.workdir if args.workdir is not None else Path(tmp)
        for seed in seeds:
            run = build_counts(text, seed, work, jobs=args.jobs, python=args.python,
                               pythonpath=args.pythonpath, keep=args.keep)
            runs.append(run)
            kept, drawn = len(run["attempts"]), sum(run["attempts"].values())
            failed = f", {len(run['failed'])} FAILED" if run["failed"] else ""
            print(f"seed {seed}: {kept} kept, {drawn} attempts, acceptance rate {kept / drawn:.3f}{failed} "
                  f"({run['seconds']:.0f} s, code {run['code'] or run['lbm_bench']})", flush=True)
    summary = summarise(runs)
    print(f"spec {args.spec}, seeds {args.seeds}, --jobs {args.jobs}, code {runs[0]['lbm_bench']} "
          f"{runs[0]['code']}")
    print(format_summary(summary, runs))
    if args.json is not None:
        tmp_json = args.json.with_name(f".{args.json.name}.tmp")
        tmp_json.write_text(json.dumps({"spec": str(args.spec), "seeds": seeds, "jobs": args.jobs,
                                        "runs": runs, "summary": summary}, indent=1), encoding="utf-8")
        tmp_json.replace(args.json)
    return summary


if __name__ == "__main__":
    if len(sys.argv) == 6 and sys.argv[1] == "--worker":
        sys.exit(_worker(sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]))
    main()
