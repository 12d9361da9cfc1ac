"""The Markdown card README.md of a release."""

from lbm_bench.release import load_release
from lbm_bench.release.readme import DEFAULT_CITATION, readme_text


def test_readme_card(built):
    card = (built / "README.md").read_text()
    assert "gaussian-30x20-2x2-r0.1-01" in card and "lbm-bench build" in card
    # the card is a function of the manifest alone
    assert readme_text(load_release(built)) == card
    assert ("lbm-bench verify .\nlbm-bench build spec.toml --out ../tiny-rebuilt --jobs 2\n"
            "lbm-bench verify ../tiny-rebuilt --against .") in card
    assert "| floor ± MCSE | MAP risk ± MCSE |" in card and "| bayes |" in card


def test_readme_shows_both_risks_and_bolds_the_certified_one(built):
    manifest = load_release(built)
    card = readme_text(manifest)
    for entry in manifest["tables"]:
        floor = f"{entry['bayes_risk']:.4f} ± {entry['bayes_risk_mcse']:.4f}"
        risk = f"{entry['risk']:.4f} ± {entry['risk_mcse']:.4f}"
        assert f"| {entry['criterion']} | **{floor}** | {risk} |" in card
    entry = dict(manifest["tables"][0], criterion="map")
    assert f"| map | {entry['bayes_risk']:.4f} ± {entry['bayes_risk_mcse']:.4f} | **{entry['risk']:.4f}" in readme_text(
        dict(manifest, tables=[entry]))
    assert "In bold: each table's certified difficulty" in card


def test_readme_cites_the_spec_citation(built):
    """The spec's citation (and date) appear in README.md; a multi-line one (BibTeX) verbatim."""
    manifest = load_release(built)
    assert DEFAULT_CITATION in readme_text(manifest)  # the spec gives none
    manifest["spec"]["release"].update(citation="Doe, J. The tiny release. 2026.", date="2026-11-23")
    card = readme_text(manifest)
    assert "## Cite\n\nDoe, J. The tiny release. 2026.\n" in card and DEFAULT_CITATION not in card
    assert "Published 2026-11-23." in card
    bibtex = "@misc{tiny,\n  title = {The tiny release},\n  year = {2026}\n}"
    manifest["spec"]["release"]["citation"] = bibtex
    assert f"## Cite\n\n```\n{bibtex}\n```\n" in readme_text(manifest)
