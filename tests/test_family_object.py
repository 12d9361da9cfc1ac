"""A family is made once, where a user names it, and travels as an object (issue 32, item 1).

The registry's name lookups are counted (``registry._BY_NAME`` replaced by a counting
dict): a command, a request, a design or a fit looks its family up once, at its
boundary, and everything after asks the object.
"""

import ast
import dataclasses
from pathlib import Path

import numpy as np
import pytest

import lbm_bench.protocol.generate as generate_module
import lbm_bench.protocol.memory as memory_module
from lbm_bench.algorithms import fit_lbm, select_lbm
from lbm_bench.algorithms.em_problem import EMProblem
from lbm_bench.cli import main
from lbm_bench.models import registry
from lbm_bench.models.data import TableData
from lbm_bench.models.design import ModelDesign, random_design
from lbm_bench.models.registry import get_family
from lbm_bench.protocol.memory import estimate_generation_memory, estimate_request_memory
from lbm_bench.protocol.request import TableRequest

PACKAGE = Path(__file__).resolve().parents[1] / "lbm_bench"


class _CountingNames(dict):
    """The registry's families by name, counting the lookups of a family by its name."""

    lookups = 0

    def __getitem__(self, name):
        type(self).lookups += 1
        return super().__getitem__(name)


@pytest.fixture
def lookups(monkeypatch):
    """A function giving the number of name lookups since the test started."""
    counting = type("Counting", (_CountingNames,), {"lookups": 0})(registry._BY_NAME)
    monkeypatch.setattr(registry, "_BY_NAME", counting)
    return lambda: type(counting).lookups


def test_a_request_and_a_design_hold_the_family_object(lookups):
    poisson = get_family("poisson")
    before = lookups()
    request = TableRequest("Poisson", 60, 40, 3, 2, 0.1, model_options={"effects": True})
    assert lookups() - before == 1  # the name, once
    assert request.family is poisson and request.kind == "poisson"
    assert "family" in {f.name for f in dataclasses.fields(TableRequest)}
    assert "family" in {f.name for f in dataclasses.fields(ModelDesign)}
    before = lookups()
    request.family_options(), request.design_options(), request.describe(), request.replace(n_rows=80)
    estimate_request_memory(request)
    design = random_design(request.family, *request.clusters, rng=0, **request.design_options())
    design.model(1.0).sample(60, 40, rng=1)
    assert design.family is poisson and design.kind == "poisson"
    assert lookups() == before  # nothing after the boundary looks the name up again


def test_the_command_line_looks_the_family_up_once_and_estimates_memory_once(lookups, monkeypatch, tmp_path):
    estimates = []

    def counted(*args, **kwargs):
        estimates.append(args[0])
        return estimate_request_memory(*args, **kwargs)

    monkeypatch.setattr(memory_module, "estimate_request_memory", counted)
    monkeypatch.setattr(generate_module, "estimate_request_memory", counted)
    args = ["generate", "--kind", "bernoulli", "--shape", "30x24", "--clusters", "2x2", "--risk", "0.1",
            "--tolerance", "0.03", "--samples", "200", "--calibration-tables", "20", "--seed", "3", "-q"]
    assert main([*args, "-o", str(tmp_path / "t.h5")]) == 0
    assert len(estimates) == 1 and estimates[0].kind == "bernoulli"  # by generate_table, not before it too
    # two boundaries: --kind, and the @kind of the file (the writer reads its layout back as any file)
    assert lookups() == 2


def test_a_refused_command_line_request_names_the_options_as_the_command_line_does(capsys):
    args = ["generate", "--kind", "gaussian", "--shape", "200x100", "--clusters", "3x2", "--risk", "0.1",
            "--max-memory", "1K", "-o", "x.h5"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "allowed by --max-memory" in err and "--shape" in err and "max_memory=" not in err


def test_one_check_refuses_another_familys_option():
    """One place says that an option belongs to other families (it was written twice, down to
    the message), and every way in says it alike."""
    sources = []
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.JoinedStr) and any(
                isinstance(part, ast.Constant) and "is defined for the" in part.value for part in node.values
            ):
                sources.append(path.relative_to(PACKAGE).as_posix())
    assert sources == ["models/design.py"]
    message = "density is defined for the poisson and bernoulli kinds, got kind='gaussian'"
    for attempt in (
        lambda: random_design("gaussian", 2, 2, density=0.1),
        lambda: TableRequest("gaussian", 20, 20, 2, 2, 0.1, model_options={"density": 0.1}),
        lambda: estimate_generation_memory("gaussian", 20, 20, 2, 2, options={"density": 0.1}),
    ):
        with pytest.raises(ValueError, match=message):
            attempt()


@pytest.fixture
def table():
    rng = np.random.default_rng(0)
    X = rng.poisson(3.0, size=(30, 20))
    X[:15, :10] += 6
    return X


@pytest.mark.parametrize("kind", [None, "poisson"])
def test_the_block_em_reads_its_table_once(kind, table, lookups, monkeypatch):
    reads = []
    original = TableData.incomplete

    def counted(X, *args, **kwargs):
        if X is table:
            reads.append(X)
        return original(X, *args, **kwargs)

    monkeypatch.setattr(TableData, "incomplete", staticmethod(counted))
    fit = fit_lbm(table, 2, 2, kind=kind, n_init=2, rng=0)
    assert len(reads) == 1 and lookups() == (kind is not None) and fit.kind == "poisson"
    reads.clear()
    chosen = select_lbm(table, (2, 2), kind=kind, n_init=2, rng=0)
    assert len(reads) == 1 and lookups() == 2 * (kind is not None)
    assert chosen.fit.kind == "poisson" and chosen.fit.rows.dtype == np.int64
    assert np.array_equal(chosen.fit.rows, chosen.rows)


def test_em_takes_the_family(table, lookups):
    poisson = get_family("poisson")
    problem = EMProblem(table, poisson)
    assert problem.family is poisson and lookups() == 1  # get_family's own


def test_a_fit_is_assembled_in_one_place():
    """``LBMFit`` is made by ``LBMFit.from_run`` only (fit_lbm and select_lbm both made one)."""
    calls = []
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "LBMFit":
                calls.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    assert not calls
