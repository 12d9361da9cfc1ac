"""What the calibration measures on a table: the short-run floor sees the generating labels
only as its chains' starts (the guard against leaks into the certified estimate), and the
MAP's apparent error comes from the table and its own seed."""

import numpy as np

from lbm_bench import random_design
from lbm_bench._seeds import stream
from lbm_bench.inference.engine import Sweeper
from lbm_bench.protocol.table_draws import draw_candidate
from lbm_bench.protocol.table_risks import batch_errors, classifier_labels, short_run_floors


def test_short_run_floor_uses_the_generating_labels_as_chain_starts_only(monkeypatch):
    """The guard for criterion "bayes": the generating labels start the short run's chains (an
    exact posterior draw given X) and nothing else; the floor's descent gets the sets alone
    (no starts), so it depends on X and the run's own uniforms only."""
    import lbm_bench.protocol.short_run as short_run
    import lbm_bench.protocol.table_risks as table_risks

    design = random_design("gaussian", 2, 2, rng=4)
    model = design.model(0.6)
    X, z0, w0 = model.sample(30, 25, rng=5)
    seed = np.random.SeedSequence(6)
    seen = {}
    real_runs, real_floor = short_run.short_runs, table_risks.floor_risk

    def spy_runs(sweeper, labels, rngs, **options):
        seen["labels"] = labels
        return real_runs(sweeper, labels, rngs, **options)

    def spy_floor(samples, **options):
        seen["floor options"] = options
        return real_floor(samples, **options)

    monkeypatch.setattr(table_risks, "short_runs", spy_runs)
    monkeypatch.setattr(table_risks, "floor_risk", spy_floor)
    value = short_run_floors(model, X[None], [(z0, w0)], [seed])[0]
    assert seen["labels"][0][0] is z0 and seen["labels"][0][1] is w0
    assert set(seen["floor options"]) == {"n_row_clusters", "n_col_clusters"}  # no starts
    own = np.random.default_rng(stream(seed, "calibration table", "short run"))
    run = real_runs(Sweeper(model, X[None]), [(z0, w0)], [own])[0]
    assert value == real_floor(run, n_row_clusters=2, n_col_clusters=2).risk


def test_the_apparent_error_of_a_batch_is_that_of_each_table_alone():
    """A batch's MAP errors are those of its tables one by one (each from its own seed's
    starts), and the generating labels only score them: other labels give other errors."""
    model = random_design("poisson", 2, 2, rng=3).model(0.8)
    seeds = np.random.SeedSequence(8).spawn(3)
    labels, noise = [], []
    for seed in seeds:
        (z, w), e, _, _ = draw_candidate(model, 30, 20, seed, "calibration table")
        labels.append((z, w))
        noise.append(e)
    together = batch_errors(model, labels, noise, seeds, 3, True)
    alone = [batch_errors(model, [z], [e], [seed], 3, True)[0] for z, e, seed in zip(labels, noise, seeds, strict=True)]
    assert np.array_equal(together, alone) and np.all((0 <= together) & (together <= 1))
    X = model.table_from_noise(noise[0], *labels[0])
    (rows, cols), = classifier_labels(model, [X], [seeds[0]], 3)
    row, col = np.mean(rows != labels[0][0]), np.mean(cols != labels[0][1])
    assert together[0] == row + col - row * col
