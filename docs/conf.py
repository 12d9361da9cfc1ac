"""Sphinx configuration of the lbm-bench documentation site.

Build it with ``pip install '.[docs]'`` then
``sphinx-build -W --keep-going -n docs docs/_build/html`` (warnings and unresolved
references are errors; ``tests/test_site.py`` runs the same build). The Markdown pages stay
Markdown (MyST); the Python API is generated from the docstrings (autosummary and numpydoc),
the command line from its argparse parser (sphinx-argparse), and the gallery from the figure
scripts of ``scripts/figures`` run in their ``--quick`` mode (sphinx-gallery).

No inventory is fetched at build time (no intersphinx: CI reaches package registries only),
so the names of other projects (numpy, scipy, h5py, the standard library) are written as
plain text, and ``nitpick_ignore_regex`` lists the ones a docstring's types name.
"""

from __future__ import annotations

import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT))  # document this checkout's package
sys.path.insert(0, str(DOCS / "_ext"))

import site_hooks  # noqa: E402

import lbm_bench  # noqa: E402

project = "lbm-bench"
author = "lbm-bench developers"
copyright = "the lbm-bench developers"
release = lbm_bench.__version__
version = release

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "sphinxarg.ext",
    "sphinx_gallery.gen_gallery",
    "sphinx_copybutton",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "_templates", "dev", "gallery/*.ipynb", "**/*.py.md5"]
templates_path = ["_templates"]
nitpicky = True

# -- Markdown (MyST) ------------------------------------------------------------------------
myst_enable_extensions = ["colon_fence", "deflist"]
# GitHub-style anchors of headings, so that the pages' [text](page.md#anchor) links resolve
# on the site as they do on a repository host.
myst_heading_anchors = 6

# -- API reference (autosummary, autodoc, numpydoc) -----------------------------------------
site_hooks.write_api_page(DOCS)
autosummary_generate = True
autosummary_ignore_module_all = False
autodoc_typehints = "none"  # the numpydoc sections give the types
autodoc_member_order = "bysource"
add_module_names = False
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = True
numpydoc_xref_ignore = "all"
numpydoc_xref_aliases = {
    name: f"lbm_bench.{name}" for name in lbm_bench.__all__ if name not in site_hooks.NOT_OBJECTS
}
# Types of other projects and of the standard library: plain names, no inventory to resolve
# them against (see the module docstring).
nitpick_ignore_regex = [
    ("py:(class|obj|data|exc|func|meth|attr)", r"(numpy|np|scipy|h5py|matplotlib|dask|pathlib"
     r"|os|argparse|collections|typing|concurrent|io)(\..*)?"),
]

# -- Command line (sphinx-argparse) ---------------------------------------------------------
# reference/cli.rst: the parser of lbm_bench.cli.program.build_parser.

# -- Gallery (sphinx-gallery) ---------------------------------------------------------------
sphinx_gallery_conf = {
    "examples_dirs": [str(ROOT / "scripts" / "figures")],
    "gallery_dirs": ["gallery"],
    "filename_pattern": r"/fig_",
    "ignore_pattern": r"(^|/)_figures\.py$",
    "reset_argv": "site_hooks.figure_argv",
    "image_scrapers": ("site_hooks.figure_files",),
    "abort_on_example_error": True,
    "download_all_examples": False,
    "within_subsection_order": "ExampleTitleSortKey",  # Figures 1 to 3 in order
    "show_memory": False,
    "show_signature": False,
}

# -- HTML -----------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"lbm-bench {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
html_show_sourcelink = False
html_copy_source = False
copybutton_prompt_text = r">>> |\.\.\. |\$ "
copybutton_prompt_is_regexp = True


def setup(app):
    app.connect("source-read", site_hooks.strip_docs_numbers)
    app.connect("config-inited", site_hooks.keep_own_aliases, priority=900)
    app.connect("missing-reference", site_hooks.resolve_package_name)
