"""Tests of the label helpers of lbm_bench._validation."""

from __future__ import annotations

import numpy as np
import pytest

from lbm_bench._validation import check_integer_array, check_label_sets, check_labels


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
