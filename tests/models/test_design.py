"""Scale-free designs (lbm_bench.models.design): drawn reproducibly with the options asked for, a model
at every scale from the family, the same design without effects or as plain arrays, missing entries
laid on top, and options that are another family's or make no sense refused in words."""

import numpy as np
import pytest

from lbm_bench import ModelDesign, find_symmetry, random_design, random_model
from lbm_bench.models.design import check_missing_together, design_option_fields


@pytest.mark.parametrize("kind, options", [("gaussian", {}), ("poisson", {"base_rate": 4.0}), ("bernoulli", {}),
                                           ("categorical", {"categories": 3})])
def test_designs_are_drawn_reproducibly(kind, options):
    design = random_design(kind, 3, 2, rng=5, **options)
    again = random_design(kind, 3, 2, rng=np.random.default_rng(5), **options)
    assert isinstance(design, ModelDesign) and design.kind == kind and design.block_shape == (3, 2)
    for name, value in design.to_dict().items():
        assert np.array_equal(value, again.to_dict()[name]), name
    assert np.isclose(design.row_proportions.sum(), 1) and np.all(design.row_proportions >= 0.5 / 3)
    assert find_symmetry(design.model(1.0)) is None and design.family.kind == kind
    assert type(random_model(kind, 3, 2, scale=1.3, rng=5, **options)) is type(design.model(1.3))


def test_equal_options_and_the_model_at_a_scale():
    design = random_design("gaussian", 3, 3, equal_proportions=True, equal_dispersions=True, rng=0)
    assert np.allclose(design.row_proportions, 1 / 3) and np.allclose(design.dispersion, 1.0)
    spread = random_design("gaussian", 3, 3, dispersion_spread=0.1, rng=0).dispersion
    assert np.all((0.9 <= spread) & (spread <= 1.1))
    model = design.model(0.7)
    assert np.allclose(model.means, 0.7 * design.pattern) and np.array_equal(model.row_proportions,
                                                                              design.row_proportions)
    with pytest.raises(ValueError, match="scale must be finite and > 0"):
        design.model(-1.0)


def test_effects_are_dropped_on_demand_and_kept_in_the_plain_form():
    design = random_design("poisson", 2, 2, effects=(30, 20), rng=1)
    assert design.row_effects.shape == (30,) and np.isclose(design.row_effects.mean(), 1)
    plain = design.without_effects()
    assert plain.row_effects is None and np.array_equal(plain.pattern, design.pattern)
    assert set(design.to_dict()) >= {"row_effects", "col_effects"} and "row_effects" not in plain.to_dict()


def test_missing_entries_on_top_of_the_design():
    complete = random_design("bernoulli", 2, 2, rng=2)
    block = random_design("bernoulli", 2, 2, missing={"rate": 0.3, "mechanism": "block"}, rng=2)
    assert np.array_equal(block.pattern, complete.pattern)  # the mask's pattern is drawn last
    assert complete.missing is None and complete.missing_probs(1.0) is None
    assert block.missing.mechanism == "block" and block.missing_probs(1.0).shape == (2, 2)
    assert block.model(1.0).missing_probs.shape == (2, 2)
    at_random = random_design("bernoulli", 2, 2, missing=0.3, rng=2)
    assert np.allclose(at_random.missing_probs(1.0), 0.3)
    with pytest.raises(ValueError, match="missing_mechanism is set but missing is 0"):
        random_design("bernoulli", 2, 2, missing_mechanism="block", rng=2)
    with pytest.raises(ValueError, match="missing=0.2 is more than density=0.1"):
        check_missing_together({"missing": 0.2, "density": 0.1})


def test_other_families_options_are_refused_in_words():
    with pytest.raises(ValueError, match="effects is defined for the poisson kind, got kind='gaussian'"):
        random_design("gaussian", 2, 2, effects=(3, 3))
    with pytest.raises(ValueError, match="density is defined for the poisson and bernoulli kinds"):
        random_design("gaussian", 2, 2, density=0.1)
    with pytest.raises(TypeError, match="unexpected keyword argument 'colour'"):
        random_design("gaussian", 2, 2, colour=1)
    assert {"equal_proportions", "density", "effects", "categories", "missing"} <= set(design_option_fields())
