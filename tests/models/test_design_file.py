"""lbm_bench.models.design_file: design files written, read back, and refused when edited badly."""

import hashlib

import numpy as np
import pytest

from lbm_bench import DesignFileError, fit_design, get_family, read_design_file
from lbm_bench.models.design_file import DESIGN_FORMAT


def _fitted(kind="poisson", missing=False, sparse=False):
    family = get_family(kind)
    params = {"poisson": {"rates": [[0.5, 4.0], [3.0, 1.0]]}, "bernoulli": {"probs": [[0.1, 0.7], [0.6, 0.2]]},
              "gaussian": {"means": [[0.0, 2.0], [2.0, 0.0]], "stds": [[1.0, 1.0], [1.0, 1.0]]},
              "categorical": {"probs": [[[0.8, 0.1, 0.1], [0.1, 0.8, 0.1]], [[0.1, 0.1, 0.8], [0.6, 0.2, 0.2]]]}}[kind]
    X, z, w = family.model([0.6, 0.4], [0.5, 0.5], **params).sample(80, 60, rng=0)
    if missing:
        X = X.astype(float)
        X[np.random.default_rng(1).uniform(size=X.shape) < 0.1] = np.nan
    return fit_design(X, (3, 3), kind=kind, certify=False, rng=0)


@pytest.mark.parametrize("kind", ["gaussian", "poisson", "bernoulli", "categorical"])
def test_round_trip(tmp_path, kind):
    fitted = _fitted(kind, missing=kind == "gaussian")
    path = tmp_path / "design.toml"
    digest = fitted.save(path)
    assert digest == hashlib.sha256(path.read_bytes()).hexdigest()
    record = read_design_file(path)
    assert record.digest == digest and record.design.digest == digest
    assert record.source_shape == (80, 60) and record.criterion == fitted.file.criterion
    assert record.design.block_shape == fitted.counts
    for scale in (0.5, 1.0, 2.0):
        np.testing.assert_allclose(record.design.model(scale).natural_parameters,
                                   fitted.design.model(scale).natural_parameters, rtol=1e-12, atol=1e-12)
    if kind == "gaussian":
        assert record.design.missing == fitted.design.missing
    text = path.read_text()
    assert text.count(f'format = "{DESIGN_FORMAT}"') == 1 and f'kind = "{kind}"' in text


def test_a_design_with_effects_and_block_missing_rates(tmp_path):
    rng = np.random.default_rng(3)
    mu, nu = rng.lognormal(0, 0.6, 120), rng.lognormal(0, 0.6, 90)
    X, z, w = get_family("poisson").model([0.5, 0.5], [0.5, 0.5], [[1.0, 4.0], [4.0, 1.0]],
                                          mu / mu.mean(), nu / nu.mean()).sample(120, 90, rng=rng)
    X = X.astype(float)
    X[rng.uniform(size=X.shape) < np.where(z[:, None] == 0, 0.05, 0.4)] = np.nan
    fitted = fit_design(X, (3, 3), certify=False, rng=0)
    assert fitted.design.row_effects is not None and fitted.design.missing.mechanism == "block"
    fitted.save(tmp_path / "d.toml")
    record = read_design_file(tmp_path / "d.toml")
    np.testing.assert_allclose(record.design.row_effects, fitted.design.row_effects, rtol=1e-12)
    np.testing.assert_allclose(record.design.missing_probs(1.0), fitted.design.missing_probs(1.0), rtol=1e-9)


BAD_EDITS = [
    (lambda t: t.replace('format = "lbm-bench-design/1.1"', 'format = "lbm-bench-design/2.0"'),
     "format 2.0 is newer than this lbm-bench reads"),
    (lambda t: t.replace('format = "lbm-bench-design/1.1"', 'format = "lbm-bench-design/1.7"'),
     "newer than this lbm-bench reads"),
    (lambda t: t.replace('format = "lbm-bench-design/1.1"', 'format = "something"'), "format must be"),
    (lambda t: t.replace('kind = "poisson"', 'kind = "beta"'), "kind must be one of"),
    (lambda t: _replace_line(t, "row_proportions", "row_proportions = [0.5, 0.6]"), "must sum to one"),
    (lambda t: _replace_line(t, "row_proportions", "row_proportions = [0.5, 0.25, 0.25]"), "must have shape (2,)"),
    (lambda t: _replace_line(t, "rates", "rates = [[-1.0, 1.0], [1.0, 1.0]]"), "design.blocks: rates"),
    (lambda t: _replace_line(t, "rates", "rates = [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]"), "2x2 blocks"),
    (lambda t: t.replace("[source]", "[source]\ncolour = 1"), "unknown key source.colour"),
    (lambda t: t.replace("[source]\n", "[sauce]\n"), "unknown key sauce"),
    (lambda t: t + "\n[[[", "not a TOML design file"),
    (lambda t: _replace_line(t, "shape", 'shape = [80, "x"]'), "source.shape must be two positive integers"),
    (lambda t: _replace_line(t, "path_knee", "path_knee = 1.5"), "design.path_knee must lie in (0, 1)"),
    (lambda t: t.replace('format = "lbm-bench-design/1.1"', 'format = "lbm-bench-design/1.0"'),
     "design.path_knee is a format 1.1 key"),
]


def _replace_line(text, key, line):
    lines = text.splitlines()
    index = next(i for i, old in enumerate(lines) if old.startswith(key + " ="))
    lines[index] = line
    return "\n".join(lines)


@pytest.mark.parametrize("edit,message", BAD_EDITS)
def test_hand_edited_bad_files_are_refused_in_one_line(tmp_path, edit, message):
    path = tmp_path / "design.toml"
    _fitted("poisson").save(path)
    path.write_text(edit(path.read_text()))
    with pytest.raises(DesignFileError) as info:
        read_design_file(path)
    text = str(info.value)
    assert "\n" not in text and text.startswith(str(path)) and message in text, text


def test_only_fitted_designs_are_written(tmp_path):
    from dataclasses import replace

    from lbm_bench import random_design

    fitted = _fitted("bernoulli")
    record = replace(fitted.file, design=random_design("bernoulli", 2, 2, rng=0))
    with pytest.raises(ValueError, match="only a fitted design"):
        replace(fitted, file=record).save(tmp_path / "x.toml")
    assert not (tmp_path / "x.toml").exists()


def test_a_version_1_0_file_reads_as_the_straight_path(tmp_path):
    """A 1.0 file (no ``design.path_knee``) keeps its meaning: the straight line; a 1.1 Poisson
    design keeps the classes' margins from its knee up."""
    path = tmp_path / "design.toml"
    fitted = _fitted("poisson")
    fitted.save(path)
    text = path.read_text()
    assert fitted.design.path.knee == 0.5 and "path_knee = 0.5" in text
    assert read_design_file(path).design.path.knee == 0.5
    old = "\n".join(line for line in text.splitlines() if not line.startswith("path_knee"))
    path.write_text(old.replace('format = "lbm-bench-design/1.1"', 'format = "lbm-bench-design/1.0"'))
    assert read_design_file(path).design.path.knee is None
