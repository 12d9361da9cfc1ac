"""The calibration's tables as common random numbers (lbm_bench.protocol.common_random_numbers):
the same tables at every scale, their risks kept once computed and the same in any batches
and over any number of workers (the calibration that searches on them is tested in
test_calibration.py)."""

import numpy as np

from lbm_bench import random_design
from lbm_bench.protocol.common_random_numbers import CommonRandomNumbers


def test_the_tables_are_the_same_at_every_scale_and_their_risks_are_kept():
    design = random_design("bernoulli", 2, 2, rng=0)
    crn = CommonRandomNumbers(design, 30, 20, 6, np.random.SeedSequence(1), criterion="map")
    labels = [crn.table_labels(t) for t in range(6)]
    first = crn.errors(0.8, 4, n_init=3)
    for (z, w), (z2, w2) in zip(labels, [crn.table_labels(t) for t in range(6)], strict=True):
        assert np.array_equal(z, z2) and np.array_equal(w, w2)
    again = crn.errors(0.8, 6, n_init=3)
    assert np.array_equal(again[:4], first)  # the first four, kept; two more drawn
    one_by_one = CommonRandomNumbers(design, 30, 20, 6, np.random.SeedSequence(1), criterion="map",
                                     batch_bytes=1)
    assert np.array_equal(one_by_one.apparent_errors(0.8, 3), crn.apparent_errors(0.8, 3))
    assert crn.apparent_errors(3.0, 3).mean() < crn.apparent_errors(0.3, 3).mean()  # easier at a larger scale
