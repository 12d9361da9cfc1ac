"""lbm_bench.protocol.from_design: tables generated from a design fitted to a table (issue 34).

Designs fitted to a table of each family (dense and sparse, with missing entries) calibrate
tables whose floor is on target at 5%, 10% and 20% (within the rejection tolerance, 0.02 here),
whose overall level is the source's (within 6%), whose row and column means are like the source's
(KS statistics below KS_TOLERANCE), and whose fitted model (scale 1) draws row and
column means like the source's (two-sample KS statistics below 0.2 and 0.25).
"""

import dataclasses
import itertools

import numpy as np
import pytest

from lbm_bench import DesignFileError, fit_design, generate_table, get_family, random_design
from lbm_bench.fitting import degree_ks
from lbm_bench.protocol.from_design import design_request, load_design

SOURCES = {
    "poisson": ({"rates": [[0.5, 4.0], [3.0, 1.0]]}, {}),
    "bernoulli-sparse": ({"probs": [[0.02, 0.2], [0.15, 0.03]]}, {"sparse": True}),
    "gaussian": ({"means": [[0.0, 2.0], [2.0, 0.0]], "stds": [[1.0, 1.5], [1.0, 0.7]]}, {}),
    "categorical": ({"probs": [[[0.8, 0.1, 0.1], [0.1, 0.8, 0.1]], [[0.1, 0.1, 0.8], [0.6, 0.2, 0.2]]]}, {}),
}

#: Largest row- and column-mean KS statistics of the tables generated at 5%, 10% and 20% against
#: their source (seeded: measured 0.03-0.11 and 0.06-0.13 for sparse Bernoulli with its knee, 0.05-0.07
#: and 0.07-0.11 on the straight path before it, 0.09-0.10 and
#: 0.10-0.12 Gaussian, Poisson 0.16/0.16/0.21 and 0.15/0.25/0.36; on the straight path, which
#: shrank the classes' totals too, Poisson was 0.29-0.32 and 0.46-0.47). The Poisson source's
#: column classes differ in level (1.5 and 2.8 a count): their totals alone give a floor below
#: 5%, so at 10% and 20% the path is below its knee and their levels come closer.
#: Categorical row means of codes are not degrees: its tables keep the source's category shares
#: instead (within 0.03).
KS_TOLERANCE = {"bernoulli-sparse": (0.12, 0.15), "gaussian": (0.15, 0.16), "poisson": (0.25, 0.4)}


def _source(name, missing=0.0):
    kind = name.split("-")[0]
    params, extra = SOURCES[name]
    X, _, _ = get_family(kind).model([0.6, 0.4], [0.5, 0.5], **params, **extra).sample(150, 100, rng=0)
    if missing:
        X = X.astype(float)
        X[np.random.default_rng(1).uniform(size=X.shape) < missing] = np.nan
    return X


@pytest.fixture(scope="module")
def design_files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("designs")
    files = {}
    for name in SOURCES:
        fitted = fit_design(_source(name), (3, 3), kind=name.split("-")[0], certify=False, rng=0)
        files[name] = folder / f"{name}.toml"
        fitted.save(files[name])
    return files


@pytest.mark.parametrize("name", sorted(SOURCES))
@pytest.mark.parametrize("risk", [0.05, 0.1, 0.2])
def test_tables_like_the_source_are_certified_on_target(design_files, name, risk):
    table = generate_table(design=design_files[name], target_risk=risk, n_samples=300, tolerance=0.02, rng=1)
    assert table.data.shape == (150, 100) and table.model.block_shape == (2, 2)
    assert abs(table.bayes_risk.risk - risk) <= 0.02
    record = load_design(design_files[name])[0]
    assert table.design.digest == record.digest
    np.testing.assert_allclose(table.design.row_proportions, record.row_proportions)
    assert (table.design.density is not None) == name.endswith("sparse")
    # the table's overall level is the source's at every scale (the path keeps the expected
    # statistics at the proportions), and its mean is the level at its own drawn label shares
    # within 6% (the shares drawn again move the level itself: 7% for the sparse Bernoulli
    # table at 20%, whose column shares came out 0.51/0.49 against 0.45/0.55)
    source, data = _source(name), table.data
    if name == "categorical":
        shares = [np.bincount(np.ravel(t), minlength=3) / np.size(t) for t in (source, data)]
        np.testing.assert_allclose(shares[1], shares[0], atol=0.03)
        return
    mean = (lambda t: t.sum() / np.prod(t.shape)) if name.endswith("sparse") else np.mean
    assert table.model.expected_statistics()[0] == pytest.approx(mean(source), rel=1e-6)
    shares = [np.bincount(labels, minlength=2) / labels.size for labels in (table.truth_rows, table.truth_cols)]
    assert mean(data) == pytest.approx(shares[0] @ table.model.mean_statistics[0] @ shares[1], rel=0.06)
    ks = degree_ks(source, data)
    assert ks["rows"] <= KS_TOLERANCE[name][0] and ks["cols"] <= KS_TOLERANCE[name][1], ks


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_the_fitted_model_draws_degrees_like_the_source(name):
    """At scale 1 (the fitted model) the row and column means follow the source's: KS statistics
    below 0.2 and 0.25 (150 rows, 100 columns: a two-sample KS test's 1% critical values are 0.19 and
    0.23). At higher risks the blocks move towards the overall level and the degrees narrow
    (docs/design-files.md reports it)."""
    source = _source(name)
    fitted = fit_design(source, (3, 3), kind=name.split("-")[0], certify=False, rng=0)
    model, rows, cols = fitted.model, fitted.selection.rows, fitted.selection.cols
    # at the fitted labels: the classes' shares are the source's, not drawn again (with two
    # classes of different degrees, a drawn share alone moves the KS statistic by its noise)
    redrawn = model.table_from_noise(model.draw_noise(150, 100, rng=np.random.default_rng(9)), rows, cols)
    ks = degree_ks(source, redrawn)
    assert ks["rows"] < 0.2 and ks["cols"] < 0.25, ks


def _source_with_effects():
    """150x100 counts of a known Poisson design with row and column effects (log-normal, sd 0.5)."""
    rng = np.random.default_rng(0)
    mu, nu = rng.lognormal(0, 0.5, 150), rng.lognormal(0, 0.5, 100)
    model = get_family("poisson").model([0.6, 0.4], [0.5, 0.5], [[0.5, 4.0], [3.0, 1.0]], mu / mu.mean(),
                                        nu / nu.mean())
    return model.sample(150, 100, rng=rng)[0]


def test_a_table_like_a_poisson_source_with_effects_keeps_its_degrees():
    """At 10%, a table generated from the design fitted to a Poisson source with row and column
    effects has row and column means like the source's: KS statistics at most 0.12 and 0.2.
    Measured over seeds 1-6: rows 0.067-0.093, columns 0.08-0.15 (the classes' margins kept,
    only their interaction shrunk); on the straight path (every block towards the level) rows
    0.107-0.18 and columns 0.15-0.22 at the same seeds."""
    X = _source_with_effects()
    fitted = fit_design(X, (3, 3), kind="poisson", certify=False, rng=0)
    assert fitted.effects_kept and fitted.design.path.knee == 0.5
    table = generate_table(design=fitted.design, n_rows=150, n_cols=100, target_risk=0.1, n_samples=300,
                           tolerance=0.02, rng=3)
    assert abs(table.bayes_risk.risk - 0.1) <= 0.02
    ks = degree_ks(X, table.data)
    assert ks["rows"] <= 0.12 and ks["cols"] <= 0.2, ks


def test_missing_entries_are_kept(tmp_path):
    X = _source("gaussian", missing=0.15)
    fitted = fit_design(X, (3, 3), certify=False, rng=0)
    table = generate_table(design=fitted.design, n_rows=150, n_cols=100, target_risk=0.1, n_samples=300,
                           tolerance=0.02, rng=2)
    assert abs(table.bayes_risk.risk - 0.1) <= 0.02
    assert np.isnan(table.data).mean() == pytest.approx(0.15, abs=0.03)


def test_another_shape_keeps_proportions_and_draws_effects_from_the_fitted_ones():
    rng = np.random.default_rng(3)
    mu, nu = rng.lognormal(0, 0.7, 150), rng.lognormal(0, 0.7, 100)
    X, _, _ = get_family("poisson").model([0.5, 0.5], [0.5, 0.5], [[1.0, 4.0], [4.0, 1.0]], mu / mu.mean(),
                                          nu / nu.mean()).sample(150, 100, rng=rng)
    fitted = fit_design(X, (3, 3), certify=False, rng=0)
    assert fitted.design.row_effects is not None
    table = generate_table(design=fitted.design, n_rows=90, n_cols=60, target_risk=0.1, n_samples=300,
                           tolerance=0.02, rng=4)
    assert table.data.shape == (90, 60) and abs(table.bayes_risk.risk - 0.1) <= 0.02
    assert table.design.row_effects.shape == (90,) and table.design.col_effects.shape == (60,)
    assert table.design.row_effects.mean() == pytest.approx(1.0)
    moved = fitted.design.at_shape(90, 60, rng=11)
    draws = np.random.default_rng(11).choice(fitted.design.row_effects, 90)
    np.testing.assert_allclose(moved.row_effects, draws / draws.mean())
    assert fitted.design.at_shape(150, 100, rng=11) is fitted.design
    np.testing.assert_array_equal(table.design.row_proportions, fitted.design.row_proportions)


def test_same_seed_same_bytes(design_files):
    a, b = (generate_table(design=design_files["poisson"], target_risk=0.1, n_samples=200, tolerance=0.03, rng=5)
            for _ in range(2))
    np.testing.assert_array_equal(a.data, b.data)


def test_requests_the_design_contradicts_are_refused(design_files, tmp_path):
    path = design_files["poisson"]
    with pytest.raises(ValueError, match="kind='gaussian' but the design is of poisson blocks"):
        design_request(path, 0.1, kind=get_family("gaussian"))
    with pytest.raises(ValueError, match="the design has 2x2 clusters, not 3x2"):
        design_request(path, 0.1, clusters=(3, 2))
    with pytest.raises(ValueError, match="density: the design fixes"):
        design_request(path, 0.1, options={"density": 0.1})
    with pytest.raises(ValueError, match="no shape of its own"):
        design_request(random_design("gaussian", 2, 2, rng=0), 0.1)
    with pytest.raises(ValueError, match="both n_rows and n_cols"):
        design_request(path, 0.1, n_rows=10)
    with pytest.raises(TypeError, match="design must be a ModelDesign"):
        design_request(3, 0.1)
    with pytest.raises(TypeError, match="needs target_risk"):
        generate_table(design=path)
    (tmp_path / "bad.toml").write_text('format = "lbm-bench-design/9.0"\n')
    with pytest.raises(DesignFileError, match="newer than this lbm-bench reads"):
        generate_table(design=tmp_path / "bad.toml", target_risk=0.1)


def test_a_fitted_designs_density_is_its_sources(design_files, tmp_path):
    """``design.density`` 1e-300 and 0.5 gave identical tables (a fitted design's tables follow its
    blocks), and a density of 1e-300 sized a sparse table at no entry for the memory guard (issue 48):
    a density no source could have is refused, naming the file and the key; the guard sizes a
    fitted design's table from its blocks when they give more."""
    from lbm_bench.protocol.memory import estimate_request_memory

    path = design_files["bernoulli-sparse"]
    text = path.read_text()
    (line,) = [line for line in text.splitlines() if line.startswith("density = ")]
    density = float(line.split("=")[1])
    request, design = design_request(path, 0.1)  # as fitted: accepted
    for value, words in (("1e-300", "is below one non-zero entry of its 150x100 source"),
                         ("0.5", "is more than the mean entry of its blocks")):
        edited = tmp_path / f"edited-{value}.toml"
        edited.write_text(text.replace(line, f"density = {value}"))
        with pytest.raises(ValueError, match=f"edited-{value}.toml: design.density {value} {words}"):
            design_request(edited, 0.1)
    # the guard: the same request, its density understated, is sized from the blocks
    understated = dataclasses.replace(design, density=density / 1000)
    as_fitted = estimate_request_memory(request, design=design)
    assert estimate_request_memory(request, design=understated).total == pytest.approx(as_fitted.total, rel=1e-6)
    # without the design, the understated density would size it at a thousandth of its entries
    small = estimate_request_memory(dataclasses.replace(request, model_options=dataclasses.replace(
        request.model_options, density=density / 1000)))
    assert small.parts["table"] < as_fitted.parts["table"] / 10


def test_a_random_design_with_a_shape_is_calibrated_too():
    design = random_design("bernoulli", 2, 2, rng=0)
    table = generate_table(design=design, n_rows=80, n_cols=60, target_risk=0.1, n_samples=200, tolerance=0.03,
                           rng=1)
    assert abs(table.bayes_risk.risk - 0.1) <= 0.03 and table.design is design


@pytest.mark.slow
def test_tables_like_the_digits_keep_their_degrees():
    """The real example (docs/design-files.md): scikit-learn's digits fitted at 8x8 (seed 2012) and
    tables generated at 10% as `lbm-bench generate --design` does, at three seeds: on target, the
    level (mean count) within 20% of the source's, and the median KS of their row and column means
    against the source's under 0.45 and 0.2. Measured with the classes' margins kept (the path's
    knee) on seeds 2012-2015: rows 0.08, 0.34, 0.79 and 0.08, columns 0.14, 0.16, 0.22 and 0.17, the
    mean count 4.94, 5.43, 3.56 and 4.87 against 4.88 (the row means follow the draw of the 64
    columns' labels: docs/design-files.md);
    on the straight path with the level kept, seeds 2012-2017: rows 0.07-0.44 (median 0.32),
    columns 0.17-0.28; 0.72 and 0.36 when the straight line lowered the level by a fifth."""
    load_digits = pytest.importorskip("sklearn.datasets").load_digits
    X = load_digits().data.astype(np.int64)
    fitted = fit_design(X, (8, 8), certify=False, rng=2012)
    rows, cols = [], []
    for seed in (2012, 2013, 2014):
        table = generate_table(design=fitted.design, target_risk=0.1, rng=seed)
        assert abs(table.bayes_risk.risk - 0.1) <= 0.02
        assert abs(np.mean(table.data) / np.mean(X) - 1) < 0.2
        ks = degree_ks(X, table.data)
        rows.append(ks["rows"])
        cols.append(ks["cols"])
    assert np.median(rows) < 0.45 and np.median(cols) < 0.2, (rows, cols)


#: The margin of the source-against-generated KS statistics over the model's own spread (below).
SPREAD_MARGIN = 0.03


@pytest.mark.parametrize("name", ["poisson-effects", "gaussian"])
def test_generated_tables_are_as_close_to_the_source_as_to_each_other(name):
    """At 10%, the source is a typical table of its design's generated ones: over eight certified
    tables (one calibration, seeds 1-8), the median KS statistic of the source's row (and column)
    means against a generated table's is at most the 90th percentile of the KS statistics between
    two generated tables (the 28 pairs) plus SPREAD_MARGIN: the distance left is the model's own
    spread (scripts/checks/degree_spread.py prints it for every family, risk and side). Measured
    here: Poisson with effects rows 0.077 against a 90th percentile of 0.135, columns 0.100 against
    0.166; Gaussian rows 0.093 against 0.151, columns 0.115 against 0.150. It fails where the path
    shrinks the classes' totals to reach the target: the Poisson source without effects at 10%
    (below its knee, scale 0.36) has columns at 0.27 against 0.13 (degree_spread.py, seeds 2012-2019)."""
    X = _source_with_effects() if name == "poisson-effects" else _source(name)
    kind = name.split("-")[0]
    fitted = fit_design(X, (3, 3), kind=kind, certify=False, rng=0)
    g, m = fitted.counts
    first = generate_table(design=fitted.design, n_rows=150, n_cols=100, target_risk=0.1, n_samples=200,
                           tolerance=0.02, rng=1)
    tables = [first] + [generate_table(kind, 150, 100, g, m, 0.1, calibration=first.calibration, n_samples=200,
                                       tolerance=0.02, rng=seed) for seed in range(2, 9)]
    assert all(abs(t.bayes_risk.risk - 0.1) <= 0.02 for t in tables)
    for side in ("rows", "cols"):
        to_source = [degree_ks(X, t.data)[side] for t in tables]
        between = [degree_ks(a.data, b.data)[side] for a, b in itertools.combinations(tables, 2)]
        assert np.median(to_source) <= np.quantile(between, 0.9) + SPREAD_MARGIN, (side, to_source, between)
