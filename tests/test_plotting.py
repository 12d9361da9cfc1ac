"""Pictures of tables (lbm_bench.plotting and ``lbm-bench show``): every kind draws a
non-blank picture, the grouped view is the table reordered by the labels, large and
sparse tables are block-averaged with bounded memory, and the PNG bytes are stable."""

from __future__ import annotations

import dataclasses
import sys
import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp

from lbm_bench.cli import main
from lbm_bench.inference.gibbs import GibbsSamples
from lbm_bench.plotting import block_means, plot_table, posterior_uncertainty, save_figure
from lbm_bench.storage import save_table
from tests.storage.tables import make_table

pytest.importorskip("matplotlib")

KINDS = ["gaussian", "poisson", "bernoulli", "categorical"]


@pytest.fixture(scope="module")
def tables():
    return {kind: make_table(kind, n_rows=60, n_cols=40, n_samples=60, scale=0.5) for kind in KINDS}


def _pixels(path):
    from matplotlib.image import imread

    return imread(path)[..., :3]


def _all_axes(fig):
    return [a for parent in fig.axes for a in [parent, *parent.child_axes]]


def _images(fig):
    """The images of a figure (heatmaps, then strips), largest first."""
    images = [im.get_array() for a in _all_axes(fig) for im in a.images]
    return sorted(images, key=lambda a: -a.size)


@pytest.mark.parametrize("kind", KINDS)
def test_every_kind_draws_a_picture_that_is_not_blank(tables, kind, tmp_path):
    fig = plot_table(tables[kind])
    path = save_figure(fig, tmp_path / f"{kind}.png")
    pixels = _pixels(path)
    assert pixels.shape[0] > 300 and pixels.shape[1] > 600
    # a blank or single-colour canvas has no spread; a heatmap has many distinct colours
    assert pixels.std() > 0.1
    assert len(np.unique(pixels.reshape(-1, 3), axis=0)) > 50
    title = fig.get_suptitle()
    assert kind in title and "60x40" in title and "MAP risk" in title and "no floor" in title


def test_the_grouped_view_is_the_table_sorted_by_its_labels(tables):
    table = tables["poisson"]
    fig = plot_table(table, view="ordered", uncertainty=False)
    (image,) = [im.get_array() for im in fig.axes[0].images]
    rows = np.argsort(table.map_rows, kind="stable")
    cols = np.argsort(table.map_cols, kind="stable")
    np.testing.assert_array_equal(np.asarray(image), table.data[np.ix_(rows, cols)])
    drawn = plot_table(table, view="drawn")
    np.testing.assert_array_equal(np.asarray(_images(drawn)[0]), table.data)


def test_bayes_labels_are_preferred_and_user_labels_override(tables):
    table = tables["gaussian"]
    n, d = table.shape
    flipped_rows = np.arange(n) % 3
    flipped_cols = np.arange(d) % 2

    class WithBayes:  # a table carrying Bayes labels (issue 14) in front of the MAP ones
        def __init__(self, inner):
            self.__dict__.update({f.name: getattr(inner, f.name) for f in dataclasses.fields(inner)})
            self.bayes_rows, self.bayes_cols = flipped_rows, flipped_cols
            self.kind, self.shape = inner.kind, inner.shape
            self.n_row_clusters, self.n_col_clusters = inner.n_row_clusters, inner.n_col_clusters

    from lbm_bench.table_image import reference_labels

    assert reference_labels(table)[2] == "MAP labels"
    rows, cols, name = reference_labels(WithBayes(table))
    assert name == "Bayes labels"
    np.testing.assert_array_equal(rows, flipped_rows)

    fig = plot_table(table, labels=(flipped_rows, flipped_cols), view="ordered", uncertainty=False, means=False)
    image = np.asarray(fig.axes[0].images[0].get_array())
    order_r, order_c = np.argsort(flipped_rows, kind="stable"), np.argsort(flipped_cols, kind="stable")
    np.testing.assert_allclose(image, table.data[np.ix_(order_r, order_c)])
    # 3 row groups and 2 column groups: 2 + 1 boundary lines
    assert len(fig.axes[0].lines) == 3
    with pytest.raises(ValueError, match="labels"):
        plot_table(table, labels=(flipped_rows[:-1], flipped_cols))
    # label values never size the picture's arrays: labels times 10**9 are the same groups
    huge = plot_table(table, labels=(flipped_rows * 10**9, flipped_cols * 10**9 + 2**62), view="ordered",
                      uncertainty=False, means=True)
    np.testing.assert_allclose(np.asarray(huge.axes[0].images[0].get_array()), image)
    assert len(huge.axes[0].lines) == 3


def test_posterior_uncertainty_and_block_means():
    sets = np.array([[0, 1, 2], [0, 1, 1], [0, 0, 1], [0, 1, 1]])
    np.testing.assert_allclose(posterior_uncertainty(sets), [0.0, 0.25, 0.25])
    data = np.arange(12.0).reshape(3, 4)
    means = block_means(data, np.array([0, 0, 1]), np.array([1, 1, 0, 0]))
    np.testing.assert_allclose(means, [[(2 + 3 + 6 + 7) / 4, (0 + 1 + 4 + 5) / 4], [(10 + 11) / 2, (8 + 9) / 2]])
    np.testing.assert_allclose(block_means(sp.csr_array(data), np.array([0, 0, 1]), np.array([1, 1, 0, 0])), means)
    with pytest.raises(ValueError, match="label_sets"):
        posterior_uncertainty(np.zeros((0, 3), dtype=int))


def test_uncertainty_strips_follow_the_gibbs_sets(tables):
    table = tables["bernoulli"]
    fig = plot_table(table, view="ordered", means=False)
    strips = _images(fig)[1:]
    expected_rows = posterior_uncertainty(table.gibbs.rows, 2)[np.argsort(table.map_rows, kind="stable")]
    got = {a.shape: np.asarray(a) for a in strips}
    assert set(got) == {(60, 1), (1, 40)}
    np.testing.assert_allclose(got[(60, 1)][:, 0], expected_rows)
    assert expected_rows.max() > 0  # some rows are uncertain, so the test can fail


def _sparse_table(n_rows: int, n_cols: int, density: float, *, seed: int = 0):
    """A Bernoulli table in CSR storage with two row and two column blocks of different
    densities (the blocks are built entry by entry, never as a dense array)."""
    rng = np.random.default_rng(seed)
    base = make_table("bernoulli", n_rows=12, n_cols=10, n_samples=20)
    z = rng.integers(0, 2, n_rows)
    w = rng.integers(0, 2, n_cols)
    rates = density * np.array([[3.0, 0.5], [0.5, 1.5]])
    row_of = [np.flatnonzero(z == k) for k in range(2)]
    col_of = [np.flatnonzero(w == l) for l in range(2)]
    ii, jj = [], []
    for k in range(2):
        for l in range(2):
            count = rng.binomial(row_of[k].size * col_of[l].size, rates[k, l])
            ii.append(rng.choice(row_of[k], count))
            jj.append(rng.choice(col_of[l], count))
    ii, jj = np.concatenate(ii), np.concatenate(jj)
    data = sp.coo_array((np.ones(ii.size, dtype=np.uint8), (ii, jj)), shape=(n_rows, n_cols)).tocsr()
    data.sum_duplicates()
    data.data[:] = 1
    flips = rng.random((20, n_rows)) < 0.02
    gibbs = GibbsSamples(
        rows=np.where(flips, 1 - z, z).astype(np.uint8),
        cols=np.tile(w, (20, 1)).astype(np.uint8),
        chain_lengths=np.array([10, 10]), burn_in=0, thin=1,
    )
    return dataclasses.replace(base, data=data, truth_rows=z, truth_cols=w, map_rows=z, map_cols=w, gibbs=gibbs)


def test_a_large_sparse_table_is_block_averaged_with_bounded_memory(tmp_path):
    n_rows, n_cols = 200_000, 100_000  # 2e10 cells: 160 GB dense in float64
    table = _sparse_table(n_rows, n_cols, 2e-5)
    nnz = table.data.nnz
    assert nnz > 200_000
    tracemalloc.start()
    try:
        fig = plot_table(table)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # non-zeros (a float copy: 12 bytes each), two 1000x1000 images and the label vectors
    assert peak < 150e6, peak
    heatmaps = _images(fig)
    assert max(max(a.shape) for a in heatmaps) <= 1000
    big = np.asarray(heatmaps[0])
    assert big.shape == (1000, 1000)
    # the block densities show in the grouped view's block means
    means = block_means(table.data, table.map_rows, table.map_cols)
    np.testing.assert_allclose(means / 2e-5, [[3.0, 0.5], [0.5, 1.5]], rtol=0.1)
    assert "sparse" in fig.get_suptitle() and "density" in fig.axes[-1].get_ylabel()
    path = save_figure(fig, tmp_path / "sparse.png")
    assert _pixels(path).std() > 0.05


def test_a_dense_table_is_summed_by_bands_with_bounded_memory():
    """A 4000x4000 int64 table (128 MB) is drawn with less than half its size of extra
    memory: it is converted to float by bands of columns, never as a whole (the rest is
    the images, at most 1000x1000 cells each, whatever the table's size)."""
    base = make_table("poisson", n_rows=12, n_cols=10, n_samples=20)
    rng = np.random.default_rng(1)
    n_rows, n_cols = 4000, 4000
    z, w = rng.integers(0, 2, n_rows), rng.integers(0, 2, n_cols)
    data = rng.poisson(1.0 + 2.0 * (z[:, None] == w[None, :]))
    gibbs = GibbsSamples(rows=np.tile(z, (4, 1)).astype(np.uint8), cols=np.tile(w, (4, 1)).astype(np.uint8),
                         chain_lengths=np.array([2, 2]), burn_in=0, thin=1)
    table = dataclasses.replace(base, data=data, truth_rows=z, truth_cols=w, map_rows=z, map_cols=w, gibbs=gibbs)
    tracemalloc.start()
    try:
        fig = plot_table(table)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 0.5 * data.nbytes, (peak, data.nbytes)
    images = _images(fig)
    assert images[0].shape == (1000, 1000)  # 4 rows and 4 columns per cell
    np.testing.assert_allclose(np.asarray(images[0]).mean(), data.mean(), rtol=1e-9)
    np.testing.assert_allclose(block_means(data, z, w), [[data[np.ix_(z == k, w == l)].mean() for l in range(2)]
                                                          for k in range(2)])


def test_a_large_dense_table_is_downsampled(tables):
    table = tables["gaussian"]
    fig = plot_table(table, max_cells=16)
    for image in _images(fig)[:2]:
        assert image.shape == (15, 14)  # ceil(60 / 4) x ceil(40 / 3)
    # each image cell is the mean of its 4x3 cells (drawn order, first panel)
    drawn = [im.get_array() for im in fig.axes[0].images][0]
    np.testing.assert_allclose(drawn[0, 0], table.data[:4, :3].mean())


def test_same_table_same_png_bytes(tables, tmp_path):
    a = save_figure(plot_table(tables["poisson"]), tmp_path / "a.png")
    b = save_figure(plot_table(tables["poisson"]), tmp_path / "b.png")
    assert a.read_bytes() == b.read_bytes()
    assert b"Software" not in a.read_bytes()
    with pytest.raises(ValueError, match="png"):
        save_figure(plot_table(tables["poisson"]), tmp_path / "a.gif")


def test_an_existing_figure_is_replaced_only_with_overwrite(tables, tmp_path, monkeypatch):
    import lbm_bench._atomic as atomic

    path = tmp_path / "a.png"
    path.write_bytes(b"mine")
    with pytest.raises(FileExistsError, match="a.png exists"):
        save_figure(plot_table(tables["poisson"]), path, overwrite=False)
    assert path.read_bytes() == b"mine"
    # another process names its file while this one draws: still not replaced
    path.unlink()
    link = atomic.os.link

    def theirs_first(source, target):
        target.write_bytes(b"theirs")
        link(source, target)

    monkeypatch.setattr(atomic.os, "link", theirs_first)
    with pytest.raises(FileExistsError, match="a.png exists"):
        save_figure(plot_table(tables["poisson"]), path, overwrite=False)
    assert path.read_bytes() == b"theirs" and [p.name for p in tmp_path.iterdir()] == ["a.png"]
    save_figure(plot_table(tables["poisson"]), path)  # the default replaces
    assert path.read_bytes().startswith(b"\x89PNG")


def test_an_axes_can_be_given(tables):
    from matplotlib.figure import Figure

    fig = Figure()
    ax = fig.subplots()
    assert plot_table(tables["poisson"], ax, title=False) is fig
    assert ax.images and len(fig.axes) == 2  # the heatmap and its colour bar; strips are insets
    with pytest.raises(ValueError, match="view"):
        plot_table(tables["poisson"], view="sideways")
    with pytest.raises(TypeError, match="table"):
        plot_table(np.zeros((3, 3)))


def test_missing_matplotlib_gives_one_line(tables, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(ImportError, match=r"pip install 'lbm-bench\[plots\]'"):
        plot_table(tables["poisson"])


def test_cli_show(tables, tmp_path, capsys):
    path = save_table(tables["bernoulli"], tmp_path / "t.h5")
    out = tmp_path / "t.png"
    assert main(["show", str(path), "-o", str(out)]) == 0
    assert out.is_file() and _pixels(out).std() > 0.1
    rows, cols = tmp_path / "rows.txt", tmp_path / "cols.txt"
    rows.write_text("\n".join(str(i % 2) for i in range(60)))
    cols.write_text("\n".join(str(i % 3) for i in range(40)))
    assert main(["show", str(path), "-o", str(out), "--labels", str(rows), str(cols), "--force"]) == 0
    assert main(["show", str(path), "-o", str(out)]) == 2
    assert "exists" in capsys.readouterr().err
    cols.write_text("\n".join(str(i % 3) for i in range(39)))
    assert main(["show", str(path), "-o", str(out), "--labels", str(rows), str(cols), "--force"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "length" in err


@pytest.mark.parametrize("kind, colour", [("gaussian", "#bdbdbd"), ("bernoulli", "#e3c98f")])
def test_missing_entries_are_drawn_in_a_neutral_colour(kind, colour, tmp_path):
    """Missing entries are NaN cells drawn in the family's neutral colour (outside its map),
    named in the colour bar; block averages count observed entries only."""
    from matplotlib.colors import to_rgba

    table = make_table(kind, n_rows=60, n_cols=40, n_samples=60, scale=0.5, missing=(0.3, "random"))
    fig = plot_table(table)
    drawn = _images(fig)[0]
    assert np.array_equal(np.ma.getmaskarray(drawn) | np.isnan(np.ma.getdata(drawn)), np.isnan(table.data))
    heat = _all_axes(fig)[0].images[0]
    assert heat.cmap.get_bad() == pytest.approx(to_rgba(colour))
    labels = [a.get_ylabel() for a in fig.axes]
    assert any(": missing)" in label for label in labels)
    assert "30% missing (random)" in fig.get_suptitle()
    save_figure(fig, tmp_path / "t.png")
    small = plot_table(table, max_cells=10)  # 6x4 rows and columns per cell: means of observed entries
    coarse = _images(small)[0]
    assert coarse.shape == (10, 10) and np.all(np.isfinite(np.ma.getdata(coarse)))
    means = block_means(table.data, table.map_rows, table.map_cols)
    observed = ~np.isnan(table.data)
    k, l = table.map_rows[0], table.map_cols[0]
    block = np.ix_(table.map_rows == k, table.map_cols == l)
    assert means[k, l] == pytest.approx(np.nanmean(table.data[block]))
    assert observed[block].sum() < observed[block].size


def test_the_title_leads_with_the_floor_and_a_readable_mcse(tables):
    """The title gives the certified floor (not the MAP's risk) with the MCSE to two
    significant digits: an MCSE of 0.0001 is not printed as "± 0.000" (issue 27, item 4)."""
    table = tables["gaussian"]
    assert table.bayes_risk is None  # a format 1.0 table: the MAP's risk, said so
    assert "MAP risk" in plot_table(table, view="drawn").get_suptitle()
    floor = dataclasses.replace(table.risk, risk=0.10683, mcse=0.0001)
    with_floor = dataclasses.replace(table, bayes_risk=floor, bayes_rows=table.map_rows,
                                     bayes_cols=table.map_cols, criterion="bayes")
    title = plot_table(with_floor, view="drawn").get_suptitle()
    assert "floor 0.10683 ± 0.00010 (target" in title and "± 0.000 " not in title
    assert "MAP risk" not in title


def test_categorical_tables_show_their_categories(tables):
    """Unordered categories: each cell shows a code (never a mean), in one colour per
    category, with a legend of the categories and each block's most frequent category."""
    from lbm_bench.table_image import level_counts, reference_labels

    table = tables["categorical"]
    K = table.model.categories
    fig = plot_table(table, view="ordered")
    image = _images(fig)[0]
    assert set(np.unique(image)) <= set(range(K))  # codes, not averages
    rows, cols, _ = reference_labels(table)
    order_r, order_c = np.argsort(rows, kind="stable"), np.argsort(cols, kind="stable")
    np.testing.assert_array_equal(image, table.data[np.ix_(order_r, order_c)])
    legend = fig.axes[0].get_legend()
    assert legend is not None and [t.get_text() for t in legend.get_texts()] == [str(c) for c in range(K)]
    texts = [t.get_text() for t in fig.axes[0].texts]
    counts = level_counts(table.data, rows, cols, (2, 2), K)
    assert f"{counts[0, 0].argmax()}: " in texts[0] and texts[0].endswith("%")
    assert "categories 4" in plot_table(table).get_suptitle()
    # a binned view shows each bin's most frequent category
    small = plot_table(table, view="drawn", max_cells=10)
    binned = _images(small)[0]
    assert binned.shape == (10, 10) and set(np.unique(binned)) <= set(range(K))
    rows, cols = np.arange(60) // 6, np.arange(40) // 4
    np.testing.assert_array_equal(binned, level_counts(table.data, rows, cols, (10, 10), K).argmax(axis=2))


def test_many_categories_get_distinct_colours():
    from lbm_bench.models.registry import get_family
    from lbm_bench.plotting import family_colormap

    cmap, _ = family_colormap(get_family("categorical"), 30)
    colours = {tuple(np.round(cmap(c), 6)) for c in range(30)}
    assert len(colours) == 30
