"""One request for a table (lbm_bench.protocol.request): checked once on construction, naming the
argument; its family's options checked and another family's refused; a call's arguments split into
the request and the generation settings."""

import pytest

from lbm_bench import GenerationSettings, ModelOptions, TableRequest
from lbm_bench.protocol.request import RISK_CRITERIA, RequestOptions, request_from_arguments


def test_a_request_is_checked_and_normalised_once():
    request = TableRequest("Poisson", 60, 40, 3, 2, 0.1, model_options={"base_rate": 3.0, "effects": True})
    assert request.kind == "poisson" and request.shape == (60, 40) and request.clusters == (3, 2)
    assert request.criterion == "bayes" and isinstance(request.model_options, ModelOptions)
    assert request.family.kind == "poisson" and not request.sparse
    assert request.design_options()["effects"] == (60, 40)  # effects=True resolved for the shape
    assert request.describe() == ("poisson 60x40 table, 3x2 clusters, target risk 0.1 (criterion bayes, "
                                  "base_rate=3.0, effects=True)")
    assert request.replace(target_risk=0.2).target_risk == 0.2 and request.target_risk == 0.1
    assert TableRequest("bernoulli", 60, 40, 2, 2, 0.1, model_options={"density": 0.05}).sparse
    assert TableRequest("categorical", 60, 40, 2, 2, 0.1, model_options={"categories": 5}).family_options() == {
        "categories": 5}


@pytest.mark.parametrize("args, options, error, message", [
    (("beta", 60, 40, 2, 2, 0.1), {}, ValueError, "kind must be one of"),
    (("gaussian", 60, 40, 1, 2, 0.1), {}, ValueError, "n_row_clusters must be >= 2"),
    (("gaussian", 3, 40, 4, 2, 0.1), {}, ValueError, "more clusters than rows or columns: 4x2 clusters for a 3x40"),
    (("gaussian", 60, 40, 2, 2, 1.5), {}, ValueError, "target_risk"),
    (("gaussian", 10, 10, 2, 2, 0.001), {}, ValueError, r"below 1/\(n_rows\*n_cols\) = 0.01"),
    (("gaussian", 60, 40, 2, 2, 0.1), {"criterion": "floor"}, ValueError, "criterion must be one of"),
    (("gaussian", 60, 40, 2, 2, 0.1), {"model_options": {"effects": True}}, ValueError,
     "effects is defined for the poisson kind, got kind='gaussian'"),
    (("gaussian", 60, 40, 2, 2, 0.1), {"model_options": 3}, TypeError, "model_options must be a ModelOptions"),
    (("categorical", 60, 40, 2, 2, 0.1), {}, ValueError, "categorical tables need categories"),
])
def test_bad_requests_name_the_argument(args, options, error, message):
    with pytest.raises(error, match=message):
        TableRequest(*args, **options)


def test_a_calls_arguments_split_into_the_request_and_the_settings():
    request, settings = request_from_arguments("gaussian", (60, 40, 3, 2, 0.1), None,
                                               {"n_samples": 300, "equal_proportions": True, "criterion": "map"},
                                               caller="generate_table")
    assert request.criterion == "map" and request.model_options.equal_proportions
    assert settings.n_samples == 300 and isinstance(settings, GenerationSettings)
    base = GenerationSettings(n_chains=4)
    same, merged = request_from_arguments(request, (None,) * 5, base, {"tolerance": 0.02}, caller="generate_table")
    assert same is request and (merged.n_chains, merged.tolerance) == (4, 0.02)
    with pytest.raises(TypeError, match="generate_table\\(\\) takes a TableRequest alone"):
        request_from_arguments(request, (60, None, None, None, None), None, {}, caller="generate_table")
    with pytest.raises(ValueError, match="equal_proportions: give model options and criterion in the TableRequest"):
        request_from_arguments(request, (None,) * 5, None, {"equal_proportions": True}, caller="generate_table")
    with pytest.raises(TypeError, match="calibrate_scale\\(\\) needs kind, n_rows"):
        request_from_arguments("gaussian", (60, 40, None, 2, 0.1), None, {}, caller="calibrate_scale")
    with pytest.raises(ValueError, match="unknown option\\(s\\) colour; allowed: "):
        request_from_arguments("gaussian", (60, 40, 3, 2, 0.1), None, {"colour": 1}, caller="generate_table")
    with pytest.raises(TypeError, match="settings must be a GenerationSettings"):
        request_from_arguments("gaussian", (60, 40, 3, 2, 0.1), {"n_samples": 3}, {}, caller="generate_table")
    assert RequestOptions().criterion == "bayes" and RISK_CRITERIA == ("bayes", "map")
