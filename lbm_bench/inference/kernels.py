"""The storages' kernels behind one door: a registry, asked once per
:class:`~lbm_bench.inference.engine.Sweeper`.

A kernel is the statistics of a stack of tables in one storage, with the two sides of
the conditional steps (full block sums, index updates, logits) and the classifier's
entrywise scores. :class:`~lbm_bench.inference.engine.Sweeper` describes its tables
once (:class:`TableLayout`: dense or sparse, complete or with missing entries, their
shape) and takes the first registered kernel that accepts them
(:func:`choose_kernel`); nothing else of the engine, the MAP or the sampler sees the
storage. The built-in kernels, in the order they are asked:

- ``"codes"``: a family whose statistics are the indicators of a code (categorical
  blocks), complete dense tables above
  :data:`~lbm_bench.inference.code_sums.CODE_MIN_TABLE_BYTES` of statistics: the codes
  packed twice, counted by words (:mod:`lbm_bench.inference.code_sums`);
- ``"compiled"``: CSR tables of integer statistics, their sums in loops compiled by
  numba (:mod:`lbm_bench.inference.compiled_sums`: the ``"sparse"`` kernel's values bit
  for bit), where numba imports and the tables are large enough, or when asked
  (:mod:`lbm_bench.inference.kernel_choice`: ``kernel=``, ``LBM_BENCH_KERNEL``);
- ``"sparse"``: CSR tables, never densified, scipy's products
  (:mod:`lbm_bench.inference.sparse_sums`);
- ``"dense"``: every dense table, the statistics twice, BLAS products
  (:mod:`lbm_bench.inference.dense_sums`).

A compiled or GPU kernel is one more module: a :class:`StorageKernel` whose ``build``
returns an object with the same ``rows``, ``cols``, ``tables`` and
``entrywise_scores(sweeper)``, registered with :func:`register_kernel` (asked before
the built-ins unless told otherwise).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from lbm_bench.inference.code_sums import CodeStatistics, uses_codes
from lbm_bench.inference.compiled_sums import CompiledStatistics, compiled_applies
from lbm_bench.inference.dense_sums import DenseStatistics
from lbm_bench.inference.sparse_sums import SparseStatistics
from lbm_bench.models.base import LatentBlockModel

__all__ = ["KERNELS", "StorageKernel", "TableLayout", "choose_kernel", "register_kernel"]


@dataclass(frozen=True)
class TableLayout:
    """The tables of a Sweeper as the kernels are chosen by.

    Attributes
    ----------
    tables : ndarray of shape (B, n_rows, n_cols), or list of B TableData
        As the Sweeper holds them (a stack of complete dense tables stays an array).
    is_sparse : bool
        CSR tables (all of them: the storage is decided by the first).
    incomplete : bool
        Whether any table has missing entries.
    n_rows, n_cols : int
    """

    tables: Any
    is_sparse: bool
    incomplete: bool
    n_rows: int
    n_cols: int

    @property
    def arrays(self) -> Any:
        """The dense tables: the stack, or a list of arrays."""
        return self.tables if isinstance(self.tables,
                                         np.ndarray) else [t.table for t in self.tables]

    @property
    def masks(self) -> list | None:
        """Each dense table's observed mask (None where complete), or None for complete tables."""
        if not self.incomplete:
            return None
        return [getattr(t, "observed", None) for t in self.tables]


@dataclass(frozen=True)
class StorageKernel:
    """One storage's kernel: when it applies and how its statistics are built.

    Attributes
    ----------
    name : str
    accepts : callable ``(model, layout) -> bool``
    build : callable ``(family, layout, sides) -> statistics``
        ``family`` the observed-data family (:class:`~lbm_bench.models.observed.EntryFamily`),
        ``sides`` the model's part of the row and column steps.
    """

    name: str
    accepts: Callable[[LatentBlockModel, TableLayout], bool]
    build: Callable[[Any, TableLayout, tuple], Any]


#: The registered kernels, in the order they are asked (the first that accepts is taken).
KERNELS: list[StorageKernel] = [
    StorageKernel(
        "codes",
        lambda model, layout: not layout.is_sparse and not layout.incomplete
        and uses_codes(model, layout.n_rows, layout.n_cols),
        lambda family, layout, sides: CodeStatistics(family.model, layout.arrays, sides),
    ),
    StorageKernel(
        "compiled",
        compiled_applies,
        lambda family, layout, sides: CompiledStatistics(family, layout.tables, sides),
    ),
    StorageKernel(
        "sparse",
        lambda model, layout: layout.is_sparse,
        lambda family, layout, sides: SparseStatistics(family, layout.tables, sides),
    ),
    StorageKernel(
        "dense",
        lambda model, layout: not layout.is_sparse,
        lambda family, layout, sides: DenseStatistics(family, layout.arrays, sides, layout.masks),
    ),
]


def register_kernel(kernel: StorageKernel, *, first: bool = True) -> None:
    """Add ``kernel`` to the registry, asked before the others (``first``) or after them.

    Raises
    ------
    TypeError
        When ``kernel`` is not a StorageKernel.
    ValueError
        When a kernel of that name is registered already.
    """
    if not isinstance(kernel, StorageKernel):
        raise TypeError(f"kernel must be a StorageKernel, got {type(kernel).__name__}")
    if any(k.name == kernel.name for k in KERNELS):
        raise ValueError(f"a kernel named {kernel.name!r} is registered already")
    KERNELS.insert(0 if first else len(KERNELS), kernel)


def choose_kernel(model: LatentBlockModel, layout: TableLayout) -> StorageKernel:
    """The first registered kernel that accepts the tables of ``layout``.

    Raises
    ------
    TypeError
        When none does.
    """
    for kernel in KERNELS:
        if kernel.accepts(model, layout):
            return kernel
    kind = "sparse" if layout.is_sparse else "dense"
    raise TypeError(f"no registered kernel accepts {kind} tables of {type(model).__name__}")
