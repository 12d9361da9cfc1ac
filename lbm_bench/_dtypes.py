"""The dtype of label arrays: the smallest unsigned integers that hold a number of classes.

Label sets are the largest arrays the package keeps (2,000 sets of every row and column): the
sampler draws them, the writer stores them and the readers check them in the same dtype,
:func:`smallest_uint` of the number of classes (``uint8`` up to 256 classes).
"""

from __future__ import annotations

import functools

import numpy as np

__all__ = ["smallest_uint"]


@functools.lru_cache(maxsize=64)
def smallest_uint(n_values: int) -> np.dtype:
    """Smallest unsigned integer dtype holding ``0 .. n_values - 1`` (cached: it is asked
    at every Gibbs step, and ``np.iinfo`` costs microseconds).

    Examples
    --------
    >>> smallest_uint(3), smallest_uint(257)
    (dtype('uint8'), dtype('uint16'))
    """
    for dtype in (np.uint8, np.uint16, np.uint32):
        if n_values - 1 <= np.iinfo(dtype).max:
            return np.dtype(dtype)
    return np.dtype(np.uint64)
