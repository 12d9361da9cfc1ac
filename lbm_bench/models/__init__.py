"""Latent block models: one module per family on a shared base, the registry, designs.

- :mod:`~lbm_bench.models.base`: the exponential-family interface, the formulas every
  family shares (:class:`LatentBlockModel`);
- :mod:`~lbm_bench.models.family`: a family as one object, its model class and its
  facets by concern (:class:`Family`);
- :mod:`~lbm_bench.models.gaussian`, :mod:`~lbm_bench.models.poisson`,
  :mod:`~lbm_bench.models.bernoulli`, :mod:`~lbm_bench.models.categorical`: the
  families, one module each;
- :mod:`~lbm_bench.models.registry`: the families by name (:func:`get_family`, and
  :func:`as_family` at a boundary that takes a name or a family);
- :mod:`~lbm_bench.models.design`: scale-free designs (protocol step 1);
- :mod:`~lbm_bench.models.data`: a table's storage, dense or sparse, decided once, with
  its mask of missing entries;
- :mod:`~lbm_bench.models.missing`: how entries go missing (at random, by block);
- :mod:`~lbm_bench.models.observed`: the observed-data likelihood every family gets, as
  the engine sums it.
"""

from lbm_bench.models.base import LatentBlockModel
from lbm_bench.models.bernoulli import BernoulliLBM
from lbm_bench.models.categorical import CategoricalLBM
from lbm_bench.models.data import TableData
from lbm_bench.models.design import ModelDesign, random_design, random_model
from lbm_bench.models.family import Family
from lbm_bench.models.gaussian import GaussianLBM
from lbm_bench.models.poisson import PoissonLBM
from lbm_bench.models.registry import as_family, family_names, get_family, model_from_parameters
from lbm_bench.models.symmetry import find_symmetry

__all__ = [
    "BernoulliLBM",
    "CategoricalLBM",
    "Family",
    "GaussianLBM",
    "LatentBlockModel",
    "ModelDesign",
    "PoissonLBM",
    "TableData",
    "as_family",
    "family_names",
    "find_symmetry",
    "get_family",
    "model_from_parameters",
    "random_design",
    "random_model",
]
