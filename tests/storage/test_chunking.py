"""How table files store their large datasets (lbm_bench.storage.chunking): chunks of at most
1 MiB, the Gibbs sets' chunks of 1024 sets by 64 items, an empty dataset contiguous (the files'
own datasets are checked against these in test_format.py)."""

from __future__ import annotations

import pytest

from lbm_bench.storage.chunking import chunk_shape, dataset_options


@pytest.mark.parametrize(
    ("shape", "itemsize", "path", "expected"),
    [
        ((50, 12), 1, "gibbs/rows", (50, 12)),
        ((2000, 10_000), 1, "gibbs/rows", (1024, 64)),
        ((2000, 100_000), 2, "gibbs/cols", (1024, 64)),
        ((5000, 30), 1, "gibbs/cols", (1024, 30)),
        ((10_000, 10_000), 8, "data", (13, 10_000)),
        ((7, 300_000), 8, "data", (1, 131_072)),
        ((3, 2_000_000), 1, "data", (1, 1_048_576)),
    ],
)
def test_chunk_shape_formula(shape, itemsize, path, expected) -> None:
    chunk = chunk_shape(shape, itemsize, path)
    if path == "data":
        cols = min(shape[1], max(1, 2**20 // itemsize))
        rows = min(shape[0], max(1, 2**20 // (cols * itemsize)))
    else:
        rows, cols = min(shape[0], 1024), min(shape[1], 64)
    assert chunk == expected == (rows, cols)
    assert chunk[0] * chunk[1] * itemsize <= 2**20


@pytest.mark.parametrize(("length", "itemsize", "expected"), [(94, 4, 94), (10**7, 4, 262_144),
                                                               (10**7, 1, 1_048_576)])
def test_chunk_shape_of_sparse_datasets(length, itemsize, expected) -> None:
    assert chunk_shape((length,), itemsize, "data/indices") == (expected,)
    assert expected == max(1, min(length, 2**20 // itemsize))
    assert "chunks" not in dataset_options("data/indices", (0,), itemsize)  # empty: contiguous
