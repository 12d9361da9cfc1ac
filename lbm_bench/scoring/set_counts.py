"""Contingency tables of every Gibbs label set against a few labellings, counted band by band.

Every score of :func:`lbm_bench.evaluate` is a function of the per-set contingency tables
``N_s[k, p]`` (items of reference class ``k`` in set ``s`` and of cluster ``p`` in a
labelling): the matching, the losses, CARI and ARI are exact integer functions of them,
and the tables are sums over the items. So the label sets are read in **bands of items**
(all the sets, ``width`` items; the width is a multiple of the 64 items of an HDF5 chunk of
the sets, so each chunk is read and inflated once), the tables of each band are counted
(``jobs`` workers, each opening the file itself: only the path, the band and the
labellings' codes on the band cross to a worker), and the bands' tables are added in
int64. Memory: one band per worker (:data:`BAND_LABELS` labels) and the tables.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from lbm_bench.metrics.contingency_tables import iter_tables

__all__ = ["BAND_LABELS", "Counted", "Labelling", "band_edges", "count_tables", "set_tables"]

#: Labels of one band of items (all the sets): 128 MiB of uint8 labels read at once per worker.
BAND_LABELS = 1 << 27
#: Labels of a block of sets counted at once (bounds the temporaries of counting a band).
_BLOCK_LABELS = 1 << 24
#: Largest numbers of reference classes and of clusters counted class by class
#: (:func:`set_tables`); more are counted by one ``np.bincount`` per block of sets.
_BY_CLASS_CLASSES, _BY_CLASS_CLUSTERS = 16, 256


@dataclass(frozen=True)
class Labelling:
    """A labelling of the items to count every set (or the sets ``sets``) against.

    Attributes
    ----------
    codes : ndarray of shape (n_items,)
        Cluster of every item, in ``[0, k)``.
    k : int
        Number of clusters.
    sets : ndarray of int or None
        Indices of the sets to count (increasing), None for all.
    """

    codes: np.ndarray
    k: int
    sets: np.ndarray | None = None

    def band(self, begin: int, end: int) -> Labelling:
        """This labelling on the items ``begin:end`` (a small copy, what a worker gets)."""
        return Labelling(np.ascontiguousarray(self.codes[begin:end]), self.k, self.sets)


def band_edges(n_sets: int, n_items: int, chunk_items: int = 1, band_labels: int = BAND_LABELS) -> list[int]:
    """Edges ``0 = e_0 < e_1 < ... = n_items`` of the bands: about ``band_labels`` labels each,
    a multiple of ``chunk_items`` items wide (but the last)."""
    chunk_items = max(1, int(chunk_items))
    width = max(chunk_items, band_labels // max(1, n_sets) // chunk_items * chunk_items)
    return [*range(0, n_items, width), n_items]


def _read(sets: Any, begin: int, end: int, n_classes: int) -> np.ndarray:
    from lbm_bench.storage.label_sets import StoredLabelSets, read_items

    if isinstance(sets, StoredLabelSets):
        return sets.read(begin, end)
    return read_items(sets, begin, end, n_classes, "label sets")


@dataclass
class Counted:
    """What :func:`count_tables` counted.

    Attributes
    ----------
    tables : list of ndarray of shape (n_chosen_sets, n_classes, k), int64
        One per labelling: ``tables[s, c, p]`` items of class ``c`` in set ``s`` and of cluster ``p``.
    ref : ndarray of shape (n_items,) or None
        (``floor=True``) every item's modal class over the sets, the first on ties.
    set_index, item_index, labels : list of ndarray
        (``floor=True``) per band, the set, item and label of every label that differs from its
        item's ``ref`` (sorted by set, then item, within a band).
    picked : list of ndarray of shape (n_picked, width)
        Per band, the labels of the sets ``picked``.
    """

    tables: list[np.ndarray]
    ref: np.ndarray | None
    set_index: list[np.ndarray]
    item_index: list[np.ndarray]
    labels: list[np.ndarray]
    picked: list[np.ndarray]

    def entries(self, begin: int, end: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The minority entries of the sets ``begin:end`` over all the bands: the set (counted
        from ``begin``), the item and the label, sorted by set, then item."""
        parts = []
        for set_index, item_index, labels in zip(self.set_index, self.item_index, self.labels, strict=True):
            low, high = np.searchsorted(set_index, [begin, end])
            parts.append((set_index[low:high], item_index[low:high], labels[low:high]))
        set_index = np.concatenate([p[0] for p in parts]) - begin
        order = np.argsort(set_index, kind="stable")  # the bands in item order: items stay increasing
        return (set_index[order], np.concatenate([p[1] for p in parts])[order],
                np.concatenate([p[2] for p in parts])[order])

    def picked_sets(self, picked: Sequence[int]) -> dict[int, np.ndarray]:
        """The whole label sets ``picked``, by index."""
        rows = np.concatenate(self.picked, axis=1) if self.picked else np.zeros((len(picked), 0))
        return {int(s): rows[i] for i, s in enumerate(picked)}


def set_tables(sets: np.ndarray, n_classes: int, codes: np.ndarray, k: int) -> np.ndarray:
    """Contingency tables of every set against ``codes``, shape (n_sets, n_classes, k), int64.

    With few classes and clusters, class by class: the items are ordered by cluster once, and
    each cluster's items of each class but the last are counted in every set (one comparison
    of the stored labels per class, no int64 copy of the sets; the last class is what remains).
    Otherwise one ``np.bincount`` per block of sets
    (:func:`~lbm_bench.metrics.contingency_tables.iter_tables`). The counts are the same.
    """
    n_sets, n_items = sets.shape
    out = np.empty((n_sets, n_classes, k), dtype=np.int64)
    if n_classes > _BY_CLASS_CLASSES or k > _BY_CLASS_CLUSTERS:
        for chosen, part in iter_tables(sets, n_classes, codes.astype(np.int64, copy=False), k):
            out[chosen] = part
        return out
    order = np.argsort(codes, kind="stable")
    sizes = np.bincount(codes, minlength=k)
    edges = np.concatenate([[0], np.cumsum(sizes)])
    step = max(1, _BLOCK_LABELS // max(1, n_items))
    for start in range(0, n_sets, step):
        block = sets[start : start + step][:, order]  # a copy, its items grouped by cluster
        part = out[start : start + step]
        for p in range(k):
            cluster = block[:, edges[p] : edges[p + 1]]
            for c in range(n_classes - 1):
                part[:, c, p] = np.count_nonzero(cluster == c, axis=1)
            part[:, n_classes - 1, p] = sizes[p] - part[:, : n_classes - 1, p].sum(axis=1)
    return out


def _band_counts(sets: Any, begin: int, end: int, n_classes: int, labellings: Sequence[Labelling], floor: bool,
                 picked: Sequence[int] | None) -> tuple:
    """The tables of every labelling on the items ``begin:end`` (a worker's task), and with
    ``floor`` the band's reference classes and minority entries (see :class:`Counted`)."""
    band = _read(sets, begin, end, n_classes)
    tables = []
    for labelling in labellings:
        chosen = band if labelling.sets is None else band[labelling.sets]
        tables.append(set_tables(chosen, n_classes, labelling.codes, labelling.k))
    if not floor:
        return tables, None, None, None, None, None
    n_sets, width = band.shape
    # each item's modal class, the first on ties (the reference of the floor's prepared sides)
    ref = np.stack([np.count_nonzero(band == c, axis=0) for c in range(n_classes)], axis=1).argmax(axis=1)
    flat = np.flatnonzero(band != ref)  # sorted by set, then item
    labels = band.reshape(-1)[flat]
    set_index, item_index = np.divmod(flat, width)
    del flat
    index_dtype = np.int32 if max(n_sets, sets.shape[1]) < 2**31 else np.int64
    return (tables, ref, set_index.astype(index_dtype), (item_index + begin).astype(index_dtype), labels,
            band[list(picked or [])])


def count_tables(
    sets: Any,
    n_classes: int,
    labellings: Sequence[Labelling],
    *,
    jobs: int = 1,
    progress: Any = None,
    floor: bool = False,
    picked: Sequence[int] | None = None,
    band_labels: int | None = None,
) -> Counted:
    """Per-set contingency tables of the label sets ``sets`` against each labelling.

    Parameters
    ----------
    sets : ndarray of shape (n_sets, n_items) or StoredLabelSets
        Label sets in ``[0, n_classes)`` (in memory, or left in their file).
    n_classes : int
        Reference classes counted (the tables' second axis).
    labellings : sequence of Labelling
    jobs : int, default=1
        Workers (loky processes) counting bands of a stored dataset at once; bands of sets
        in memory are counted in this process.
    progress : callable, optional
        Called with the number of items of each band counted.
    floor : bool, default=False
        Also the items' modal classes and the minority entries (the floor's searches).
    picked : sequence of int, optional
        Sets to return whole (with ``floor``: the searches' set starts).
    band_labels : int, optional
        Labels per band (see :func:`band_edges`); :data:`BAND_LABELS` when omitted.

    Returns
    -------
    Counted
    """
    from lbm_bench.storage.label_sets import StoredLabelSets

    n_sets, n_items = (int(v) for v in sets.shape)
    stored = isinstance(sets, StoredLabelSets)
    edges = band_edges(n_sets, n_items, sets.chunk_items if stored else 1,
                       BAND_LABELS if band_labels is None else band_labels)
    out = Counted([np.zeros((n_sets if lab.sets is None else lab.sets.size, n_classes, lab.k), dtype=np.int64)
                   for lab in labellings], None, [], [], [], [])
    refs: list[np.ndarray] = []
    tasks = [(begin, end, [lab.band(begin, end) for lab in labellings])
             for begin, end in zip(edges[:-1], edges[1:], strict=True)]

    def add(parts: tuple, width: int) -> None:
        tables, ref, set_index, item_index, labels, chosen = parts
        for total, part in zip(out.tables, tables, strict=True):
            total += part
        if floor:
            refs.append(ref)
            out.set_index.append(set_index)
            out.item_index.append(item_index)
            out.labels.append(labels)
            out.picked.append(chosen)
        if progress is not None:
            progress(width)

    if stored and jobs > 1 and len(tasks) > 1:
        from joblib import Parallel, delayed

        results = Parallel(n_jobs=min(jobs, len(tasks)), return_as="generator")(
            delayed(_band_counts)(sets, begin, end, n_classes, bands, floor, picked) for begin, end, bands in tasks)
        for (begin, end, _), parts in zip(tasks, results, strict=True):
            add(parts, end - begin)
    else:
        for begin, end, bands in tasks:
            add(_band_counts(sets, begin, end, n_classes, bands, floor, picked), end - begin)
    if floor:
        out.ref = np.concatenate(refs)
    return out
