"""The library's argument names as the command line spells them (lbm_bench.cli.flags): one table,
one rewording, and no flag wording or ``style=`` switch anywhere else in the package (issue 45,
item 4)."""

import argparse
import ast
import dataclasses
import pickle
import re
from pathlib import Path

import pytest

from lbm_bench.cli import build_parser
from lbm_bench.cli.flags import FLAGS, OptionsError, flag_table, flag_words
from lbm_bench.cli.program import COMMANDS

PACKAGE = Path(__file__).resolve().parents[2] / "lbm_bench"


def _options(parser: argparse.ArgumentParser) -> dict[str, set[str]]:
    """Each command's long options (``--risk``...)."""
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {name: {s for a in p._actions for s in a.option_strings if s.startswith("--")}
            for name, p in sub.choices.items()}


def test_every_flag_of_the_table_is_an_option_of_the_command_that_rewords_it():
    options = _options(build_parser())
    for command in COMMANDS:
        name = command.__name__.rpartition(".")[2].removesuffix("_command")
        arguments = getattr(command, "ARGUMENTS", ())
        assert set(arguments) <= set(flag_table()), name
        assert {flag_table()[a] for a in arguments} <= options[name], name
    assert flag_table()["backend"] == "--backend"  # the task service's refusals name backend=


def test_the_table_and_the_declared_fields_agree():
    """An argument that is also a record's field (``n_samples``, ``jobs``, ``max_clusters``) has
    one flag, the one the field declares."""
    from lbm_bench.protocol.request import RequestOptions
    from lbm_bench.protocol.settings import GenerationSettings, ModelOptions
    from lbm_bench.scoring.benchmark import TRACKS

    records = [GenerationSettings, RequestOptions, ModelOptions,
               *(t.options for t in TRACKS.values())]
    declared = {f.name: f.metadata["flag"] for record in records
                for f in dataclasses.fields(record)}
    assert {"n_samples", "jobs", "max_clusters"} <= declared.keys() & FLAGS.keys()
    assert all(FLAGS[name] == flag for name, flag in declared.items() if name in FLAGS)
    assert flag_table() == {**declared, **FLAGS}


@pytest.mark.parametrize("message, names, worded", [
    ("target_risk=0.95 cannot be reached", ["target_risk"], "--risk 0.95 cannot be reached"),
    ("target_risk must lie in (0, 1), got 5.5", ["target_risk"],
     "--risk must lie in (0, 1), got 5.5"),
    ("kind='gaussian' but the design is of poisson blocks", ["kind"],
     "--kind gaussian but the design is of poisson blocks"),
    ("density is defined for the poisson kind, got kind='gaussian'", ["density", "kind"],
     "--density is defined for the poisson kind, got --kind gaussian"),
    ("max_clusters (4, 2) exceeds the table", ["max_clusters"],
     "--max-clusters 4x2 exceeds the table"),
    ("below 1/(n_rows*n_cols) = 0.01", ["n_rows", "n_cols"],
     "below 1/(n_rows*n_cols) = 0.01"),  # a formula
    ("give n_rows and n_cols", ["n_rows", "n_cols"], "give --shape"),
    ("jobs must be >= 1; the jobs of a kind", ["jobs", "kind"],
     "--jobs must be >= 1; the jobs of a kind"),
    ("equal_proportions, missing: the design fixes it", ["equal_proportions", "missing"],
     "--equal-proportions, --missing: the design fixes it"),
    ("density: the design fixes it", ["density"], "--density: the design fixes it"),
    ("a.toml: density: it", ["density"], "a.toml: --density: it"),
    ("the entries missing: rows", ["missing"], "the entries missing: rows"),  # prose
    # a foreign library's words after a colon: prose, not the flag (dask said "--missing port number")
    ("scheduler='x': missing port number in address 'x'", ["missing", "scheduler"],
     "--scheduler x: missing port number in address 'x'"),
    ("missing entries: 3 of 10", ["missing"], "missing entries: 3 of 10"),
    ("missing must lie in [0, 1), got 2.0", ["missing"], "--missing must lie in [0, 1), got 2.0"),
    ("out exists (use overwrite=True to overwrite)", ["overwrite"],
     "out exists (use --force to overwrite)"),
    ("build into another out=, or give force=True to replace it", ["out", "force"],
     "build into another --out, or give --force to replace it"),
    ("1024 bytes/s (min_rate=)", ["min_rate"], "1024 bytes/s (--min-rate)"),
    ("fit(X) (track='unknown-clusters'); the", ["track"], "fit(X) (--track unknown-clusters); the"),
    ("--jobs must be >= 1", ["jobs"], "--jobs must be >= 1"),  # a flag already
    ("target_risk=0.1 cannot be reached", [], "target_risk=0.1 cannot be reached"),  # not passed on
])
def test_a_refusal_names_the_commands_flags(message, names, worded):
    assert flag_words(message, names) == worded


def test_a_records_refusal_names_its_fields_anywhere():
    fields = ["missing", "missing_mechanism", "density"]
    message = "missing_mechanism is set but missing is 0 (a complete table): give missing, the rate"
    assert flag_words(message, fields, anywhere=True) == (
        "--missing-mechanism is set but --missing is 0 (a complete table): give --missing, the rate")
    assert flag_words("missing=0.2 is more than density=0.1", fields, anywhere=True) == (
        "--missing=0.2 is more than --density=0.1")
    error = OptionsError("n_samples must be >= 1", ["n_samples"])
    copy = pickle.loads(pickle.dumps(error))
    assert isinstance(copy, ValueError) and str(copy) == str(error)
    assert copy.names == ("n_samples",)


def test_the_memory_guards_refusal_names_the_flags_of_generate():
    """generate_table's refusal names its keyword arguments; the command line, its flags (it used
    to be restyled by the library, ``style="cli"``)."""
    from lbm_bench.cli.generate_command import ARGUMENTS
    from lbm_bench.protocol.memory import MemoryLimitError, check_memory, estimate_generation_memory

    estimate = estimate_generation_memory("bernoulli", 20_000, 20_000, 3, 2)
    with pytest.raises(MemoryLimitError) as info:
        check_memory(estimate, "1G")
    message = flag_words(str(info.value), ARGUMENTS)
    assert "\n" not in message and "dense bernoulli 20000x20000 table" in message
    assert "1 GiB allowed by --max-memory" in message
    assert "--density" in message and "--shape" in message
    assert "=" not in message and "n_cols" not in message
    estimate = estimate_generation_memory("bernoulli", 200_000, 100, 2, 2, n_samples=100_000)
    with pytest.raises(MemoryLimitError) as info:
        check_memory(estimate, "1G")
    assert "fewer Gibbs label sets (--samples)" in flag_words(str(info.value), ARGUMENTS)


def test_a_read_refusal_names_fits_max_memory():
    from lbm_bench.cli.fit_command import ARGUMENTS
    from lbm_bench.storage.user_formats import ReadGuard, ReadLimitError

    with pytest.raises(ReadLimitError) as info:
        ReadGuard("big.npy", "200M")("table", "go", table=2**30)
    assert flag_words(str(info.value), ARGUMENTS).endswith("allowed by --max-memory; go")


# -- no flag wording outside the command line ---------------------------------------------------

#: Modules outside lbm_bench/cli/ that may write a flag of the parser in a string, and why.
FLAG_WORDING_ALLOWED = {
    # the release's own files quote the commands that use a release: their text is part of the
    # release's bytes, not a message
    "release/readme.py": "the README of a release quotes the commands that use it",
    "release/card.py": "the HTML card of a release quotes the commands that use it",
    "release/croissant.py": "the Croissant metadata of a release says how to rebuild it",
}


def _parser_flags() -> set[str]:
    return set().union(*_options(build_parser()).values()) - {"--help"}


def _docstrings(tree: ast.AST) -> set[int]:
    scopes = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    return {id(node.body[0].value) for node in ast.walk(tree)
            if isinstance(node, scopes) and node.body and isinstance(node.body[0], ast.Expr)
            and isinstance(node.body[0].value, ast.Constant)}


def _declarations(tree: ast.AST) -> set[int]:
    """The strings of ``setting(default, check, flag, help, ...)`` calls: a field's flag and help,
    which the command line reads (lbm_bench._records)."""
    return {id(arg) for node in ast.walk(tree) if isinstance(node, ast.Call)
            and getattr(node.func, "id", getattr(node.func, "attr", None)) == "setting"
            for arg in ast.walk(node) if isinstance(arg, ast.Constant)}


def _flag_wording(path: Path, flags: set[str], root: Path = PACKAGE) -> list[str]:
    """``module:line: flag`` of every string of ``path`` that writes one of ``flags`` (docstrings
    and field declarations aside)."""
    words = "|".join(map(re.escape, sorted(flags, key=len, reverse=True)))
    pattern = re.compile(rf"(?<![\w-])({words})(?![\w-])")
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = _docstrings(tree) | _declarations(tree)
    return [f"{path.relative_to(root)}:{node.lineno}: {pattern.search(node.value).group(1)}"
            for node in ast.walk(tree) if isinstance(node, ast.Constant)
            and isinstance(node.value, str) and id(node) not in skipped
            and pattern.search(node.value)]


def _library_modules() -> list[Path]:
    return [p for p in sorted(PACKAGE.rglob("*.py")) if p.relative_to(PACKAGE).parts[0] != "cli"]


def test_no_library_module_words_a_message_with_a_flag():
    """Library code names its Python arguments (``target_risk``, ``max_memory=``); only the
    command line names flags (docstrings aside, and the fields' declarations the parser reads)."""
    flags = _parser_flags()
    hits = [hit for path in _library_modules() for hit in _flag_wording(path, flags)
            if hit.partition(":")[0] not in FLAG_WORDING_ALLOWED]
    assert not hits, "flag wording outside lbm_bench/cli/: " + ", ".join(hits)
    stale = [name for name in FLAG_WORDING_ALLOWED if not (PACKAGE / name).is_file()
             or not _flag_wording(PACKAGE / name, flags)]
    assert not stale, f"allowed without a reason any more: {stale}"


def test_the_flag_wording_test_sees_messages_and_skips_declarations(tmp_path):
    source = tmp_path / "example.py"
    source.write_text('"""Use --risk."""\n\ndef f():\n    """--shape."""\n'
                      '    raise ValueError("use --force")\n\n'
                      'X = setting(1, check, "--jobs", "workers (see --samples)")\n'
                      'Y = f"--kind {1}"\n')
    found = {hit.rpartition(": ")[2] for hit in _flag_wording(source, _parser_flags(), tmp_path)}
    assert found == {"--force", "--kind"}


def test_no_library_function_takes_a_style_or_rewords_into_flags():
    """No ``style=`` switch (parameter or keyword) and no ``*_in_flags`` / ``in_style`` helper
    outside lbm_bench/cli/: the command line rewords a refusal once, when it prints it."""
    hits = []
    for path in _library_modules():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            where = f"{path.relative_to(PACKAGE)}:{getattr(node, 'lineno', 0)}"
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                arguments = node.args.args + node.args.kwonlyargs + node.args.posonlyargs
                hits += [f"{where}: parameter style" for a in arguments if a.arg == "style"]
                if node.name.endswith("in_flags") or node.name == "in_style":
                    hits.append(f"{where}: {node.name}")
            elif isinstance(node, ast.Call):
                hits += [f"{where}: style=" for k in node.keywords if k.arg == "style"]
    assert not hits, hits
