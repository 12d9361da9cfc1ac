"""The documentation's examples run and give what they show.

* The ```python fenced blocks of the documentation pages are run as one doctest
  session per page (top to bottom, shared names), with ELLIPSIS and
  NORMALIZE_WHITESPACE.
* The docstring examples of every ``lbm_bench`` module are run, one test per
  docstring (``doctest.DocTestFinder``); examples marked ``# doctest: +SKIP``
  are skipped by doctest itself.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil
import re
from pathlib import Path

import pytest

import lbm_bench

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
#: Pages whose ```python blocks are doctest sessions.
DOC_PAGES = ["api.md", "index.md", "protocol.md", "paper.md"]
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
#: Module docstring examples known to be wrong, with why (strict: remove the
#: entry once fixed).
KNOWN_FAILURES: dict[str, str] = {}

_FENCE = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.S | re.M)


def _python_blocks(text: str) -> list[tuple[int, str]]:
    """(line number, body) of every ```python block."""
    return [(text[: m.start(1)].count("\n"), m.group(1)) for m in _FENCE.finditer(text)]


def _run(test: doctest.DocTest) -> tuple[doctest.TestResults, str]:
    output: list[str] = []
    runner = doctest.DocTestRunner(optionflags=FLAGS, verbose=False)
    results = runner.run(test, out=output.append, clear_globs=False)
    return results, "".join(output)


@pytest.mark.parametrize("page", DOC_PAGES)
def test_doc_page_examples(page, tmp_path, monkeypatch):
    path = DOCS / page
    text = path.read_text(encoding="utf-8")
    blocks = _python_blocks(text)
    parser = doctest.DocTestParser()
    globs: dict = {"__name__": f"docs.{page}"}
    monkeypatch.chdir(tmp_path)  # examples that write files write here
    total = 0
    for lineno, body in blocks:
        test = parser.get_doctest(body, globs, f"{page}:{lineno + 1}", str(path), lineno)
        results, report = _run(test)
        assert results.failed == 0, report
        globs.update(test.globs)  # DocTest copies its globals: carry them to the next block
        total += results.attempted
    if page == "api.md":
        assert total >= 10  # its worked examples run (the docstrings hold the rest)


#: Pages the documentation links to that other parts of the project provide.
PENDING_PAGES = {"performance.md"}
_LINK = re.compile(r"\]\(([^)\s]+)\)")


def _anchors(path: Path) -> set[str]:
    """GitHub-style anchors of the headings of a markdown page."""
    text = re.sub(r"^```.*?^```", "", path.read_text(encoding="utf-8"), flags=re.S | re.M)
    headings = re.findall(r"^#{1,6}\s+(.+?)\s*$", text, flags=re.M)
    return {re.sub(r"[^\w\- ]", "", h.lower()).replace(" ", "-") for h in headings}


@pytest.mark.parametrize("page", DOC_PAGES)
def test_doc_page_links(page):
    """Relative links point to existing files (or pages still being written) and anchors exist."""
    path = DOCS / page
    for target in _LINK.findall(path.read_text(encoding="utf-8")):
        if re.match(r"[a-z]+:", target):
            continue  # external
        file, _, anchor = target.partition("#")
        linked = (path.parent / file) if file else path
        if not linked.exists():
            assert file in PENDING_PAGES, f"{page}: broken link {target}"
            continue
        if anchor:
            assert anchor in _anchors(linked), f"{page}: no heading for {target}"


def _prose(text: str) -> str:
    """A page without its fenced blocks and HTML comments: what it says in its own words."""
    return _COMMENT.sub("", re.sub(r"^```.*?^```", "", text, flags=re.S | re.M))


def test_the_api_guide_repeats_no_signature():
    """docs/api.md is a guide to the API, the reference is made from the docstrings
    (tests/test_docstrings.py holds them to it): its prose names the public functions and
    classes through the reference's roles (``{func}`lbm_bench.evaluate```), never writes a
    call with its arguments (``evaluate(table, rows, cols)``) or a table of names, and links
    to the generated reference."""
    text = (DOCS / "api.md").read_text(encoding="utf-8")
    prose = _prose(text)
    names = "|".join(re.escape(n) for n in lbm_bench.__all__ if not n.startswith("_"))
    calls = re.findall(rf"`(?:lbm_bench\.)?(?:{names})\([^`]*\)`", prose)
    assert not calls, calls
    assert not re.search(r"^\|.*\|\s*$", prose, flags=re.M), "a table of names: the reference lists them"
    assert "{doc}`API reference <reference/api>`" in prose
    linked = {name.split(".")[1] for name in re.findall(r"\{(?:func|class|mod)\}`~?(lbm_bench\.\w+)`", prose)}
    unlinked = sorted(set(lbm_bench.__all__) - linked - {"__version__"})
    assert not unlinked, f"docs/api.md does not say where these fit: {unlinked}"


def _module_doctests() -> list:
    finder = doctest.DocTestFinder(exclude_empty=True)
    params = []
    names = ["lbm_bench"] + sorted(
        info.name for info in pkgutil.walk_packages(lbm_bench.__path__, "lbm_bench.")
    )
    for name in names:
        try:
            module = importlib.import_module(name)
        except Exception as exc:  # report it as a failing test, not a collection error
            params.append(pytest.param(f"{name}: import failed: {exc!r}", id=name))
            continue
        for test in sorted(finder.find(module), key=lambda t: t.name):
            if not test.examples:
                continue
            marks = []
            if test.name in KNOWN_FAILURES:
                marks.append(pytest.mark.xfail(reason=KNOWN_FAILURES[test.name], strict=True))
            params.append(pytest.param(test, id=test.name, marks=marks))
    return params


MODULE_DOCTESTS = _module_doctests()


def test_module_doctests_found():
    names = {p.id for p in MODULE_DOCTESTS}
    assert "lbm_bench" in names  # the package docstring
    assert any(n.startswith("lbm_bench.metrics.") for n in names)
    assert len(names) >= 20


@pytest.mark.parametrize("test", MODULE_DOCTESTS)
def test_module_doctest(test, monkeypatch):
    assert not isinstance(test, str), test
    monkeypatch.chdir(ROOT)  # examples name files relative to the repository
    test = doctest.DocTest(
        test.examples, dict(test.globs), test.name, test.filename, test.lineno, test.docstring
    )
    results, report = _run(test)
    assert results.failed == 0, report


def test_sparsebm_settings_in_the_docs_are_the_wrapper_s():
    """docs/benchmark.md and the module documentation state the settings the sparsebm
    wrapper runs with (issue 16, item 4: "say which")."""
    import inspect

    from lbm_bench.algorithms import sparsebm

    settings = sparsebm.SPARSEBM_SETTINGS
    defaults = {name: p.default for name, p in inspect.signature(sparsebm.sparsebm_lbm).parameters.items()
                if name in settings}
    assert defaults == settings
    page = " ".join((DOCS / "benchmark.md").read_text(encoding="utf-8").split())
    assert f"# sparsebm settings of the wrapper: {settings}" in page
    assert f"{settings['n_init']} short starts (`n_init={settings['n_init']}`" in page
    assert f"of {settings['n_iter_early_stop']} iterations" in page
    assert f"(`n_init_total_run={settings['n_init_total_run']}`" in page
    assert f"`max_iter={settings['max_iter']}`" in page
    module = " ".join(sparsebm.__doc__.split())
    for name, value in settings.items():
        assert f"``{name}={value}``" in module, name


#: Every page of the documentation, the README included.
ALL_PAGES = [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]
#: ``lbm_bench.<name>`` written as a placeholder, not a name (``help(lbm_bench.X)``).
PLACEHOLDERS = {"lbm_bench.X"}
_QUALIFIED = re.compile(r"\blbm_bench(?:\.[A-Za-z_]\w*)+")


def _resolve(dotted: str) -> object:
    """The object ``dotted`` names: its longest importable module prefix, then attributes."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            target = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for name in parts[cut:]:
            target = getattr(target, name)  # AttributeError: the docs name nothing
        return target
    raise ImportError(dotted)


def _is_module(dotted: str) -> bool:
    return importlib.util.find_spec(dotted) is not None


def _python_block_names(text: str) -> set[str]:
    """The ``lbm_bench`` names the ```python blocks of a page use: ``lbm_bench.a.b`` attribute
    chains and ``from lbm_bench.a import b`` (doctest prompts stripped)."""
    import ast

    names = set()
    for _, body in _python_blocks(text):
        if ">>>" in body:
            body = "\n".join(line[4:] for line in body.splitlines() if line.startswith((">>> ", "... ")))
        for node in ast.walk(ast.parse(body)):
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "lbm_bench":
                names.update(f"{node.module}.{alias.name}" for alias in node.names)
            elif isinstance(node, ast.Import):
                names.update(a.name for a in node.names if a.name.split(".")[0] == "lbm_bench")
            elif isinstance(node, ast.Attribute):
                chain = []
                while isinstance(node, ast.Attribute):
                    chain.append(node.attr)
                    node = node.value
                if isinstance(node, ast.Name) and node.id == "lbm_bench":
                    names.add(".".join(["lbm_bench", *reversed(chain)]))
    return names


@pytest.mark.parametrize("page", ALL_PAGES, ids=lambda path: path.name)
def test_every_name_the_docs_use_exists_and_the_top_level_ones_are_public(page):
    """``lbm_bench.<name>`` in the text and the Python blocks of README.md and docs/*.md names
    something that exists; a top-level one (``lbm_bench.select_lbm``) is a subpackage or in
    ``lbm_bench.__all__``: the curated API lists what the docs use (issue 32, item 6)."""
    text = page.read_text(encoding="utf-8")
    used = (set(_QUALIFIED.findall(text)) | _python_block_names(text)) - PLACEHOLDERS
    missing, private = [], []
    for dotted in sorted(used):
        try:
            _resolve(dotted)
        except (ImportError, AttributeError):
            missing.append(dotted)
        top = ".".join(dotted.split(".")[:2])
        if top.count(".") and top.split(".")[1] not in lbm_bench.__all__ and not _is_module(top) \
                and not top.endswith("__"):
            private.append(top)
    assert not missing, f"{page.name} names what does not exist: {missing}"
    assert not private, f"{page.name} uses names not in lbm_bench.__all__: {sorted(set(private))}"


#: The site's pages in its navigation: docs/*.md and the user guide and explanation
#: sections (docs/dev/, the developers' notes, is excluded from the site by docs/conf.py).
SITE_PAGES = [*sorted(DOCS.glob("*.md")), *sorted((DOCS / "guide").glob("*.md")),
              *sorted((DOCS / "explanation").glob("*.md"))]
#: What the site renders of a page: its text without the HTML comments (the docs-numbers
#: markers, which docs/_ext/site_hooks.py strips, say where figures come from).
_COMMENT = re.compile(r"<!--.*?-->", re.S)
PERFORMANCE_MAX_LINES = 400


def test_the_performance_page_is_short():
    """docs/performance.md holds the current figures for users, at most 400 lines; the dated
    history of the measurements lives in docs/dev/performance-history.md, outside the site."""
    lines = len((DOCS / "performance.md").read_text(encoding="utf-8").splitlines())
    assert lines <= PERFORMANCE_MAX_LINES, f"docs/performance.md has {lines} lines"
    assert (DOCS / "dev" / "performance-history.md").is_file()


@pytest.mark.parametrize("page", SITE_PAGES, ids=lambda path: str(path.relative_to(DOCS)))
def test_no_site_page_renders_an_issue_number(page):
    """A reader of the site sees what the software does, not the order it was built in: no
    "issue 33" in a page's rendered text (HTML comments, which the site drops, may cite them).
    tests/test_site.py checks the built pages, the API reference's docstrings included."""
    text = _COMMENT.sub("", page.read_text(encoding="utf-8"))
    found = [f"{page.relative_to(DOCS)}:{text[:m.start()].count(chr(10)) + 1}: {m.group(0)}"
             for m in re.finditer(r"\b[Ii]ssues? \d+", text)]
    assert not found, found
