"""Numbers in the docs come from commands (issue 27, item 1): scripts/checks/docs_numbers.py's lint
(every figure of docs/*.md, docs/dev/*.md and README.md in a region saying where it comes from, every
``lbm-bench`` command of the docs accepted by the command line) and its check of the cheap
and mini-release recipes against a fresh run."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "checks" / "docs_numbers.py"


@pytest.fixture(scope="module")
def docs_numbers():
    spec = importlib.util.spec_from_file_location("docs_numbers", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules["docs_numbers"] = module
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop("docs_numbers", None)


def test_every_figure_of_the_docs_is_in_a_region(docs_numbers):
    assert docs_numbers.lint() == []


def test_the_measurement_history_is_linted_too(docs_numbers):
    """docs/dev/performance-history.md, the dated log that left docs/performance.md (outside the
    site), keeps every figure beside its command: the lint reads docs/dev/ as well."""
    assert REPO / "docs" / "dev" / "performance-history.md" in docs_numbers.PAGES
    assert REPO / "docs" / "dev" / "selection-history.md" in docs_numbers.PAGES


def test_every_page_of_the_site_is_linted(docs_numbers):
    """The user guide and the explanations quote figures too (guide/your-data.md cites the
    AnnData versions it reads): every Markdown page the site builds is read by the lint."""
    site = [*(REPO / "docs").glob("*.md"), *(REPO / "docs" / "guide").glob("*.md"),
            *(REPO / "docs" / "explanation").glob("*.md")]
    assert set(site) <= set(docs_numbers.PAGES)


def test_a_removed_script_may_be_cited_at_its_commit_in_its_region_s_head(docs_numbers, tmp_path):
    """A one-off script removed since is named with the commit that has it: just after its name
    (an HTML comment will do, the site does not show it), or in the head of the region that
    quotes its output (a command line in a fenced block cannot hold a comment)."""
    page = tmp_path / "page.md"
    gone = "scripts/benchmarks/" + "bench_gone.py"  # (split: no quoted path of a script that is not there)
    page.write_text(f"<!-- docs-numbers: measured: `python {gone}` at commit 0123abc -->\n```\n"
                    f"$ python {gone}\n{'x' * 300}\n```\n<!-- /docs-numbers -->\n", encoding="utf-8")
    assert not [p for p in docs_numbers.command_problems(page) if "bench_gone" in p]
    page.write_text(f"Run `python {gone}` once.\n", encoding="utf-8")
    assert [p for p in docs_numbers.command_problems(page) if "bench_gone" in p]
    page.write_text(f"Run `python {gone}`<!-- commit 0123abc --> once.\n", encoding="utf-8")
    assert not [p for p in docs_numbers.command_problems(page) if "bench_gone" in p]


def test_the_lint_finds_an_unmarked_figure_a_dead_command_and_a_bad_region(docs_numbers, tmp_path):
    page = tmp_path / "page.md"
    text = ("# Page\n\nCEM loses 0.09 on the 60x40 tables, in 46.6 s.\n\n"
            "```\n$ lbm-bench generate --kind gaussian --no-such-option -o t.h5\nwrote t.h5\n```\n\n"
            "```\n$ lbm-bench info t.h5\nfloor 0.1093\n```\n\n"
            "<!-- docs-numbers: measured: somewhere -->0.25<!-- /docs-numbers -->\n"
            "<!-- docs-numbers: no-such-recipe -->x<!-- /docs-numbers -->\n"
            "| a | 0.5 |\n\nUses `python scripts/" "no_such_script.py`.\n")
    page.write_text(text)
    found = (docs_numbers.uncovered_figures(page) + docs_numbers.region_problems(page)
             + docs_numbers.command_problems(page))
    assert any("page.md:3: figure outside" in p for p in found)
    assert any("page.md:12: command output outside" in p and "floor 0.1093" in p for p in found)
    assert not any("wrote t.h5" in p for p in found)  # an output without a figure
    assert any("table figure outside" in p and "| a | 0.5 |" in p for p in found)
    assert any("unrecognized arguments: --no-such-option" in p for p in found)
    assert any("must name its command, page, test or source" in p for p in found)
    assert any("no recipe 'no-such-recipe'" in p for p in found)
    assert any("scripts/" "no_such_script.py, which does not exist" in p for p in found)
    assert len(found) == 7, found


def test_a_moved_number_fails_the_check_and_write_restores_it(docs_numbers, tmp_path, monkeypatch):
    """A region whose content differs from its recipe's output fails --check, naming the page
    and line; --write puts the output back; a masked (machine-dependent) time is not a
    difference and is kept as published."""
    page = tmp_path / "page.md"
    page.write_text("Intro.\n\n<!-- docs-numbers: toy -->\n```\n$ toy\nrisk 0.1234 in 9.9 s\n```\n"
                    "<!-- /docs-numbers -->\n")
    monkeypatch.setattr(docs_numbers, "PAGES", [page])
    monkeypatch.setitem(docs_numbers.RECIPES, "toy", docs_numbers.Recipe(
        "toy", "cheap", lambda work: "```\n$ toy\nrisk 0.1234 in 1.0 s\n```", masks=(docs_numbers.TIME,)))
    work = docs_numbers.Workdir(tmp_path / "work")
    assert docs_numbers.run_recipes({"toy"}, work, write=False, times=False).mismatches == []
    page.write_text(page.read_text().replace("0.1234", "0.0638"))
    outcome = docs_numbers.run_recipes({"toy"}, work, write=True, times=False)
    (mismatch,) = outcome.mismatches
    assert mismatch.startswith("page.md:3: toy differs from its command's output now") and "+risk 0.1234" in mismatch
    assert "risk 0.1234 in 9.9 s" in page.read_text()  # the number restored, the published time kept
    docs_numbers.run_recipes({"toy"}, work, write=True, times=True)
    assert "risk 0.1234 in 1.0 s" in page.read_text()


def test_a_claim_that_no_longer_holds_fails(docs_numbers, tmp_path, monkeypatch):
    page = tmp_path / "page.md"
    page.write_text("<!-- docs-numbers: toy -->1<!-- /docs-numbers -->\n")
    monkeypatch.setattr(docs_numbers, "PAGES", [page])

    def render(work):
        docs_numbers.claim(False, "VEM is no longer the closest to the floor")
        return "1"

    monkeypatch.setitem(docs_numbers.RECIPES, "toy", docs_numbers.Recipe("toy", "cheap", render))
    outcome = docs_numbers.run_recipes({"toy"}, docs_numbers.Workdir(tmp_path / "w"), write=False, times=False)
    assert outcome.mismatches == ["page.md:1: toy: a claim no longer holds: VEM is no longer the closest to the floor"]


def test_the_docs_numbers_are_what_the_commands_print(mini_docs_workdir):
    """The cheap and mini-release recipes re-run and compared with docs/ and README.md: a
    change that moves a published number fails here until `python scripts/checks/docs_numbers.py
    --write` regenerates the docs."""
    done = subprocess.run([sys.executable, str(SCRIPT), "--check", "--workdir", str(mini_docs_workdir)],
                          capture_output=True, text=True, cwd=REPO, timeout=1200)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip().startswith("OK: ")
