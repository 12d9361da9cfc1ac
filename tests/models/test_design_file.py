"""lbm_bench.models.design_file: design files written, read back, and refused when edited badly."""

import hashlib
import re

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
    (lambda t: t.replace('format = "lbm-bench-design/1.2"', 'format = "lbm-bench-design/2.0"'),
     "format 2.0 is newer than this lbm-bench reads"),
    (lambda t: t.replace('format = "lbm-bench-design/1.2"', 'format = "lbm-bench-design/1.7"'),
     "newer than this lbm-bench reads"),
    (lambda t: t.replace('format = "lbm-bench-design/1.2"', 'format = "something"'), "'format' must be"),
    (lambda t: t.replace('kind = "poisson"', 'kind = "beta"'),
     "'kind' must name a family (gaussian, poisson, bernoulli, categorical), got 'beta'"),
    (lambda t: _replace_line(t, "row_proportions", "row_proportions = [0.5, 0.6]"), "must sum to one"),
    (lambda t: _replace_line(t, "row_proportions", "row_proportions = [0.5, 0.25, 0.25]"), "must have shape (2,)"),
    (lambda t: _replace_line(t, "rates", "rates = [[-1.0, 1.0], [1.0, 1.0]]"), "design.blocks: rates"),
    (lambda t: _replace_line(t, "rates", "rates = [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]"), "2x2 blocks"),
    (lambda t: t.replace("[source]", "[source]\ncolour = 1"), "unknown key source.colour"),
    (lambda t: t.replace("[source]\n", "[sauce]\n"), "unknown key 'sauce'"),
    (lambda t: t + "\n[[[", "not a TOML design file"),
    (lambda t: _replace_line(t, "shape", 'shape = [80, "x"]'), "source.shape must be two positive integers"),
    (lambda t: _replace_line(t, "path_knee", "path_knee = 1.5"), "design.path_knee must lie in [0.01, 0.99]"),
    (lambda t: t.replace('format = "lbm-bench-design/1.2"', 'format = "lbm-bench-design/1.0"'),
     "'classes' is a format 1.2 key; this file declares 1.0"),
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
    old = "\n".join(line for line in text.split("[classes]")[0].splitlines() if not line.startswith("path_knee"))
    path.write_text(old.replace('format = "lbm-bench-design/1.2"', 'format = "lbm-bench-design/1.0"'))
    assert read_design_file(path).design.path.knee is None


# -- format 1.2: the source's names and the fitted classes (issue 47, item 5) ---------------------------
def test_names_and_classes_round_trip_whatever_their_characters(tmp_path):
    from lbm_bench.storage.user_data import user_table

    X = random_model_table()
    rows = [f'row "{i}"\t\\ é\n' if i == 3 else f"r{i}" for i in range(X.shape[0])]
    cols = [f"c{j}, x" for j in range(X.shape[1])]
    fitted = fit_design(user_table(X, row_names=rows, col_names=cols), (3, 3), certify=False, rng=0)
    fitted.save(tmp_path / "d.toml")
    record = read_design_file(tmp_path / "d.toml")
    assert record.row_names == tuple(rows) and record.col_names == tuple(cols)
    np.testing.assert_array_equal(record.row_classes, fitted.selection.rows)
    np.testing.assert_array_equal(record.col_classes, fitted.selection.cols)
    text = (tmp_path / "d.toml").read_text()
    assert '"row \\"3\\"\\t\\\\ é\\n"' in text and "[classes]" in text


def random_model_table():
    from lbm_bench import random_model

    return random_model("poisson", 2, 2, scale=1.5, rng=0).sample(24, 16, rng=1)[0]


def test_the_committed_1_1_design_still_loads():
    """tests/data/design_v1_1_poisson.toml, written by main 796ea06 (format 1.1: no names, no classes)."""
    from pathlib import Path

    record = read_design_file(Path(__file__).resolve().parents[1] / "data" / "design_v1_1_poisson.toml")
    assert record.design.kind == "poisson" and record.design.block_shape == (2, 2)
    assert record.source_shape == (24, 16) and record.design.path.knee == 0.5
    assert record.row_names is None and record.row_classes is None
    rates = [[2.171597633136095, 10.352941176470587], [0.8, 0.7857142857142857]]
    np.testing.assert_allclose(record.design.model(1.0).rates, rates)
    assert record.criterion_value == -733.2492087136252 and record.max_clusters == (3, 3)


# -- hostile design files (issue 48, section 2) -----------------------------------------------------------
MAX = "selection.max_clusters must be two positive integers"
RATES = "design.blocks.rates must be an array of numbers"
RUNNERS = "selection.runners_up must hold [g, m, value] cells"
FINITE = "selection.value must be a finite number"
HOSTILE_LINES = [  # (key, its new line, the message)
    ("max_clusters", "max_clusters = [inf, 4]", MAX), ("max_clusters", "max_clusters = [-4, 0]", MAX),
    ("max_clusters", 'max_clusters = ["3", 3]', MAX), ("max_clusters", "max_clusters = [3, [3]]", MAX),
    ("max_clusters", "max_clusters = [1, 1]", "selection.max_clusters [1, 1] must be at least selection.counts"),
    ("rates", "rates = [[" + "9" * 400 + ", 1.0], [1.0, 1.0]]", RATES), ("rates", "rates = [[1.0, 1.0], [1.0]]", RATES),
    ("rates", 'rates = [["a", 1.0], [1.0, 1.0]]', RATES),
    ("rows", "rows = [1e300" + ", 1.0" * 119 + "]", "design.effects.rows must be positive with mean one"),
    ("path_knee", "path_knee = 0.9999999999999999", "design.path_knee must lie in [0.01, 0.99]"),
    ("value", "value = inf", FINITE), ("value", "value = nan", FINITE), ("value", "value = " + "9" * 400, FINITE),
    ("runners_up", 'runners_up = [[2, 2, "x"]]', RUNNERS), ("runners_up", "runners_up = [[2, 2]]", RUNNERS),
    ("runners_up", "runners_up = 3", "selection.runners_up must be an array"),
    ("format", 'format = "lbm-bench-design/0.9"', "format 0.9 is not a version of design files (1.0, 1.1, 1.2)"),
    ("format", 'format = "lbm-bench-design/1.-1"', "'format' must be"),
    ("kind", "", "the key 'kind' is missing"), ("kind", 'kind = "Poisson"', "'kind' must name a family"),
    ("shape", "shape = [" + "9" * 30 + ", 80]", "source.shape must be two positive integers"),
]
HOSTILE_EDITS = [(lambda t, k=key, line=line: _replace_line(t, k, line), message)
                 for key, line, message in HOSTILE_LINES] + [
    (lambda t: re.sub(r"^rates = \[\[[^,]+", "rates = [[1e300", t, count=1, flags=re.M),
     "beyond the 1e+15 a table can be drawn at"),
    (lambda t: re.sub(r"^rates = \[\[[^,]+", "rates = [[9e14", t, count=1, flags=re.M),
     "beyond the 1e+15 a table can be drawn at"),
]


@pytest.mark.parametrize("edit,message", HOSTILE_EDITS)
def test_hostile_design_files_are_one_line_naming_the_key(tmp_path, edit, message):
    path = tmp_path / "design.toml"
    _effects_design().save(path)
    path.write_text(edit(path.read_text()))
    with pytest.raises(DesignFileError) as info:
        read_design_file(path)
    text = str(info.value)
    assert "\n" not in text and text.startswith(str(path)) and message in text, text
    assert "--" not in text  # a key is never worded as a flag


def _effects_design():
    """A Poisson design with effects (rows and cols keys), fitted to a 120x90 table."""
    rng = np.random.default_rng(4)
    mu, nu = rng.lognormal(0, 0.6, 120), rng.lognormal(0, 0.6, 90)
    X, _, _ = get_family("poisson").model([0.5, 0.5], [0.5, 0.5], [[1.0, 4.0], [4.0, 1.0]], mu / mu.mean(),
                                          nu / nu.mean()).sample(120, 90, rng=rng)
    fitted = fit_design(X, (3, 3), certify=False, rng=0)
    assert fitted.design.row_effects is not None
    return fitted


def test_classes_out_of_range_are_refused(tmp_path):
    path = tmp_path / "design.toml"
    _fitted("poisson").save(path)
    text = path.read_text()
    head, tail = text.split("[classes]")
    path.write_text(head + "[classes]" + tail.replace("rows = [", "rows = [7, ", 1).replace("0, ", "", 1))
    with pytest.raises(DesignFileError, match=r"classes.rows must be \d+ integers in 0..1"):
        read_design_file(path)


def test_a_bom_is_skipped_and_devices_and_pipes_are_refused(tmp_path):
    import os

    path = tmp_path / "design.toml"
    _fitted("bernoulli").save(path)
    (tmp_path / "bom.toml").write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    assert read_design_file(tmp_path / "bom.toml").design.kind == "bernoulli"
    os.mkfifo(tmp_path / "fifo.toml")
    for name in (str(tmp_path / "fifo.toml"), "/dev/zero"):
        with pytest.raises(DesignFileError, match="not a regular file"):
            read_design_file(name)


def test_a_file_larger_than_a_design_can_be_is_refused_before_it_is_read(tmp_path):
    """Issue 48, section 1: a design file is read within a bound (a sparse file of 1 GiB and a byte
    here: its size is checked before a byte is read)."""
    from lbm_bench.models.design_file import MAX_DESIGN_BYTES

    path = tmp_path / "huge.toml"
    with open(path, "wb") as handle:
        handle.truncate(MAX_DESIGN_BYTES + 1)
    with pytest.raises(DesignFileError, match=rf"^{re.escape(str(path))}: {MAX_DESIGN_BYTES + 1} bytes, larger "
                                              r"than a design file can be \(1024 MiB\)$"):
        read_design_file(path)
