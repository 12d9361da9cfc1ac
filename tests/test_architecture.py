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
    "tasks": 0,
    "metrics": 0,
    "models": 1,
    "inference": 2,
    "protocol": 3,
    "storage": 4,
    "_version": 0,
    "_docstrings": 0,
    "_atomic": 0,
    "_json": 0,
    "_interrupts": 0,
    "_seeds": 0,
    "_dtypes": 0,
    "_portable": 0,
    "algorithms": 5,
    "plotting": 5,
    "user_plots": 5,
    "user_info": 5,
    "fitting": 5,
    "table_image": 5,
    "release": 5,
    "scoring": 6,
    "cli": 7,
    "__main__": 7,
    "__init__": 8,
}

#: Largest module, in lines (issue 45: rooms cut by concept, no module over 500 lines).
MAX_LINES = 500


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        out[".".join(parts)] = path
    return out


def _room(module: str) -> str:
    return module.split(".")[0]


def _imports(path: Path) -> set[str]:
    """The lbm_bench modules that ``path`` imports (dotted, without the package prefix), by
    every import statement of the file: top-level or inside functions, classes and blocks.

    ``from lbm_bench.pkg import name`` counts as an import of ``pkg.name`` when that is a
    submodule, else of the package ``pkg`` itself (its ``__init__``).
    """
    tree = ast.parse(path.read_text())
    found = set()
    for node in ast.walk(tree):
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
        target for target in _imports(MODULES[module])
        if _room(target) in LAYERS and LAYERS[_room(target)] > layer
    )
    assert not upward, f"{module} (layer {layer}) imports from a higher layer: {upward}"


def _import_graph() -> dict[str, set[str]]:
    """Every module's imports of package modules: every import statement, at the top of the
    module and inside functions, classes and ``if`` blocks alike (a function-level import is
    still a dependency; it only hides it from a top-level reading)."""
    graph: dict[str, set[str]] = {m: set() for m in MODULES}
    for module, path in MODULES.items():
        for target in _imports(path):
            for name in (target, target + ".__init__"):
                if name in graph and name != module:
                    graph[module].add(name)
                    break
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of ``graph`` (a list of modules, the first repeated last), or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and not node.endswith("__init__") and (found := visit(node)):
            return found
    return None


def test_no_import_cycles():
    cycle = _cycle(_import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_the_cycle_test_reads_imports_inside_functions(tmp_path):
    """A cycle closed by an import inside a function is found (the models.checks ->
    models.registry -> families -> models.checks cycle of issue 32 was one)."""
    top = tmp_path / "top.py"
    top.write_text("from lbm_bench.models import checks\n")
    inner = tmp_path / "inner.py"
    inner.write_text("def f():\n    from lbm_bench.models.registry import get_family\n")
    assert "models.checks" in _imports(top) and "models.registry" in _imports(inner)
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}
    assert _cycle(graph) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


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


def _family_branches(path: Path, names: set[str] = FAMILY_NAMES) -> list[str]:
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
                 if isinstance(c, ast.Constant) and c.value in names]
    return hits


def test_no_code_outside_models_branches_on_a_family_name():
    """A family is one module: everything else asks the registry (issue 23)."""
    hits = [h for m, p in MODULES.items() if _room(m) != "models" for h in _family_branches(p)]
    assert not hits, "family-name branches outside lbm_bench/models/: " + ", ".join(hits)


def test_no_code_branches_on_a_track_name():
    """A track is an object registered by name (lbm_bench.scoring.benchmark.TRACKS): run_benchmark
    and the command line read it, and no code compares a track's name (issue 32, item 5)."""
    from lbm_bench.scoring.benchmark import TRACKS

    hits = [h for p in MODULES.values() for h in _family_branches(p, set(TRACKS))]
    assert not hits, "track-name branches: " + ", ".join(hits)


def test_no_module_fills_its_names_through_globals():
    """Every public name of a module is a statement a reader can find (the per-family algorithms
    of lbm_bench.algorithms: a module ``__getattr__`` on their table), never ``globals().update``
    (issue 32, item 6)."""
    calls = [f"{module}:{node.lineno}" for module, path in MODULES.items()
             for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
             if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Call)
             and isinstance(node.value.func, ast.Name) and node.value.func.id in ("globals", "vars", "locals")
             and node.attr in ("update", "setdefault", "__setitem__")]
    assert not calls, f"names filled through globals(): {calls}"


#: Most places in the package that ask whether a table is sparse (scipy's ``issparse``):
#: the storage adapter decides it once (lbm_bench/models/data.py), everything else asks it.
MAX_ISSPARSE = 8


def _scipy_issparse_calls(path: Path) -> list[int]:
    """The lines of ``path`` that call scipy's ``issparse`` (``sp.issparse(X)``, ``scipy.sparse.issparse``,
    or the name imported from ``scipy.sparse``); another object's ``issparse`` (a tar member's) is not it."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    modules, functions = {"scipy.sparse"}, set()  # what names scipy.sparse, and its issparse, in this module
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules.update(a.asname or a.name for a in node.names if a.name == "scipy.sparse" and a.asname)
        elif isinstance(node, ast.ImportFrom) and node.module == "scipy":
            modules.update(a.asname or a.name for a in node.names if a.name == "sparse")
        elif isinstance(node, ast.ImportFrom) and node.module == "scipy.sparse":
            functions.update(a.asname or a.name for a in node.names if a.name == "issparse")
    lines = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name) and func.id in functions:
            lines.append(node.lineno)
        elif isinstance(func, ast.Attribute) and func.attr == "issparse" and ast.unparse(func.value) in modules:
            lines.append(node.lineno)
    return lines


def _issparse_calls() -> list[str]:
    return [f"{module}:{line}" for module, path in MODULES.items() for line in _scipy_issparse_calls(path)]


def test_the_storage_is_tested_in_few_places():
    calls = _issparse_calls()
    assert len(calls) <= MAX_ISSPARSE, f"issparse in {len(calls)} places: {calls}"
    assert {call.split(":")[0] for call in calls} <= {"models.data"}, calls  # the storage adapter asks


def test_issparse_counts_scipys_only(tmp_path):
    source = tmp_path / "example.py"
    source.write_text("import scipy.sparse as sp\nfrom scipy import sparse\n"
                      "from scipy.sparse import issparse as is_sp\nimport scipy\n"
                      "sp.issparse(a); sparse.issparse(b); is_sp(c); scipy.sparse.issparse(d)\n"
                      "member.issparse(); tarinfo.issparse()\n")
    assert _scipy_issparse_calls(source) == [5, 5, 5, 5]


# -- the task service (lbm_bench/tasks/): every parallel call goes through it ----------------

#: What hands work to workers or touches a Dask cluster: the task service's alone.
PARALLEL_LIBRARIES = ("joblib", "dask", "distributed", "loky")
PARALLEL_NAMES = {"Parallel", "delayed", "parallel_config", "parallel_backend", "Client",
                  "LocalCluster"}


def _parallel_uses(path: Path) -> list[str]:
    """The imports of joblib, dask, distributed or loky in ``path`` (at any level, as
    ``module`` or ``module.name``), and the names of their task and cluster objects it uses
    (``Parallel``, ``delayed``, ``parallel_config``, ``Client``...: a name or an attribute)."""
    hits = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            hits += [a.name for a in node.names if a.name.split(".")[0] in PARALLEL_LIBRARIES]
        elif isinstance(node, ast.ImportFrom) and node.module:
            if node.module.split(".")[0] in PARALLEL_LIBRARIES:
                hits += [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Name) and node.id in PARALLEL_NAMES:
            hits.append(node.id)
        elif isinstance(node, ast.Attribute) and node.attr in PARALLEL_NAMES:
            hits.append(node.attr)
    return hits


def test_parallel_work_goes_through_the_task_service_only():
    """No module outside lbm_bench/tasks/ imports joblib, Dask or loky, or names their Parallel,
    delayed, parallel_config, Client (issue 45, item 1): every parallel call asks the service."""
    hits = [f"{m}: {hit}" for m, p in MODULES.items() if _room(m) != "tasks"
            for hit in _parallel_uses(p)]
    assert not hits, "parallel work outside lbm_bench/tasks/: " + ", ".join(hits)


@pytest.mark.parametrize("names, home", [({"Parallel", "delayed"}, "tasks.pool"),
                                         ({"Client", "LocalCluster"}, "tasks.backends"),
                                         ({"parallel_config"}, "tasks.backends")])
def test_only_the_pool_hands_tasks_to_joblib_and_only_the_backends_open_a_cluster(names, home):
    where = {m for m, p in MODULES.items() if _room(m) == "tasks"
             for hit in _parallel_uses(p) if hit.rsplit(".", 1)[-1] in names}
    assert where == {home}


def test_the_parallel_uses_check_sees_every_form(tmp_path):
    source = tmp_path / "probe.py"
    source.write_text("import joblib\nfrom joblib import Parallel, delayed\n"
                      "import dask.distributed as dd\n"
                      "def f():\n    from distributed import Client\n"
                      "    joblib.parallel_config(backend='threading')\n"
                      "    return dd.LocalCluster\n")
    assert {"joblib", "joblib.Parallel", "joblib.delayed", "dask.distributed", "distributed.Client",
            "parallel_config", "LocalCluster"} <= set(_parallel_uses(source))


def test_the_chains_the_map_starts_and_the_floor_s_descents_go_through_the_service():
    """docs/architecture.md: a table's chains and its MAP's starts run as bundles of the service
    (run_bundles), the floor's descents as tasks of it in bundles of about equal cost."""
    assert ("tasks.pool", "run_bundles") in _imports_from(MODULES["inference.chains"])
    assert ("tasks.pool", "run_bundles") in _imports_from(MODULES["inference.classifier"])
    floor = _imports_from(MODULES["inference.floor"])
    assert {("tasks.pool", "run_tasks"), ("tasks.bundles", "weighted_bundles")} <= floor


def test_the_large_table_threshold_is_defined_once_and_asked_through_is_large():
    """LARGE_TABLE_ENTRIES is assigned in tasks/large.py only, and no other module reads it: the
    chains, the MAP's starts, the floor's descents, the build and verify ask is_large."""
    assigned, read = [], []
    for module, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Name) and node.id == "LARGE_TABLE_ENTRIES":
                (assigned if isinstance(node.ctx, ast.Store) else read).append(module)
            elif isinstance(node, ast.Attribute) and node.attr == "LARGE_TABLE_ENTRIES":
                read.append(module)
            elif isinstance(node, ast.alias) and node.name == "LARGE_TABLE_ENTRIES":
                read.append(module)
    assert assigned == ["tasks.large"]
    assert set(read) <= {"tasks.large"}, read
    askers = {m for m, p in MODULES.items() if ("tasks.large", "is_large") in _imports_from(p)}
    assert {"inference.chains", "inference.floor", "release.build", "release.verify"} <= askers


# -- docs/architecture.md: each count and rule it states is the one these tests check --------------

ARCHITECTURE = PACKAGE.parent / "docs" / "architecture.md"


def _stated(pattern: str) -> tuple[str, ...]:
    """The groups of ``pattern`` in docs/architecture.md (its text joined on one line)."""
    import re

    text = " ".join(ARCHITECTURE.read_text(encoding="utf-8").split())
    found = re.search(pattern, text)
    assert found, f"docs/architecture.md no longer says {pattern!r}"
    return found.groups()


def test_the_counts_the_architecture_states_are_the_tests():
    (lines,) = _stated(r"no module exceeds (\d+) lines")
    assert int(lines) == MAX_LINES
    import tomllib

    (width,) = _stated(r"no line over (\d+) characters")
    ruff = tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["ruff"]
    assert int(width) == ruff["line-length"]
    (wider,) = _stated(r"`tests/` and `scripts/` keep (\d+)")
    for folder in ("tests", "scripts"):
        local = tomllib.loads((PACKAGE.parent / folder / "ruff.toml").read_text(encoding="utf-8"))
        assert local == {"extend": "../pyproject.toml", "line-length": int(wider)}
    most, today = _stated(r"`issparse` is asked in at most (\d+) places \(today: (\d+)")
    assert int(most) == MAX_ISSPARSE
    assert int(today) == len(_issparse_calls()), _issparse_calls()


def _layers_table() -> list[tuple[int, str, str]]:
    """(layer, room, what lives there) of every row of the layers table."""
    rows = []
    for line in ARCHITECTURE.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0].isdigit():
            rows.append((int(cells[0]), cells[1].strip("`"), cells[2]))
    return rows


def test_the_layers_table_lists_every_module_and_no_other():
    """Each room of the table has the layer the import test uses; every module of the package is
    named (a top-level module as a room, a room's module as `module.py` in its row); every module
    named exists."""
    import re

    rows = _layers_table()
    rooms = {room.removesuffix("/").removesuffix(".py"): layer for layer, room, _ in rows}
    assert rooms == {room: layer for room, layer in LAYERS.items() if room not in ("__init__", "__main__")}
    problems = []
    for _, room, what in rows:
        if not room.endswith("/"):
            if not (PACKAGE / room).is_file():
                problems.append(f"{room}: no such module")
            continue
        modules = {p.name for p in (PACKAGE / room).glob("*.py")} - {"__init__.py", "__main__.py"}
        named = set(re.findall(r"`(\w+\.py)`", what))
        problems += [f"{room}{name}: not in the table" for name in sorted(modules - named)]
        problems += [f"{room}{name}: in the table, no such module" for name in sorted(named - modules)]
    assert not problems, problems


def _imports_from(path: Path) -> set[tuple[str, str]]:
    """(module, name) of every ``from lbm_bench.<module> import <name>`` of ``path``."""
    return {(node.module.removeprefix("lbm_bench."), alias.name)
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("lbm_bench.")
            for alias in node.names}


def test_thumbnails_and_pictures_share_the_grouped_image_of_table_image():
    """docs/architecture.md: the grouped view lives in table_image.py, which plotting.py draws and the
    release thumbnails write as pixels; the thumbnails take nothing from plotting but colour maps."""
    grouped = {"grouped_image", "reference_labels", "color_range"}
    defined = {name: module for module, path in MODULES.items()
               for node in ast.parse(path.read_text(encoding="utf-8")).body
               if isinstance(node, ast.FunctionDef) and (name := node.name) in grouped}
    assert defined == dict.fromkeys(grouped, "table_image")
    assert ("table_image", "grouped_image") in _imports_from(MODULES["release.thumbnail"])
    assert {("table_image", "reference_labels"), ("table_image", "color_range")} <= _imports_from(MODULES["plotting"])
    from_plotting = {name for module, path in MODULES.items() if module.startswith("release.")
                     for source, name in _imports_from(path) if source == "plotting"}
    assert all(name.endswith("colormap") for name in from_plotting), from_plotting


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
PRIVATE_MODULES = {"_validation", "_records", "_docstrings", "_version", "_atomic", "_interrupts", "_portable",
                   "_seeds", "_dtypes", "_json"}


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
        if "sys.path" in path.read_text(encoding="utf-8") and module not in ("algorithms.catalog",
                                                                               "scoring.algorithm_call"):
            offenders.append((module, "sys.path"))
    assert not offenders
    assert not (PACKAGE / "bench").exists()


# -- tests mirror modules (docs/architecture.md, "Tests") ------------------------------------------

TESTS = PACKAGE.parent / "tests"
#: Modules without behaviour of their own, with why (no test file of their own).
WITHOUT_BEHAVIOUR = {"_version": "a version string"}


def _test_file(module: str) -> Path:
    """``tests/<room>/test_<module>.py`` (a top-level module's in ``tests/``, its underscore dropped)."""
    *room, name = module.split(".")
    return TESTS.joinpath(*room, f"test_{name.lstrip('_')}.py")


def _tests_module(test: Path, module: str) -> bool:
    """Whether ``test`` says it tests ``lbm_bench.<module>``: its docstring names it, or it imports
    the module itself or names from it."""
    dotted = f"lbm_bench.{module}"
    parent, _, name = dotted.rpartition(".")
    tree = ast.parse(test.read_text(encoding="utf-8"))
    if dotted in " ".join((ast.get_docstring(tree) or "").split()):
        return True
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == dotted:
            return True
        if isinstance(node, ast.ImportFrom) and node.module == parent and any(a.name == name for a in node.names):
            return True
        if isinstance(node, ast.Import) and any(a.name == dotted for a in node.names):
            return True
    return False


def test_every_module_with_behaviour_has_its_own_test_file():
    """The tests of ``lbm_bench/<room>/<module>.py`` are in ``tests/<room>/test_<module>.py``, which
    says so (its docstring names the module, or it imports it) (issue 32, item 7)."""
    modules = [m for m in MODULES if not m.endswith(("__init__", "__main__")) and m not in WITHOUT_BEHAVIOUR]
    missing = [f"{m}: {_test_file(m).relative_to(TESTS.parent)}" for m in modules if not _test_file(m).is_file()]
    assert not missing, "modules without a test file of their own: " + ", ".join(missing)
    unrelated = [str(_test_file(m).relative_to(TESTS.parent)) for m in modules if not _tests_module(_test_file(m), m)]
    assert not unrelated, "test files that do not say which module they test: " + ", ".join(unrelated)
    assert set(WITHOUT_BEHAVIOUR) <= set(MODULES)


# -- a name becomes a family only at the boundaries (docs/architecture.md) -------------------------

#: The calls that turn a family's name into its object (lbm_bench.models.registry).
NAME_TO_FAMILY = {"as_family", "get_family", "check_kind"}


def _functions_calling(path: Path, names: set[str]) -> set[str]:
    """The qualified names (``Class.method``, ``function``) of the functions of ``path`` that call
    one of ``names`` (a bare name or an attribute: ``registry.get_family``)."""
    found = set()

    def visit(node: ast.AST, scope: tuple[str, ...]) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                visit(child, scope + (child.name,))
                continue
            if isinstance(child, ast.Call):
                func = child.func
                called = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
                if called in names:
                    found.add(".".join(scope) or "<module>")
            visit(child, scope)

    visit(ast.parse(path.read_text(encoding="utf-8")), ())
    return found


def _name_conversions() -> set[str]:
    """``module:function`` of every call outside models/ that turns a name into a family."""
    return {f"{module}:{function}" for module, path in MODULES.items() if _room(module) != "models"
            for function in _functions_calling(path, NAME_TO_FAMILY)}


def _stated_boundaries() -> set[str]:
    """The ``module:function`` cells of docs/architecture.md's table of name boundaries."""
    import re

    text = ARCHITECTURE.read_text(encoding="utf-8")
    section = text.split("## Where a name becomes a family", 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"^\| `([\w.]+:[\w.<>]+)` \|", section, flags=re.M))


def test_names_become_families_only_at_the_documented_boundaries():
    """A name is turned into a family only where a user gives one (issue 45, item 3): a file's
    ``@kind``, a manifest entry, a CLI argument, a public function's ``kind=``; the list is the
    table of docs/architecture.md, and any other caller fails."""
    found, stated = _name_conversions(), _stated_boundaries()
    assert stated, "docs/architecture.md lists no name boundary"
    assert found == stated, (f"undocumented conversions: {sorted(found - stated)}; "
                             f"documented but gone: {sorted(stated - found)}")


def _annotations_of_names_or_families(path: Path) -> list[str]:
    """``function(parameter)`` of every parameter of ``path`` annotated as a family or a name."""
    found = []

    def visit(node: ast.AST, scope: tuple[str, ...]) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                args = child.args
                for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs]:
                    text = ast.unparse(arg.annotation) if arg.annotation is not None else ""
                    parts = {part.strip() for part in text.split("|")}
                    if {"Family", "str"} <= parts:
                        found.append(f"{'.'.join(scope + (child.name,))}({arg.arg})")
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                visit(child, scope + (child.name,))

    visit(ast.parse(path.read_text(encoding="utf-8")), ())
    return found


def _public_names() -> set[str]:
    """Every name of ``lbm_bench.__all__`` and of each subpackage's ``__all__``, and of the public
    modules whose functions the docs call by their module (``lbm_bench.protocol.memory``)."""
    import importlib

    names = set()
    for module in [m for m in MODULES if m == "__init__" or m.endswith(".__init__")] + ["protocol.memory"]:
        dotted = "lbm_bench" if module == "__init__" else "lbm_bench." + module.removesuffix(".__init__")
        names.update(importlib.import_module(dotted).__all__)
    return names


def test_only_public_entry_points_take_a_family_or_its_name():
    """``Family | str`` parameters outside models/ belong to the public API's entry points (and to
    the one reader of the EM baselines' ``kind=``); everything inside takes the object."""
    public = _public_names() | {"em_inputs"}
    found = [f"{module}:{where}" for module, path in MODULES.items() if _room(module) != "models"
             for where in _annotations_of_names_or_families(path)]
    inside = [hit for hit in found if hit.split(":")[1].split("(")[0].split(".")[0] not in public]
    assert found and not inside, f"Family | str parameters of internal functions: {inside}"


#: Names vulture cannot see used, with why (everything else it reports at 60% confidence fails).
NOT_DEAD = {
    ("algorithms/__init__.py", "__getattr__"): "PEP 562: the per-family algorithms as attributes",
    ("algorithms/__init__.py", "__dir__"): "PEP 562",
    ("algorithms/catalog.py", "__getattr__"): "PEP 562: where pickle finds the per-family algorithms",
    ("algorithms/catalog.py", "__dir__"): "PEP 562",
    ("inference/compiled_loops.py", "CACHE_DIR"): "numba's configuration, read by its on-disk cache",
    ("release/card.py", "handle_starttag"): "html.parser.HTMLParser's hook",
    ("release/download.py", "readable"): "io.RawIOBase's method",
    ("storage/matrix_market.py", "readable"): "io.RawIOBase's method",
    ("release/download.py", "response_class"): "http.client's hook",
    ("release/spec.py", "replicate"): "a dataclass field",
    ("scoring/report.py", "matching_exact"): "a dataclass field of the report",
}


def test_no_dead_code():
    """Nothing of the package unused by the package, its tests or its scripts (issue 45, item 8:
    ``DenseStatistics.stats_t`` was dead), but for the names of :data:`NOT_DEAD`."""
    vulture = pytest.importorskip("vulture")
    scan = vulture.Vulture()
    scan.scavenge([str(PACKAGE), str(TESTS), str(SCRIPTS)])
    found = {(Path(item.filename).resolve().relative_to(PACKAGE).as_posix(), item.name): item.first_lineno
             for item in scan.get_unused_code(min_confidence=60)
             if Path(item.filename).resolve().is_relative_to(PACKAGE)}
    dead = sorted(f"{path}:{line} {name}" for (path, name), line in found.items() if (path, name) not in NOT_DEAD)
    assert not dead, f"unused code: {dead}"
    assert set(NOT_DEAD) <= set(found), f"no longer reported: {sorted(set(NOT_DEAD) - set(found))}"


def test_every_module_and_class_name_is_unique_in_the_package():
    """One name, one meaning (issue 45, item 7): no two modules share a file name (two
    ``missing.py``, two ``registry.py`` were), no two classes a name (two ``_Side``)."""
    from collections import Counter

    modules = Counter(path.name for path in PACKAGE.rglob("*.py") if not path.name.startswith("__"))
    classes = Counter(node.name for path in MODULES.values()
                      for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                      if isinstance(node, ast.ClassDef))
    assert [name for name, n in modules.items() if n > 1] == []
    assert [name for name, n in classes.items() if n > 1] == []


def _layer_diagram() -> dict[str, int]:
    """Room -> layer of the text diagram at the top of docs/architecture.md."""
    text = ARCHITECTURE.read_text(encoding="utf-8").split("## Layers", 1)[1]
    block = text.split("```", 2)[1]
    rooms, layer = {}, None
    for line in block.splitlines():
        words = line.split()
        if words[:1] == ["layer"]:
            layer, words = int(words[1]), words[2:]
        for word in words:
            if word.startswith("("):
                break
            rooms[word.removesuffix("/").removesuffix(".py")] = layer
    return rooms


def test_the_layer_diagram_is_the_layers_of_the_tests():
    assert _layer_diagram() == {room: layer for room, layer in LAYERS.items() if room != "__main__"}


def test_every_test_the_architecture_names_exists():
    """The rules of docs/architecture.md name the tests that hold them: each one exists."""
    import re

    text = ARCHITECTURE.read_text(encoding="utf-8")
    named = set(re.findall(r"`(?:(tests/[\w/]+\.py)::)?(test_\w+)`", text))
    assert named
    for path, test in named:
        source = (PACKAGE.parent / (path or "tests/test_architecture.py")).read_text(encoding="utf-8")
        assert f"def {test}(" in source, (path, test)


def _defined_names(paths: list[Path]) -> set[str]:
    """Every name a module of ``paths`` defines at any depth: functions, classes, methods,
    assignments, and the attributes its classes declare."""
    names = set()
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names.update(t.id for t in targets if isinstance(t, ast.Name))
                names.update(t.attr for t in targets if isinstance(t, ast.Attribute))
    return names


def test_the_names_the_layers_table_quotes_exist():
    """Every identifier a row of the layers table quotes (```Sweeper```, ``is_large``,
    ``Family.kind``'s last part) is defined in that room, or in the package; a file name
    (``tables.csv``) or a name of Python or NumPy (``SystemExit``, ``uint8``,
    ``SeedSequence.spawn``) is not the package's to define."""
    import builtins
    import re

    import numpy as np

    def foreign(name: str) -> bool:
        if re.search(r"\.(csv|json|png|h5|toml|md|html|txt)$", name):
            return True
        last = name.split(".")[-1]
        return any(hasattr(where, last) for where in (builtins, np, np.random.SeedSequence))

    everywhere = _defined_names(list(MODULES.values()))
    missing = []
    for _, room, what in _layers_table():
        home = PACKAGE / room
        paths = sorted(home.rglob("*.py")) if room.endswith("/") else [home]
        names = _defined_names(paths)
        for quoted in re.findall(r"`([A-Za-z_][\w.]*)(?:\(\))?`", what):
            if quoted.endswith(".py") or "/" in quoted or foreign(quoted):
                continue
            last = quoted.split(".")[-1]
            if last not in names and last not in everywhere:
                missing.append(f"{room}: {quoted}")
    assert not missing, missing


def test_every_parallel_caller_uses_the_service_as_documented():
    """The table of docs/architecture.md's task service: each caller imports what the table says
    it runs its tasks through, and every module that imports the service's runners is listed."""
    import re

    text = ARCHITECTURE.read_text(encoding="utf-8").split("## The task service", 1)[1].split("\n## ", 1)[0]
    stated = {m.group(1): m.group(2) for m in re.finditer(r"^\| `([\w.]+)` \| [^|]+ \| `(\w+)` \|$", text, re.M)}
    runners = {"run_bundles", "run_tasks", "iter_tasks", "TaskPool", "worker_backend", "in_threads"}
    used = {}
    for module, path in MODULES.items():
        if _room(module) in ("tasks", "cli"):
            continue
        for source, name in _imports_from(path):
            if source.startswith("tasks.") and name in runners:
                used.setdefault(module, set()).add(name)
    assert stated and set(stated) == set(used), (sorted(stated), sorted(used))
    assert all(stated[module] in used[module] for module in stated), (stated, used)


#: Public constant names that every module of a kind defines for itself, with why.
PER_MODULE_CONSTANTS = {"ARGUMENTS": "each command module's arguments the command line rewords (cli/flags.py)"}


def test_each_public_constant_is_defined_once():
    """One definition of each constant (issue 45, item 7: the criteria were written three times,
    ``FAMILIES`` meant two things): a public module-level UPPERCASE name is assigned in one module."""
    from collections import defaultdict

    where = defaultdict(set)
    for module, path in MODULES.items():
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
            for target in targets:
                names = target.elts if isinstance(target, ast.Tuple) else [target]
                for name in names:
                    if isinstance(name, ast.Name) and name.id.isupper() and not name.id.startswith("_"):
                        where[name.id].add(module)
    twice = {name: sorted(modules) for name, modules in where.items()
             if len(modules) > 1 and name not in PER_MODULE_CONSTANTS}
    assert not twice, twice
