"""The floor (lbm_bench.inference.floor): the Bayes labels cross-fitted over halves of the
chains, on one chain and over workers (its agreement with exact risks on tiny tables is in
test_bayes.py, beside the labels it cross-fits)."""

import numpy as np
import pytest

from lbm_bench import GibbsSamples, gibbs_labels, random_model
from lbm_bench.inference.floor import floor_certificate, floor_risk


def test_floor_certificate_single_chain_and_errors():
    rng = np.random.default_rng(3)
    rows = rng.integers(0, 2, size=(40, 8)).astype(np.uint8)
    cols = rng.integers(0, 2, size=(40, 6)).astype(np.uint8)
    one = GibbsSamples(rows=rows, cols=cols, chain_lengths=np.array([40]), burn_in=0, thin=1)
    floor = floor_certificate(one)
    assert floor.risk.n_chains == 1 and floor.losses.shape == (40,)
    with pytest.raises(TypeError, match="GibbsSamples"):
        floor_certificate((rows, cols))
    assert floor_risk(one) == floor.risk


@pytest.mark.parametrize("n_chains", [1, 4])
def test_the_floor_of_a_large_table_over_workers_is_the_floor_of_one_process(n_chains, monkeypatch):
    """floor_certificate(jobs=2) on a table counted as large: its three searches' descents
    run as tasks over 2 loky workers and give the same labels, risk and per-set losses as
    one process (integer objectives: the first best descent of each search wins either way)."""
    from lbm_bench.tasks import large
    from lbm_bench.tasks.backends import worker_backend

    model = random_model("poisson", 3, 2, scale=0.5, rng=5)
    X, _, _ = model.sample(50, 30, rng=6)
    samples = gibbs_labels(model, X, n_samples=240, n_chains=n_chains, init="random", burn_in=20, rng=7)
    start = (samples.rows[0], samples.cols[0])
    one = floor_certificate(samples, starts=[start], jobs=1)
    monkeypatch.setattr(large, "LARGE_TABLE_ENTRIES", 1)
    with worker_backend("loky", 2):
        two = floor_certificate(samples, starts=[start], jobs=2)
    np.testing.assert_array_equal(one.rows, two.rows)
    np.testing.assert_array_equal(one.cols, two.cols)
    np.testing.assert_array_equal(one.losses, two.losses)
    assert one.risk == two.risk
    with pytest.raises(ValueError, match="jobs"):
        floor_certificate(samples, jobs=0)
