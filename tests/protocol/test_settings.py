"""The settings record: one declaration, validated the same from the API, a spec and the CLI."""

import dataclasses

import pytest

from lbm_bench.protocol.settings import (
    GenerationSettings,
    ModelOptions,
    split_options,
)


def test_defaults_are_valid_and_frozen():
    s = GenerationSettings()
    assert s.n_samples == 2000 and s.tolerance == 0.01 and s.balance is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.n_samples = 3


@pytest.mark.parametrize(
    "field, value, error, words",
    [
        ("n_samples", 0, ValueError, "n_samples"),
        ("n_chains", 2.5, TypeError, "n_chains"),
        ("burn_in", -1, ValueError, "burn_in"),
        ("screen_samples", True, TypeError, "screen_samples"),
        ("tolerance", 1.5, ValueError, "tolerance"),
        ("balance", 2.0, ValueError, "balance"),
        ("gibbs_method", "fast", ValueError, "gibbs_method"),
    ],
)
def test_each_field_validates_itself(field, value, error, words):
    with pytest.raises(error, match=words):
        GenerationSettings(**{field: value})


def test_cross_field_rule():
    with pytest.raises(ValueError, match=r"n_chains \(9\) exceeds n_samples \(8\)"):
        GenerationSettings(n_samples=8, n_chains=9)


@pytest.mark.parametrize("samples, chains, least", [(8, 8, 200), (40, 8, 200), (199, 2, 200), (250, 30, 300)])
def test_too_few_label_sets_for_an_honest_mcse_are_refused(samples, chains, least):
    """Chains of one set certified a floor "+- 0.0000"; fewer than 200 sets (or 10 per chain)
    are refused, with the minimum."""
    with pytest.raises(ValueError, match=rf"^n_samples \({samples}\) must be at least {least}: 200 label sets in "
                                         rf"all and 10 per chain with n_chains={chains}"):
        GenerationSettings(n_samples=samples, n_chains=chains, screen_samples=0)
    assert GenerationSettings(n_samples=least, n_chains=chains, screen_samples=0).n_samples == least


def test_a_screening_run_too_short_for_an_mcse_is_refused():
    with pytest.raises(ValueError, match=r"screen_samples \(40\) must be 0 \(no screening\) or at least 80"):
        GenerationSettings(screen_samples=40)
    assert GenerationSettings(screen_samples=80).screen_samples == 80
    assert GenerationSettings(screen_samples=0, n_chains=4).screen_samples == 0


def test_the_command_line_refuses_too_few_sets_in_one_line(tmp_path):
    from lbm_bench.cli import main

    out = tmp_path / "t.h5"
    for args in (["--samples", "8", "--chains", "8"], ["--samples", "40"], ["--screen-samples", "16"]):
        code = main(["generate", "--kind", "gaussian", "--shape", "30x20", "--clusters", "2x2", "--risk", "0.1",
                     "-o", str(out), "-q", *args])
        assert code == 2 and not out.exists()
    from lbm_bench.cli import build_parser

    generate = build_parser()._subparsers._group_actions[0].choices["generate"]
    help_text = " ".join(generate.format_help().split())
    assert "certifying run: at least 200, and 10 per chain" in help_text
    assert "Gibbs chains (each keeps at least 10 of the --samples sets)" in help_text


def test_mapping_names_the_place_and_unknown_keys():
    with pytest.raises(ValueError, match=r"^grid\[1\]: n_init must be >= 1"):
        GenerationSettings.from_mapping({"n_init": 0}, where="grid[1]")
    with pytest.raises(ValueError, match="unknown setting.*samples.*allowed"):
        GenerationSettings.from_mapping({"samples": 10})


def test_split_options_routes_keys_and_refuses_others():
    settings, model = split_options({"n_samples": 300, "base_rate": 3.0})
    assert settings.n_samples == 300 and model.base_rate == 3.0
    assert model.design_options() == {"base_rate": 3.0}
    with pytest.raises(ValueError, match="unknown option.*colour"):
        split_options({"colour": "red"})


def test_record_round_trip():
    s = GenerationSettings(n_samples=500, balance=0.5)
    assert GenerationSettings.from_mapping(s.to_record()) == s
    assert s.to_record(only_changed=True) == {"balance": 0.5, "n_samples": 500}


@pytest.mark.parametrize("options, message", [
    ({"missing": 0.2, "missing_spread": 0.3}, "missing_spread is set but missing_mechanism is 'random', which has no "
                                                "spread"),
    ({"missing": 0.2, "missing_mechanism": "random", "missing_spread": 0.5}, "missing_spread is set but "
                                                                             "missing_mechanism is 'random'"),
    ({"missing": 0.0, "missing_mechanism": "random"}, "missing_mechanism is set but missing is 0"),
    ({"missing_spread": 0.5}, "missing_spread is set but missing is 0"),
    ({"missing": {"rate": 0.2, "mechanism": "random"}, "missing_spread": 0.4}, "missing_spread is set but"),
])
def test_missing_options_that_do_nothing_are_refused_like_their_block_twins(options, message):
    """The spread is the block mechanism's; a mechanism or spread without a rate does nothing: each
    refused, also when given at its default value (--missing 0 --missing-mechanism random)."""
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        ModelOptions.from_mapping(options)
    ModelOptions.from_mapping({"missing": 0.2, "missing_mechanism": "block", "missing_spread": 0.3})
    ModelOptions.from_mapping({"missing": 0.2, "missing_mechanism": "random"})


def test_missing_options_that_do_nothing_are_one_line_on_the_command_line(capsys, tmp_path):
    from lbm_bench.cli import main

    base = ["generate", "--kind", "gaussian", "--shape", "60x40", "--clusters", "3x2", "--risk", "0.1", "-q",
            "-o", str(tmp_path / "t.h5")]
    for extra, words in ((["--missing", "0.2", "--missing-spread", "0.3"], "--missing-spread is set but "
                          "--missing-mechanism is 'random'"),
                         (["--missing", "0", "--missing-mechanism", "random"], "--missing-mechanism is set but "
                          "--missing is 0")):
        assert main(base + extra) == 2
        err = capsys.readouterr().err
        assert words in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "t.h5").exists()
