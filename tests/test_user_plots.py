"""Pictures of a user's own table (lbm_bench.user_plots): as stored and grouped by labels, in its
family's colours (inferred, the file's, or given), the labels checked; ``plot_file`` draws a table
file as plot_table does and any other file as a user table (the command line's ``show`` is tested
in test_cli_fit.py)."""

import numpy as np
import pytest

from lbm_bench import get_family, save_table
from lbm_bench.storage.user_data import user_table
from lbm_bench.user_plots import plot_file, plot_user_table

pytest.importorskip("matplotlib")


@pytest.fixture(scope="module")
def counts():
    return get_family("poisson").model([0.6, 0.4], [0.5, 0.5], [[0.5, 4.0], [3.0, 1.0]]).sample(40, 30, rng=0)


def test_a_users_table_is_drawn_as_stored_and_grouped(counts):
    X, z, w = counts
    table = user_table(X, name="counts")
    alone = plot_user_table(table)
    assert len(alone.axes) == 2 and "counts: 40x30" in alone._suptitle.get_text()  # the image and its colour bar
    assert "(poisson)" in alone._suptitle.get_text()  # inferred from the values
    grouped = plot_user_table(table, labels=(z, w), kind="gaussian", view="both")
    assert len(grouped.axes) == 3 and "(gaussian)" in grouped._suptitle.get_text()  # the family given wins
    with pytest.raises(ValueError, match=r"labels\[0\] \(rows\) must have length 40"):
        plot_user_table(table, labels=(z[:5], w))
    with pytest.raises(ValueError, match="view"):
        plot_user_table(table, labels=(z, w), view="sideways")


def test_plot_file_draws_a_table_file_and_a_users_file(counts, tmp_path):
    from lbm_bench import generate_table

    X, z, w = counts
    np.save(tmp_path / "counts.npy", X)
    figure = plot_file(tmp_path / "counts.npy", labels=(z, w))
    assert "counts: 40x30" in figure._suptitle.get_text()
    table = generate_table("bernoulli", 30, 20, 2, 2, 0.1, tolerance=0.05, n_samples=200, rng=1)
    save_table(table, tmp_path / "t.h5")
    assert plot_file(tmp_path / "t.h5").axes  # plot_table's picture of a table file
    with pytest.raises(ValueError, match="labels or a design"):
        plot_file(tmp_path / "counts.npy", labels=(z, w), design=tmp_path / "d.toml")


def test_plot_file_groups_a_designs_source_by_its_fitted_classes(tmp_path):
    """A design file of format 1.2 keeps its source's fitted classes (issue 47, item 5): show SOURCE --design D
    groups the source by them; another table by the fitted model's MAP labels."""
    pytest.importorskip("matplotlib")
    from lbm_bench import fit_design, get_family, read_user_table
    from lbm_bench.user_plots import plot_file

    model = get_family("poisson").model([0.5, 0.5], [0.5, 0.5], [[0.5, 4.0], [3.0, 1.0]])
    X, _, _ = model.sample(40, 30, rng=0)
    np.save(tmp_path / "source.npy", X)
    fitted = fit_design(read_user_table(tmp_path / "source.npy"), (3, 3), certify=False, rng=0)
    fitted.save(tmp_path / "d.toml")
    figure = plot_file(tmp_path / "source.npy", design=tmp_path / "d.toml", view="ordered")
    assert "grouped by the fitted classes of d.toml" in figure.axes[0].get_xlabel()
    np.save(tmp_path / "other.npy", X[::-1])
    figure = plot_file(tmp_path / "other.npy", design=tmp_path / "d.toml", view="ordered")
    assert "grouped by the MAP labels of d.toml" in figure.axes[0].get_xlabel()
