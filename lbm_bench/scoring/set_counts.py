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

Where the sets mostly agree (the floor's searches need it anyway; otherwise when at most
:data:`ENTRIES_FRACTION` of a band's labels differ from their item's modal class), a band's
tables are counted from its **minority entries** (the labels that differ from their item's
modal class, :func:`entry_tables`): the tables of the modal classes, the same for every set,
corrected by each set's few differing labels; the same integers as counting every label
(:func:`set_tables`, still used for more than 16 classes or 256 clusters). For the floor, a
worker sends back those entries split by class (the items, and how many in each set): what
the floor's sparse indicators are assembled from (:meth:`Counted.minority`), 4 bytes an entry.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from lbm_bench.metrics.contingency_tables import iter_tables
from lbm_bench.tasks.pool import iter_tasks

__all__ = [
    "BAND_LABELS", "ENTRIES_FRACTION", "Counted", "Labelling", "band_edges", "count_tables",
    "entry_tables", "modal_classes", "set_tables"
]

#: Labels of one band of items (all the sets): 128 MiB of uint8 labels read at once per worker.
BAND_LABELS = 1 << 27
#: Labels of a block of sets counted at once (bounds the temporaries of counting a band).
_BLOCK_LABELS = 1 << 24
#: Largest numbers of reference classes and of clusters counted class by class
#: (:func:`set_tables`); more are counted by one ``np.bincount`` per block of sets.
_BY_CLASS_CLASSES, _BY_CLASS_CLUSTERS = 16, 256
#: Largest fraction of a band's labels differing from their item's modal class at which the
#: band's tables are counted from these minority entries (:func:`entry_tables`) without the floor.
ENTRIES_FRACTION = 0.125
#: Largest count of (set, cell, cell) of :func:`entry_tables`'s one joint count (else two counts).
_JOINT_CELLS = 1 << 22


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


def band_edges(n_sets: int, n_items: int, chunk_items: int = 1,
               band_labels: int = BAND_LABELS) -> list[int]:
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
        One per labelling: ``tables[s, c, p]`` items of class ``c`` in set ``s`` and of cluster
        ``p``.
    ref : ndarray of shape (n_items,) or None
        (``floor=True``) every item's modal class over the sets, the first on ties.
    counts : list of ndarray of shape (n_classes, n_sets), int64
        (``floor=True``) per band, the labels of each class in each set that differ from their
        item's ``ref`` (the minority entries).
    items : list of ndarray
        (``floor=True``) per band, the items of those entries, by class, then set, then item.
    picked : list of ndarray of shape (n_picked, width)
        Per band, the labels of the sets ``picked``.
    """

    tables: list[np.ndarray]
    ref: np.ndarray | None
    counts: list[np.ndarray]
    items: list[np.ndarray]
    picked: list[np.ndarray]

    def minority(self, begin: int, end: int) -> list[tuple[np.ndarray, np.ndarray]]:
        """The minority entries of the sets ``begin:end`` over all the bands, one CSR pattern
        ``(indices, indptr)`` per class: row ``s - begin`` lists, increasing, the items to which
        set ``s`` gives that class when it is not their ``ref``. Indices and ``indptr`` are
        int32 when they fit (what :meth:`~lbm_bench.inference.label_sides.LabelSide.of_minority`
        takes)."""
        n_classes = self.counts[0].shape[0] if self.counts else 0
        n_items = self.ref.shape[0]
        # where each (class, set) of each band starts among the band's items
        offsets = [np.concatenate([[0], np.cumsum(counts.reshape(-1))]) for counts in self.counts]
        n_sets = self.counts[0].shape[1]
        parts = []
        for k in range(n_classes):
            counts = np.stack([c[k, begin:end] for c in self.counts])  # (n_bands, end - begin)
            indptr = np.zeros(end - begin + 1, dtype=np.int64)
            np.cumsum(counts.sum(axis=0), out=indptr[1:])
            dtype = np.int32 if n_items < 2**31 and indptr[-1] < 2**31 else np.int64
            indices = np.empty(int(indptr[-1]), dtype=dtype)
            before = np.cumsum(counts, axis=0) - counts  # entries of the earlier bands, set by set
            for band, (items, offset) in enumerate(zip(self.items, offsets, strict=True)):
                starts = offset[k * n_sets + begin : k * n_sets + end + 1]
                shift = indptr[:-1] + before[band] - (starts[:-1] - starts[0])
                indices[np.repeat(shift, counts[band]) + np.arange(starts[-1] - starts[0])] = \
                    items[starts[0] : starts[-1]]
            parts.append((indices, indptr.astype(dtype)))
        return parts

    def picked_sets(self, picked: Sequence[int]) -> dict[int, np.ndarray]:
        """The whole label sets ``picked``, by index."""
        rows = np.concatenate(self.picked, axis=1) if self.picked else np.zeros((len(picked), 0))
        return {int(s): rows[i] for i, s in enumerate(picked)}


def modal_classes(band: np.ndarray, n_classes: int) -> tuple[np.ndarray, int]:
    """Every item's modal class over the sets of ``band`` (n_sets, width), the first on ties
    (int64), and the number of labels that differ from it."""
    n_sets = band.shape[0]
    dtype = np.min_scalar_type(n_sets)  # exact counts of at most n_sets, in the narrowest integers
    counts = np.empty((n_classes, band.shape[1]), dtype=dtype)
    for c in range(n_classes - 1):
        np.sum(band == c, axis=0, dtype=dtype, out=counts[c])
    counts[n_classes - 1] = n_sets - counts[: n_classes - 1].sum(axis=0, dtype=np.int64)
    ref = counts.argmax(axis=0).astype(np.int64)
    return ref, int(band.size - counts.max(axis=0).sum(dtype=np.int64))


def entry_tables(entries: tuple[np.ndarray, np.ndarray, np.ndarray], ref: np.ndarray, n_sets: int,
                 n_classes: int, codes: np.ndarray, k: int) -> np.ndarray:
    """Contingency tables of ``n_sets`` sets against ``codes``, shape (n_sets, n_classes, k), int64,
    from the items' classes ``ref`` (n_items,) and the minority ``entries``: the set, the item and
    the label of every label that differs from its item's ``ref``. The tables of ``ref``, the
    same for every set, plus each set's entries at their labels, minus them at ``ref``: what
    :func:`set_tables` counts on the sets."""
    set_index, item_index, labels = entries
    cells = n_classes * k
    codes = codes.astype(np.intp)
    cell = ref * k + codes  # every item's cell at its reference class
    base = np.bincount(cell, minlength=cells).reshape(n_classes, k)
    if n_sets * cells * cells <= _JOINT_CELLS:  # one count of (set, cell at ref, cell at label)
        key = set_index * (cells * cells)
        key += (cell * cells + codes)[item_index]
        key += np.multiply(labels, k, dtype=np.intp)
        joint = np.bincount(key, minlength=n_sets * cells * cells).reshape(n_sets, cells, cells)
        change = joint.sum(axis=1) - joint.sum(axis=2)
    else:
        at = set_index * cells
        moved = at + codes[item_index]
        moved += np.multiply(labels, k, dtype=np.intp)  # every entry's cell at its label
        at += cell[item_index]  # and at its item's reference class
        change = np.bincount(moved, minlength=n_sets * cells) - np.bincount(
            at, minlength=n_sets * cells)
    return change.reshape(n_sets, n_classes, k) + base


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


def _band_counts(sets: Any, begin: int, end: int, n_classes: int, labellings: Sequence[Labelling],
                 floor: bool, picked: Sequence[int] | None) -> tuple:
    """The tables of every labelling on the items ``begin:end`` (a worker's task), and with
    ``floor`` the band's reference classes and minority entries by class (see :class:`Counted`)."""
    band = _read(sets, begin, end, n_classes)
    n_sets, width = band.shape
    entries = {}
    if floor or n_classes <= _BY_CLASS_CLASSES:
        ref, n_minority = modal_classes(band, n_classes)
        if floor or n_minority <= ENTRIES_FRACTION * band.size:
            flat = np.flatnonzero(band != ref.astype(band.dtype))  # sorted by set, then item
            labels = band.reshape(-1)[flat]
            set_index, item_index = np.divmod(flat, width)
            del flat
            entries[None] = (set_index, item_index, labels)
    tables = []
    for lab in labellings:
        if not entries or lab.k > _BY_CLASS_CLUSTERS:  # (keeps ``entry_tables``' counts small)
            tables.append(
                set_tables(band if lab.sets is None else band[lab.sets], n_classes, lab.codes,
                           lab.k))
            continue
        key = None if lab.sets is None else lab.sets.tobytes()
        if key not in entries:  # the entries of the sets ``lab.sets``, renumbered
            position = np.full(n_sets, -1, dtype=np.int64)
            position[lab.sets] = np.arange(lab.sets.size)
            within = position[set_index]
            keep = within >= 0
            entries[key] = (within[keep], item_index[keep], labels[keep])
        tables.append(
            entry_tables(entries[key], ref, n_sets if lab.sets is None else lab.sets.size,
                         n_classes, lab.codes, lab.k))
    if not floor:
        return tables, None, None, None, None
    del entries
    index_dtype = np.int32 if max(n_sets, sets.shape[1]) < 2**31 else np.int64
    order = np.argsort(labels, kind="stable")  # by class, then set, then item
    counts = np.bincount(labels.astype(np.intp) * n_sets + set_index, minlength=n_classes * n_sets)
    items = (item_index[order] + begin).astype(index_dtype)
    return tables, ref, counts.reshape(n_classes, n_sets), items, band[list(picked or [])]


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
        Also the items' modal classes and the minority entries by class (the floor's searches).
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
    out = Counted([
        np.zeros((n_sets if lab.sets is None else lab.sets.size, n_classes, lab.k), dtype=np.int64)
        for lab in labellings
    ], None, [], [], [])
    refs: list[np.ndarray] = []
    tasks = [(begin, end, [lab.band(begin, end) for lab in labellings])
             for begin, end in zip(edges[:-1], edges[1:], strict=True)]

    def add(parts: tuple, width: int) -> None:
        tables, ref, counts, items, chosen = parts
        for total, part in zip(out.tables, tables, strict=True):
            total += part
        if floor:
            refs.append(ref)
            out.counts.append(counts)
            out.items.append(items)
            out.picked.append(chosen)
        if progress is not None:
            progress(width)

    if stored and jobs > 1 and len(tasks) > 1:
        calls = ((sets, begin, end, n_classes, bands, floor, picked) for begin, end, bands in tasks)
        results = iter_tasks(_band_counts, calls, min(jobs, len(tasks)))
        for (begin, end, _), parts in zip(tasks, results, strict=True):
            add(parts, end - begin)
    else:
        for begin, end, bands in tasks:
            add(_band_counts(sets, begin, end, n_classes, bands, floor, picked), end - begin)
    if floor:
        out.ref = np.concatenate(refs)
    return out
