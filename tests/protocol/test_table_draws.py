"""A calibration table's draws from its seed, and what a worker keeps of them across scales."""

import numpy as np
import pytest

from lbm_bench import random_design
from lbm_bench.protocol.calibration import CommonRandomNumbers
from lbm_bench.protocol.table_draws import draw_table


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
    from lbm_bench.protocol import calibration as cal
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


