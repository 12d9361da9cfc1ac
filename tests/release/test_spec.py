"""Release specs (lbm_bench.release.spec): the committed specs, grid expansion, identity-derived seeds, and
errors that name the offending key."""

import re

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


# ---------------------------------------------------------------------------
# design = "path.toml": tables like a fitted design (issue 34)
# ---------------------------------------------------------------------------
def _design_folder(tmp_path):
    import numpy as np

    from lbm_bench import fit_design, get_family

    X, _, _ = get_family("poisson").model([0.6, 0.4], [0.5, 0.5], [[0.5, 4.0], [3.0, 1.0]]).sample(80, 60, rng=0)
    (tmp_path / "designs").mkdir()
    fit_design(np.asarray(X), (3, 3), certify=False, rng=0).save(tmp_path / "designs" / "d.toml")
    return tmp_path


def _design_spec(grid):
    return {"release": {"name": "r", "version": "1", "seed": 7},
            "grid": [{"design": "designs/d.toml", "risks": [0.1], **grid}]}


def test_a_grid_of_a_design_file_takes_its_kind_clusters_and_shape(tmp_path):
    from lbm_bench import read_design_file

    base = _design_folder(tmp_path)
    spec = parse_spec(_design_spec({"shapes": ["80x60", "40x30"]}), base=base)
    digest = read_design_file(base / "designs" / "d.toml").digest
    assert [t.id for t in spec.tables] == [f"poisson-d{digest[:8]}-40x30-2x2-r0.1-01",
                                           f"poisson-d{digest[:8]}-80x60-2x2-r0.1-01"]
    assert all(t.design.digest == digest and t.design_path == "designs/d.toml" for t in spec.tables)
    default = parse_spec(_design_spec({}), base=base)
    assert [t.shape for t in default.tables] == [(80, 60)]  # the source's shape


@pytest.mark.parametrize("grid,message", [
    ({"kinds": ["gaussian"]}, "grid[0].kinds must be the design's"),
    ({"clusters": ["3x3"]}, "grid[0].clusters must be the design's"),
    ({"model_options": {"density": 0.1}}, "model_options are fixed by the design"),
    ({"design": "/abs/d.toml"}, "must be a path relative to the spec"),
    ({"design": "../d.toml"}, "must be a path relative to the spec"),
    ({"design": "designs/none.toml"}, "no design file designs/none.toml"),
])
def test_a_grid_of_a_design_file_refuses_what_contradicts_it(tmp_path, grid, message):
    base = _design_folder(tmp_path)
    with pytest.raises(ValueError, match=re.escape(message)):
        parse_spec(_design_spec(grid), base=base)
