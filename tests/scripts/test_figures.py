"""The figure scripts run: each ``scripts/figures/fig_*.py`` in ``--quick`` mode writes its
PNG into a temporary directory and prints the numbers it plots.

The quick modes take a few seconds each; the full-size figures in
``docs/figures`` are produced by running the scripts without ``--quick``.
"""

from __future__ import annotations

import re

import pytest

from tests.scripts.helpers import ROOT, SCRIPTS, load_script, run_script

pytest.importorskip("matplotlib")

FIGURE_SCRIPTS = SCRIPTS / "figures"
#: script -> (PNG name, keys that must be printed)
FIGURES = {
    "fig_apparent_error": (
        "fig1_apparent_error.png",
        ["apparent_error_mean", "apparent_error_sd", "difference_mean", "difference_sd", "mcse_max"],
    ),
    "fig_risk_vs_size": ("fig2_risk_vs_size.png", ["mean_risk", "iqr_width", "risk_50x50_mean"]),
    "fig_projection": (
        "fig3_projection.png",
        ["d=50_class_share_of_projected_variance", "d=500_class_share_of_projected_variance"],
    ),
    "fig_truth_start_bias": (
        "fig_truth_start_bias.png",
        ["xonly_bias_mean", "truth_bias_mean", "truth_start_calibrated_scale"],
    ),
    "fig_acceptance": ("fig_acceptance.png", ["gaussian_acceptance", "gaussian_candidate_risk_sd"]),
    "fig_bayes_gap": ("fig_bayes_gap.png", ["mean_gap_level=0.1", "mean_gap", "max_gap"]),
    "fig_missing": ("fig_missing.png", ["cem_mean_excess_gaussian", "kmeans_mean_excess_gaussian"]),
    "fig_digits_design": ("fig_digits_design.png", ["scale_r0.1", "floor_r0.1", "ks_rows_r0.1", "ks_cols_r0.1"]),
}
_NUMBER = re.compile(r"-?\d+\.\d+")


def _load(name: str):
    return load_script("figures", name)


def test_every_figure_script_is_tested():
    assert sorted(p.stem for p in FIGURE_SCRIPTS.glob("fig_*.py")) == sorted(FIGURES)


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_figure_script_quick(name, tmp_path, capsys):
    png, keys = FIGURES[name]
    values = _load(name).main(["--quick", "--out", str(tmp_path), "--seed", "3"])
    printed = capsys.readouterr().out
    path = tmp_path / png
    assert path.is_file()
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert path.stat().st_size > 10_000
    for key in keys:
        assert key in values
        line = next((ln for ln in printed.splitlines() if ln.startswith(f"{key}: ")), None)
        assert line is not None, f"{key} not printed"
        assert _NUMBER.search(line), line
    assert values["figure"] == str(path)


def test_figure_scripts_default_to_docs_figures():
    helpers = _load("_figures")
    args = helpers.parse_args("x", [])
    assert args.out == ROOT / "docs" / "figures"
    assert args.seed == helpers.DEFAULT_SEED and not args.quick


def test_figure_script_runs_as_a_file(tmp_path):
    """``python scripts/figures/fig_projection.py`` finds its sibling ``_figures`` by itself."""
    out = run_script("figures", "fig_projection", "--quick", "--seed", "3", "--out", tmp_path).stdout
    assert (tmp_path / "fig3_projection.png").is_file()
    assert "d=500_class_share_of_projected_variance: " in out
