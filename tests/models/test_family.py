"""A family as one object (lbm_bench/models/family.py): its model class, the formulas, and one facet per concern."""

import inspect
import pickle
import sys

import numpy as np
import pytest

from lbm_bench.models.base import LatentBlockModel
from lbm_bench.models.bernoulli import BernoulliLBM
from lbm_bench.models.design import random_design
from lbm_bench.models.family import Designs, Estimation, Family, Options, Presentation, StorageCodec
from lbm_bench.models.registry import FAMILIES, as_family, family_names, get_family

#: The facets of a family, by attribute.
FACETS = {"storage": StorageCodec, "presentation": Presentation, "options": Options, "designs": Designs,
          "estimation": Estimation}

#: What the model classes are: the formulas (issue 32 counted 49 methods and 23 class attributes
#: on LatentBlockModel, the HDF5 codec, flags, colours, M-step, ICL priors and more among them).
CORE = {
    # what a family's statistics are
    "family", "kind", "n_stats", "table_dtype", "has_effects", "can_be_sparse", "code_statistics", "sparse",
    "missing_probs", "n_levels",
    # the exponential-family interface and its tables
    "natural_parameters", "log_partition", "mean_statistics", "sufficient_statistics", "sparse_statistics",
    "log_base_measure",
    "check_table", "draw_noise", "table_from_noise", "sparse_level", "block_parameters", "entry_means",
    "row_weights", "col_weights", "fixed_shape",
    # the formulas written once for every family
    "n_row_clusters", "n_col_clusters", "block_shape", "nonempty_blocks", "sample_labels", "sample",
    "statistics", "block_totals", "log_likelihood", "complete_log_likelihood", "with_missing_probs", "check_data",
    "expected_statistics",
}

#: Names the model classes carried before the split (now a facet's, or gone into one).
MOVED = {"option_fields", "check_design_options", "resolve_options", "table_id_tag", "header_values", "entries",
         "block_description"}


def _public(cls: type) -> set[str]:
    return {name for name in dir(cls) if not name.startswith("_")}


def _facet_members() -> set[str]:
    return set().union(*(_public(facet) - {"family"} for facet in FACETS.values()))


def test_the_model_classes_hold_the_formulas_and_no_facet():
    assert _public(LatentBlockModel) | {"family"} == CORE  # a subclass's family is bound by its Family
    for family in FAMILIES:
        extra = _public(family.model) - CORE
        assert not (extra & (_facet_members() | MOVED)), f"{family.kind}: {sorted(extra & _facet_members())}"


@pytest.mark.parametrize("family", FAMILIES, ids=family_names())
def test_a_family_is_one_module_of_a_model_class_and_its_facets(family):
    module = sys.modules[family.model.__module__]
    assert getattr(module, family.kind.upper()) is family and family.model.family is family
    assert issubclass(family.model, LatentBlockModel)
    for name, base in FACETS.items():
        facet = getattr(family, name)
        assert isinstance(facet, base) and facet.family is family
        assert type(facet).__module__ in (module.__name__, "lbm_bench.models.family")  # declared in its module


def test_the_registry_gives_the_family_objects():
    assert tuple(family.kind for family in FAMILIES) == family_names()
    assert get_family("Poisson") is as_family("poisson") is as_family(get_family("poisson"))
    with pytest.raises(ValueError, match="kind must be one of gaussian, poisson, bernoulli, categorical"):
        as_family("ordinal")
    with pytest.raises(TypeError, match="kind must be a string"):
        as_family(3)


def test_a_family_pickles_as_itself_and_its_designs_with_it():
    poisson = get_family("poisson")
    assert pickle.loads(pickle.dumps(poisson)) is poisson  # a worker sees the registered family
    design = pickle.loads(pickle.dumps(random_design(poisson, 2, 2, rng=0)))
    assert design.family is poisson and design.model(1.0).family is poisson


class ToyLBM(BernoulliLBM):
    """A family made of the default facets: what a new module starts from."""


TOY = Family("toy", ToyLBM)


def test_the_default_facets():
    model = ToyLBM([0.5, 0.5], [1.0], [[0.2], [0.8]])
    assert model.kind == "toy" and repr(TOY) == "Family('toy')" and repr(TOY.estimation) == "Estimation('toy')"
    assert TOY.storage.header_values(model) == {} and TOY.storage.value_problem(np.ones(3)) is None
    assert TOY.options.check({}) == {} and TOY.options.count_statistics({}) == ToyLBM.n_stats == 1
    assert TOY.options.id_tag({}) == "" and TOY.designs.draw_effects({}, np.random.default_rng(0)) == (None, None)
    assert TOY.presentation.colormap == "viridis" and TOY.designs.uses_dispersion
    assert TOY.estimation.default_icl == "bic-icl" and TOY.estimation.inference_order is None
    with pytest.raises(NotImplementedError, match="toy blocks have no closed-form ICL"):
        TOY.estimation.conjugate_prior(np.ones(1), 1.0)
    assert not TOY.estimation.describes("i", 0, 1)


def test_a_model_class_belongs_to_one_family():
    with pytest.raises(ValueError, match="ToyLBM already belongs to the toy family"):
        Family("toy2", ToyLBM)


def test_each_facet_documents_its_members():
    for facet in FACETS.values():
        text = inspect.getdoc(facet)
        for name in _public(facet) - {"family"}:
            member = getattr(facet, name)
            assert callable(member) and inspect.getdoc(member) or name in text, f"{facet.__name__}.{name}"
