"""The scripts of ``scripts/`` are accounted for: each is in its folder, listed in
scripts/README.md and run by a smoke test here; every path ``scripts/...py`` that the
documentation quotes exists, or is cited at the commit that had it; the speed benchmarks
are not a command of the package any more."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from tests.scripts.helpers import ROOT, SCRIPTS

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

FOLDERS = ("benchmarks", "figures", "checks")
SCRIPT_FILES = sorted(p for folder in FOLDERS for p in (SCRIPTS / folder).glob("*.py"))
#: Scripts (not the shared helper modules, whose names start with an underscore).
RUNNABLE = [p for p in SCRIPT_FILES if not p.name.startswith("_")]
README = (SCRIPTS / "README.md").read_text(encoding="utf-8")
#: ``| `scripts/<name>.py` | commit |`` rows of the README's table of removed investigations.
REMOVED = dict(re.findall(r"^\| `(scripts/\w+\.py)` \| ([0-9a-f]{7,40}) \|", README, flags=re.M))
_QUOTED = re.compile(r"(?<![\w/])scripts/[\w/]+\.py")


def _texts() -> dict[str, str]:
    """The files that quote script paths: the docs, the README, the package, the scripts and the tests."""
    paths = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), SCRIPTS / "README.md",
             *sorted((ROOT / "lbm_bench").rglob("*.py")), *SCRIPT_FILES, *sorted((ROOT / "tests").rglob("*.py"))]
    return {str(p.relative_to(ROOT)): p.read_text(encoding="utf-8") for p in paths}


def test_scripts_are_in_their_folders():
    # the scripts' ruff configuration (120 columns) and its cache are not scripts
    tooling = {"README.md", "__pycache__", "ruff.toml", ".ruff_cache"}
    loose = sorted(p.name for p in SCRIPTS.iterdir() if p.name not in {*tooling, *FOLDERS})
    assert not loose, f"put these in scripts/benchmarks/, scripts/figures/ or scripts/checks/: {loose}"
    assert len(RUNNABLE) >= 19


@pytest.mark.parametrize("script", RUNNABLE, ids=lambda p: p.name)
def test_every_script_has_a_smoke_test(script):
    tests = [p for p in (ROOT / "tests" / "scripts").glob("test_*.py") if p.name != "test_inventory.py"]
    tests.append(ROOT / "tests" / "test_docs_numbers.py")
    assert any(f'"{script.stem}"' in p.read_text(encoding="utf-8") for p in tests), (
        f"no test in tests/scripts/ runs {script.relative_to(ROOT)}")


def test_every_script_is_listed_in_the_readme():
    missing = [p.name for p in SCRIPT_FILES if f"| `{p.name}` |" not in README]
    assert not missing, f"scripts/README.md has no row for {missing}"
    listed = set(re.findall(r"^\| `(\w+\.py)` \|", README, flags=re.M))
    assert listed == {p.name for p in SCRIPT_FILES}, "scripts/README.md lists scripts that do not exist"


def test_quoted_script_paths_exist_or_name_their_commit():
    bad = []
    for name, text in _texts().items():
        for match in _QUOTED.finditer(text):
            path = match.group(0)
            if (ROOT / path).exists():
                continue
            commit = REMOVED.get(path)
            if commit is None or commit not in text[match.end():match.end() + 200]:
                bad.append(f"{name}: {path}")
    assert not bad, "quoted script paths that do not exist (cite removed ones 'at commit <hash>'): " + ", ".join(bad)


def test_removed_scripts_are_at_their_commits():
    assert len(REMOVED) == 5
    for path in REMOVED:
        assert not (ROOT / path).exists(), path
    try:
        shallow = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--is-shallow-repository"],
                                 capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("needs a git checkout")
    if shallow != "false":
        pytest.skip("a shallow clone does not hold the history")
    for path, commit in REMOVED.items():
        found = subprocess.run(["git", "-C", str(ROOT), "cat-file", "-e", f"{commit}:{path}"], capture_output=True)
        assert found.returncode == 0, f"{path} is not at commit {commit}"


def test_speed_benchmarks_are_not_part_of_the_package():
    mentions = [f"{name}: {m.group(0)}" for name, text in _texts().items() if not name.startswith("tests/")
                for m in re.finditer(r"lbm-bench bench\b|lbm_bench[./]bench\b", text)]
    assert not mentions, mentions
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert config["tool"]["setuptools"]["packages"]["find"]["include"] == ["lbm_bench*"]
