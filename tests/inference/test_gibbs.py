"""The blockwise Gibbs sampler (lbm_bench.inference.gibbs): reproducible label sets in the smallest
dtype, uneven chains and thinning, and bad arguments. Against the exact posterior:
tests/inference/test_inference.py."""

import numpy as np
import pytest

from lbm_bench import gibbs_labels
from tests.inference.tiny import TINY_MODELS


def test_gibbs_reproducible_and_dtypes():
    model = TINY_MODELS["bernoulli"]
    X, z, w = model.sample(30, 20, rng=3)
    a = gibbs_labels(model, X, n_samples=100, n_chains=4, rng=5)
    b = gibbs_labels(model, X, n_samples=100, n_chains=4, rng=5)
    assert a.rows.dtype == np.uint8 and a.cols.dtype == np.uint8
    assert a.rows.tobytes() == b.rows.tobytes() and a.cols.tobytes() == b.cols.tobytes()
    c = gibbs_labels(model, X, n_samples=100, n_chains=4, rng=6)
    assert c.rows.tobytes() != a.rows.tobytes()


def test_gibbs_uneven_chains_and_thinning():
    model = TINY_MODELS["gaussian"]
    X, z, w = model.sample(12, 9, rng=3)
    samples = gibbs_labels(model, X, n_samples=10, n_chains=3, thin=2, burn_in=0, init=(z, w), rng=0)
    assert samples.chain_lengths.tolist() == [4, 3, 3]
    assert samples.rows.shape == (10, 12)
    assert samples.cols.shape == (10, 9)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"n_samples": 0}, "n_samples"),
        ({"n_chains": 0}, "n_chains"),
        ({"n_samples": 3, "n_chains": 4}, "n_chains"),
        ({"burn_in": -1}, "burn_in"),
        ({"thin": 0}, "thin"),
        ({"init": "bogus"}, "init"),
        ({"init": (np.zeros(5, int), np.zeros(5, int))}, r"init\[0\]\[0\]"),
    ],
)
def test_gibbs_bad_arguments(kwargs, match):
    model = TINY_MODELS["gaussian"]
    X, _, _ = model.sample(6, 5, rng=0)
    with pytest.raises((ValueError, TypeError), match=match):
        gibbs_labels(model, X, **kwargs)
