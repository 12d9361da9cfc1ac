"""How a table file stores its large datasets: chunked and gzip-compressed, or contiguous.

The datasets of :data:`COMPRESSED` (the table, the Gibbs label sets, a sparse table's CSR
arrays and the mask of missing entries) are stored in chunks of at most :data:`CHUNK_BYTES`
(:func:`chunk_shape`), shuffled and compressed at :data:`GZIP_LEVEL`; every other dataset is
contiguous. :func:`dataset_options` gives the writer's keywords (docs/format.md, "Storage").
"""

from __future__ import annotations

from lbm_bench.storage.format import MISSING_DATA, SPARSE_DATA

__all__ = [
    "CHUNK_BYTES", "COMPRESSED", "GIBBS_CHUNK", "GZIP_LEVEL", "chunk_shape", "dataset_options"
]


#: Datasets stored chunked and compressed; every other dataset is contiguous.
COMPRESSED = ("data", "gibbs/cols", "gibbs/rows", "observed") + SPARSE_DATA + MISSING_DATA


#: Compression of the chunked datasets (gzip level, with the shuffle filter).
GZIP_LEVEL = 4


#: Upper bound on the bytes of one chunk.
CHUNK_BYTES = 1 << 20


#: Chunk shape bounds of the Gibbs label sets: (sets, items). Consecutive sets of a
#: chunk repeat the same 64 items, so that deflate finds each set's labels in the
#: previous set's (it matches within 32 KiB): 2,000 sets of 100,000 rows store in
#: about 8 MiB where whole-row chunks took 48 MiB (scripts/benchmarks/bench_sparse_io.py).
GIBBS_CHUNK = (1024, 64)


def chunk_shape(shape: tuple[int, ...], itemsize: int, path: str = "data") -> tuple[int, ...]:
    """Chunk shape of a compressed dataset, at most 1 MiB.

    ``data`` (2-D): whole rows when they fit, ``chunk_cols = min(c, max(1, 2^20 // s))``,
    ``chunk_rows = min(r, max(1, 2^20 // (chunk_cols * s)))``; the Gibbs sets
    ``gibbs/rows`` and ``gibbs/cols``: ``(min(r, 1024), min(c, 64))``
    (:data:`GIBBS_CHUNK`); 1-D datasets (the sparse ``data/...``):
    ``min(n, max(1, 2^20 // s))`` elements (an empty dataset is not chunked).

    Parameters
    ----------
    shape : tuple of int
        Dataset shape.
    itemsize : int
        Bytes per element.
    path : str, default="data"
        The dataset.

    Returns
    -------
    tuple of int

    Examples
    --------
    >>> chunk_shape((2000, 10_000), 1, "gibbs/rows"), chunk_shape((10_000, 10_000), 8)
    ((1024, 64), (13, 10000))
    """
    if len(shape) == 1:
        return (max(1, min(shape[0], max(1, CHUNK_BYTES // itemsize))),)
    n_rows, n_cols = shape
    if path.startswith("gibbs/"):
        return min(n_rows, GIBBS_CHUNK[0]), min(n_cols, GIBBS_CHUNK[1])
    cols = min(n_cols, max(1, CHUNK_BYTES // itemsize))
    rows = min(n_rows, max(1, CHUNK_BYTES // (cols * itemsize)))
    return rows, cols


def dataset_options(path: str, shape: tuple[int, ...], itemsize: int) -> dict[str, object]:
    """Storage keywords of ``h5py.Group.create_dataset`` for dataset ``path``.

    Those of :data:`COMPRESSED` are chunked (:func:`chunk_shape`), shuffled and
    gzip-compressed at :data:`GZIP_LEVEL` unless empty; every other dataset is
    contiguous (no keyword). No dataset records timestamps.
    """
    options: dict[str, object] = {"track_times": False}
    if path in COMPRESSED and 0 not in shape:  # HDF5 cannot chunk an empty dataset
        options.update(
            chunks=chunk_shape(shape, itemsize, path),
            compression="gzip",
            compression_opts=GZIP_LEVEL,
            shuffle=True,
        )
    return options
