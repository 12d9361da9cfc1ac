"""The families by name (lbm_bench.models.registry): the one list the package reads, names checked in
one place, and a model built back from the parameters its file stores."""

import numpy as np
import pytest

from lbm_bench import BernoulliLBM, CategoricalLBM, GaussianLBM, PoissonLBM, random_model
from lbm_bench.models import registry


def test_the_registered_families():
    assert tuple(f.model for f in registry.FAMILIES) == (GaussianLBM, PoissonLBM, BernoulliLBM, CategoricalLBM)
    assert registry.family_names() == ("gaussian", "poisson", "bernoulli", "categorical")
    assert registry.sparse_family_names() == tuple(f.kind for f in registry.FAMILIES if f.model.can_be_sparse)
    assert set(registry.sparse_family_names()) == {"poisson", "bernoulli"}
    assert all(registry.get_family(f.kind) is f is f.model.family for f in registry.FAMILIES)


def test_names_are_checked_in_one_place():
    assert registry.check_kind("Poisson") == "poisson" and registry.get_family("BERNOULLI").model is BernoulliLBM
    with pytest.raises(ValueError, match="kind must be one of gaussian, poisson, bernoulli, categorical; got 'beta'"):
        registry.check_kind("beta")
    with pytest.raises(TypeError, match="kind must be a string, got"):
        registry.get_family(3)


@pytest.mark.parametrize("kind", ["gaussian", "poisson", "bernoulli", "categorical"])
def test_a_model_is_built_back_from_its_stored_parameters(kind):
    options = {"categories": 4} if kind == "categorical" else {}
    model = random_model(kind, 3, 2, scale=1.0, rng=0, **options)
    again = registry.model_from_parameters(kind, model.row_proportions, model.col_proportions,
                                           **model.block_parameters())
    assert type(again) is type(model)
    for name, value in model.block_parameters().items():
        assert np.array_equal(again.block_parameters()[name], value)
    X = model.sample(20, 15, rng=1)[0]
    z, w = np.arange(20) % 3, np.arange(15) % 2
    assert again.complete_log_likelihood(X, z, w) == model.complete_log_likelihood(X, z, w)
