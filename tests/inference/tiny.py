"""Tiny models whose posterior tests/exact.py enumerates (6x5 tables, 2x2 clusters), one per family and
Poisson with row and column effects; shared by the inference tests."""

from lbm_bench import BernoulliLBM, CategoricalLBM, GaussianLBM, PoissonLBM

TINY_MODELS = {
    "gaussian": GaussianLBM([0.6, 0.4], [0.45, 0.55], [[0.0, 1.0], [0.9, -0.4]], [[1.0, 0.8], [1.2, 0.9]]),
    "poisson": PoissonLBM([0.55, 0.45], [0.5, 0.5], [[1.0, 3.0], [2.5, 0.8]]),
    "bernoulli": BernoulliLBM([0.5, 0.5], [0.6, 0.4], [[0.8, 0.3], [0.25, 0.7]]),
    "categorical": CategoricalLBM(
        [0.45, 0.55], [0.5, 0.5],
        [[[0.6, 0.3, 0.1], [0.2, 0.2, 0.6]], [[0.1, 0.7, 0.2], [0.5, 0.1, 0.4]]],
    ),
    "poisson-effects": PoissonLBM(
        [0.55, 0.45],
        [0.5, 0.5],
        [[1.0, 3.0], [2.5, 0.8]],
        row_effects=[0.8, 1.2, 1.0, 0.9, 1.1, 1.0],
        col_effects=[1.3, 0.7, 1.0, 1.0, 0.9],
    ),
}
