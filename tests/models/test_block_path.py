"""lbm_bench.models.block_path: one scale through a fitted model, for every family."""

import numpy as np
import pytest

from lbm_bench.models.block_path import BlockPath, interaction_of
from lbm_bench.models.design import ModelDesign
from lbm_bench.models.registry import FAMILIES

MODELS = {
    "gaussian": {"means": [[0.0, 2.0], [1.0, -1.0]], "stds": [[1.0, 0.5], [2.0, 1.0]]},
    "poisson": {"rates": [[1.0, 4.0], [0.5, 2.0]]},
    "bernoulli": {"probs": [[0.1, 0.7], [0.5, 0.2]]},
    "categorical": {"probs": [[[0.7, 0.2, 0.1], [0.1, 0.8, 0.1]], [[0.1, 0.1, 0.8], [0.3, 0.3, 0.4]]]},
}
CENTRES = {
    "gaussian": {"means": [[0.5]], "stds": [[1.5]]},
    "poisson": {"rates": [[2.0]]},
    "bernoulli": {"probs": [[0.35]]},
    "categorical": {"probs": [[[0.3, 0.35, 0.35]]]},
}


def _design(family):
    model = family.model([0.6, 0.4], [0.5, 0.5], **MODELS[family.kind])
    centre = family.model([1.0], [1.0], **CENTRES[family.kind])
    first = model.block_parameters()[family.storage.parameter_names[0]]
    return model, centre, ModelDesign(family, [0.6, 0.4], [0.5, 0.5], first, np.ones((2, 2)),
                                      path=BlockPath.of(model, centre))


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.kind)
def test_scale_one_is_the_fitted_model_and_small_scales_one_level(family):
    model, centre, design = _design(family)
    for name, value in model.block_parameters().items():
        np.testing.assert_allclose(design.model(1.0).block_parameters()[name], value, rtol=1e-9, atol=1e-12)
    near_zero = design.model(1e-9)
    eta = near_zero.natural_parameters
    np.testing.assert_allclose(eta, np.broadcast_to(eta[:, :1, :1], eta.shape), atol=1e-7)  # every block alike
    np.testing.assert_allclose(near_zero.expected_statistics(), model.expected_statistics(), rtol=1e-8)


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.kind)
def test_the_path_moves_the_contrasts_in_the_natural_parameter_and_keeps_the_level(family):
    """A straight line in the natural parameter, shifted by one value per statistic so that the
    table's expected statistics (its mean count, density, mean and variance, category shares)
    are the fitted model's at every scale."""
    model, centre, design = _design(family)
    eta0, eta1 = centre.natural_parameters, model.natural_parameters
    for scale in (0.05, 0.3, 0.7, 1.5):
        moved = design.model(scale)
        np.testing.assert_allclose(moved.expected_statistics(), model.expected_statistics(), rtol=1e-8)
        shift = moved.natural_parameters - (eta0 + scale * (eta1 - eta0))
        np.testing.assert_allclose(shift, np.broadcast_to(shift[:, :1, :1], shift.shape), atol=1e-7)


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.kind)
def test_from_the_tables_own_level_the_path_needs_no_shift_at_its_ends(family):
    """With the centre the one-block model at the fitted model's level (as fit_design makes it),
    scale 0 is the centre itself."""
    model, _, design = _design(family)
    level = design.model(1e-12)  # every block at the model's level
    centred = ModelDesign(family, [0.6, 0.4], [0.5, 0.5], design.pattern, np.ones((2, 2)),
                          path=BlockPath.of(model, level))
    np.testing.assert_allclose(centred.model(1e-9).natural_parameters[:, 0, 0], level.natural_parameters[:, 0, 0],
                               atol=1e-6)


def test_gaussian_precisions_stay_positive_far_past_scale_one():
    family = next(f for f in FAMILIES if f.kind == "gaussian")
    _, _, design = _design(family)
    stds = design.model(50.0).stds  # the block of std 2 > the centre's 1.5 leaves the domain
    assert np.all(np.isfinite(stds)) and np.all(stds > 0)


def test_bad_paths_are_refused():
    with pytest.raises(ValueError, match=r"shape \(n_stats, g, m\)"):
        BlockPath(np.zeros((2, 2)), np.zeros(1))
    with pytest.raises(ValueError, match="centre must have shape"):
        BlockPath(np.zeros((1, 2, 2)), np.zeros(2))
    with pytest.raises(ValueError, match="finite"):
        BlockPath(np.full((1, 2, 2), np.nan), np.zeros(1))
    family = FAMILIES[0]
    with pytest.raises(ValueError, match="path's blocks"):
        ModelDesign(family, [0.5, 0.5], [1.0], np.zeros((2, 1)), np.ones((2, 1)),
                    path=BlockPath(np.zeros((family.model.n_stats, 2, 2)), np.zeros(family.model.n_stats)))


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.kind)
def test_mean_statistics_are_the_gradient_of_the_log_partition(family):
    """E[T] per block is dA/deta (what the level's shift solves on), by central differences."""
    model, _, design = _design(family)
    eta, step = model.natural_parameters, 1e-6
    gradient = np.empty_like(eta)
    for q in range(eta.shape[0]):
        bump = np.zeros_like(eta)
        bump[q] = step
        up = family.designs.model_from_natural(design, eta + bump).log_partition
        down = family.designs.model_from_natural(design, eta - bump).log_partition
        gradient[q] = (up - down) / (2 * step)
    np.testing.assert_allclose(model.mean_statistics, gradient, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(model.expected_statistics(),
                               np.einsum("k,skl,l->s", [0.6, 0.4], model.mean_statistics, [0.5, 0.5]))


#: Families whose margins a knee keeps (a Gaussian's second moments by class are not always
#: reachable by shifts of its natural parameters: no Gaussian design declares a knee).
KNEE_FAMILIES = [f for f in FAMILIES if f.kind != "gaussian"]


def _knee_design(family, knee=0.5):
    model, centre, _ = _design(family)
    if family.kind == "poisson":  # MODELS' rates are rank one: no interaction
        model = family.model([0.6, 0.4], [0.5, 0.5], rates=[[1.0, 4.0], [3.0, 0.5]])
    first = model.block_parameters()[family.storage.parameter_names[0]]
    return model, ModelDesign(family, [0.6, 0.4], [0.5, 0.5], first, np.ones((2, 2)),
                              path=BlockPath.of(model, centre, knee))


def _margins(model):
    means = model.mean_statistics
    return (np.einsum("skl,l->sk", means, model.col_proportions),
            np.einsum("k,skl->sl", model.row_proportions, means))


@pytest.mark.parametrize("family", KNEE_FAMILIES, ids=lambda f: f.kind)
def test_from_the_knee_up_the_classes_margins_are_kept_and_only_the_interaction_moves(family):
    model, design = _knee_design(family)
    gamma = interaction_of(model.natural_parameters, model.row_proportions, model.col_proportions)[1]
    assert np.abs(gamma).max() > 0.1
    for scale in (0.5, 0.6, 0.9, 1.5):
        moved = design.model(scale)
        for kept, fitted in zip(_margins(moved), _margins(model), strict=True):
            np.testing.assert_allclose(kept, fitted, rtol=1e-8)
        moved_gamma = interaction_of(moved.natural_parameters, moved.row_proportions, moved.col_proportions)[1]
        np.testing.assert_allclose(moved_gamma, (scale - 0.5) / 0.5 * gamma, atol=1e-6)


@pytest.mark.parametrize("family", KNEE_FAMILIES, ids=lambda f: f.kind)
def test_below_the_knee_the_knees_blocks_go_straight_to_the_level(family):
    """Below the knee the path is continuous at it, keeps the table's level, and reaches one level."""
    model, design = _knee_design(family)
    at_knee = design.model(0.5).natural_parameters
    np.testing.assert_allclose(design.model(0.5 - 1e-9).natural_parameters, at_knee, atol=1e-6)
    for scale in (0.05, 0.25, 0.45):
        np.testing.assert_allclose(design.model(scale).expected_statistics(), model.expected_statistics(), rtol=1e-8)
    eta = design.model(1e-9).natural_parameters
    np.testing.assert_allclose(eta, np.broadcast_to(eta[:, :1, :1], eta.shape), atol=1e-6)
    np.testing.assert_allclose(design.model(1.0).natural_parameters, model.natural_parameters, rtol=1e-12)


def test_blocks_without_interaction_take_the_straight_line():
    """Classes that differ only by their totals (rank-one rates) have no interaction to move: the
    knee would be a stretch of equal risk, so the path is the straight line."""
    family = next(f for f in FAMILIES if f.kind == "poisson")
    model = family.model([0.6, 0.4], [0.5, 0.5], rates=np.outer([1.0, 3.0], [0.5, 2.0]))
    assert BlockPath.of(model, family.model([1.0], [1.0], rates=[[2.0]]), 0.5).knee is None
    with pytest.raises(ValueError, match=r"knee must lie in \(0, 1\)"):
        BlockPath(model.natural_parameters, np.zeros(1), 1.0)


def test_poisson_and_bernoulli_designs_keep_their_margins_and_the_others_go_straight():
    assert {f.kind: f.designs.path_knee for f in FAMILIES} == {
        "gaussian": None, "poisson": 0.5, "bernoulli": 0.5, "categorical": None}
