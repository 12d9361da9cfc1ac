"""The shared docstring sections (lbm_bench._docstrings): blocks filled in place, indented like their
line, and the blocks that list the families built from the family registry (issue 32, item 6)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re

import pytest

import lbm_bench
from lbm_bench import _docstrings
from lbm_bench._docstrings import fill_doc
from lbm_bench.models.registry import family_names


def test_a_block_line_is_replaced_by_the_block_indented_like_it():
    @fill_doc
    def score(a, b=None):
        """Score a pair.

        {{pair_float}}
        """

    lines = score.__doc__.splitlines()
    at = lines.index("        Parameters")
    assert lines[at:at + 4] == ["        Parameters", "        ----------",
                                "        a : array-like of shape (n_samples,) or (k, l)",
                                "            Labels, or a contingency table when ``b`` is None."]
    assert "        Returns" in lines and "{{" not in score.__doc__  # blocks naming blocks are filled too


def test_the_blocks_list_every_registered_family():
    from lbm_bench.models.design import ModelDesign
    from lbm_bench.protocol.calibration import calibrate_scale
    from lbm_bench.protocol.generate import generate_table

    names = family_names()
    choice = "kind : {" + ", ".join(f'"{n}"' for n in names) + "}"
    assert choice in calibrate_scale.__doc__ and choice in generate_table.__doc__
    words = ", ".join(f'``"{n}"``' for n in names[:-1]) + f' or ``"{names[-1]}"``'
    assert words in ModelDesign.__doc__


def test_the_blocks_follow_the_registry(monkeypatch):
    """A family added to the registry is listed by the blocks without an edit of theirs."""
    monkeypatch.setattr(_docstrings, "_FAMILIES", [*family_names(), "ordinal"])

    @fill_doc
    def request(kind):
        """Make a request.

        Parameters
        ----------
        {{table_request}}
        """

    assert 'kind : {"gaussian", "poisson", "bernoulli", "categorical", "ordinal"}' in request.__doc__
    monkeypatch.setattr(_docstrings, "_FAMILIES", [])
    with pytest.raises(RuntimeError, match="before the family registry named them"):
        fill_doc(type("Design", (), {"__doc__": "A design.\n\n{{kind_attribute}}\n"}))


def _documented_objects():
    for info in pkgutil.walk_packages(lbm_bench.__path__, "lbm_bench."):
        module = importlib.import_module(info.name)
        objects = [module] + [o for _, o in inspect.getmembers(module) if getattr(o, "__module__", None) == info.name]
        for obj in list(objects):
            if inspect.isclass(obj):
                objects += [m for _, m in inspect.getmembers(obj) if inspect.isfunction(m) or isinstance(m, property)]
        yield from ((info.name, obj) for obj in objects)


def test_every_choice_of_families_lists_them_all():
    """A numpydoc choice set that names a family (``kind : {"gaussian", ...}``) names every
    registered family, in the registry's order."""
    names = list(family_names())
    wrong = []
    for module, obj in _documented_objects():
        for choice in re.findall(r"\{([^{}]*)\}", getattr(obj, "__doc__", None) or ""):
            listed = re.findall(r'"([a-z_-]+)"', choice)
            if set(listed) & set(names) and listed != names:
                wrong.append(f"{module}.{getattr(obj, '__qualname__', '')}: {listed}")
    assert not wrong, wrong


def _sections(doc: str) -> set[str]:
    """The numpydoc section titles of a docstring (a title line underlined with dashes)."""
    lines = [line.strip() for line in inspect.cleandoc(doc).splitlines()]
    return {title for title, rule in zip(lines, lines[1:], strict=False) if title and rule and set(rule) == {"-"}
            and len(rule) == len(title)}


def _runs_an_example(doc: str) -> bool:
    """Whether the Examples section has a ``>>>`` line that doctest runs (not ``+SKIP``)."""
    examples = inspect.cleandoc(doc).split("Examples\n--------", 1)[-1]
    return any(line.strip().startswith(">>>") and "+SKIP" not in line for line in examples.splitlines())


def test_every_public_name_has_a_complete_docstring():
    """The reference is made from the docstrings, the single source (docs/api.md is a guide
    that repeats no signature): every function of ``lbm_bench.__all__`` says its Parameters
    (when it takes any) and Returns, every class its Parameters or Attributes, and both have
    an Examples section that runs (tests/test_docs.py runs the module doctests). Exceptions
    say when they are raised, in a line or more."""
    incomplete = []
    for name in lbm_bench.__all__:
        obj = getattr(lbm_bench, name)
        if inspect.ismodule(obj) or not callable(obj):  # lbm_bench.metrics, __version__
            continue
        doc = obj.__doc__ or ""
        sections = _sections(doc)
        if inspect.isclass(obj) and issubclass(obj, Exception):
            needed = set() if doc.strip() else {"a docstring"}
        elif inspect.isclass(obj):
            needed = set() if sections & {"Parameters", "Attributes"} else {"Parameters or Attributes"}
        else:
            takes = bool(inspect.signature(obj).parameters)
            needed = {"Returns"} | ({"Parameters"} if takes else set())
            needed -= sections
        if not inspect.isclass(obj) or not issubclass(obj, Exception):
            if "Examples" not in sections or not _runs_an_example(doc):
                needed.add("Examples that run")
        if needed:
            incomplete.append(f"{name}: {sorted(needed)}")
    assert not incomplete, incomplete


def test_the_sections_are_read_as_numpydoc_writes_them():
    doc = """Summary.

    Parameters
    ----------
    x : int

    Examples
    --------
    >>> 1  # doctest: +SKIP
    """
    assert _sections(doc) == {"Parameters", "Examples"}
    assert not _runs_an_example(doc)
    assert _runs_an_example(doc.replace("  # doctest: +SKIP", ""))
