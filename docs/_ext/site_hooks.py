"""Build-time hooks of the documentation site (docs/conf.py loads this module).

* :func:`strip_docs_numbers` removes the ``<!-- docs-numbers: ... -->`` and
  ``<!-- /docs-numbers -->`` markers of ``scripts/checks/docs_numbers.py`` from a page's
  source before MyST parses it: the Markdown files keep them for the check, the site shows
  only the figures between them (an HTML comment opening a line would otherwise start a raw
  HTML block and cut its paragraph).
* :func:`write_api_page` writes ``reference/api.rst`` from the package's ``__all__`` lists:
  one autosummary entry (one generated page) per public name of ``lbm_bench`` and per name of
  a public subpackage that the top level does not already export.
* :func:`resolve_package_name` resolves a docstring's reference to a name of the package
  that has no page of its own: to the public page of the same object
  (``lbm_bench.storage.writer.save_table`` is :func:`lbm_bench.save_table`), or, for an
  internal module or helper, to plain text once the name is found to exist; a name that
  does not exist stays a warning (so, under ``-W``, an error). :func:`keep_own_aliases`
  drops numpydoc's default type links, which point into the inventories of Python and
  numpy that this build does not fetch.
* :func:`figure_argv` and :func:`figure_files` let sphinx-gallery run the figure scripts of
  ``scripts/figures`` as they run from the command line, in their ``--quick`` mode, and pick
  up the PNG files they write.
"""

from __future__ import annotations

import ast
import functools
import importlib
import re
import shutil
import tempfile
from pathlib import Path

_MARKER = re.compile(r"<!--\s*/?docs-numbers\b.*?-->", re.S)


def strip_docs_numbers(app, docname, source):
    """``source-read`` handler: drop the docs-numbers markers, keep what they enclose."""
    source[0] = _MARKER.sub("", source[0])


# -- the API reference ------------------------------------------------------------------------

#: The public subpackages, in the order of the protocol (docs/architecture.md's layers).
SUBPACKAGES = ["models", "inference", "protocol", "storage", "algorithms", "release", "scoring",
               "metrics", "cli"]
#: Top-level names that are not documented as objects of their own.
NOT_OBJECTS = {"__version__", "metrics"}

_HEADER = """\
..
   Written by docs/_ext/site_hooks.py from the package's ``__all__`` lists at every build:
   do not edit.

API reference
=============

Every public name has a page of its own, made from its docstring. The curated API is the
top level, ``lbm_bench``; each subpackage exports more for its own room (the top-level names
it also exports are listed with a link to their page). :doc:`../api` walks through the API
with examples.
"""


def _entries(module: str, names: list[str]) -> str:
    lines = [f".. currentmodule:: {module}", "", ".. autosummary::", "   :toctree: generated/",
             "   :nosignatures:", ""]
    return "\n".join(lines + [f"   {name}" for name in sorted(names, key=str.lower)]) + "\n"


def api_page() -> str:
    """The text of ``reference/api.rst``."""
    top = importlib.import_module("lbm_bench")
    shown = {id(getattr(top, name)): name for name in top.__all__ if name not in NOT_OBJECTS}
    parts = [_HEADER, "``lbm_bench``\n" + "-" * 13 + "\n",
             ".. automodule:: lbm_bench\n   :no-members:\n",
             _entries("lbm_bench", [n for n in top.__all__ if n not in NOT_OBJECTS])]
    for room in SUBPACKAGES:
        module = importlib.import_module(f"lbm_bench.{room}")
        title = f"``lbm_bench.{room}``"
        own = [n for n in module.__all__ if id(getattr(module, n)) not in shown]
        also = [n for n in module.__all__ if id(getattr(module, n)) in shown]
        parts.append(f"{title}\n{'-' * len(title)}\n")
        parts.append(f".. automodule:: lbm_bench.{room}\n   :no-members:\n")
        if own:
            parts.append(_entries(f"lbm_bench.{room}", own))
        if also:
            links = ", ".join(f":obj:`~lbm_bench.{shown[id(getattr(module, n))]}`" for n in also)
            parts.append(f"Also exported here: {links}.\n")
    return "\n".join(parts)


def write_api_page(docs: Path) -> None:
    """Write ``docs/reference/api.rst`` when its text changed (an unchanged file keeps its
    time, so an incremental build does not redo it)."""
    path = docs / "reference" / "api.rst"
    text = api_page()
    if not path.is_file() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")


# -- references to the package's names --------------------------------------------------------

_MISSING = object()


@functools.cache
def _public_names() -> dict[int, str]:
    """``id(object) -> documented name`` of every object with a page (or a module section)."""
    top = importlib.import_module("lbm_bench")
    names = {id(getattr(top, n)): f"lbm_bench.{n}" for n in top.__all__ if n not in NOT_OBJECTS}
    for room in SUBPACKAGES:
        module = importlib.import_module(f"lbm_bench.{room}")
        names.setdefault(id(module), module.__name__)
        for n in module.__all__:
            names.setdefault(id(getattr(module, n)), f"lbm_bench.{room}.{n}")
    return names


@functools.cache
def _package_modules() -> list:
    import pkgutil

    top = importlib.import_module("lbm_bench")
    found = [top]
    for info in pkgutil.walk_packages(top.__path__, "lbm_bench."):
        found.append(importlib.import_module(info.name))
    return found


def _lookup(dotted: str):
    """The object ``dotted`` names (its longest importable module prefix, then attributes), or
    ``_MISSING``."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            target = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for name in parts[cut:]:
            target = getattr(target, name, _MISSING)
            if target is _MISSING:
                return _MISSING
        return target
    return _MISSING


def _candidates(node) -> list[str]:
    """The full names a reference may mean, as Python's domain searches them, then the
    package's modules that define its first part (a docstring naming a neighbour)."""
    target = node["reftarget"].lstrip(".~")
    module, klass = node.get("py:module"), node.get("py:class")
    found = []
    if module and klass:
        found.append(f"{module}.{klass}.{target}")
    if module:
        found.append(f"{module}.{target}")
    found.append(target)
    head = target.split(".")[0]
    found += [f"{m.__name__}.{target}" for m in _package_modules() if hasattr(m, head)]
    return found


def _public_form(dotted: str, public: dict[int, str]) -> str | None:
    """``dotted`` through its longest prefix that has a page: ``lbm_bench.models.data.TableData.of``
    is ``lbm_bench.TableData.of``."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        obj = _lookup(".".join(parts[:cut]))
        if obj is not _MISSING and id(obj) in public:
            return ".".join([public[id(obj)], *parts[cut:]])
    return None


def resolve_package_name(app, env, node, contnode):
    """``missing-reference`` handler for the names of ``lbm_bench`` (see the module docstring)."""
    if node.get("refdomain") != "py":
        return None
    public = _public_names()
    domain = env.get_domain("py")
    for dotted in _candidates(node):
        if not dotted.startswith("lbm_bench") or _lookup(dotted) is _MISSING:
            continue
        name = _public_form(dotted, public)
        if name is not None and name != node["reftarget"]:
            refdoc, builder = node["refdoc"], app.builder
            resolved = domain.resolve_any_xref(env, refdoc, builder, name, node, contnode)
            if resolved:
                return resolved[0][1]
        return contnode  # it exists, without a page of its own: plain text
    return None


def keep_own_aliases(app, config):
    """``config-inited`` handler, after numpydoc's: the type aliases are this package's only."""
    config.numpydoc_xref_aliases_complete = dict(config.numpydoc_xref_aliases)


# -- the gallery of figure scripts ------------------------------------------------------------

_OUTPUTS: dict[str, Path] = {}
_ROOT = Path(tempfile.mkdtemp(prefix="lbm-bench-gallery-"))


def figure_argv(gallery_conf, script_vars):
    """sphinx-gallery's ``reset_argv``: a figure script runs as ``fig_x.py --quick --out DIR``.

    sphinx-gallery runs an example without ``__file__`` and with an empty ``__doc__``; the
    figure scripts find their shared ``_figures.py`` beside their own file and take their
    ``--help`` line from their docstring, so both are given here, as Python would.
    """
    source = str(script_vars["src_file"])
    text = Path(source).read_text(encoding="utf-8")
    docstring = ast.get_docstring(ast.parse(text))
    script_vars["example_globals"].update(__file__=source, __doc__=docstring)
    out = _ROOT / Path(source).stem
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    _OUTPUTS[source] = out
    return ["--quick", "--out", str(out)]


def figure_files(block, block_vars, gallery_conf):
    """sphinx-gallery image scraper: the PNG files the script wrote to its ``--out`` folder
    (the scripts save and close their figures, so matplotlib's scraper sees none)."""
    from sphinx_gallery.scrapers import figure_rst

    out = _OUTPUTS.get(str(block_vars["src_file"]))
    if out is None:
        return ""
    names = []
    for png in sorted(out.glob("*.png")):
        target = next(block_vars["image_path_iterator"])
        shutil.move(png, target)
        names.append(target)
    return figure_rst(names, gallery_conf["src_dir"])
