"""The ``sparsebm`` algorithm: sparsebm's Bernoulli latent block model (variational EM).

`sparsebm <https://pypi.org/project/sparsebm/>`_ (Frisch, Leger, Grandvalet)
is the field's LBM package for large sparse binary tables: its E-step only
touches the non-zero entries. This wrapper makes it an algorithm of
``lbm-bench benchmark`` (``fit(X, g, m, *, rng) -> (rows, cols)``) that runs
out of the box on Bernoulli tables, dense or ``scipy.sparse``, and is
reproducible. Install it with ``pip install 'lbm-bench[sparsebm]'``.

Three things differ from calling ``sparsebm.LBM`` with its defaults, each for
a measured reason (``scripts/bench_sparsebm.py`` at commit c835f6c, docs/benchmark.md):

**Complement of dense tables.** sparsebm draws the initial block
probabilities uniformly in ``(0.2 d, 2 d)`` with ``d`` the table's density,
which exceeds 1 when ``d > 1/2`` (our dense Bernoulli tables sit around 1/2):
the log-likelihood is then NaN, the convergence test never passes and every
start runs its 10,000 iterations (254 s on a 50x50 table at density 0.59, with
labels found only by luck). Exchanging zeros and ones leaves the latent block
model unchanged (block probabilities ``p`` become ``1 - p``, labels are the
same), so a table whose density is above 1/2 is fitted through its complement
(then 4.5 s with the defaults, the same perfect labels).

**Settings.** ``n_init=10`` short runs (sparsebm: 100) of ``n_iter_early_stop=10``
iterations, the best ``n_init_total_run=2`` (sparsebm: 10) continued to
convergence within ``max_iter=500`` iterations (sparsebm: 10,000), sparsebm's
tolerances. On the 50x50 tables of the measurement this takes about 0.5 s
instead of 4.5 s and finds the same labels; the keyword arguments of
:func:`sparsebm_lbm` restore any other choice.

**Seeding.** sparsebm draws from NumPy's global (legacy) generator. The
wrapper seeds it from the ``rng`` it is given, inside a context that saves
the global state and restores it afterwards (even on errors), so that the
same ``rng`` gives the same labels and the caller's global state is left as
it was. The global generator is per process: do not run two fits in threads
of one process at once (``lbm-bench benchmark`` runs tasks in processes).
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import tempfile
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np
import scipy.sparse as sp

from lbm_bench._docstrings import fill_doc
from lbm_bench._validation import check_count, describe_value
from lbm_bench.algorithms.inputs import reject_missing
from lbm_bench.models.data import TableData

__all__ = ["sparsebm_lbm", "sparsebm_selection", "global_numpy_seed", "SPARSEBM_SETTINGS"]

#: Settings of ``sparsebm.LBM`` used by :func:`sparsebm_lbm` (see the module docstring).
SPARSEBM_SETTINGS = {"n_init": 10, "n_init_total_run": 2, "n_iter_early_stop": 10, "max_iter": 500}
_HINT = "pip install 'lbm-bench[sparsebm]'"


@contextlib.contextmanager
def global_numpy_seed(seed: int) -> Iterator[None]:
    """Seed NumPy's global generator within the block, then restore its previous state."""
    state = np.random.get_state()
    try:
        np.random.seed(seed)
        yield
    finally:
        np.random.set_state(state)


def _sparsebm(algorithm: str) -> Any:
    """The sparsebm package (ImportError naming ``algorithm`` and the extra when missing).

    sparsebm's ``__init__`` opens a log file, ``sparsebm.log``, in the current directory and
    prints its progress on stderr: it is imported from a temporary directory, its file
    handler closed, so that a benchmark leaves no file behind (see :func:`_quiet`).
    """
    if sys.modules.get("sparsebm") is None:
        previous = os.getcwd()
        with tempfile.TemporaryDirectory() as folder:
            os.chdir(folder)
            try:
                import sparsebm  # noqa: F401
            except ImportError as exc:
                raise ImportError(
                    f"the {algorithm} algorithm needs the sparsebm package: {_HINT}") from exc
            finally:
                os.chdir(previous)
        logger = logging.getLogger("sparsebm")
        for handler in [h for h in logger.handlers if isinstance(h, logging.FileHandler)]:
            logger.removeHandler(handler)
            handler.close()
    return sys.modules["sparsebm"]


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """sparsebm's log messages below warnings off within the block (its model selection logs
    every step): the level of its package logger, which its modules' loggers inherit."""
    logger = logging.getLogger("sparsebm")
    level = logger.level
    logger.setLevel(logging.WARNING)
    try:
        yield
    finally:
        logger.setLevel(level)


def _binary_csr(X: Any) -> sp.csr_matrix:
    """``X`` as a CSR matrix of float64 zeros and ones; ValueError naming the algorithm
    otherwise."""
    matrix = sp.csr_matrix(TableData.of(X).to_csr())
    if matrix.ndim != 2 or 0 in matrix.shape:
        raise ValueError(f"sparsebm needs a non-empty 2-D table, got shape {matrix.shape}")
    if matrix.dtype.kind not in "biuf":
        raise TypeError(f"sparsebm needs a numeric table, got dtype {matrix.dtype}")
    matrix.eliminate_zeros()
    if matrix.nnz and not np.all(matrix.data == 1):
        bad = matrix.data[matrix.data != 1][0]
        raise ValueError(
            f"sparsebm fits Bernoulli (0/1) tables only, got the value {describe_value(bad)}; "
            "use cem or vem for counts and real values"
        )
    return matrix.astype(np.float64)


@fill_doc
def sparsebm_lbm(
    X: Any,
    n_row_clusters: int,
    n_col_clusters: int,
    *,
    n_init: int = SPARSEBM_SETTINGS["n_init"],
    n_init_total_run: int = SPARSEBM_SETTINGS["n_init_total_run"],
    n_iter_early_stop: int = SPARSEBM_SETTINGS["n_iter_early_stop"],
    max_iter: int = SPARSEBM_SETTINGS["max_iter"],
    rng: np.random.Generator | int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Co-cluster a binary table with sparsebm's Bernoulli LBM (variational EM).

    Parameters
    ----------
    X : array-like or scipy.sparse matrix of shape (n_rows, n_cols)
        A table of zeros and ones.
    n_row_clusters, n_col_clusters : int
    n_init, n_init_total_run, n_iter_early_stop, max_iter : int
        sparsebm's settings (defaults: :data:`SPARSEBM_SETTINGS`).
    rng : None, int or numpy.random.Generator
        Seeds NumPy's global generator for the fit (its state is restored after).

    {{coclustering}}

    Raises
    ------
    ImportError
        When sparsebm is not installed.
    ValueError
        For a table that is not binary or has missing entries (sparsebm has no mask),
        or cluster numbers larger than the table.
    RuntimeError
        When no start of sparsebm converged to a finite likelihood.
    """
    rng = np.random.default_rng(rng)
    reject_missing(X, "sparsebm")
    LBM = _sparsebm("sparsebm").LBM
    matrix = _binary_csr(X)
    n_rows, n_cols = matrix.shape
    g, m = check_count("n_row_clusters", n_row_clusters), check_count("n_col_clusters",
                                                                      n_col_clusters)
    if g > n_rows or m > n_cols:
        raise ValueError(f"sparsebm: {g}x{m} clusters do not fit a {n_rows}x{n_cols} table")
    if 2 * matrix.nnz > n_rows * n_cols:  # see the module docstring: fit the complement
        matrix = sp.csr_matrix(1.0 - matrix.toarray())
    settings = {"n_init": check_count("n_init", n_init),
                "n_init_total_run": check_count("n_init_total_run", n_init_total_run),
                "n_iter_early_stop": check_count("n_iter_early_stop", n_iter_early_stop),
                "max_iter": check_count("max_iter", max_iter)}  # fmt: skip
    model = LBM(g, m, verbosity=0, use_gpu=False, **settings)
    with global_numpy_seed(int(rng.integers(2**32))), warnings.catch_warnings(), _quiet():
        warnings.simplefilter("ignore", RuntimeWarning)  # log(0) of empty blocks
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            model.fit(matrix)
    if not model.trained_successfully_:
        raise RuntimeError(f"sparsebm: no start converged on this {n_rows}x{n_cols} table")
    return _labels(model)


def _labels(model: Any) -> tuple[np.ndarray, np.ndarray]:
    """The MAP labels of a fitted ``sparsebm.LBM``."""
    rows = np.asarray(model.tau_1_).argmax(1).astype(np.int64)
    cols = np.asarray(model.tau_2_).argmax(1).astype(np.int64)
    return rows, cols


def sparsebm_selection(
    X: Any,
    max_row_clusters: int,
    max_col_clusters: int,
    *,
    rng: np.random.Generator | int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Choose the numbers of clusters of a binary table with sparsebm's ``ModelSelection``.

    sparsebm's own model selection, run as its users run it: ``ModelSelection("LBM")``
    explores by splits from ``(1, 1)`` and merges, each model fitted by variational EM,
    and keeps the model of highest BIC-type ICL (on the variational bound). Its bound
    is on ``g + m``: it is given ``n_clusters_max = max_row_clusters + max_col_clusters``
    and the best model it explored within ``max_row_clusters x max_col_clusters`` is kept.
    As for :func:`sparsebm_lbm`, a table denser than 1/2 is fitted through its complement
    and NumPy's global generator is seeded from ``rng`` and restored afterwards. An
    algorithm of the unknown-clusters track of ``lbm-bench benchmark``
    (``sparsebm-selection``).

    Parameters
    ----------
    X : array-like or scipy.sparse matrix of shape (n_rows, n_cols)
        A table of zeros and ones.
    max_row_clusters, max_col_clusters : int
        The largest numbers of clusters considered.
    rng : None, int or numpy.random.Generator

    Returns
    -------
    rows : ndarray of shape (n_rows,) of int64
    cols : ndarray of shape (n_cols,) of int64
    """
    rng = np.random.default_rng(rng)
    ModelSelection = _sparsebm("sparsebm-selection").ModelSelection
    matrix = _binary_csr(X)
    G, M = check_count("max_row_clusters",
                       max_row_clusters), check_count("max_col_clusters", max_col_clusters)
    if 2 * matrix.nnz > matrix.shape[0] * matrix.shape[1]:
        matrix = sp.csr_matrix(1.0 - matrix.toarray())
    selection = ModelSelection("LBM", n_clusters_max=G + M, use_gpu=False, plot=False)
    with global_numpy_seed(int(rng.integers(2**32))), warnings.catch_warnings(), _quiet():
        warnings.simplefilter("ignore", RuntimeWarning)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            explored = selection.fit(matrix)
    models = [model for (g, m), model in explored.items() if g <= G and m <= M]
    if not models:
        raise RuntimeError(f"sparsebm-selection: no model within {G}x{M} clusters was fitted")
    return _labels(max(models, key=lambda model: model.get_ICL()))


#: What the unknown-clusters track compares it with: sparsebm told the counts.
sparsebm_selection.given_counts = "sparsebm"
