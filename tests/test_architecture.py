"""The house rules of docs/architecture.md: layers, no upward imports, no cycles, small modules."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "lbm_bench"

#: Rooms by layer, lowest first (docs/architecture.md). A module may import from its own
#: layer and the layers below, never from a layer above.
LAYERS = {
    "_validation": 0,
    "_records": 0,
    "_threads": 0,
    "metrics": 0,
    "models": 1,
    "inference": 2,
    "protocol": 3,
    "storage": 4,
    "_version": 0,
    "_memory": 0,
    "_docstrings": 0,
    "_atomic": 0,
    "_interrupts": 0,
    "algorithms": 5,
    "plotting": 5,
    "table_image": 5,
    "release": 5,
    "scoring": 6,
    "cli": 7,
    "__main__": 7,
    "__init__": 8,
}

#: Largest module, in lines (issue 23: rooms cut by concept, largest module under 600 lines).
MAX_LINES = 600


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        out[".".join(parts)] = path
    return out


def _room(module: str) -> str:
    return module.split(".")[0]


def _imports(path: Path, *, top_level_only: bool) -> set[str]:
    """The lbm_bench modules that ``path`` imports (dotted, without the package prefix).

    ``from lbm_bench.pkg import name`` counts as an import of ``pkg.name`` when that is a
    submodule, else of the package ``pkg`` itself (its ``__init__``).
    """
    tree = ast.parse(path.read_text())
    nodes = tree.body if top_level_only else list(ast.walk(tree))
    found = set()
    for node in nodes:
        if isinstance(node, ast.ImportFrom) and node.level:
            raise AssertionError(f"{path}: relative import; the package uses absolute imports")
        if isinstance(node, ast.ImportFrom) and node.module and (
            node.module == "lbm_bench" or node.module.startswith("lbm_bench.")
        ):
            base = node.module.removeprefix("lbm_bench").lstrip(".")
            for alias in node.names:
                sub = f"{base}.{alias.name}" if base else alias.name
                if sub in _MODULE_NAMES or sub + ".__init__" in _MODULE_NAMES:
                    found.add(sub)
                else:
                    found.add(base or "__init__")
        elif isinstance(node, ast.Import):
            found.update(a.name.removeprefix("lbm_bench.") for a in node.names if a.name.startswith("lbm_bench."))
    return found


MODULES = _modules()
_MODULE_NAMES = set(MODULES)


def test_every_room_has_a_layer():
    rooms = {_room(m) for m in MODULES}
    assert rooms <= set(LAYERS), f"rooms without a layer in LAYERS: {sorted(rooms - set(LAYERS))}"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_upward_imports(module):
    layer = LAYERS[_room(module)]
    upward = sorted(
        target for target in _imports(MODULES[module], top_level_only=False)
        if _room(target) in LAYERS and LAYERS[_room(target)] > layer
    )
    assert not upward, f"{module} (layer {layer}) imports from a higher layer: {upward}"


def test_no_import_cycles():
    graph = {m: set() for m in MODULES}
    for module, path in MODULES.items():
        for target in _imports(path, top_level_only=True):
            for name in (target, target + ".__init__"):
                if name in graph and name != module:
                    graph[module].add(name)
                    break
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycle = stack[stack.index(nxt):] + [nxt]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state and not node.endswith("__init__"):
            visit(node)


def test_modules_are_small():
    sizes = {m: len(p.read_text().splitlines()) for m, p in MODULES.items()}
    big = {m: n for m, n in sizes.items() if n > MAX_LINES}
    assert not big, f"modules over {MAX_LINES} lines: {big}"


def test_every_module_declares_its_public_api():
    missing = [
        m for m, p in MODULES.items()
        if not m.endswith("__main__") and "__all__" not in p.read_text()
    ]
    assert not missing, f"modules without __all__: {missing}"


#: Branches on the table's storage (dense or sparse) allowed in the MAP and the sampler
#: (the engine's Sweeper chooses the storage once; each storage computes the classifier's
#: entrywise starts; the Gibbs sampler has none).
STORAGE_BRANCHES = {"inference/gibbs.py": 0, "inference/classifier.py": 0}


def _storage_branches(path: Path) -> int:
    names = {"is_sparse", "issparse", "is_sparse_table"}
    count = 0
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, (ast.If, ast.IfExp, ast.While)):
            mentioned = {n.attr if isinstance(n, ast.Attribute) else n.id
                         for n in ast.walk(node.test) if isinstance(n, (ast.Attribute, ast.Name))}
            count += bool(mentioned & names)
    return count


@pytest.mark.parametrize("module, allowed", sorted(STORAGE_BRANCHES.items()))
def test_map_and_sampler_branch_on_the_storage_at_most_once(module, allowed):
    assert _storage_branches(PACKAGE / module) == allowed


#: The registered families' names (and the next one's), compared against by no code outside models/.
FAMILY_NAMES = {"gaussian", "poisson", "bernoulli", "categorical"}


def _family_branches(path: Path) -> list[str]:
    """Comparisons with, dict keys of and match cases on a family name (docstrings aside)."""
    hits = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Compare):
            consts = [c for sub in [node.left, *node.comparators] for c in ast.walk(sub)]
        elif isinstance(node, ast.Dict):
            consts = [k for k in node.keys if k is not None]
        elif isinstance(node, ast.match_case):
            consts = list(ast.walk(node.pattern))
        else:
            continue
        hits += [f"{path.relative_to(PACKAGE)}:{c.lineno}: {c.value}" for c in consts
                 if isinstance(c, ast.Constant) and c.value in FAMILY_NAMES]
    return hits


def test_no_code_outside_models_branches_on_a_family_name():
    """A family is one module: everything else asks the registry (issue 23)."""
    hits = [h for m, p in MODULES.items() if _room(m) != "models" for h in _family_branches(p)]
    assert not hits, "family-name branches outside lbm_bench/models/: " + ", ".join(hits)


#: Most places in the package that ask whether a table is sparse (scipy's ``issparse``):
#: the storage adapter decides it once (lbm_bench/models/data.py), everything else asks it.
MAX_ISSPARSE = 8


def test_the_storage_is_tested_in_few_places():
    calls = []
    for module, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            name = node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else None
            if name in ("issparse", "is_sparse_table") and not isinstance(getattr(node, "ctx", None), ast.Store):
                calls.append(f"{module}:{node.lineno}")
    assert len(calls) <= MAX_ISSPARSE, f"issparse in {len(calls)} places: {calls}"


def test_no_module_imports_another_modules_private_names():
    """Underscore names stay in their module: what a neighbour needs is public (in its ``__all__``)."""
    found = []
    for module, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("lbm_bench"):
                private = [f"{node.module}.{a.name}" for a in node.names
                           if a.name.startswith("_") and not a.name.startswith("__")]
                parts = node.module.split(".")[1:]
                # a private module is shared by its own subpackage (release/_files.py), no further
                if any(p.startswith("_") and p not in PRIVATE_MODULES for p in parts) and (
                    parts[:-1] != module.split(".")[:-1]
                ):
                    private.append(node.module)
                found += [f"{module}: {name}" for name in private]
    assert not found, "private names imported across modules: " + ", ".join(found)


#: Modules whose name starts with an underscore but that are the package's shared helpers
#: (layer 0): importing them is their purpose.
PRIVATE_MODULES = {"_validation", "_records", "_threads", "_docstrings", "_memory", "_version", "_atomic",
                   "_interrupts"}


SCRIPTS = PACKAGE.parent / "scripts"


def test_the_package_does_not_import_the_scripts():
    """Benchmarks and figure scripts live in scripts/ (outside the wheel): no module of the
    package imports one of them, nor puts their folders on sys.path."""
    names = {"scripts"} | {path.stem for path in SCRIPTS.rglob("*.py")}
    offenders = []
    for module, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                imported = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                imported = [node.module]
            else:
                continue
            offenders += [(module, name) for name in imported if name.split(".")[0] in names]
        # the plug-in loader of `benchmark --algorithm module:function` may look in the user's
        # working directory (issue 27), and the child process of a timed fit takes its parent's
        # path to find the same plug-ins (issue 35); nothing else touches sys.path
        if "sys.path" in path.read_text(encoding="utf-8") and module not in ("algorithms.registry",
                                                                               "scoring.algorithm_call"):
            offenders.append((module, "sys.path"))
    assert not offenders
    assert not (PACKAGE / "bench").exists()
