"""The Markdown card README.md of a release."""

from lbm_bench.release import load_release
from lbm_bench.release.readme import readme_text


def test_readme_card(built):
    card = (built / "README.md").read_text()
    assert "gaussian-30x20-2x2-r0.1-01" in card and "lbm-bench build" in card
    # the card is a function of the manifest alone
    assert readme_text(load_release(built)) == card
    assert "lbm-bench build tiny.toml --out DIR" in card
