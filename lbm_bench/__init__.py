"""lbm-bench: co-clustering benchmark tables with a certified conditional Bayes risk.

The public API:

- models: :class:`GaussianLBM`, :class:`PoissonLBM`, :class:`BernoulliLBM`,
  :func:`random_design`, :func:`random_model`, :func:`find_symmetry`;
- inference with the true parameters: :func:`map_labels` (Algorithm 1),
  :func:`gibbs_labels` (blockwise Gibbs sampler).
"""

from .classifier import MapResult, map_labels
from .design import ModelDesign, random_design, random_model
from .gibbs import GibbsSamples, RiskEstimate, gibbs_labels
from .models import (
    BernoulliLBM,
    GaussianLBM,
    LatentBlockModel,
    PoissonLBM,
    find_symmetry,
    model_from_parameters,
)

__version__ = "0.1.0"

__all__ = [
    "BernoulliLBM",
    "GaussianLBM",
    "GibbsSamples",
    "LatentBlockModel",
    "MapResult",
    "ModelDesign",
    "PoissonLBM",
    "RiskEstimate",
    "find_symmetry",
    "gibbs_labels",
    "map_labels",
    "model_from_parameters",
    "random_design",
    "random_model",
    "__version__",
]
