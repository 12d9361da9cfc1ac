"""What the commands share (lbm_bench.cli.common): one-line parser errors, ``AxB`` values, a
record's options made from its fields, and labels files."""

import argparse

import numpy as np
import pytest

from lbm_bench.cli.common import (
    EXIT_USAGE,
    CommandParser,
    add_record_options,
    pair,
    read_labels_file,
    record_from_options,
)
from lbm_bench.cli.flags import OptionsError
from lbm_bench.protocol.settings import GenerationSettings, ModelOptions


def test_pairs_are_written_axb():
    assert pair("200x100") == (200, 100) and pair("3X2") == (3, 2)
    for text, words in (("20", "two integers"), ("0x2", "positive integers"),
                        ("axb", "two integers")):
        with pytest.raises(argparse.ArgumentTypeError, match=words):
            pair(text)


def test_a_parser_error_is_one_line_with_a_hint_for_values_that_start_with_a_dash(capsys):
    parser = CommandParser(prog="lbm-bench fit")
    parser.add_argument("--max-clusters", type=pair)
    with pytest.raises(SystemExit) as exc:
        parser.parse_args(["--max-clusters", "-1x2"])
    assert exc.value.code == EXIT_USAGE
    assert capsys.readouterr().err == (
        "lbm-bench fit: error: argument --max-clusters: expected one argument "
        "(a value that starts with '-' is written --max-clusters=VALUE)\n")


def test_cli_options_come_from_the_fields():
    parser = argparse.ArgumentParser()
    add_record_options(parser, GenerationSettings)
    add_record_options(parser, ModelOptions)
    flags = {a.dest: a.option_strings[0] for a in parser._actions if a.dest != "help"}
    assert set(flags) == set(GenerationSettings.names()) | set(ModelOptions.names())
    args = parser.parse_args(["--samples", "300", "--chains", "4", "--equal-proportions"])
    settings = record_from_options(GenerationSettings, args)
    assert settings == GenerationSettings(n_samples=300, n_chains=4)
    assert record_from_options(ModelOptions, args).design_options() == {"equal_proportions": True}
    # a refusal names the fields (the error line writes their flags: tests/cli/test_program.py)
    with pytest.raises(OptionsError, match="tolerance") as info:
        record_from_options(GenerationSettings, parser.parse_args(["--tolerance", "0"]))
    assert info.value.names == GenerationSettings.names()
    help_text = " ".join(parser.format_help().split())
    assert "--samples SAMPLES Gibbs label sets" in help_text  # the metavar is the flag's
    assert "--equal-proportions equal cluster proportions (default False)" in help_text


def test_a_labels_file_with_a_header_says_so(tmp_path, capsys):
    path = tmp_path / "rows.txt"
    path.write_text("label\n0\n1\n1\n")
    assert np.array_equal(read_labels_file(path, "--rows"), [0, 1, 1])
    assert capsys.readouterr().err == (
        f"note: --rows file {path}: first line 'label' read as a header (skipped)\n")
