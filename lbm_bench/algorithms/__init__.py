"""Built-in co-clustering algorithms of ``lbm-bench benchmark``.

An *algorithm* is any callable::

    fit(X, n_row_clusters, n_col_clusters, *, rng) -> (rows, cols)

returning two 1-D integer label arrays of shapes (n_rows,) and (n_cols,),
0-based, with at most ``n_row_clusters`` and ``n_col_clusters`` distinct values
(fewer when clusters empty out). :data:`ALGORITHMS` registers the built-ins by
short name and :func:`resolve_algorithm` also accepts ``"module:function"`` (a
module on the path or a file of the current directory) and ``"file.py:function"``.

Modules
    :mod:`~lbm_bench.algorithms.lbm_em`
        Latent block model with estimated parameters (Govaert and Nadif):
        :func:`cem` (block classification EM) and :func:`vem` (block
        variational EM) for the blocks of every registered family (Gaussian,
        Poisson, Bernoulli, categorical: :data:`lbm_bench.models.registry.FAMILIES`);
        :func:`fit_lbm` returns the fitted model and criterion too.
    :mod:`~lbm_bench.algorithms.selection`
        :func:`select_lbm`: the numbers of clusters chosen by ICL (exact or BIC-type,
        :mod:`~lbm_bench.algorithms.criteria`), by a path of splits and merges or the
        full grid of block CEM or VEM fits; returns an :class:`LBMSelection`.
    :mod:`~lbm_bench.algorithms.kmeans`
        :func:`double_kmeans` (k-means on rows and on columns, separately), the
        naive baseline, and the k-means++ seeding of the CEM and VEM starts.
    :mod:`~lbm_bench.algorithms.spectral`
        :func:`spectral_coclustering` and :func:`spectral_biclustering`
        (scikit-learn, imported lazily: ``pip install 'lbm-bench[sklearn]'``).
    :mod:`~lbm_bench.algorithms.sparsebm`
        :func:`sparsebm_lbm`, sparsebm's Bernoulli LBM (``pip install
        'lbm-bench[sparsebm]'``), seeded reproducibly and with settings that keep
        a release's benchmark practical.
    :mod:`~lbm_bench.algorithms.catalog`
        :data:`ALGORITHMS`, :func:`resolve_algorithm`, :func:`algorithm_source`
        (the file a plugged-in algorithm was loaded from), :data:`SELECTION_ALGORITHMS` (the
        algorithms that choose the numbers of clusters), :data:`CONTRACTS` (how the algorithms
        of each benchmark track are called, and its built-ins), :func:`fits_family` (how an
        algorithm meets a table of a family the harness must tell it), and the per-family
        algorithms ``gaussian_cem``, ``poisson_cem``, ``bernoulli_cem``,
        ``gaussian_vem``, ... (one per family and method, in
        :data:`FAMILY_ALGORITHMS`, also attributes of this package).
    :mod:`~lbm_bench.algorithms.inputs`
        :func:`infer_kind`: the family of a table, decided by its values whatever its
        dtype (0/1: Bernoulli, non-negative whole numbers: Poisson, else Gaussian).

Examples
--------
>>> from lbm_bench import random_model
>>> from lbm_bench.algorithms import cem
>>> X, z, w = random_model("bernoulli", 3, 2, scale=3.0, rng=0).sample(60, 40, rng=1)
>>> rows, cols = cem(X, 3, 2, rng=0)
>>> rows.shape, cols.shape
((60,), (40,))
"""

from lbm_bench.algorithms.catalog import (
    ALGORITHMS,
    CONTRACTS,
    FAMILY_ALGORITHMS,
    MASKED_INPUT,
    SELECTION_ALGORITHMS,
    Algorithm,
    Contract,
    algorithm_source,
    family_algorithm_attribute,
    fits_family,
    resolve_algorithm,
)
from lbm_bench.algorithms.inputs import infer_kind
from lbm_bench.algorithms.kmeans import double_kmeans
from lbm_bench.algorithms.lbm_em import LBMFit, cem, fit_lbm, vem
from lbm_bench.algorithms.selection import LBMSelection, select_lbm
from lbm_bench.algorithms.sparsebm import sparsebm_lbm
from lbm_bench.algorithms.spectral import spectral_biclustering, spectral_coclustering


def __getattr__(name: str) -> Algorithm:
    """The per-family algorithms (``gaussian_cem``, ..., one per registered family and method) as
    attributes of the package, looked up in :data:`FAMILY_ALGORITHMS` (PEP 562), so that a new
    family's algorithms appear here without a line of their own."""
    return family_algorithm_attribute(__name__, name)


def __dir__() -> list[str]:
    return sorted([*globals(), *FAMILY_ALGORITHMS])

__all__ = [
    "ALGORITHMS",
    "FAMILY_ALGORITHMS",
    "SELECTION_ALGORITHMS",
    "CONTRACTS",
    "MASKED_INPUT",
    "Algorithm",
    "Contract",
    "LBMFit",
    "LBMSelection",
    "algorithm_source",
    "cem",
    "double_kmeans",
    "fit_lbm",
    "fits_family",
    "infer_kind",
    "resolve_algorithm",
    "select_lbm",
    "sparsebm_lbm",
    "spectral_biclustering",
    "spectral_coclustering",
    "vem",
    *sorted(FAMILY_ALGORITHMS),
]
