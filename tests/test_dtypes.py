"""The dtype of label arrays (lbm_bench._dtypes), which the sampler, the writer and the readers share."""

import numpy as np

from lbm_bench._dtypes import smallest_uint


def test_smallest_uint():
    assert [smallest_uint(n) for n in (1, 256, 257, 65536, 65537, 2**32 + 1)] == [
        np.uint8, np.uint8, np.uint16, np.uint16, np.uint32, np.uint64]
