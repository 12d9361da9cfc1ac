"""lbm_bench.storage.design_path: a fitted design's path and its design file's digest in table
files (format 1.5, the knee 1.6), and the files of random designs unchanged."""

from pathlib import Path

import h5py
import numpy as np
import pytest

from lbm_bench import fit_design, generate_table, get_family, load_table, save_table
from lbm_bench.storage import check_file
from lbm_bench.storage.design_path import PATH_DATASETS, PATH_KNEE


@pytest.fixture(scope="module")
def fitted_file(tmp_path_factory):
    folder = tmp_path_factory.mktemp("fitted")
    # Gaussian: its fitted designs take the straight path (Poisson and Bernoulli ones have a knee: 1.6)
    X, _, _ = get_family("gaussian").model([0.6, 0.4], [0.5, 0.5], [[0.0, 1.5], [1.5, 0.0]],
                                           np.ones((2, 2))).sample(80, 60, rng=0)
    fitted = fit_design(X, (3, 3), certify=False, rng=0)
    fitted.save(folder / "d.toml")
    table = generate_table(design=folder / "d.toml", target_risk=0.1, n_samples=200, tolerance=0.03, rng=1)
    save_table(table, folder / "t.h5")
    return table, folder / "t.h5"


def test_a_table_of_a_fitted_design_is_1_5_and_reads_back_its_design(fitted_file):
    table, path = fitted_file
    with h5py.File(path, "r") as f:
        assert f.attrs["format_version"] == b"1.5"
        assert f["params/design"].attrs["digest"] == table.design.digest.encode()
        assert f["params/design/path_natural"].shape == (2, 2, 2)
    back = load_table(path)
    assert back.design.digest == table.design.digest
    np.testing.assert_array_equal(back.design.path.natural, table.design.path.natural)
    np.testing.assert_allclose(back.design.model(back.scale).means, back.model.means, rtol=1e-12)


def test_a_random_design_writes_none_of_it(tmp_path):
    table = generate_table("bernoulli", 40, 30, 2, 2, 0.1, tolerance=0.03, n_samples=200, rng=3)
    save_table(table, tmp_path / "r.h5")
    with h5py.File(tmp_path / "r.h5", "r") as f:
        assert f.attrs["format_version"] == b"1.1"
        assert not any(path in f for path in PATH_DATASETS) and "digest" not in f["params/design"].attrs


@pytest.mark.parametrize("damage,message", [
    (lambda f: f.__delitem__("params/design/path_centre"), "must come together"),
    (lambda f: (f.__delitem__("params/design/path_centre"), f.create_dataset("params/design/path_centre",
                                                                             data=[0.0, 1.0, 2.0])),
     "path_centre"),
    (lambda f: (f.__delitem__("params/design/path_natural"), f.__delitem__("params/design/path_centre"),
                f.create_dataset("params/design/path_natural", data=np.full((3, 2, 2), -1.0)),
                f.create_dataset("params/design/path_centre", data=np.full(3, -1.0))),
     "not a path of gaussian blocks"),
    # every natural parameter zero: a precision of zero, outside the Gaussian domain (was a
    # division's RuntimeWarning inside the family's formulas)
    (lambda f: f["params/design/path_natural"].__setitem__(Ellipsis, 0.0), "not a path of gaussian blocks"),
])
def test_damaged_paths_are_reported(fitted_file, tmp_path, damage, message):
    _, path = fitted_file
    copy = tmp_path / "copy.h5"
    copy.write_bytes(path.read_bytes())
    with h5py.File(copy, "r+") as f:
        damage(f)
    problems = check_file(copy)
    assert any(message in problem for problem in problems), problems


def test_a_path_with_a_knee_reads_back_with_it(tmp_path):
    """A Poisson design's path keeps its classes' margins from its knee up: the table stores the
    knee (params/design/path_knee), so that the loaded design's model at the table's scale is its
    model; a knee outside (0, 1) is reported."""
    X, _, _ = get_family("poisson").model([0.6, 0.4], [0.5, 0.5], [[0.5, 4.0], [3.0, 1.0]]).sample(80, 60, rng=0)
    fitted = fit_design(X, (3, 3), certify=False, rng=0)
    assert fitted.design.path.knee == 0.5
    table = generate_table(design=fitted.design, n_rows=80, n_cols=60, target_risk=0.1, n_samples=200,
                           tolerance=0.03, rng=1)
    save_table(table, tmp_path / "t.h5")
    with h5py.File(tmp_path / "t.h5", "r") as f:
        np.testing.assert_array_equal(f[PATH_KNEE][()], [0.5])
        assert f.attrs["format_version"] == b"1.6"  # a 1.5 reader would rebuild the straight line
    back = load_table(tmp_path / "t.h5")
    assert back.design.path.knee == 0.5
    np.testing.assert_allclose(back.design.model(back.scale).rates, back.model.rates, rtol=1e-9)
    with h5py.File(tmp_path / "t.h5", "r+") as f:
        f[PATH_KNEE][...] = [1.5]
    assert any("knee must lie in (0, 1)" in problem for problem in check_file(tmp_path / "t.h5"))


def test_the_committed_1_5_sample_reads_back_its_straight_path():
    """A 1.5 file (written at b05d9fb, before the knee) has no ``path_knee``: its path is the
    straight line, and the loaded design's model at the table's scale is still its model."""
    path = Path(__file__).resolve().parents[1] / "data" / "table_v1_5_fitted_poisson.h5"
    with h5py.File(path, "r") as f:
        assert f.attrs["format_version"] == b"1.5" and PATH_KNEE not in f
    assert check_file(path) == []
    table = load_table(path)
    assert table.design.path is not None and table.design.path.knee is None
    assert table.scale == pytest.approx(0.3984481593723129, rel=1e-15)
    np.testing.assert_allclose(table.model.rates, [[3.1246124955082593, 1.4397878958941308],
                                                   [1.8530125539752866, 2.764170354988126]], rtol=1e-15)
    np.testing.assert_allclose(table.design.model(table.scale).rates, table.model.rates, rtol=1e-9)
