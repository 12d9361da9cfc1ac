"""Latent block models: the three families and scale-free designs (protocol step 1)."""

from lbm_bench.models.design import ModelDesign, random_design, random_model
from lbm_bench.models.families import (
    BernoulliLBM,
    GaussianLBM,
    LatentBlockModel,
    PoissonLBM,
    find_symmetry,
    model_from_parameters,
)

__all__ = [
    "BernoulliLBM",
    "GaussianLBM",
    "LatentBlockModel",
    "ModelDesign",
    "PoissonLBM",
    "find_symmetry",
    "model_from_parameters",
    "random_design",
    "random_model",
]
