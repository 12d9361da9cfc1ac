"""Numbers in the docs come from commands: check them, or regenerate them.

Every figure quoted in the site's pages (``docs/*.md``, ``docs/guide/*.md``,
``docs/explanation/*.md``), in ``docs/dev/*.md`` (the measurement notes, outside the site) and
in ``README.md`` (a risk, an excess, a count, a time) sits in a *region* of the page, between
``<!-- docs-numbers: HEAD -->`` and ``<!-- /docs-numbers -->`` (a block, or inline within a
line). ``HEAD`` says where the figures come from:

``NAME``
    Generated: the region holds what the recipe ``NAME`` of this script prints (a command
    and its output, a table, one value). ``--check`` re-runs it and compares, ``--write``
    rewrites the region. Machine-dependent parts of a generated region (times, the
    available memory, digests of files that depend on library versions) are masked when
    comparing, and kept as they are when writing unless ``--times`` is given (times are
    then re-measured on this machine: update the machine line next to them). A recipe
    also checks the claims the prose around it makes (e.g. which algorithm is closest to
    the floor) and fails when one no longer holds.
``measured: TEXT``
    Machine-dependent or long: times, or runs of minutes. ``TEXT`` names the command (in
    backticks) or where the page gives it, with the machine and date next to the figures;
    not re-run by the check.
``cited: TEXT``
    Quoted from elsewhere: another page's measured block, the paper, a test that asserts
    the value, or exact arithmetic. ``TEXT`` says where (a link, a path or a test).

The lint (always run) fails on a figure outside any region: an output line of a fenced
block (a block with a ``$`` command), a markdown table row with a decimal number, or a
prose line with a result-like number (a decimal with two or more digits, a time), and on
a region whose head is neither a recipe nor says where its figures come from. It also
parses every ``lbm-bench`` command of the docs' fenced blocks with the command line's
parser (an option or a command that no longer exists fails) and checks that every
``scripts/*.py`` the docs name exists.

Recipes are ``cheap`` (seconds: generate, info, evaluate...), ``mini`` (they read the
sample release ``repository/mini.toml``, built once, about 10 s, then seconds each) or
``long``. ``tests/test_docs_numbers.py`` runs ``--check`` on the cheap and mini recipes, so
a change that moves a published number fails CI until the docs are regenerated:

    python scripts/checks/docs_numbers.py --check            # lint, then cheap and mini recipes
    python scripts/checks/docs_numbers.py --write            # regenerate them (times kept)
    python scripts/checks/docs_numbers.py --write --times    # also re-measure the times here
    python scripts/checks/docs_numbers.py --lint             # only the lint (no command run)

Commands run in a work folder (``--workdir``, default a temporary one) holding a link to
``repository/``, so each runs exactly as the docs print it from the repository's root;
``lbm-bench`` runs as ``python -m lbm_bench`` and ``python`` as this interpreter.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import io
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path


def _repository_root() -> Path:
    for folder in Path(__file__).resolve().parents:
        if (folder / "pyproject.toml").is_file() and (folder / "lbm_bench").is_dir():
            return folder
    raise SystemExit("docs_numbers.py: cannot find the repository root (pyproject.toml)")


ROOT = _repository_root()
#: The pages whose figures are checked: the site's pages (its top level, the user guide and the
#: explanations), the developers' notes of ``docs/dev/`` (the measurement history that
#: ``docs/performance.md`` left), and the README.
PAGES = [*sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "docs" / "guide").glob("*.md")),
         *sorted((ROOT / "docs" / "explanation").glob("*.md")), *sorted((ROOT / "docs" / "dev").glob("*.md")),
         ROOT / "README.md"]
#: Pages whose ```python blocks are doctest sessions (tests/test_docs.py runs them).
DOCTEST_PAGES = {"api.md", "index.md", "protocol.md", "paper.md"}

REGION = re.compile(r"<!-- docs-numbers: (?P<head>.*?) -->(?P<body>.*?)<!-- /docs-numbers -->", re.S)
#: Parts of an output that depend on the machine (and are masked by the recipes that name them).
TIME = r"\d+(?:\.\d+)? s\b"
HEX = r"\b[0-9a-f]{16,64}\b"


class ClaimError(AssertionError):
    """A claim the docs make next to a generated region no longer holds."""


# --------------------------------------------------------------------------- #
# Running the documented commands                                             #
# --------------------------------------------------------------------------- #


class Workdir:
    """The folder the commands run in, and the outputs already produced there.

    ``repository`` in it links to the repository's, so that commands naming
    ``repository/mini.toml`` run as printed. Outputs are cached per command line in
    ``.docs-numbers/``, so that a recipe reading a fixture's output (the mini release's
    build) does not build it again, also across runs with the same ``--workdir``.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.path.mkdir(parents=True, exist_ok=True)
        link = self.path / "repository"
        if not link.exists():
            link.symlink_to(ROOT / "repository", target_is_directory=True)
        (self.path / ".docs-numbers").mkdir(exist_ok=True)

    def _cache(self, command: str) -> Path:
        import hashlib

        return self.path / ".docs-numbers" / (hashlib.sha256(command.encode()).hexdigest()[:16] + ".json")

    def run(self, command: str, *, status: int = 0, cache: bool = False) -> str:
        """Run ``command`` (as the docs print it) here; return ``"$ command"`` and its output
        (stdout and stderr as a terminal would interleave them; this folder's path printed as
        ``$PWD``). ``status`` is the exit status the docs show (an error example exits with 2)."""
        cached = self._cache(command)
        if cache and cached.is_file():
            record = json.loads(cached.read_text())
            return record["transcript"]
        argv = shlex.split(command)
        if argv[0] == "lbm-bench":
            argv = [sys.executable, "-m", "lbm_bench", *argv[1:]]
        elif argv[0] == "python":
            argv = [sys.executable, *argv[1:]]
        env = dict(os.environ, PYTHONUNBUFFERED="1", COLUMNS="100")
        env.pop("LBM_BENCH_DEBUG", None)
        done = subprocess.run(argv, cwd=self.path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, timeout=1800)
        if done.returncode != status:
            raise RuntimeError(f"`{command}` exited with {done.returncode} (expected {status}):\n{done.stdout}")
        output = done.stdout.replace(str(self.path.resolve()), "$PWD").replace(str(self.path), "$PWD")
        transcript = f"$ {command}\n{output}".rstrip("\n")
        if cache:
            cached.write_text(json.dumps({"command": command, "transcript": transcript}))
        return transcript

    def fixture(self, command: str) -> str:
        """Run a command whose outputs (files) later commands read, once per work folder."""
        return self.run(command, cache=True)


def fenced(*parts: str) -> str:
    """Parts (transcripts, text) as one fenced block."""
    return "```\n" + "\n".join(parts) + "\n```"


def claim(condition: bool, text: str) -> None:
    if not condition:
        raise ClaimError(text)


# --------------------------------------------------------------------------- #
# Recipes                                                                     #
# --------------------------------------------------------------------------- #


@dataclass(frozen=True)
class Recipe:
    """How one region is generated: its cost class, the function that renders it in a work
    folder, and regular expressions of its machine-dependent parts."""

    name: str
    cost: str
    render: Callable[[Workdir], str]
    masks: tuple[str, ...] = ()
    doc: str = ""


RECIPES: dict[str, Recipe] = {}


def recipe(name: str, cost: str, masks: tuple[str, ...] = ()):
    def register(function: Callable[[Workdir], str]) -> Callable[[Workdir], str]:
        RECIPES[name] = Recipe(name, cost, function, masks, (function.__doc__ or "").strip())
        return function

    return register


GENERATE = "lbm-bench generate --kind gaussian --shape 200x100 --clusters 3x2 --risk 0.1 --seed 7 -o t.h5"
LABELS = ('python -c "import numpy as np, lbm_bench; from lbm_bench.algorithms import cem; '
          "t = lbm_bench.load_table('t.h5'); rows, cols = cem(t.data, 3, 2, rng=0); "
          "np.savetxt('rows.txt', rows, fmt='%d'); np.save('cols.npy', cols)\"")
MINI = "lbm-bench build repository/mini.toml --out mini-release --jobs 2 --timings"
BENCHMARK = ("lbm-bench benchmark mini-release --algorithm cem --algorithm vem --algorithm double-kmeans "
             "--algorithm spectral-coclustering --algorithm spectral-biclustering --out results --jobs 2")


def _generate(work: Workdir) -> str:
    return work.fixture(GENERATE)


def _number(pattern: str, text: str) -> float:
    found = re.search(pattern, text)
    if not found:
        raise ClaimError(f"no {pattern!r} in:\n{text}")
    return float(found.group(1))


@recipe("cli-generate", "cheap", masks=(TIME,))
def cli_generate(work: Workdir) -> str:
    """docs/cli.md: the seed-7 table, and the claims of the paragraph after it."""
    out = _generate(work)
    floor, floor_mcse = _number(r"floor .*? (\d\.\d+) \+- ", out), _number(r"floor .*? \+- (\d\.\d+)", out)
    map_risk = _number(r"MAP labels (\d\.\d+)", out)
    row, col = _number(r"floor .*row loss (\d\.\d+)", out), _number(r"floor .*column loss (\d\.\d+)", out)
    claim(abs(floor - map_risk) <= 2 * floor_mcse,
          f"cli.md says the floor and the MAP's risk agree within their MCSE: {floor} vs {map_risk}")
    claim(row > 5 * col, f"cli.md says the seed-7 table is unbalanced (row loss >> column loss): {row}, {col}")
    return fenced(out)


@recipe("cli-categorical", "cheap", masks=(TIME,))
def cli_categorical(work: Workdir) -> str:
    """docs/cli.md: a categorical table (issue 24), and two requests refused in one line."""
    generated = work.run("lbm-bench generate --kind categorical --categories 5 --shape 200x100 --clusters 3x3 "
                         "--risk 0.1 --seed 7 -o cat.h5")
    one = work.run("lbm-bench generate --kind categorical --categories 1 --shape 200x100 --clusters 3x3 "
                   "--risk 0.1 -o cat1.h5", status=2)
    other = work.run("lbm-bench generate --kind gaussian --categories 5 --shape 200x100 --clusters 3x3 "
                     "--risk 0.1 -o g.h5", status=2)
    return fenced(generated, one, other)


@recipe("cli-info", "cheap")
def cli_info(work: Workdir) -> str:
    _generate(work)
    return fenced(work.run("lbm-bench info t.h5"), "$ lbm-bench info --json t.h5     # every root attribute and "
                  "the shapes, as JSON")


@recipe("cli-evaluate", "cheap")
def cli_evaluate(work: Workdir) -> str:
    """docs/cli.md: the seed-7 table scored with the built-in CEM's labels."""
    _generate(work)
    labels = work.fixture(LABELS)
    good = work.run("lbm-bench evaluate t.h5 --rows rows.txt --cols cols.npy")
    bad = work.run("lbm-bench evaluate t.h5 --rows rows.txt --cols rows.txt", status=2)
    return fenced(labels, good, bad)


@recipe("cli-memory", "cheap", masks=(r"the \d+(?:\.\d+)? [KMGT]iB available",))
def cli_memory(work: Workdir) -> str:
    """docs/cli.md: two requests the memory guard refuses (the first against this machine's
    available memory, masked)."""
    return fenced(
        work.run("lbm-bench generate --kind gaussian --shape 100000x100000 --clusters 3x2 --risk 0.1 -o big.h5",
                 status=2),
        work.run("lbm-bench generate --kind bernoulli --shape 100000x100000 --clusters 3x2 --risk 0.1 "
                 "--density 0.01 --max-memory 4G -o big.h5", status=2),
    )


#: docs/cli.md's own table (issue 47): counts by site and year as pandas' to_csv writes them (an empty
#: corner above the sites' names, years as the header), a few cells empty.
USER_CSV = ('python -c "import numpy as np; r = np.random.default_rng(1); z, w = r.integers(0, 3, 60), '
            "r.integers(0, 3, 12); X = r.poisson(np.array([[1, 6, 2], [5, 1, 1], [2, 2, 8]])[z][:, w]); "
            "cell = lambda v: '' if r.random() < 0.02 else str(v); "
            "rows = [f'site{i},' + ','.join(map(cell, x)) for i, x in enumerate(X)]; "
            "head = ',' + ','.join(map(str, range(1990, 2002))); "
            "open('counts.csv', 'w').write('\\n'.join([head, *rows]) + '\\n')\"")


@recipe("cli-user-table", "cheap", masks=(HEX,))
def cli_user_table(work: Workdir) -> str:
    """docs/cli.md: info and fit on a user's CSV of counts: the family and storage line, and the
    line that says the counts stopped at --max-clusters."""
    made = work.fixture(USER_CSV)
    info = work.run("lbm-bench info counts.csv")
    fit = work.run("lbm-bench fit counts.csv --max-clusters 2x2 --seed 1 -o design.toml")
    claim("row names: 60 ('site0'" in info and "column names: 12 ('1990'" in info,
          "cli.md says info finds the sites' names and the years as the header")
    claim("poisson blocks (inferred from the values" in fit and "; dense (a text file)" in fit,
          "cli.md says fit prints the family and the storage with their reasons")
    claim("the counts stopped at the limit" in fit and "raise --max-clusters" in fit,
          "cli.md says fit says when the counts stop at --max-clusters")
    return fenced(made, info, fit)


#: docs/cli.md's refused requests with missing entries: one line each, exit status 2.
_REFUSED = "lbm-bench generate --kind {} --shape {} --clusters {} --risk {} {} -o refused.h5"
MISSING_ERRORS = (
    _REFUSED.format("gaussian", "60x40", "3x2", 0.1, "--missing 1"),
    _REFUSED.format("gaussian", "60x40", "3x2", 0.1, "--missing nan"),
    _REFUSED.format("gaussian", "60x40", "3x2", 0.1, "--missing-mechanism block"),
    _REFUSED.format("bernoulli", "20x10", "2x2", 0.05, "--missing 0.72 --seed 3"),
)


@recipe("cli-missing-errors", "cheap")
def cli_missing_errors(work: Workdir) -> str:
    """docs/cli.md: bad missing rates and a rate too high for the target, refused in one line."""
    transcripts = [work.run(command, status=2) for command in MISSING_ERRORS]
    claim(all(t.count("\n") == 1 for t in transcripts), "cli.md says each refusal is one line")
    return fenced(*transcripts)


@recipe("cli-missing-info", "cheap")
def cli_missing_info(work: Workdir) -> str:
    """docs/cli.md: a table with 30% of its entries missing at random, and its summary."""
    made = work.fixture("lbm-bench generate --kind gaussian --shape 60x40 --clusters 3x2 --risk 0.1 --missing 0.3 "
                        "--seed 1 -o missing.h5 -q")
    info = work.run("lbm-bench info missing.h5")
    claim("missing entries: " in info, "cli.md says info gives the missing entries' line")
    return fenced(made, info)


@recipe("protocol-missing-unreachable", "cheap")
def protocol_missing_unreachable(work: Workdir) -> str:
    """docs/protocol.md: a rate at which the rows with no observed entry alone exceed the target."""
    return fenced(work.run("lbm-bench generate --kind gaussian --shape 20x10 --clusters 2x2 --risk 0.05 "
                           "--missing 0.85 --seed 3 -o refused.h5", status=2))


def _spec_count(name: str) -> str:
    sys.path.insert(0, str(ROOT))
    from lbm_bench.release import read_spec

    return str(len(read_spec(ROOT / "repository" / name).tables))


@recipe("mini-tables", "cheap")
def mini_tables(work: Workdir) -> str:
    """The number of tables of repository/mini.toml."""
    return _spec_count("mini.toml")


@recipe("paper-tables", "cheap")
def paper_tables(work: Workdir) -> str:
    """The number of tables of repository/paper.toml."""
    return _spec_count("paper.toml")


def _abridged_timings(transcript: str) -> str:
    """The --timings table with its first and last configuration lines only."""
    lines = transcript.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("configuration"))
    end = next(i for i, line in enumerate(lines) if line.startswith("total"))
    body = lines[start + 2 : end]
    keep = [body[0], f"{'...':<36} (one line per configuration)", body[-1]] if len(body) > 2 else body
    return "\n".join(lines[: start + 2] + keep + lines[end:])


#: Masks of a --timings transcript: every time, and the seconds columns of its table.
TIMINGS_MASKS = (TIME, r"(?m)^((?:\S+)\s+\d+\s+\d+)\s+.*$")


@recipe("cli-build-timings", "mini", masks=TIMINGS_MASKS)
def cli_build_timings(work: Workdir) -> str:
    """docs/cli.md: the mini release's build with --timings (counts checked, times masked)."""
    return fenced(_abridged_timings(work.fixture(MINI)))


@recipe("cli-verify", "mini")
def cli_verify(work: Workdir) -> str:
    work.fixture(MINI)
    return fenced(work.run("lbm-bench verify mini-release"))


@recipe("cli-fetch", "mini", masks=(HEX, TIME))
def cli_fetch(work: Workdir) -> str:
    """docs/cli.md: the mini release archived (a resumed build: nothing to build), then fetched
    from that path into a cache, and refused with a wrong digest. The digest depends on the
    versions of numpy, h5py and matplotlib (masked)."""
    import shutil

    work.fixture(MINI)
    built = work.run("lbm-bench build repository/mini.toml --out mini-release --archive")
    digest = re.search(r"^SHA-256 ([0-9a-f]{64})$", built, re.M).group(1)
    wrong = digest[:-4] + ("0000" if not digest.endswith("0000") else "1111")
    shutil.rmtree(work.path / "cache", ignore_errors=True)
    fetched = work.run(f"lbm-bench fetch mini-release.tar.gz --sha256 {digest} --cache cache")
    refused = work.run(f"lbm-bench fetch mini-release.tar.gz --sha256 {wrong} --cache cache", status=1)
    return fenced(built, fetched, refused)


def _benchmark(work: Workdir) -> list[dict]:
    import csv

    work.fixture(MINI)
    work.fixture(BENCHMARK)
    with open(work.path / "results" / "results.csv", newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def _means(rows: list[dict], key: str, by: Callable[[dict], str]) -> dict[tuple[str, str], float]:
    groups: dict[tuple[str, str], list[float]] = {}
    for r in rows:
        groups.setdefault((r["algorithm"], by(r)), []).append(float(r[key]))
    return {k: sum(v) / len(v) for k, v in groups.items()}


@recipe("benchmark-mini", "mini")
def benchmark_mini(work: Workdir) -> str:
    """docs/benchmark.md: results/summary.md of the five built-ins on the mini release, and
    the claims of the paragraph after it."""
    rows = _benchmark(work)
    claim(not any(r["error"] for r in rows), "benchmark.md shows no failed run")
    by_kind = _means(rows, "excess_risk", lambda r: r["kind"])
    by_shape = _means(rows, "excess_risk", lambda r: f"{r['n_rows']}x{r['n_cols']}")
    kinds = sorted({r["kind"] for r in rows})
    for kind in kinds:
        best = min(("cem", "vem", "double-kmeans", "spectral-coclustering", "spectral-biclustering"),
                   key=lambda a: by_kind[(a, kind)])
        claim(by_kind[("vem", kind)] <= by_kind[(best, kind)] + 0.002,
              f"benchmark.md says VEM is the closest to the floor on every kind, or within 0.002 of it: "
              f"{best} on {kind} by {by_kind[('vem', kind)] - by_kind[(best, kind)]:.4f}")
    for shape in ("60x40", "120x80"):
        claim(by_shape[("cem", shape)] > by_shape[("vem", shape)],
              f"benchmark.md says CEM is behind VEM on {shape}")
        for far in ("double-kmeans", "spectral-coclustering", "spectral-biclustering"):
            claim(by_shape[(far, shape)] > by_shape[("cem", shape)],
                  f"benchmark.md says {far} is behind CEM on {shape}")
            claim(by_shape[(far, shape)] > 5 * by_shape[("vem", shape)],
                  f"benchmark.md says {far} is far behind VEM on {shape}")
    floor = _means(rows, "bayes_risk", lambda r: r["target_risk"])
    map_risk = _means(rows, "map_risk", lambda r: r["target_risk"])
    claim(all(map_risk[k] >= floor[k] for k in floor), "benchmark.md says the floor lies below the MAP's risk")
    summary = (work.path / "results" / "summary.md").read_text(encoding="utf-8").rstrip("\n")
    return re.sub(r"(?m)^#", "###", summary)  # the page's sections are ## and ###


@recipe("benchmark-vem-excess", "mini")
def benchmark_vem_excess(work: Workdir) -> str:
    """The range of VEM's mean excess risk by shape, quoted in benchmark.md's prose."""
    by_shape = _means(_benchmark(work), "excess_risk", lambda r: f"{r['n_rows']}x{r['n_cols']}")
    values = sorted(by_shape[("vem", s)] for s in ("120x80", "60x40"))
    return f"+{values[0]:.3f} to +{values[1]:.3f}"


@recipe("benchmark-cem-excess", "mini")
def benchmark_cem_excess(work: Workdir) -> str:
    """The range of CEM's mean excess risk by shape, quoted in benchmark.md's prose."""
    by_shape = _means(_benchmark(work), "excess_risk", lambda r: f"{r['n_rows']}x{r['n_cols']}")
    values = sorted(by_shape[("cem", s)] for s in ("120x80", "60x40"))
    return f"+{values[0]:.3f} to +{values[1]:.3f}"


@recipe("benchmark-floor-gap", "mini")
def benchmark_floor_gap(work: Workdir) -> str:
    """How far the floor lies below the MAP's risk on average per risk level, on the mini release."""
    rows = [r for r in _benchmark(work) if r["algorithm"] == "cem"]
    floor = _means(rows, "bayes_risk", lambda r: r["target_risk"])
    map_risk = _means(rows, "map_risk", lambda r: r["target_risk"])
    gaps = sorted(map_risk[k] - floor[k] for k in floor)
    return f"{gaps[0]:.3f} to {gaps[-1]:.3f}"


# --------------------------------------------------------------------------- #
# Regions: find, compare, rewrite                                             #
# --------------------------------------------------------------------------- #


@dataclass
class Region:
    page: Path
    head: str
    body: str
    start: int  # offset of the body in the page's text
    line: int

    @property
    def kind(self) -> str:
        if self.head.startswith("measured:"):
            return "measured"
        if self.head.startswith("cited:"):
            return "cited"
        return "generated"


def regions(page: Path, text: str | None = None) -> list[Region]:
    text = page.read_text(encoding="utf-8") if text is None else text
    return [Region(page, m.group("head").strip(), m.group("body"), m.start("body"),
                   text[: m.start()].count("\n") + 1) for m in REGION.finditer(text)]


def _masked(text: str, masks: tuple[str, ...]) -> str:
    for mask in masks:
        text = re.sub(mask, lambda m: "<machine>" if not m.groups() else m.group(1) + " <machine>", text)
    return text


def _framed(old_body: str, rendered: str) -> str:
    """The rendered text framed as the region's body was: a block region keeps its newlines."""
    if old_body.startswith("\n"):
        return f"\n{rendered}\n"
    return rendered


def merge(old: str, new: str, masks: tuple[str, ...], *, times: bool) -> str:
    """``new``, keeping each line of ``old`` whose masked form is the new line's (its times as
    published), unless ``times``."""
    if times or not masks:
        return new
    old_lines, new_lines = old.splitlines(), new.splitlines()
    if len(old_lines) != len(new_lines):
        return new
    kept = [_keep_machine_parts(o, n, masks) for o, n in zip(old_lines, new_lines, strict=True)]
    return "\n".join(kept) + ("\n" if new.endswith("\n") else "")


def _keep_machine_parts(old: str, new: str, masks: tuple[str, ...]) -> str:
    """``new`` with its machine-dependent parts taken from ``old`` when both have as many."""
    if _masked(old, masks) == _masked(new, masks):
        return old
    for mask in masks:
        olds = list(re.finditer(mask, old))
        news = list(re.finditer(mask, new))
        if len(olds) != len(news) or not olds:
            continue
        pieces, position = [], 0
        for o, n in zip(olds, news, strict=True):
            pieces += [new[position : n.start()], o.group(0)]
            position = n.end()
        new = "".join(pieces) + new[position:]
    return new


@dataclass
class Outcome:
    mismatches: list[str] = field(default_factory=list)
    rewritten: dict[Path, str] = field(default_factory=dict)


def run_recipes(names: set[str], work: Workdir, *, write: bool, times: bool) -> Outcome:
    """Render the regions of the recipes ``names`` and compare them with (or write them into)
    the pages."""
    outcome = Outcome()
    rendered: dict[str, str] = {}
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        pieces, position = [], 0
        for region in regions(page, text):
            if region.kind != "generated" or region.head not in names:
                continue
            spec = RECIPES[region.head]
            if region.head not in rendered:
                try:
                    rendered[region.head] = spec.render(work)
                except ClaimError as exc:
                    outcome.mismatches.append(f"{page.name}:{region.line}: {region.head}: a claim no longer "
                                              f"holds: {exc}")
                    rendered[region.head] = region.body.strip("\n")
            new = _framed(region.body, rendered[region.head])
            if _masked(new, spec.masks) != _masked(region.body, spec.masks):
                diff = "\n".join(difflib.unified_diff(region.body.splitlines(), new.splitlines(), "docs", "now",
                                                      lineterm="", n=1))
                outcome.mismatches.append(f"{page.name}:{region.line}: {region.head} differs from its command's "
                                          f"output now:\n{diff}")
            new = merge(region.body, new, spec.masks, times=times)
            pieces += [text[position : region.start], new]
            position = region.start + len(region.body)
        pieces.append(text[position:])
        updated = "".join(pieces)
        if updated != text:
            outcome.rewritten[page] = updated
    if write:
        for page, updated in outcome.rewritten.items():
            page.write_text(updated, encoding="utf-8")
    return outcome


# --------------------------------------------------------------------------- #
# Lint: every figure in a region, every command alive                         #
# --------------------------------------------------------------------------- #

_FENCE = re.compile(r"^(?P<fence>```+|~~~+)(?P<lang>[^\n`]*)\n(?P<body>.*?)^(?P=fence)[ \t]*$", re.S | re.M)
#: A result-like figure in prose: a decimal with two or more digits after the point, a
#: decimal ratio or percentage, a time or a size (versions like 3.11.7 excepted).
_UNIT = r"(?:\s?(?:s|ms|min|seconds?|minutes?|hours?|[KMGT]i?B|kB)\b|x\b|%)"
_TIME = r"(?:\s?(?:s|ms|min|seconds?|minutes?|hours?|[KMGT]i?B|kB)\b|x\b)"  # integer percentages: mostly inputs
_PROSE_FIGURE = re.compile(rf"(?<![\w.])[+-]?\d*\.\d{{2,}}(?![\w.])|(?<![\w.])\d+(?:\.\d+)?{_TIME}"
                           r"|(?<![\w.])\d+\.\d+(?:x\b|%)")
#: A figure in a table row: any decimal (with its unit).
_TABLE_FIGURE = re.compile(rf"(?<![\w.])[+-]?\d+\.\d+(?:{_UNIT})?(?![\d.])")
#: Numbers that are not results: versions (3.11.7, format 1.1, the bare 1.0, 1.1 and 1.2 of the
#: format and layout versions, to 1.6), section numbers of the paper, defaults of options, sizes
#: that are powers of two (chunk sizes of the format).
_NOT_RESULTS = re.compile(r"\d+\.\d+\.\d+|\b(?:format|version|versions|layout|Croissant|HDF5|Python|numpy|scipy"
                          r"|h5py|matplotlib)\s+`?\d+\.\d+`?|\bdefaults?:?\s+(?:\*\*)?\w*\s*(?:is\s+)?`?[\d.]+`?"
                          r"|\b[Ss]ections?\s+\d+(?:\.\d+)*|(?<![\w.])1\.[0-6](?![\w.%]| ?s\b)"
                          r"|(?<![\w.])(?:1|2|4|8|16|32|64|128|256|512|1024) ?[KMGT]iB\b")  # sizes of a layout


def _covered_spans(text: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in REGION.finditer(text)]


def _inside(spans: list[tuple[int, int]], start: int, end: int) -> bool:
    return any(a <= start and end <= b for a, b in spans)


def _without_code_spans(line: str) -> str:
    return re.sub(r"`[^`]*`", "``", line)


def uncovered_figures(page: Path, text: str | None = None) -> list[str]:
    """Figures of ``page`` outside any region, as ``page:line: text``."""
    text = page.read_text(encoding="utf-8") if text is None else text
    spans = _covered_spans(text)
    problems = []
    fences = list(_FENCE.finditer(text))

    def report(offset: int, line: str, what: str) -> None:
        problems.append(f"{page.name}:{text[:offset].count(chr(10)) + 1}: {what} outside a docs-numbers region: "
                        f"{line.strip()[:100]}")

    for m in fences:
        lang, body = m.group("lang").strip(), m.group("body")
        if lang in ("python", "toml", "r", "json", "sh", "bash"):
            continue  # code: doctested, or inputs
        lines = body.splitlines()
        prompted = any(ln.startswith("$ ") for ln in lines)
        offset = m.start("body")
        for line in lines:
            if prompted:  # the output of the $ commands: any number (not the digit of a name: t.h5)
                output = line and not line.startswith(("$ ", "#")) and re.search(r"(?<![A-Za-z_.])\d", line)
            else:  # commands, a layout, or an output printed without its command: its figures
                output = (not re.match(r"\s*(\w+=\S+ )*(lbm-bench|python|pip|sha256sum|mlcroissant)\b", line)
                          and _TABLE_FIGURE.search(_NOT_RESULTS.sub("", line)))
            if output and not _inside(spans, offset, offset + len(line)):
                report(offset, line, "command output")
            offset += len(line) + 1
    # prose: the text with regions, fenced blocks and HTML comments blanked out (newlines kept)
    blank = list(text)
    for a, b in [*spans, *((m.start(), m.end()) for m in fences),
                 *((m.start(), m.end()) for m in re.finditer(r"<!--.*?-->", text, re.S))]:
        for i in range(a, b):
            if blank[i] != "\n":
                blank[i] = " "
    offset = 0
    for line in "".join(blank).splitlines(keepends=True):
        start = offset
        offset += len(line)
        stripped = _NOT_RESULTS.sub("", _without_code_spans(line))
        if stripped.lstrip().startswith("|"):
            if _TABLE_FIGURE.search(stripped):
                report(start, text[start:offset], "table figure")
        elif _PROSE_FIGURE.search(stripped):
            report(start, text[start:offset], "figure")
    return problems


def region_problems(page: Path, text: str | None = None) -> list[str]:
    """Regions whose head is neither a recipe nor says where its figures come from."""
    problems = []
    for region in regions(page, text):
        where = f"{page.name}:{region.line}"
        if region.kind == "generated":
            if region.head not in RECIPES:
                problems.append(f"{where}: no recipe {region.head!r} in scripts/checks/docs_numbers.py")
        else:
            source = region.head.split(":", 1)[1].strip()
            if not re.search(r"`[^`]+`|\.md\b|tests/|scripts/|https?://|\$ ", source + region.body):
                problems.append(f"{where}: a {region.kind} region must name its command, page, test or source: "
                                f"{region.head!r}")
    text = page.read_text(encoding="utf-8") if text is None else text
    if text.count("<!-- docs-numbers:") != text.count("<!-- /docs-numbers -->"):
        problems.append(f"{page.name}: unbalanced docs-numbers markers")
    return problems


def _commands(text: str) -> list[tuple[int, str]]:
    """(line, command) of each ``lbm-bench`` command in the fenced blocks of a page: the
    ``$`` lines of a block that has some (the other lines are output), else every line."""
    found = []
    for m in _FENCE.finditer(text):
        if m.group("lang").strip() not in ("", "sh", "bash", "console"):
            continue
        first = text[: m.start("body")].count("\n") + 1
        lines = m.group("body").splitlines()
        prompted = any(line.startswith("$ ") for line in lines)
        i = 0
        while i < len(lines):
            number, line = first + i, lines[i]
            while line.endswith("\\") and i + 1 < len(lines):  # a continued line
                i += 1
                line = line[:-1] + " " + lines[i].strip()
            i += 1
            if prompted and not line.startswith("$ "):
                continue
            if not prompted and not re.match(r"(\w+=\S+ )*lbm-bench ", line):
                continue  # a block without prompts: only the lines that start with the command
            for part in line.removeprefix("$ ").split(" #")[0].split(" | ")[0].split(" && "):
                words = part.split()
                if "lbm-bench" in words:
                    found.append((number, " ".join(words[words.index("lbm-bench"):])))
    return found


def _lenient(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The parser with no argument required, so that a command of the docs that leaves some
    out (an example of one option) is still checked for options that do not exist."""
    for action in parser._actions:
        action.required = False
        for sub in getattr(action, "choices", None).values() if isinstance(action.choices, dict) else ():
            _lenient(sub)
    return parser


def command_problems(page: Path, text: str | None = None) -> list[str]:
    """``lbm-bench`` commands the command line no longer accepts, and missing scripts."""
    sys.path.insert(0, str(ROOT))
    from lbm_bench.cli import build_parser

    text = page.read_text(encoding="utf-8") if text is None else text
    problems = []
    parser = _lenient(build_parser())
    for line, command in _commands(text):
        try:
            argv = shlex.split(command)[1:]
        except ValueError:
            continue
        errors = io.StringIO()
        with contextlib.redirect_stderr(errors), contextlib.redirect_stdout(io.StringIO()):
            try:
                parser.parse_args(argv)
            except SystemExit:
                message = errors.getvalue().strip().splitlines()[-1] if errors.getvalue().strip() else ""
                if "unrecognized arguments" in message or "invalid choice" in message:
                    problems.append(f"{page.name}:{line}: `{command}`: {message}")
    commit = re.compile(r"commit [0-9a-f]{7,40}")
    dated = [(r.start, r.start + len(r.body)) for r in regions(page, text) if commit.search(r.head)]
    for match in re.finditer(r"(?<![\w/])scripts/[\w/]+\.py\b", text):
        script = match.group(0)
        # a one-off removed since is cited with the commit that has it (scripts/README.md): just
        # after its name (an HTML comment, which the site does not show, will do), or in the head
        # of the region that quotes its output
        cited = commit.search(text[match.end():match.end() + 200]) or any(
            start <= match.start() < end for start, end in dated)
        problem = f"{page.name}: names {script}, which does not exist"
        if not (ROOT / script).is_file() and not cited and problem not in problems:
            problems.append(problem)
    return problems


def lint() -> list[str]:
    problems = []
    used = set()
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        problems += region_problems(page, text) + uncovered_figures(page, text) + command_problems(page, text)
        used |= {r.head for r in regions(page, text) if r.kind == "generated"}
    problems += [f"recipe {name!r} is used by no page" for name in sorted(set(RECIPES) - used)]
    return problems


# --------------------------------------------------------------------------- #
# Command line                                                                #
# --------------------------------------------------------------------------- #


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true", help="lint, then compare the generated regions")
    mode.add_argument("--write", action="store_true", help="lint, then rewrite the generated regions")
    mode.add_argument("--lint", action="store_true", help="only the lint (no command is run)")
    mode.add_argument("--list", action="store_true", help="list the recipes and their cost")
    parser.add_argument("--costs", default="cheap,mini",
                        help="recipes to run, by cost: cheap, mini, long (default cheap,mini)")
    parser.add_argument("--only", action="append", default=[], metavar="NAME", help="only these recipes")
    parser.add_argument("--times", action="store_true", help="with --write: also re-measure the times here")
    parser.add_argument("--workdir", type=Path, default=None,
                        help="where the commands run (kept; its outputs are reused); default a temporary folder")
    args = parser.parse_args(argv)
    if args.list:
        for spec in RECIPES.values():
            print(f"{spec.name:<24} {spec.cost:<6} {spec.doc.splitlines()[0] if spec.doc else ''}")
        return 0
    problems = lint()
    for problem in problems:
        print(f"LINT {problem}")
    if args.lint:
        return 1 if problems else 0
    costs = set(args.costs.split(","))
    names = set(args.only) or {n for n, spec in RECIPES.items() if spec.cost in costs}
    unknown = names - set(RECIPES)
    if unknown:
        parser.error(f"unknown recipe(s): {', '.join(sorted(unknown))}")
    with contextlib.ExitStack() as stack:
        folder = args.workdir or Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="docs-numbers-")))
        outcome = run_recipes(names, Workdir(folder), write=args.write, times=args.times)
    for mismatch in outcome.mismatches:
        print(f"{'REWRITTEN' if args.write else 'DIFFERS'} {mismatch}")
    if args.write:
        print(f"rewrote {len(outcome.rewritten)} page(s): {', '.join(p.name for p in outcome.rewritten)}"
              if outcome.rewritten else "the docs already hold these numbers")
        claims = [m for m in outcome.mismatches if "a claim no longer holds" in m]
        return 1 if problems or claims else 0
    if not problems and not outcome.mismatches:
        print(f"OK: {len(names)} recipe(s), every figure in a region")
    return 1 if problems or outcome.mismatches else 0


if __name__ == "__main__":
    raise SystemExit(main())
