"""A candidate table's draws from its seed (lbm_bench.protocol.table_draws: one function for the
rejection step's candidates and the calibration's tables, each with the byte layout it had), and
what a calibration worker keeps of them across scales."""

import numpy as np
import pytest

from lbm_bench import random_design
from lbm_bench._seeds import child_seed
from lbm_bench.models.missing import MaskNoise
from lbm_bench.models.sparse_noise import SparseNoise
from lbm_bench.protocol.common_random_numbers import CommonRandomNumbers
from lbm_bench.protocol.table_draws import draw_candidate, draw_table


def _same_draws(one, other, probs):
    (z, w), noise, mask, starts = one
    (z0, w0), noise0, mask0, starts0 = other
    assert np.array_equal(z, z0) and np.array_equal(w, w0)
    if isinstance(noise, SparseNoise):  # its bands are drawn from its seed
        assert noise.seed == noise0.seed
    else:
        assert np.array_equal(noise, noise0)
    if isinstance(noise, SparseNoise):
        assert (mask.missing_csr(probs, z, w) != mask0.missing_csr(probs, z0, w0)).nnz == 0
    else:
        assert np.array_equal(mask.observed(probs, z, w), mask0.observed(probs, z0, w0))
    assert np.array_equal(starts.integers(2**63, size=4), starts0.integers(2**63, size=4))


@pytest.mark.parametrize("options", [{"missing": 0.2}, {"missing": {"rate": 0.2, "mechanism": "block"}},
                                     {"density": 0.2, "missing": 0.1}])
def test_draw_candidate_keeps_both_byte_layouts(options):
    """The layouts the tables were made with, written out by hand: a candidate draws its labels,
    noise and MAP starts one after the other from its own stream and its mask from child 0; a
    calibration table each part from a child (labels 0, noise 1, MAP starts 2, mask 4)."""
    design = random_design("bernoulli", 2, 3, rng=5, **options)
    model, probs = design.model(0.7), design.missing_probs(0.7)
    seed = np.random.SeedSequence(11, spawn_key=(3,))
    rng = np.random.default_rng(seed)
    labels = model.sample_labels(40, 30, rng=rng)
    noise = model.draw_noise(40, 30, rng=rng)
    mask = MaskNoise(40, 30, design.missing, model.sparse, rng=np.random.default_rng(child_seed(seed, 0)))
    by_hand = (labels, noise, mask, rng)
    _same_draws(draw_candidate(model, 40, 30, seed, "candidate", design.missing), by_hand, probs)

    def child(index):
        return np.random.default_rng(child_seed(seed, index))

    by_hand = (model.sample_labels(40, 30, rng=child(0)), model.draw_noise(40, 30, rng=child(1)),
               MaskNoise(40, 30, design.missing, design.density is not None, rng=child(4)), child(2))
    _same_draws(draw_candidate(model, 40, 30, seed, "calibration table", design.missing), by_hand, probs)
    assert draw_candidate(model, 40, 30, seed, "candidate").mask is None


def test_a_tables_draws_are_those_of_the_common_random_numbers():
    """The draws a worker makes from a table's seed are the parent's (labels, noise, mask)."""
    design = random_design("gaussian", 2, 2, rng=2, missing=0.1)
    crn = CommonRandomNumbers(design, 30, 20, 3, np.random.SeedSequence(4), criterion="map")
    for t, seed in enumerate(crn.table_seeds):
        (z, w), noise, mask = draw_table(design, 30, 20, seed)
        z0, w0 = crn.table_labels(t)
        assert np.array_equal(z, z0) and np.array_equal(w, w0) and np.array_equal(noise, crn.noise(t))
        probs = design.missing_probs(1.0)
        assert np.array_equal(mask.observed(probs, z, w), crn.mask_noise(t).observed(probs, z0, w0))


@pytest.mark.parametrize("density", [None, 0.2])
def test_workers_keep_their_tables_across_scales_within_their_budget(density):
    """A worker keeps the labels and noise of a calibration's tables (by its token) across
    scales: the statistics are those of tables drawn afresh, the bytes kept stay within the
    budget, and a table larger than the budget is drawn again at every scale."""
    from lbm_bench.protocol import common_random_numbers as cal
    from lbm_bench.protocol import table_draws as draws

    options = {} if density is None else {"density": density}
    design = random_design("bernoulli", 2, 2, rng=9, **options)
    crn = CommonRandomNumbers(design, 30, 20, 4, np.random.SeedSequence(10), criterion="bayes")
    seeds = crn.table_seeds
    args = ("floor", design, 30, 20)
    draws._WORKER_DRAWS.clear()
    draws._WORKER_BYTES[0] = 0
    for scale in (0.5, 1.5, 0.5):
        fresh = cal._worker(*args, scale, 3, True, cal.BATCH_BYTES, seeds)
        kept = cal._worker(*args, scale, 3, True, cal.BATCH_BYTES, seeds, (crn.token, 10**6))
        assert np.array_equal(fresh, kept)
        assert np.array_equal(kept, crn.floors(scale, 3))
    assert [key[0] for key in draws._WORKER_DRAWS] == [crn.token] * 4
    assert draws._WORKER_BYTES[0] == sum(size for _, size in draws._WORKER_DRAWS.values())
    one_table = draws.draws_nbytes(draws._WORKER_DRAWS[(crn.token, tuple(seeds[0].spawn_key))][0])
    other = CommonRandomNumbers(design, 30, 20, 4, np.random.SeedSequence(10), criterion="bayes")
    cal._worker(*args, 0.5, 3, True, cal.BATCH_BYTES, seeds[:2], (other.token, 3 * one_table))
    assert draws._WORKER_BYTES[0] <= 3 * one_table  # the oldest evicted
    assert [key[0] for key in draws._WORKER_DRAWS][-2:] == [other.token] * 2
    cal._worker(*args, 0.5, 3, True, cal.BATCH_BYTES, seeds[:1], ("small", 1))
    assert all(key[0] != "small" for key in draws._WORKER_DRAWS)
    draws._WORKER_DRAWS.clear()
    draws._WORKER_BYTES[0] = 0


