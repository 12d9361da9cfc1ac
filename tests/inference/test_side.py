"""The storage-free part of a conditional label step (lbm_bench.inference.side): label helpers,
inverse-CDF sampling, and the logits of a side from block sums against a direct sum."""

import numpy as np
import pytest

from lbm_bench.inference.side import (
    Side,
    class_mass,
    onehot_t,
    sample_categorical,
    sample_class_major,
)


def test_onehot_and_class_mass():
    labels = np.array([[[0, 2, 2, 1]], [[1, 1, 0, 0]]], dtype=np.uint8)  # (B=2, C=1, n=4)
    onehot = onehot_t(labels, 3)
    assert onehot.shape == (2, 1, 3, 4) and onehot.dtype == np.float64
    assert onehot[0, 0].tolist() == [[1, 0, 0, 0], [0, 0, 0, 1], [0, 1, 1, 0]]
    assert class_mass(labels, 3, None).tolist() == [[[1, 1, 2]], [[2, 2, 0]]]
    weights = np.array([1.0, 10.0, 100.0, 1000.0])
    assert class_mass(labels, 3, weights).tolist() == [[[1, 1000, 110]], [[1100, 11, 0]]]


def test_both_samplers_give_the_same_labels_from_the_same_uniforms():
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(5, 7, 4)) * 3  # (..., n, k)
    labels = sample_categorical(logits, np.random.default_rng(1))
    u = np.random.default_rng(1).random((5, 7))
    class_major = np.array(np.moveaxis(logits, -1, -2), order="C")
    assert np.array_equal(sample_class_major(class_major, u), labels)
    assert labels.dtype == np.int64 and labels.shape == (5, 7)


def test_draws_follow_the_softmax():
    """Seeded: 200,000 draws of 3 classes, each frequency within 5 standard errors of its probability."""
    logits = np.log(np.array([0.2, 0.5, 0.3]))
    n = 200_000
    labels = sample_categorical(np.broadcast_to(logits, (n, 3)), np.random.default_rng(7))
    freq = np.bincount(labels, minlength=3) / n
    assert np.all(np.abs(freq - [0.2, 0.5, 0.3]) < 5 * np.sqrt(0.25 / n))
    shifted = sample_categorical(np.broadcast_to(logits + 1000.0, (n, 3)), np.random.default_rng(7))
    assert np.array_equal(shifted, labels)  # only differences of logits matter, even large ones


class _Plain(Side):
    """A side with nothing of a storage: only the model's part is tested."""


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("counted", [False, True])
def test_logits_from_block_sums(weighted, counted):
    rng = np.random.default_rng(3)
    p, k, o, n, B, C = 2, 3, 2, 5, 2, 1
    eta, log_partition, log_prior = rng.normal(size=(p, k, o)), rng.normal(size=(k, o)), np.log([0.2, 0.3, 0.5])
    own = rng.uniform(0.5, 2, n) if weighted else None
    other = rng.integers(0, o, size=(B, C, 4))
    other_weights = rng.uniform(0.5, 2, 4) if weighted else None
    count_partition = rng.uniform(0, 1, size=(k, o)) if counted else None
    side = _Plain()
    side.set_model(eta, log_partition, log_prior, own, other_weights, count_partition)
    sums = rng.normal(size=(B, C, o, p, n))
    got = side.logits(sums, other)
    assert got.shape == (B, C, k, n)
    for b in range(B):
        mass = np.array([(other_weights if weighted else np.ones(4))[other[b, 0] == ll].sum() for ll in range(o)])
        counts = np.array([(other[b, 0] == ll).sum() for ll in range(o)])
        for kk in range(k):
            for i in range(n):
                want = sum(eta[pp, kk, ll] * sums[b, 0, ll, pp, i] for ll in range(o) for pp in range(p))
                want -= (own[i] if weighted else 1.0) * mass @ log_partition[kk]
                if counted:
                    want -= counts @ count_partition[kk]
                want += log_prior[kk]
                assert got[b, 0, kk, i] == pytest.approx(want, rel=1e-12, abs=1e-12)
