"""One side of the Gibbs label sets (the rows, or the columns), prepared for the Bayes rule's
repeated weighted counts (:mod:`lbm_bench.inference.bayes`).

Every item has a reference label (its modal label over the sets); the sets that disagree
with it (few on any table worth certifying) are kept as one sparse 0/1 indicator matrix per
class, in blocks of consecutive sets (:class:`SetBlock`: the chains, cut further to bound the
memory of building them). A :class:`LabelSide` then gives, for integer per-set weights, the
best labels of every item (the weighted counts of each class) and the agreement of every set
with a labelling, as exact integer sparse products in the narrowest integers that hold their
sums. Descents in threads may share a side: nothing assumes another thread's step.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections import OrderedDict
from typing import Any

import numpy as np

try:  # the kernels of ``csr @ vector`` and ``csr.T @ vector``, called directly: the
    # descent makes thousands of small products, whose scipy wrappers (format checks,
    # and a new CSC object for every ``.T``) cost more than the products themselves
    from scipy.sparse._sparsetools import csc_matvec as _csc_matvec
    from scipy.sparse._sparsetools import csr_matvec as _csr_matvec
except ImportError:  # pragma: no cover - scipy's public operators then
    _csr_matvec = _csc_matvec = None

__all__ = ["LabelSide", "SetBlock", "label_counts"]


#: Labels per block of consecutive sets of :class:`LabelSide` (bounds the temporaries of
#: building its sparse indicators; the chains are blocks too).
_BLOCK_ENTRIES = 1 << 26


#: Agreements of the last labellings a side counted, kept (the descents from several starts
#: mostly end at the same labels, and count their agreements again).
_KEEP_AGREEMENTS = 4


#: The ones of every dtype the kernels were given, per dtype (see :func:`_ones`).
_ONES: dict[np.dtype, np.ndarray] = {}


def label_counts(sets: np.ndarray, n_classes: int) -> np.ndarray:
    """Sets giving each item each class, int64 of shape (n_items, n_classes).

    Counted over chunks of about :data:`_BLOCK_ENTRIES` labels, so that the
    comparisons' temporaries stay small next to the sets (exact integer counts).
    """
    n_sets, n_items = sets.shape
    counts = np.zeros((n_items, n_classes), dtype=np.int64)
    for begin, end in _set_chunks(n_sets, n_items):
        chunk = sets[begin:end]
        for k in range(n_classes):
            counts[:, k] += np.count_nonzero(chunk == k, axis=0)
    return counts


def _set_chunks(n_sets: int, n_items: int, bounds: Any = None) -> list[tuple[int, int]]:
    """Consecutive ranges of sets of at most about :data:`_BLOCK_ENTRIES` labels,
    cut at every one of ``bounds`` too (e.g. the chains' ends)."""
    step = max(1, _BLOCK_ENTRIES // n_items)
    cuts = set(range(0, n_sets, step)) | {n_sets}
    if bounds is not None:
        cuts |= {int(b) for b in bounds if 0 < b < n_sets}
    cuts = sorted(cuts)
    return list(zip(cuts[:-1], cuts[1:], strict=True))


def _ones(size: int, dtype: Any) -> np.ndarray:
    """``size`` ones of ``dtype``: a view of one buffer kept per dtype (the values of the 0/1
    matrices as the kernels take them: of the vector's dtype)."""
    dtype = np.dtype(dtype)
    buffer = _ONES.get(dtype)
    # (this buffer, whatever another thread keeps meanwhile)
    if buffer is None or buffer.size < size:
        buffer = _ONES[dtype] = np.ones(max(size, 1 << 20), dtype=dtype)
    return buffer[:size]


def _sum_dtype(bound: int) -> type:
    """The narrowest integers in which sums of absolute value at most ``bound`` are exact: int16,
    int32 or int64 (the kernels are fastest in the narrowest type: less memory to read)."""
    return np.int16 if bound < 2**15 else np.int32 if bound < 2**31 else np.int64


def _add_product(matrix, vector: np.ndarray, out: np.ndarray) -> None:
    """``out += matrix @ vector`` for a 0/1 CSR ``matrix``, integer ``vector`` and contiguous
    ``out`` of one dtype (exact while the sums fit in it)."""
    if _csr_matvec is None:
        out += matrix @ vector
    else:
        _csr_matvec(matrix.shape[0], matrix.shape[1], matrix.indptr, matrix.indices,
                    _ones(matrix.indices.size, out.dtype), vector, out)


def _add_transposed_product(matrix, vector: np.ndarray, out: np.ndarray) -> None:
    """``out += matrix.T @ vector`` for a 0/1 CSR ``matrix`` (read as the CSC matrix of its
    transpose)."""
    if _csc_matvec is None:
        out += matrix.T @ vector
    else:
        _csc_matvec(matrix.shape[1], matrix.shape[0], matrix.indptr, matrix.indices,
                    _ones(matrix.indices.size, out.dtype), vector, out)


def _best_labels(scores: np.ndarray, current: np.ndarray) -> np.ndarray:
    """Argmax of each row of ``scores``, keeping ``current`` unless strictly beaten."""
    items = np.arange(scores.shape[0])
    best = scores.argmax(axis=1)
    keep = scores[items, current] >= scores[items, best]
    return np.where(keep, current, best)


class SetBlock:
    """The minority indicators of consecutive sets ``begin:end`` of one side.

    ``minority[k]`` is a CSR matrix of shape (end - begin, n_items) with a one
    where the set gives the item label ``k`` and ``k`` is not the item's
    reference label. Indices are int32 when they fit, and the ones of all
    classes are views of one shared buffer (no stored value per entry).
    """

    def __init__(self, begin: int, end: int, minority: list):
        self.begin, self.end = begin, end
        self.minority = minority

    @classmethod
    def build(cls, sets: np.ndarray, ref: np.ndarray, n_classes: int, begin: int,
              end: int) -> SetBlock:
        chunk = sets[begin:end]
        n_sets, n_items = chunk.shape
        flat = np.flatnonzero(chunk != ref)  # sorted by set, then item
        labels = chunk.reshape(-1)[flat]
        set_index, item_index = np.divmod(flat, n_items)
        del flat
        return cls.of_entries(begin, end, set_index, item_index, labels, n_classes, n_items)

    @classmethod
    def of_entries(cls, begin: int, end: int, set_index: np.ndarray, item_index: np.ndarray,
                   labels: np.ndarray, n_classes: int, n_items: int) -> SetBlock:
        """The block of the sets ``begin:end`` from their minority entries: the set (within the
        block), the item and the label of every label that differs from the item's reference,
        sorted by set, then item."""
        n_sets = end - begin
        index_dtype = np.int32 if n_items < 2**31 and set_index.size < 2**31 else np.int64
        minority = []
        for k in range(n_classes):
            keep = labels == k
            indptr = np.zeros(n_sets + 1, dtype=index_dtype)
            np.cumsum(np.bincount(set_index[keep], minlength=n_sets), out=indptr[1:])
            minority.append((item_index[keep].astype(index_dtype), indptr))
        return cls(begin, end, _with_ones(minority, n_items))

    def rows(self, local: np.ndarray, begin: int) -> SetBlock:
        """The block of the sets ``local`` (indices within this block), starting at ``begin``."""
        n_items = self.minority[0].shape[1]
        parts = []
        for matrix in self.minority:
            picked = matrix[local]
            parts.append((picked.indices, picked.indptr))
        return SetBlock(begin, begin + local.size, _with_ones(parts, n_items))


def _with_ones(parts: list, n_items: int) -> list:
    """CSR matrices of ones from ``(indices, indptr)`` pairs, their values views of one buffer
    (int8: the kernels are given ones of their vector's dtype, :func:`_ones`)."""
    from scipy import sparse

    ones = np.ones(max([indices.size for indices, _ in parts] + [1]), dtype=np.int8)
    return [
        sparse.csr_matrix((ones[: indices.size], indices, indptr), shape=(indptr.size - 1, n_items))
        for indices, indptr in parts
    ]


class LabelSide:
    """The rows (or the columns) of the label sets, prepared for repeated weighted counts.

    Every item has a reference label (its modal label over the sets); the sets
    that disagree with it (few on any table worth certifying) are kept as one
    sparse indicator matrix per class, ``minority[k][s, i] = [sets[s, i] == k
    != ref[i]]``, in blocks of consecutive sets (:class:`SetBlock`: the chains,
    cut further to bound the memory of building them). Then, for per-set
    weights ``v``,

    - ``score[i, k] = minority[k].T @ v`` for ``k != ref[i]`` and
      ``sum(v) - sum_k minority[k].T @ v`` for the reference;
    - the agreement of every set with labels ``z`` is
      ``#{z == ref} + sum_k minority[k] @ ([z == k] - [z == ref])``
      (on the support of ``minority[k]``, ``k != ref``).

    Any reference label gives exact results (it only sets the sparsity), so a
    subset of the sets reuses the same reference, and the blocks of the sets
    it keeps whole. Sparse products with 0/1 entries and integer weights are
    exact in integers wide enough for their sums, whatever the blocks.
    """

    def __init__(self, sets: np.ndarray, n_classes: int, bounds: Any = None, *,
                 ref: np.ndarray | None = None, blocks: list[SetBlock] | None = None,
                 index: np.ndarray | None = None):
        self.sets = sets  # all the sets; this side holds sets[index] (all when index is None)
        self.index = index
        self.n_classes = n_classes
        self._agreed: OrderedDict[bytes, tuple[np.ndarray, np.ndarray]] = OrderedDict()
        self._counts: np.ndarray | None = None
        if blocks is not None:
            self.ref, self.blocks = ref, blocks
        else:
            n_sets, n_items = sets.shape
            self.ref = label_counts(sets, n_classes).argmax(axis=1).astype(np.int64)
            self.blocks = [SetBlock.build(sets, self.ref, n_classes, begin, end)
                           for begin, end in _set_chunks(n_sets, n_items, bounds)]

    @classmethod
    def of_minority(cls, sets: Any, n_classes: int, ref: np.ndarray, n_sets: int, minority: Any,
                    bounds: Any = None) -> LabelSide:
        """The side of ``n_sets`` sets from their minority entries: ``minority(begin, end)`` gives,
        for each class ``k``, the CSR pattern ``(indices, indptr)`` of the sets ``begin:end`` (row
        ``s - begin``: the items, increasing, to which set ``s`` gives ``k`` when it is not their
        reference ``ref``). The same side as built from the sets themselves, without them in memory
        at once; ``sets[s]`` need only give the sets :meth:`set_labels` is asked for."""
        n_items = ref.shape[0]
        blocks = [SetBlock(begin, end, _with_ones(minority(begin, end), n_items))
                  for begin, end in _set_chunks(n_sets, n_items, bounds)]
        return cls(sets, n_classes, ref=ref, blocks=blocks)

    @property
    def n_sets(self) -> int:
        return self.blocks[-1].end if self.blocks else 0

    def set_labels(self, s: int) -> np.ndarray:
        """Labels of the ``s``-th set of this side."""
        return self.sets[s if self.index is None else self.index[s]]

    def without_sets(self) -> LabelSide:
        """This side without the label sets themselves (what a descent needs: the reference
        labels and the blocks), to send to a worker; :meth:`set_labels` is then unavailable."""
        return LabelSide(None, self.n_classes, ref=self.ref, blocks=self.blocks, index=None)

    def subset(self, chosen: np.ndarray) -> LabelSide:
        """The same side restricted to the sets ``chosen`` (boolean mask); the
        blocks whose sets are all chosen are shared, not copied."""
        blocks, begin = [], 0
        for block in self.blocks:
            local = np.flatnonzero(chosen[block.begin : block.end])
            if local.size == block.end - block.begin:
                blocks.append(SetBlock(begin, begin + local.size, block.minority))
            elif local.size:
                blocks.append(block.rows(local, begin))
            begin += local.size
        index = np.flatnonzero(chosen)
        if self.index is not None:
            index = self.index[index]
        return LabelSide(self.sets, self.n_classes, ref=self.ref, blocks=blocks, index=index)

    def agreements(self, labels: np.ndarray) -> np.ndarray:
        """Items on which each set agrees with ``labels``, int64 of shape (n_sets,)
        (the last few labellings' kept: a copy, checked equal, gives the same array again)."""
        key = hashlib.blake2b(np.ascontiguousarray(labels).tobytes(), digest_size=16).digest()
        # (descents in threads may share a side: no step assumes another's)
        kept = self._agreed.get(key)
        if kept is not None and np.array_equal(kept[0], labels):
            with contextlib.suppress(KeyError):
                self._agreed.move_to_end(key)  # the most recent again
            return kept[1].copy()
        dtype = _sum_dtype(self.ref.shape[0])  # a set's sum over its entries is within +-n_items
        at_ref = labels == self.ref
        moves = [(labels == k).astype(dtype) - at_ref for k in range(self.n_classes)]
        agree = np.full(self.n_sets, np.count_nonzero(at_ref), dtype=np.int64)
        for block in self.blocks:
            part = np.zeros(block.end - block.begin, dtype=dtype)
            for matrix, move in zip(block.minority, moves, strict=True):
                _add_product(matrix, move, part)
            agree[block.begin : block.end] += part
        self._agreed[key] = (np.array(labels), agree.copy())
        while len(self._agreed) > _KEEP_AGREEMENTS:
            with contextlib.suppress(KeyError):
                self._agreed.popitem(last=False)
        return agree

    def class_counts(self) -> np.ndarray:
        """Sets giving each item each class other than its reference, int64 of shape
        (n_classes, n_items) (zero at the reference; counted once)."""
        if self._counts is None:
            self._counts = self._weighted_counts(np.ones(self.n_sets,
                                                         dtype=np.int64)).astype(np.int64)
        return self._counts

    def _weighted_counts(self, weights: np.ndarray) -> np.ndarray:
        """``minority[k].T @ weights`` for every class, shape (n_classes, n_items), for non-negative
        integer ``weights``, in the narrowest integers that hold their sum."""
        dtype = _sum_dtype(int(weights.sum()))  # every count is a sum of some of the weights
        # class-major: contiguous rows
        scores = np.zeros((self.n_classes, self.ref.shape[0]), dtype=dtype)
        if weights.any():
            for block in self.blocks:
                part = weights[block.begin : block.end].astype(dtype)
                for k, matrix in enumerate(block.minority):
                    _add_transposed_product(matrix, part, scores[k])
        return scores

    def best(self, weights: np.ndarray, current: np.ndarray) -> np.ndarray:
        """Best labels given per-set integer ``weights``, keeping ``current`` on ties.

        The scores are ``low`` times :meth:`class_counts` plus the products of the weights'
        excess over their least ``low``: small when the weights are close (the agreements of
        the other side), so counted in narrow integers (the same integers)."""
        weights = np.asarray(weights, dtype=np.int64)
        total = int(weights.sum())
        low = int(weights.min()) if weights.size else 0
        scores = self._weighted_counts(weights - low).astype(np.int64)
        if low:
            scores += low * self.class_counts()
        scores = scores.T
        scores[np.arange(self.ref.shape[0]), self.ref] = total - scores.sum(axis=1)
        return _best_labels(scores, current)
