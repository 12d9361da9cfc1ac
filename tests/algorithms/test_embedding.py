"""Low-rank embeddings of rows (lbm_bench.algorithms.embedding): the coordinates of the rows on the
leading singular vectors of the column-centred table, by a dense SVD or ARPACK, sparse tables never
densified, the same at every call."""

import numpy as np
import pytest
import scipy.sparse as sp

from lbm_bench.algorithms import embedding
from lbm_bench.algorithms.embedding import embed_rows


def _reference(X, r):
    centred = X - X.mean(axis=0)
    u, s, _ = np.linalg.svd(centred, full_matrices=False)
    return u[:, :r] * s[:r]


def _same_up_to_signs(a, b):
    return all(np.allclose(a[:, j], b[:, j], atol=1e-8) or np.allclose(a[:, j], -b[:, j], atol=1e-8)
               for j in range(a.shape[1]))


def test_the_coordinates_are_the_scaled_singular_vectors_of_the_centred_table():
    X = np.random.default_rng(0).poisson(2.0, size=(40, 25)).astype(float)
    coords = embed_rows(X, 3)
    assert coords.shape == (40, 3)
    assert _same_up_to_signs(coords, _reference(X, 3))
    # the distances between rows of the embedding are those of the centred rows projected
    assert np.allclose(np.linalg.norm(coords, axis=0), np.linalg.svd(X - X.mean(axis=0), compute_uv=False)[:3])


def test_the_rank_is_capped_by_the_table():
    X = np.arange(12.0).reshape(4, 3) ** 2
    assert embed_rows(X, 10).shape == (4, 2)  # at most min(n - 1, D - 1)
    assert embed_rows(np.ones((1, 5)), 3).shape == (1, 1)  # at least one coordinate


@pytest.mark.parametrize("limit", [0, embedding.DENSE_SVD_LIMIT])
def test_sparse_and_large_tables_go_through_arpack_with_the_same_result(monkeypatch, limit):
    rng = np.random.default_rng(1)
    dense = (rng.random((60, 30)) < 0.1) * rng.poisson(3.0, size=(60, 30)).astype(float)
    monkeypatch.setattr(embedding, "DENSE_SVD_LIMIT", limit)  # 0: the dense table goes through ARPACK too
    table = sp.csr_array(dense)

    def refuse(*args, **kwargs):
        raise AssertionError("the sparse table was densified")

    monkeypatch.setattr(type(table), "toarray", refuse)
    coords = embed_rows(table, 2)
    assert _same_up_to_signs(coords, _reference(dense, 2))
    assert np.array_equal(coords, embed_rows(table, 2))  # ARPACK's start is fixed: the same bytes
    if limit == 0:
        assert _same_up_to_signs(embed_rows(dense, 2), coords)
