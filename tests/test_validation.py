"""Tests of the label helpers of lbm_bench._validation."""

from __future__ import annotations

import re

import numpy as np
import pytest
import scipy.sparse as sp

from lbm_bench import GaussianLBM, PoissonLBM
from lbm_bench._records import flag
from lbm_bench._validation import (
    check_block_array,
    check_choice,
    check_count,
    check_integer_array,
    check_label_sets,
    check_labels,
    check_positive_float,
    check_probability,
    check_proportions,
    check_unmasked,
)
from lbm_bench.algorithms.sparsebm import _binary_csr
from lbm_bench.models.registry import check_kind
from lbm_bench.protocol.settings import GenerationSettings


def test_check_labels_converts_once_and_names_the_argument():
    labels = np.array([0, 2, 1], dtype=np.int64)
    assert check_labels("z", labels) is labels  # already int64: no copy
    assert check_labels("z", [0.0, 1.0, True]).dtype == np.int64
    assert check_labels("z", [-3, 4], nonnegative=False).tolist() == [-3, 4]
    with pytest.raises(ValueError, match=r"z must be non-negative, got min -3"):
        check_labels("z", [-3, 4])
    with pytest.raises(ValueError, match=r"z must be 1-D, got shape \(1, 2\)"):
        check_labels("z", [[0, 1]])
    with pytest.raises(ValueError, match=r"z must not be empty, got shape \(0,\)"):
        check_labels("z", [])
    with pytest.raises(ValueError, match=r"z must have length 3, got shape \(2,\)"):
        check_labels("z", [0, 1], length=3)
    with pytest.raises(ValueError, match=r"z must lie in \[0, 2\), got max 2"):
        check_labels("z", [0, 2], n_clusters=2)
    with pytest.raises(TypeError, match=r"z must hold integer labels, got dtype float64 with shape \(2,\)"):
        check_labels("z", [0.5, 1.0])
    with pytest.raises(TypeError, match=r"z must hold integer labels, got dtype float64"):
        check_labels("z", [0.0, np.nan])
    with pytest.raises(TypeError, match=r"z must be an array of integers, got \[\[0, 1\], \[0\]\]"):
        check_labels("z", [[0, 1], [0]])


def test_a_masked_label_array_is_read_honestly():
    """np.asarray drops a mask: a plug-in's masked labels were scored by the values under the mask
    (issue 48). Masked entries are refused; a mask with none masked is the data."""
    labels = np.ma.masked_array([0, 1, 7, 1], mask=[False, False, True, False])
    with pytest.raises(ValueError, match="rows is a masked array with 1 masked entry: give a value for every item"):
        check_labels("rows", labels)
    with pytest.raises(ValueError, match="2 masked entries"):
        check_labels("rows", np.ma.masked_array([0, 1, 2], mask=[True, False, True]))
    np.testing.assert_array_equal(check_labels("rows", np.ma.masked_array([0, 1, 1], mask=False)), [0, 1, 1])
    assert check_unmasked("x", [1, 2]) == [1, 2]


def test_check_label_sets_keeps_the_stored_dtype():
    sets = np.array([[0, 1, 1], [1, 1, 0]], dtype=np.uint8)
    out = check_label_sets("gibbs_rows", sets)
    assert out.dtype == np.uint8 and out.shape == (2, 3)
    assert check_label_sets("gibbs_rows", [0, 1, 1]).shape == (1, 3)
    assert check_label_sets("g", [[-1, 0]], nonnegative=False).tolist() == [[-1, 0]]
    with pytest.raises(ValueError, match=r"g must be 1-D or 2-D \(n_sets, n\), got shape \(1, 1, 2\)"):
        check_label_sets("g", [[[0, 1]]])
    with pytest.raises(ValueError, match=r"g must have 3 columns, got shape \(1, 2\)"):
        check_label_sets("g", [[0, 1]], length=3)
    with pytest.raises(ValueError, match=r"g must be non-negative, got min -1"):
        check_label_sets("g", [[-1, 0]])


def test_check_integer_array():
    assert check_integer_array("t", [[1.0, 2.0], [0.0, 3.0]]).dtype == np.int64
    with pytest.raises(TypeError, match=r"t must hold integers, got dtype <U1"):
        check_integer_array("t", ["a"])


#: How numpy 2 shows its scalars: ``np.float64(-1.0)``, ``np.True_``, ``np.str_('x')``.
NUMPY_REPR = re.compile(r"np\.\w+\(|np\.(True|False)_")


#: (call, the plain text its message must hold), each given numpy scalars or arrays.
PLAIN_MESSAGES = {
    "block array lower": (lambda: check_block_array("stds", np.array([[1.0, -1.0]]), (1, 2), lower=0.0),
                          "stds must be > 0.0, got min -1.0"),
    "block array upper": (lambda: check_block_array("probs", np.array([[0.5, 1.5]]), (1, 2), lower=0.0,
                                                    upper=1.0), "got max 1.5"),
    "gaussian stds": (lambda: GaussianLBM([0.5, 0.5], [1.0], [[0.0], [1.0]], [[1.0], [-1.0]]),
                      "stds must be > 0.0, got min -1.0"),
    "poisson effects": (lambda: PoissonLBM([1.0], [1.0], [[2.0]], np.array([1.0, -2.0]), np.array([1.0])),
                        "row_effects must be positive, got min -2.0"),
    "proportions": (lambda: check_proportions("pi", np.array([0.5, -0.5, 1.0])), "got min -0.5"),
    "positive float": (lambda: check_positive_float("scale", np.float64(-2.0)), "got -2.0"),
    "probability": (lambda: check_probability("risk", np.float32(1.5)), "got 1.5"),
    "count": (lambda: check_count("n", np.float64(2.5)), "got 2.5"),
    "kind": (lambda: check_kind(np.str_("normal")), "got 'normal'"),
    "choice": (lambda: check_choice("method", np.str_("em"), ("cem", "vem")), "got 'em'"),
    "flag setting": (lambda: flag("effects", np.True_), "got True"),
    "choice setting": (lambda: GenerationSettings(calibration_method=np.str_("newton")), "got 'newton'"),
    "sparsebm input": (lambda: _binary_csr(sp.csr_array(np.array([[0.0, 2.5], [1.0, 0.0]]))), "the value 2.5"),
}


@pytest.mark.parametrize("case", sorted(PLAIN_MESSAGES))
def test_messages_show_plain_numbers_not_numpy_reprs(case):
    call, text = PLAIN_MESSAGES[case]
    with pytest.raises((TypeError, ValueError)) as info:
        call()
    message = str(info.value)
    assert not NUMPY_REPR.search(message), message
    assert text in message


@pytest.mark.parametrize("fraction, decimals, text", [
    (0.3, 1, "30.0%"), (0.9996, 1, "99.96%"), (0.99996, 0, "99.996%"), (1.0, 1, "100.0%"), (0.0, 0, "0%"),
    (0.00004, 1, "0.004%"), (0.999, 0, "99.9%"),
])
def test_a_share_strictly_between_0_and_1_never_prints_as_0_or_100_percent(fraction, decimals, text):
    from lbm_bench._validation import describe_percent

    assert describe_percent(fraction, decimals) == text


def test_one_line_joins_a_message_and_names_the_type_when_it_has_none():
    """One helper for every one-line message of a caught error (it was written four times)."""
    from lbm_bench._validation import one_line

    assert one_line(ValueError("two\n  lines")) == "two lines" and one_line(KeyError()) == "KeyError"
    assert one_line("  a  b ") == "a b" and one_line("") == "str"
