"""Shared constants and helpers of the algorithm tests."""

import numpy as np
from scipy.optimize import linear_sum_assignment

from lbm_bench.algorithms import ALGORITHMS, FAMILY_ALGORITHMS

KINDS = ("gaussian", "poisson", "bernoulli", "categorical")
EASY_SCALES = {"gaussian": 3.0, "poisson": 2.0, "bernoulli": 2.0, "categorical": 2.0}
#: The design options a family needs (categorical blocks: their number of categories).
OPTIONS = {"categorical": {"categories": 4}}
SKLEARN_NAMES = ("spectral-coclustering", "spectral-biclustering")
#: Registry names of the per-family algorithms (which fit only tables of their family).
FAMILY_NAMES = tuple(name.replace("_", "-") for name in FAMILY_ALGORITHMS)
#: Registry names of algorithms that fit binary tables only (tested in their own files).
BINARY_ONLY_NAMES = ("sparsebm",)


def matching_error(truth, labels):
    """1 - (best one-to-one matching of clusters) / n, via the Hungarian algorithm."""
    truth, labels = np.asarray(truth), np.asarray(labels)
    table = np.zeros((truth.max() + 1, labels.max() + 1))
    np.add.at(table, (truth, labels), 1)
    r, c = linear_sum_assignment(-table)
    return 1.0 - table[r, c].sum() / truth.size


def builtins():
    """Registry names of the algorithms that fit every family, with the scikit-learn
    ones skipped when it is missing."""
    names = [name for name in ALGORITHMS if name not in FAMILY_NAMES + BINARY_ONLY_NAMES]
    try:
        import sklearn  # noqa: F401
    except ImportError:
        return [name for name in names if name not in SKLEARN_NAMES]
    return names
