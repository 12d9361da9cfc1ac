"""Re-run the probes of issues 35 and 48 (hostile or careless use) and print what each did.

Each probe runs ``lbm-bench`` (or a short Python call) in a fresh folder and prints one
line: the probe, the exit status, the number of lines written on stderr, what was left
in the folder, and the first line of the message (or the result). A probe passes when it
gives one line and exit 2 (a refusal) or a correct result (exit 0), leaves no file it
should not, and never prints a traceback; the last line counts the failures and the
script exits 1 if there is any.

Usage::

    python scripts/checks/hostile_probes.py [--keep DIR] [--only GROUP,...]

It takes about three minutes on 2 cores (it generates small tables and builds three tiny
releases); ``--only`` runs some groups of probes: evaluate, small-runs, info, messages,
outputs, limits, builds, plugins, selection, readers. Labels times 10^9 are scored in the time
the labels themselves take (printed). The limits group (issue 48) probes outputs that are inputs
or not regular files, seeds out of range, files that declare more than memory holds, a
scheduler that is no address, and options a design makes moot; a scheduler that never answers
is a build probe (it waits out the connection timeout). The readers group (issue 48's rows of
the readers and design files) gives hostile files to ``info``, ``fit`` and ``generate
--design``, each one line.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import numpy as np

CLI = [sys.executable, "-m", "lbm_bench.cli"]
FAILURES: list[str] = []


def run(args: list[str], cwd: Path, timeout: float = 600) -> tuple[int, str, str, float]:
    start = time.perf_counter()
    done = subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    return done.returncode, done.stdout, done.stderr, time.perf_counter() - start


def report(name: str, code: int, out: str, err: str, *, expect: int = 2, left: list[str] = (),
           allowed: tuple[str, ...] = (), check: str | None = None) -> None:
    lines = [line for line in err.splitlines() if line.strip()]
    stray = [p for p in left if p not in allowed]
    message = lines[0] if lines else (check or out.strip().splitlines()[0] if out.strip() else "")
    problems = []
    if code != expect:
        problems.append(f"exit {code}, expected {expect}")
    if expect == 2 and len(lines) != 1:
        problems.append(f"{len(lines)} lines on stderr")
    if "Traceback" in err:
        problems.append("traceback")
    if stray:
        problems.append(f"left {stray}")
    if check is not None and check.startswith("FAIL"):
        problems.append(check)
    verdict = "ok  " if not problems else "FAIL"
    if problems:
        FAILURES.append(name)
    print(f"{verdict} {name:<44} exit {code}  stderr {len(lines)} line(s)  {message[:150]}"
          + (f"  [{'; '.join(problems)}]" if problems else ""))


def folder_files(path: Path) -> set[str]:
    return {str(p.relative_to(path)) for p in path.rglob("*")}


def probe(name: str, args: list[str], base: Path, *, expect: int = 2, allowed: tuple[str, ...] = (),
          setup=None) -> None:
    work = base / name.replace(" ", "_")
    work.mkdir()
    if setup:
        setup(work)
    before = folder_files(work)
    code, out, err, _ = run(args, work)
    left = sorted(folder_files(work) - before)
    report(name, code, out, err, expect=expect, left=left, allowed=allowed)


def write_labels(path: Path, labels: np.ndarray) -> None:
    path.write_text("".join(f"{int(v)}\n" for v in labels))


def evaluate_probes(base: Path) -> None:
    """Item 1: labels of any non-negative integers, in time and memory set by the clusters."""
    table = base / "t.h5"
    code, _, err, seconds = run(CLI + ["generate", "--kind", "gaussian", "--shape", "60x40", "--clusters", "3x2",
                                       "--risk", "0.1", "--seed", "7", "-q", "-o", str(table)], base)
    print(f"(a 60x40 Gaussian table at 10%, seed 7: {seconds:.1f} s, exit {code}) {err.strip()[:100]}")
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from lbm_bench import load_table

    t = load_table(table)
    times = {}
    for label, factor, shift in (("x1", 1, 0), ("x10^7", 10**7, 0), ("x10^9", 10**9, 0), ("+2^62", 1, 2**62)):
        work = base / f"evaluate_{label}"
        work.mkdir()
        write_labels(work / "r.txt", t.map_rows.astype(object) * factor + shift)
        write_labels(work / "c.txt", t.map_cols.astype(object) * factor + shift)
        code, out, err, seconds = run(CLI + ["evaluate", str(table), "--rows", "r.txt", "--cols", "c.txt",
                                             "--json"], work)
        times[label] = seconds
        ok = code == 0 and json.loads(out)["risk"] == json.loads(run(
            CLI + ["evaluate", str(table), "--rows", str(base / "evaluate_x1" / "r.txt"), "--cols",
                   str(base / "evaluate_x1" / "c.txt"), "--json"], work)[1])["risk"]
        report(f"evaluate labels {label}", code, out, err, expect=0,
               check=(f"same risk as the labels themselves, {seconds:.2f} s" if ok else "FAIL: another risk")
               + (f", row_map of {len(json.loads(out).get('row_map') or [])} entries" if code == 0 else ""))
    from lbm_bench import evaluate

    def best(rows: np.ndarray, cols: np.ndarray) -> float:  # in this process: no interpreter start-up
        seconds = []
        for _ in range(5):
            start = time.perf_counter()
            evaluate(t, rows, cols)
            seconds.append(time.perf_counter() - start)
        return min(seconds)

    plain = best(t.map_rows, t.map_cols)
    huge = best(t.map_rows.astype(np.int64) * 10**9, t.map_cols.astype(np.int64) * 10**9)
    check = f"evaluate of labels x10^9 takes {huge / plain:.2f}x the time of the labels themselves ({huge:.3f} s)"
    report("evaluate x10^9 time", 0, check, "", expect=0, check=check if huge / plain < 1.5 else f"FAIL: {check}")


def python_probe(name: str, code_text: str, base: Path) -> None:
    work = base / name.replace(" ", "_")
    work.mkdir()
    code, out, err, _ = run([sys.executable, "-c", textwrap.dedent(code_text)], work)
    last = out.strip().splitlines()[-1] if out.strip() else ""
    report(name, code, out, "", expect=0, check=last if last else "FAIL: no output")
    if "Traceback" in err:
        FAILURES.append(name)
        print("     ", err.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, help="work in this folder and keep it")
    parser.add_argument("--only", type=lambda text: set(text.split(",")), default=set(GROUPS),
                        help="comma-separated groups of probes (default: all): " + ", ".join(GROUPS))
    args = parser.parse_args()
    unknown = args.only - set(GROUPS)
    if unknown:
        parser.error(f"--only: no group {', '.join(sorted(unknown))}")
    base = args.keep or Path(tempfile.mkdtemp(prefix="lbm-probes-"))
    base.mkdir(parents=True, exist_ok=True)
    repo = Path(__file__).resolve().parents[2]
    env_path = os.environ.get("PYTHONPATH", "")
    os.environ["PYTHONPATH"] = f"{repo}{os.pathsep}{env_path}" if env_path else str(repo)
    try:
        return probes(base, repo, args.only)
    finally:
        if args.keep is None:
            shutil.rmtree(base, ignore_errors=True)


GROUPS = ("evaluate", "small-runs", "info", "messages", "outputs", "limits", "builds", "plugins", "selection",
          "readers")


def probes(base: Path, repo: Path, only: set[str]) -> int:
    gen = ["generate", "--kind", "gaussian", "--shape", "30x20", "--clusters", "2x2", "--risk", "0.1", "-q"]
    if "evaluate" in only:
        evaluate_probes(base)
    if "small-runs" in only:
        small_run_probes(base, gen)
    if "info" in only:
        info_probes(base, repo)
    if "messages" in only:
        message_probes(base, gen)
    if "outputs" in only:
        output_probes(base, gen)
    if "limits" in only:
        limit_probes(base, gen)
    if "builds" in only:
        build_probes(base, repo)
    if "plugins" in only:
        plugin_probes(base)
    if "selection" in only:
        selection_probes(base)
    if "readers" in only:
        reader_probes(base)
    print(f"{len(FAILURES)} probe(s) failed" + (f": {', '.join(FAILURES)}" if FAILURES else ""))
    return 1 if FAILURES else 0


def small_run_probes(base: Path, gen: list[str]) -> None:
    """Item 5: small Gibbs runs refused, and the Bayes labels of a smallest run above the floor."""
    probe("generate --samples 8 --chains 8", CLI + gen + ["--samples", "8", "--chains", "8", "-o", "x.h5"], base)
    probe("generate --samples 40", CLI + gen + ["--samples", "40", "-o", "x.h5"], base)
    python_probe("own Bayes labels vs floor (200 sets)", """
        import numpy as np
        from lbm_bench import evaluate, generate_table
        from lbm_bench.protocol.settings import GenerationSettings
        worst = np.inf
        for seed in range(4):
            t = generate_table("gaussian", 40, 30, 2, 2, 0.1, settings=GenerationSettings(n_samples=200, n_chains=8),
                               rng=seed)
            r = evaluate(t, t.bayes_rows, t.bayes_cols)
            worst = min(worst, r.excess_risk / r.excess_mcse if r.excess_mcse > 0 else 0.0)
        print(("" if worst > -3 else "FAIL: ") + f"the table's own Bayes labels score at worst {worst:+.2f} MCSE "
              "from the floor (4 seeds, 200 sets in 8 chains)")
    """, base)



def info_probes(base: Path, repo: Path) -> None:
    """Item 6: the files of formats 1.1 and 1.3 named by their version."""
    for name in ("table_v1_1_sparse.h5", "table_v1_3_missing_sparse.h5"):
        work = base / f"info_{name}"
        work.mkdir()
        code, out, err, _ = run(CLI + ["info", str(repo / "tests" / "data" / name)], work)
        floor = next((line for line in out.splitlines() if "floor" in line), "")
        bad = "format 1.0" in out
        report(f"info {name}", code, out, err, expect=0, check=("FAIL: " if bad else "") + floor.strip())



def message_probes(base: Path, gen: list[str]) -> None:
    """Also seen: argparse's type errors in one line, options that do nothing refused, no numpy repr."""
    for flags in (["--categories", "2.5"], ["--missing", "abc"]):
        probe(f"generate {' '.join(flags)}", CLI + gen + flags + ["-o", "x.h5"], base)
    probe("benchmark --max-clusters -1x2", CLI + ["benchmark", "nowhere", "--algorithm", "cem-icl", "--track",
                                                  "unknown-clusters", "--max-clusters", "-1x2", "--out", "o"], base)
    probe("generate --missing-spread, random", CLI + gen + ["--missing", "0.2", "--missing-mechanism", "random",
                                                            "--missing-spread", "0.5", "-o", "x.h5"], base)
    probe("generate --missing 0 --mechanism random", CLI + gen + ["--missing", "0", "--missing-mechanism", "random",
                                                                  "-o", "x.h5"], base)
    probe("generate --risk 5.5", CLI + gen[:-3] + ["--risk", "5.5", "-q", "-o", "x.h5"], base)



def output_probes(base: Path, gen: list[str]) -> None:
    """Also seen: every output checked writable before the work starts."""
    probe("generate -o under a file", CLI + gen + ["-o", "file/x.h5"], base,
          setup=lambda w: (w / "file").write_text("x"), allowed=())
    probe("generate -o a directory --force", CLI + gen + ["-o", "d", "--force"], base,
          setup=lambda w: (w / "d").mkdir())
    if os.geteuid() != 0:
        probe("generate -o read-only folder", CLI + gen + ["-o", "ro/x.h5"], base,
              setup=lambda w: ((w / "ro").mkdir(), os.chmod(w / "ro", 0o500)))


def _declared_sets(source: Path, path: Path, n_sets: int) -> None:
    """A copy of the table file ``source`` whose label sets declare ``n_sets`` sets, never written."""
    import h5py

    shutil.copy(source, path)
    with h5py.File(path, "r+") as file:
        gibbs = file["gibbs"]
        for side in ("rows", "cols"):
            width = gibbs[side].shape[1]
            del gibbs[side]
            gibbs.create_dataset(side, shape=(n_sets, width), dtype="u1", chunks=(1 << 16, width),
                                 compression="gzip", fillvalue=0)
        gibbs.attrs["chain_lengths"] = np.full(int(gibbs.attrs["n_chains"]), n_sets // int(gibbs.attrs["n_chains"]))


def _silent_server():
    """A TCP server that accepts and never speaks (as an HTTP server waiting for its request)."""
    import socket

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    return listener


def limit_probes(base: Path, gen: list[str]) -> None:
    """Issue 48: outputs never replace an input or what is not a regular file, limits checked before the work."""
    table = base / "limits-t.h5"
    code, _, err, _ = run(CLI + gen + ["--seed", "5", "-o", str(table)], base)
    if code:
        print("FAIL could not generate the limits' table:", err.strip()[:200])
        FAILURES.append("limits table")
        return
    probe("generate -o a FIFO --force", CLI + gen + ["-o", "pipe", "--force"], base,
          setup=lambda w: os.mkfifo(w / "pipe"))
    probe("generate -o a dangling link", CLI + gen + ["-o", "link.h5"], base,
          setup=lambda w: (w / "link.h5").symlink_to(w / "nowhere" / "x.h5"))
    probe("fit DATA -o DATA --force", CLI + ["fit", "data.h5", "-o", "data.h5", "--force", "-q"], base,
          setup=lambda w: shutil.copy(table, w / "data.h5"))
    probe("generate --seed 2**64", CLI + gen + ["--seed", str(2**64), "-o", "x.h5"], base)
    probe("generate -o t.csv (warned)", CLI + gen + ["-o", "t.csv"], base, expect=0, allowed=("t.csv",))
    probe("fit --samples 1e8 --max-memory 2G", CLI + ["fit", str(table), "--samples", "100000000", "--max-memory",
                                                     "2G", "-o", "d.toml"], base)
    probe("evaluate 4e10 declared label sets", CLI + ["evaluate", "huge.h5", "--rows", "r.txt", "--cols", "c.txt"],
          base, setup=lambda w: (_declared_sets(table, w / "huge.h5", 40_000_000_000),
                                 write_labels(w / "r.txt", np.zeros(30)), write_labels(w / "c.txt", np.zeros(20))))
    probe("show 4e10 declared label sets", CLI + ["show", "huge.h5", "-o", "x.png"], base,
          setup=lambda w: _declared_sets(table, w / "huge.h5", 40_000_000_000))
    probe("generate --scheduler notanaddress", CLI + gen + ["--backend", "dask", "--scheduler", "notanaddress",
                                                            "-o", "x.h5"], base)
    probe("generate --design D --base-rate 2", CLI + ["generate", "--design", "d.toml", "--risk", "0.1",
                                                      "--base-rate", "2", "-o", "x.h5"], base,
          setup=lambda w: run(CLI + ["fit", str(table), "--no-certify", "--max-clusters", "3x3", "-q", "-o",
                                     str(w / "d.toml")], w))


def selection_probes(base: Path) -> None:
    """Item 4: degenerate tables for select_lbm."""
    python_probe("select_lbm degenerate tables", """
        import numpy as np, scipy.sparse as sp, warnings
        from lbm_bench import select_lbm
        out = []
        for X, kind in ((sp.csr_array((50, 40)), "poisson"), (sp.csr_array((50, 40)), "bernoulli"),
                        (np.zeros((50, 40)), "gaussian")):
            s = select_lbm(X, (3, 3), kind=kind, n_init=2, rng=0)
            out.append(f"{kind} zeros -> {s.n_row_clusters}x{s.n_col_clusters}")
        for X in (np.full((20, 15), np.nan), np.ma.masked_all((20, 15))):
            try:
                select_lbm(X, (3, 3), kind="gaussian", rng=0)
                out.append("FAIL: all-missing accepted")
            except ValueError as e:
                out.append("all-missing refused")
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            X = (np.random.default_rng(0).random((40, 30)) < 0.5).astype(float)
            select_lbm(X, (3, 3), kind="gaussian", n_init=2, rng=0)
        out.append("0/1 as gaussian warns" if w else "FAIL: 0/1 as gaussian silent")
        print(("FAIL: " if any(o.startswith("FAIL") for o in out) else "") + "; ".join(out))
    """, base)


def _write(name: str, data: bytes | str):
    def setup(work: Path) -> None:
        path = work / name
        if isinstance(data, str):
            path.write_text(data)
        else:
            path.write_bytes(data)
    return setup


def _gzip_of(chunks) -> bytes:
    import gzip
    import io

    out = io.BytesIO()
    with gzip.GzipFile(fileobj=out, mode="wb") as handle:
        for chunk in chunks:
            handle.write(chunk)
    return out.getvalue()


def _hdf5(name: str, build):
    def setup(work: Path) -> None:
        import h5py

        with h5py.File(work / name, "w") as file:
            file.attrs["encoding-type"] = "anndata"
            build(file, h5py)
    return setup


def reader_probes(base: Path) -> None:
    """Issue 48, the readers' rows: memory bounded by what a file declares, one line naming the file."""
    mtx = "%%MatrixMarket matrix coordinate {field} general\n{size}\n{entries}"
    mem = ["--max-memory", "250M"]
    files = {
        "mtx 3x1e14": ("w.mtx", mtx.format(field="real", size="3 100000000000000 1", entries="1 1 1.0\n"), mem),
        "mtx 23-digit size": ("h.mtx", mtx.format(field="real", size="99999999999999999999999 3 3", entries=""), []),
        "mtx integer 1.5": ("i.mtx", mtx.format(field="integer", size="2 2 2", entries="1 1 1.5\n2 2 1\n"), []),
        "mtx integer 1e23": ("j.mtx", mtx.format(field="integer", size="2 2 2", entries="1 1 1e23\n2 2 1\n"), []),
        "csv CR-only lines": ("cr.csv", b"1,2,3,4,5,6,7,8\r" * 1_000_000, mem),
        "csv.gz CR lines": ("cr.csv.gz", _gzip_of([b"1,2,3,4\r" * 250_000] * 40), ["--max-memory", "200M"]),
        "csv.gz spaces": ("sp.csv.gz", _gzip_of([b" " * (1 << 20)] * 40), ["--max-memory", "200M"]),
        "mtx.gz comments": ("c.mtx.gz", _gzip_of([b"%%MatrixMarket matrix coordinate real general\n"]
                                                 + [b"%" + b"x" * (1 << 20) + b"\n"] * 270 + [b"2 2 1\n1 1 1\n"]),
                            ["--max-memory", "200M"]),
        "csv.gz truncated": ("t.csv.gz", _half(_gzip_of([b"%d,%d,%d\n" % (i, i % 7, i % 3) for i in range(9**5)])), []),
        "csv.gz not gzip": ("n.csv.gz", b",s,t\n1,2,3\n", []),
    }
    for name, (file, data, extra) in files.items():
        probe(f"info {name}", CLI + ["info", file, *extra], base, setup=_write(file, data))
    npy = {"npy 1e150": np.array([[1.0, 1e150], [2.0, 3.0]]),
           "npy uint64 2^63": np.array([[2**63 + 5, 1], [2, 3]], np.uint64)}
    for name, values in npy.items():
        probe(f"info {name}", CLI + ["info", "v.npy"], base, setup=lambda w, v=values: np.save(w / "v.npy", v))
    probe("info npz format 5", CLI + ["info", "f.npz"], base, setup=lambda w: np.savez(
        w / "f.npz", format=np.array(5), shape=np.array([2, 2]), data=np.ones(2), indices=np.array([0, 1]),
        indptr=np.array([0, 1, 2])))
    h5ad = {
        "h5ad dangling soft link": lambda f, h5py: (f.__setitem__("X", h5py.SoftLink("/nothing")),
                                                    f.create_group("obs")),
        "h5ad external link": lambda f, h5py: (f.__setitem__("X", h5py.ExternalLink("missing.h5", "/X")),
                                               f.create_group("obs")),
        "h5ad float indices": lambda f, h5py: _csr_group(f, indices=np.array([0.5, 1.5])),
        "h5ad indptr 4e8": lambda f, h5py: _csr_group(f, indptr=("big", 400_000_000)),
    }
    for name, build in h5ad.items():
        probe(f"info {name}", CLI + ["info", "x.h5ad", "--max-memory", "1G"], base, setup=_hdf5("x.h5ad", build))
    design = _probe_design(base)
    text = design.read_text()
    lines = {"design max_clusters inf": ("max_clusters", "max_clusters = [inf, 4]"),
             "design rates 1e300": ("rates", None), "design kind Poisson": ("kind", 'kind = "Poisson"'),
             "design no kind": ("kind", ""), "design knee 1-1e-16": ("path_knee", "path_knee = 0.9999999999999999"),
             "design version 1.-1": ("format", 'format = "lbm-bench-design/1.-1"'),
             "design value nan": ("value", "value = nan")}
    for name, (key, line) in lines.items():
        edited = (re.sub(r"^rates = \[\[[^,]+", "rates = [[1e300", text, count=1, flags=re.M) if line is None else
                  re.sub(rf"^{key} = .*$", line, text, count=1, flags=re.M))
        probe(f"generate {name}", CLI + ["generate", "--design", "d.toml", "--risk", "0.1", "-o", "t.h5"], base,
              setup=_write("d.toml", edited))
    generate = ["generate", "--risk", "0.1", "-o", "t.h5", "--design"]
    probe("generate --design dev-zero", CLI + generate + ["/dev/zero"], base)
    probe("generate --design a FIFO", CLI + generate + ["p.toml"], base, setup=lambda w: os.mkfifo(w / "p.toml"))
    fit = ["fit", "noise.npy", "--max-clusters", "3x3", "--no-certify", "-q", "-o", "d.toml"]
    probe("fit on pure noise", CLI + fit, base,
          setup=lambda w: np.save(w / "noise.npy", np.random.default_rng(2).normal(size=(40, 30))))


def _half(data: bytes) -> bytes:
    return data[: len(data) // 2]


def _csr_group(file, indices=None, indptr=None):
    indices = np.array([0, 1]) if indices is None else indices
    indptr = np.array([0, 1, 2]) if indptr is None else indptr
    group = file.create_group("X")
    group.attrs.update({"encoding-type": "csr_matrix", "shape": (2, 2)})
    group["data"], group["indices"] = np.array([1.0, 2.0]), indices
    if isinstance(indptr, tuple):
        group.create_dataset("indptr", shape=(indptr[1],), dtype=np.int64, compression="gzip", chunks=(1 << 20,))
    else:
        group["indptr"] = indptr


def _probe_design(base: Path) -> Path:
    """A design fitted to a small Poisson table (the file the design probes edit)."""
    work = base / "design_source"
    work.mkdir()
    rng = np.random.default_rng(0)
    X = rng.poisson(np.outer(np.repeat([1.0, 4.0], 30), np.repeat([0.5, 2.0], 20)))
    np.save(work / "c.npy", X)
    code, _, err, _ = run(CLI + ["fit", "c.npy", "--max-clusters", "3x3", "--no-certify", "-q", "-o", "d.toml"], work)
    if code:
        raise RuntimeError(f"could not fit the probes' design: {err.strip()[:200]}")
    return work / "d.toml"


SPEC = """[release]
name = "probe"
version = "1.0"
seed = {seed}
license = "CC-BY-4.0"
description = "probe"

[defaults]
n_samples = 200
n_chains = 4

[[grid]]
kinds = ["bernoulli"]
shapes = [{shapes}]
clusters = ["2x2"]
risks = [0.1]
"""


def build_probes(base: Path, repo: Path) -> None:
    work = base / "build"
    work.mkdir()
    (work / "a.toml").write_text(SPEC.format(seed=1, shapes='"30x20", "40x30"'))
    (work / "b.toml").write_text(SPEC.format(seed=2, shapes='"30x20", "40x30"'))
    (work / "small.toml").write_text(SPEC.format(seed=1, shapes='"30x20"'))
    # two builds of different specs into one folder at once
    procs = [subprocess.Popen(CLI + ["build", spec, "--out", "rel", "-q"], cwd=work, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for spec in ("a.toml", "b.toml")]
    results = [(p.wait(600), *p.communicate()) for p in procs]
    codes = sorted(code for code, _, _ in results)
    refused = [err for code, _, err in results if code != 0]
    verify = run(CLI + ["verify", "rel"], work)
    ok = codes == [0, 2] and verify[0] == 0 and len(refused) == 1 and len(refused[0].strip().splitlines()) == 1
    report("two builds into one folder at once", 0 if ok else 1, "", refused[0] if refused else "", expect=0,
           check=None if ok else f"FAIL: exits {codes}, verify {verify[0]}")
    probe_in = work
    other = "b.toml" if results[0][0] == 0 else "a.toml"  # the seed of the build that lost the race
    for name, spec in (("build a smaller spec into a release", "small.toml"),
                       ("build another seed into a release", other)):
        code, out, err, _ = run(CLI + ["build", spec, "--out", "rel", "-q"], probe_in)
        verify = run(CLI + ["verify", "rel"], probe_in)
        report(name, code, out, err, expect=2, check=None if verify[0] == 0 else "FAIL: verify fails after")
    listener = _silent_server()
    try:  # issue 48: refused after the connection timeout (10 s, too slow for the quick groups), nothing written
        address = f"tcp://127.0.0.1:{listener.getsockname()[1]}"
        probe("build on a silent scheduler", CLI + ["build", "s.toml", "--out", "rel", "-q", "--backend", "dask",
                                                    "--scheduler", address], base,
              setup=lambda w: (w / "s.toml").write_text(SPEC.format(seed=1, shapes='"30x20"')))
    finally:
        listener.close()


PLUGIN = """
import numpy as np

def exits(X, n_row_clusters, n_col_clusters, *, rng=None):
    raise SystemExit(0)

def hangs(X, n_row_clusters, n_col_clusters, *, rng=None):
    import time
    time.sleep(3600)

def minus_one(X, max_row_clusters, max_col_clusters, *, rng=None):
    rows = np.zeros(X.shape[0]); rows[0] = -1
    return rows, np.zeros(X.shape[1])

def infinite(X, max_row_clusters, max_col_clusters, *, rng=None):
    rows = np.zeros(X.shape[0]); rows[0] = np.inf
    return rows, np.zeros(X.shape[1])

def spawns(X, n_row_clusters, n_col_clusters, *, rng=None):
    import subprocess, time
    from pathlib import Path
    sleep = subprocess.Popen(["sleep", "300"])
    Path(__file__).with_name(f"sleep-{sleep.pid}").write_text("")
    time.sleep(3600)

def quick(X, n_row_clusters, n_col_clusters, *, rng=None):
    return np.arange(X.shape[0]) % 2, np.arange(X.shape[1]) % 2
"""


def plugin_probes(base: Path) -> None:
    work = base / "plugins"
    work.mkdir()
    (work / "algos.py").write_text(PLUGIN)
    (work / "s.toml").write_text(SPEC.format(seed=3, shapes='"30x20"'))
    code, _, err, _ = run(CLI + ["build", "s.toml", "--out", "rel", "-q"], work)
    if code:
        print("FAIL could not build the plugins' release:", err.strip()[:200])
        FAILURES.append("plugin release")
        return
    code, out, err, _ = run(CLI + ["benchmark", "rel", "--algorithm", "algos:quick", "--out", "out_far", "-q",
                                   "--timeout", "1e10"], work, timeout=300)
    report("benchmark --timeout 1e10", code, out, err, expect=0)
    code, out, err, _ = run(CLI + ["benchmark", "rel", "--algorithm", "algos:spawns", "--out", "out_spawns", "-q",
                                   "--timeout", "2"], work, timeout=300)
    time.sleep(1)
    alive = [p.name for p in work.glob("sleep-*") if Path(f"/proc/{p.name[6:]}").exists()
             and Path(f"/proc/{p.name[6:]}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"]
    report("benchmark --timeout 2, plug-in starts sleep", code, out, err, expect=code if code else 1,
           check=f"FAIL: {len(alive)} sleep 300 left" if alive else "no process of the plug-in left")
    for name, extra in (("exits", []), ("exits", ["--jobs", "2"]), ("hangs", ["--timeout", "5"])):
        out_dir = f"out_{name}_{len(extra)}"
        code, out, err, seconds = run(CLI + ["benchmark", "rel", "--algorithm", f"algos:{name}", "--out", out_dir,
                                             "-q", *extra], work, timeout=300)
        rows = (work / out_dir / "results.csv").read_text() if (work / out_dir / "results.csv").exists() else ""
        failed = "failed" in err and (name != "hangs" or "TimeoutError" in rows)
        report(f"benchmark algos:{name} {' '.join(extra)}".strip(), code, out, err,
               expect=code if code != 0 else 1,
               check=f"{seconds:.1f} s, recorded as failed" if failed and code != 0 else "FAIL: exit 0 or no record")
    for name in ("minus_one", "infinite"):
        out_dir = f"out_{name}"
        code, out, err, _ = run(CLI + ["benchmark", "rel", "--track", "unknown-clusters", "--max-clusters", "3x3",
                                       "--algorithm", f"algos:{name}", "--out", out_dir, "-q"], work)
        rows = (work / out_dir / "results.csv").read_text() if (work / out_dir / "results.csv").exists() else ""
        report(f"unknown track, labels {name}", code, out, err, expect=code if code else 1,
               check=None if code else "FAIL: accepted")
    # SIGTERM during a run: stops, leaves no empty --out
    proc = subprocess.Popen(CLI + ["benchmark", "rel", "--algorithm", "algos:hangs", "--out", "out_term", "-q"],
                            cwd=work, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(8)
    proc.send_signal(signal.SIGTERM)
    code = proc.wait(60)
    _, err = proc.communicate()
    left = sorted(folder_files(work / "out_term")) if (work / "out_term").exists() else []
    report("benchmark SIGTERM", code, "", err, expect=code if code else 1,
           check=(f"stopped, exit {code}, --out holds {left or 'nothing'}") if code else "FAIL: exit 0")


if __name__ == "__main__":
    sys.exit(main())
