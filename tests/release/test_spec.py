"""Release specs (lbm_bench.release.spec): the committed specs, grid expansion, identity-derived seeds, and
errors that name the offending key."""

import pytest

from lbm_bench.release import parse_spec, read_spec
from tests.release.helpers import REPO, TINY_SPEC


def test_committed_specs_are_valid_and_large_enough():
    paper = read_spec(REPO / "repository" / "paper.toml")
    assert len(paper.tables) >= 100
    assert {t.kind for t in paper.tables} == {"gaussian", "poisson", "bernoulli"}
    shapes = {t.shape for t in paper.tables}
    assert len(shapes) >= 3 and (50, 50) in shapes
    assert max(n * d for n, d in shapes) >= 1000 * 1000
    assert any(n != d for n, d in shapes)
    clusters = {t.clusters for t in paper.tables}
    assert len(clusters) >= 2 and any(g != m for g, m in clusters)
    assert len({t.risk for t in paper.tables}) >= 3
    assert {t.request.criterion for t in paper.tables} == {"map"}  # the paper stays reproduced
    mini = read_spec(REPO / "repository" / "mini.toml")
    assert 1 <= len(mini.tables) <= 12
    assert {t.request.criterion for t in mini.tables} == {"bayes"}  # lbm-bench's default


def test_spec_expansion_and_seeds(spec_path):
    spec = read_spec(spec_path)
    assert [t.id for t in spec.tables] == sorted(t.id for t in spec.tables)
    assert len(spec.tables) == 5
    assert len(spec.configurations()) == 3
    ids = {t.id: t for t in spec.tables}
    a, b = ids["gaussian-30x20-2x2-r0.1-01"], ids["gaussian-30x20-2x2-r0.1-02"]
    assert a.calibration_seed == b.calibration_seed and a.seed != b.seed
    # seeds depend on identity, not on the order of the grid
    swapped = TINY_SPEC.replace('kinds = ["gaussian", "bernoulli"]', 'kinds = ["bernoulli", "gaussian"]')
    import tomllib

    again = {t.id: t.seed for t in parse_spec(tomllib.loads(swapped)).tables}
    assert again == {t.id: t.seed for t in spec.tables}


@pytest.mark.parametrize(
    "edit, match",
    [
        (lambda s: s.replace("replicates = 2", "replicates = 2\ncolour = 1"), "unknown key.*colour"),
        (lambda s: s.replace('shapes = ["30x20"]', 'shapes = ["1x20"]'), "do not fit"),
        (lambda s: s.replace("risks = [0.1]", "risks = [1.5]"), "risks must be in"),
        (lambda s: s.replace('kinds = ["poisson"]', 'kinds = ["cauchy"]'), "kind must be one of"),
        (lambda s: s.replace('clusters = ["2x2"]', 'clusters = ["5x2"]'), "distinct binary modes"),
        (lambda s: s.replace("seed = 42", ""), "missing required key 'seed'"),
        (lambda s: s.replace("n_samples = 200", "n_samples = 2"), "n_chains .* exceeds n_samples"),
        (lambda s: s + s[s.index("[[grid]]"):], "defined twice"),
        (lambda s: s.replace('shapes = ["30x20"]', 'shapes = ["30by20"]'), "like '200x100'"),
        (lambda s: s.replace("replicates = 2", 'replicates = 2\ncriterion = "floor"'), "criterion must be"),
    ],
)
def test_spec_errors(tmp_path, edit, match):
    path = tmp_path / "bad.toml"
    path.write_text(edit(TINY_SPEC))
    with pytest.raises(ValueError, match=match):
        read_spec(path)


def test_spec_not_toml(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text("[release\nname=")
    with pytest.raises(ValueError, match="not valid TOML"):
        read_spec(path)
