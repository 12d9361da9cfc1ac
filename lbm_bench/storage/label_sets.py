"""Label sets left in their file: :class:`StoredLabelSets`, read a band of items at a time.

``load_table(path, label_sets=False)`` puts one in ``table.gibbs.rows`` and ``table.gibbs.cols``
instead of the arrays, so that a large table's sets (2,000 sets of a million rows: 2 GB) are
never all in memory: :mod:`lbm_bench.scoring.set_counts` reads them band by band, each band the
whole width of the dataset's HDF5 chunks (64 items, see docs/format.md), in the process that
counts it. Only the path and the dataset's name cross to a worker, never the labels.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import h5py
import numpy as np

from lbm_bench.storage.sources import FormatError

__all__ = ["StoredLabelSets", "read_items"]


@dataclass(frozen=True)
class StoredLabelSets:
    """The label sets of dataset ``name`` of the table file ``path``, not read.

    Attributes
    ----------
    path : str
        The table file.
    name : str
        ``"gibbs/rows"`` or ``"gibbs/cols"``.
    shape : tuple of int
        ``(n_sets, n_items)``.
    dtype : numpy.dtype
        The stored unsigned dtype.
    n_classes : int
        Labels lie in ``[0, n_classes)`` (the header's ``g`` or ``m``); checked as they are read.
    chunk_items : int
        Items per HDF5 chunk (1 for a contiguous dataset).
    """

    path: str
    name: str
    shape: tuple[int, int]
    dtype: np.dtype
    n_classes: int
    chunk_items: int = 1

    @property
    def ndim(self) -> int:
        return 2

    @classmethod
    def of_dataset(cls, dataset: h5py.Dataset, n_classes: int) -> StoredLabelSets:
        chunks = dataset.chunks
        return cls(path=os.fspath(dataset.file.filename), name=dataset.name.lstrip("/"),
                   shape=tuple(int(v) for v in dataset.shape), dtype=dataset.dtype,
                   n_classes=int(n_classes), chunk_items=int(chunks[1]) if chunks else 1)

    def read(self, begin: int, end: int) -> np.ndarray:
        """The labels of items ``begin:end`` of every set, shape (n_sets, end - begin)."""
        with h5py.File(self.path, "r") as file:
            return read_items(file[self.name], begin, end, self.n_classes, f"{self.path}: dataset "
                                                                           f"{self.name}")


def read_items(dataset, begin: int, end: int, n_classes: int, where: str) -> np.ndarray:
    """Items ``begin:end`` of every set of ``dataset`` (an array or an HDF5 dataset), their
    labels checked to lie in ``[0, n_classes)`` (:class:`~lbm_bench.storage.sources.FormatError`
    naming ``where`` otherwise: what ``load_table`` refuses the file for)."""
    block = np.asarray(dataset[:, begin:end])
    if block.size and int(block.max()) >= n_classes:
        raise FormatError(f"{where} holds label {int(block.max())}, outside [0, {n_classes})")
    return block
