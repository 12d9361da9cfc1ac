"""Which kernel sums sparse tables: scipy's products or the compiled loops, by choice or by size.

Sparse tables have two kernels that give the same values bit for bit
(:mod:`lbm_bench.inference.kernels`): scipy's CSR products
(:mod:`lbm_bench.inference.sparse_sums`) and loops compiled by numba
(:mod:`lbm_bench.inference.compiled_sums`, with the optional ``fast`` extra:
``pip install 'lbm-bench[fast]'``). The choice, ``kernel``:

- ``"auto"`` (default): the compiled kernel where numba imports and the tables hold at
  least :data:`COMPILED_MIN_ENTRIES` stored entries (below, importing numba and loading
  the compiled loops, about half a second per process, costs more than it saves);
- ``"compiled"``: the compiled kernel wherever it applies (sparse tables of integer
  statistics), whatever their size; a worker without numba takes scipy's (the same bytes);
- ``"scipy"``: never the compiled kernel.

It is set for a call with :func:`use_kernel` (the ``kernel=`` of
:func:`~lbm_bench.generate_table`, :func:`~lbm_bench.build_release` and
:func:`~lbm_bench.fit_design`, the ``--kernel`` of ``lbm-bench``), which every task of
the call carries to its worker (:mod:`lbm_bench.tasks.carried`), or for a process with
the environment variable ``LBM_BENCH_KERNEL``; the argument wins. ``lbm-bench info
--versions`` prints the choice (:func:`kernel_report`).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

from lbm_bench._validation import check_choice
from lbm_bench.inference.compiled_loops import cache_folder, numba_status
from lbm_bench.tasks.carried import carried_value, carrying

__all__ = ["COMPILED_MIN_ENTRIES", "COMPILED_SPEEDUP", "KERNEL_CHOICES", "KERNEL_VARIABLE",
           "check_kernel", "kernel_hint", "kernel_report", "kernel_setting", "use_compiled",
           "use_kernel"]

#: The values of ``kernel=`` and ``--kernel``.
KERNEL_CHOICES = ("auto", "compiled", "scipy")
#: The environment variable that sets the choice for a process (the argument wins).
KERNEL_VARIABLE = "LBM_BENCH_KERNEL"
#: Stored entries (over a sweep's tables) from which ``"auto"`` takes the compiled kernel.
COMPILED_MIN_ENTRIES = 1_000_000
#: How many times faster a large sparse table's Gibbs runs are with the compiled kernel
#: (the whole run, scipy's seconds over the compiled kernel's; docs/performance.md).
COMPILED_SPEEDUP = 3
#: The name of the setting the tasks carry.
_SETTING = "kernel"
_FAST_HINT = "pip install 'lbm-bench[fast]'"


def check_kernel(kernel: str) -> str:
    """``kernel`` when it is one of :data:`KERNEL_CHOICES` and can be had here.

    Raises
    ------
    ValueError
        Naming ``kernel``: another value, or ``"compiled"`` where numba does not import.
    """
    check_choice("kernel", kernel, KERNEL_CHOICES)
    if kernel == "compiled" and numba_status()[0] is None:
        raise ValueError(f"kernel='compiled' needs numba ({_FAST_HINT}), which does not import "
                         f"here: {numba_status()[1]}")
    return kernel


def kernel_setting() -> str:
    """The choice in force: the call's (:func:`use_kernel`), else ``LBM_BENCH_KERNEL``, else
    ``"auto"``.

    Raises
    ------
    ValueError
        When ``LBM_BENCH_KERNEL`` holds another value than :data:`KERNEL_CHOICES`.
    """
    chosen = carried_value(_SETTING)
    if chosen is not None:
        return chosen
    value = os.environ.get(KERNEL_VARIABLE, "").strip()
    return check_choice(KERNEL_VARIABLE, value, KERNEL_CHOICES) if value else "auto"


@contextlib.contextmanager
def use_kernel(kernel: str | None = None) -> Iterator[None]:
    """Sum sparse tables with ``kernel`` in the enclosed block and in the tasks it hands over.

    ``None`` keeps the choice in force (``LBM_BENCH_KERNEL``, else ``"auto"``), and carries it
    to the workers all the same (a Dask worker does not see this process's environment).

    Raises
    ------
    ValueError
        When ``kernel`` is not one of :data:`KERNEL_CHOICES`, when ``LBM_BENCH_KERNEL`` holds
        another value, or when ``kernel="compiled"`` is asked where numba does not import.
    """
    value = kernel_setting() if kernel is None else check_kernel(kernel)
    with carrying(_SETTING, None if value == "auto" and kernel is None else value):
        yield


def use_compiled(n_stored: int) -> bool:
    """Whether tables of ``n_stored`` stored entries in all are summed by the compiled kernel
    under the choice in force (the kernel's own conditions, integer statistics, aside)."""
    setting = kernel_setting()
    if setting == "scipy" or (setting == "auto" and n_stored < COMPILED_MIN_ENTRIES):
        return False
    return numba_status()[0] is not None


def kernel_hint(n_stored: int) -> str | None:
    """The line to print after a sparse table of ``n_stored`` stored entries was certified by
    scipy's kernel for want of numba (None when numba imports, the table is below
    :data:`COMPILED_MIN_ENTRIES`, or scipy's kernel was asked for)."""
    if n_stored < COMPILED_MIN_ENTRIES or kernel_setting() == "scipy":
        return None
    if numba_status()[0] is not None:
        return None
    return (f"note: {_FAST_HINT} (numba) makes the sparse sweeps of tables this large about "
            f"{COMPILED_SPEEDUP} times faster, with the same bytes")


def kernel_report() -> list[str]:
    """What ``lbm-bench info --versions`` says of the sparse kernels: numba's version (or why
    it does not import), the choice in force and where the compiled loops are cached."""
    version, reason = numba_status()
    setting = kernel_setting()
    lines = [f"numba {version}" if version else f"numba: not available ({reason})"]
    if setting == "scipy" or version is None:
        which = "scipy's (the compiled kernel needs numba)" if setting != "scipy" else "scipy's"
    elif setting == "compiled":
        which = "compiled (numba) for every sparse table of integer statistics"
    else:
        which = (f"compiled (numba) from {COMPILED_MIN_ENTRIES:,} stored entries, "
                 "scipy's below")
    source = os.environ.get(KERNEL_VARIABLE)
    lines.append(f"sparse kernel: {which} (kernel={setting!r}; "
                 f"{KERNEL_VARIABLE}={source!r})" if source else
                 f"sparse kernel: {which} (kernel={setting!r})")
    if version is not None:
        folder = os.environ.get("NUMBA_CACHE_DIR") or cache_folder()
        lines.append("compiled loops cached " + (f"in {folder}" if folder else
                                                 "beside lbm_bench/inference/compiled_loops.py"))
    return lines
