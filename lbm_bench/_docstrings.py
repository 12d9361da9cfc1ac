"""Docstring sections shared across the package (one wording for one argument kind).

A function or class decorated with ``@fill_doc`` has each line ``{{name}}`` of
its docstring replaced by the block ``name`` below, indented like that line, so
that the rendered numpydoc (``help()``, the API pages) shows the full text.

A block may list the registered families: ``{families}`` becomes the numpydoc
choice set of their names and ``{families_or}`` the names in words ("gaussian",
..., or "categorical"), as the family registry (:mod:`lbm_bench.models.registry`)
gives them to :func:`name_families` when it is imported: the blocks never list
fewer families than there are.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

__all__ = ["fill_doc", "name_families"]

F = TypeVar("F", bound=Callable[..., object])

#: The registered families, in registry order (set by :func:`name_families`).
_FAMILIES: list[str] = []


def name_families(names: Sequence[str]) -> None:
    """Set the families that the blocks list (the family registry calls it once, on import)."""
    _FAMILIES[:] = list(names)


def _with_families(block: str) -> str:
    """``block`` with its ``{families}`` and ``{families_or}`` replaced by the registered names."""
    if "{families" not in block:
        return block
    if not _FAMILIES:
        raise RuntimeError("a shared docstring lists the families before the family registry named "
                           "them "
                           "(import lbm_bench.models.registry first)")
    quoted = [f'"{name}"' for name in _FAMILIES]
    spelled = [f"``{q}``" for q in quoted]
    in_words = ", ".join(spelled[:-1]) + " or " + spelled[-1] if len(spelled) > 1 else spelled[0]
    return block.replace("{families}",
                         "{" + ", ".join(quoted) + "}").replace("{families_or}", in_words)



def _parameters(arguments: str, returns: str) -> str:
    """A block: a Parameters section holding the block ``arguments``, then the block ``returns``."""
    return f"Parameters\n----------\n{{{{{arguments}}}}}\n\n{{{{{returns}}}}}"


_BLOCKS = {
    # -- metrics: two partitions, or one contingency table ---------------------------
    "pair": """\
a : array-like of shape (n_samples,) or (k, l)
    Labels, or a contingency table when ``b`` is None.
b : array-like of shape (n_samples,), optional
    Labels of the other partition.""",
    "returns_float": """\
Returns
-------
float""",
    "pair_float": _parameters("pair", "returns_float"),
    # A reference (one vector or a batch of sets, or a table) and a prediction.
    "pair_batch": _parameters("reference_prediction", "returns_batch"),
    "reference_prediction": """\
a : array-like of shape (n_samples,) or (n_sets, n_samples) or (k, l)
    Reference labels, a batch of reference label sets (each compared with
    ``b``), or a contingency table when ``b`` is None.
b : array-like of shape (n_samples,), optional
    Predicted labels.""",
    "returns_batch": """\
Returns
-------
float or ndarray of shape (n_sets,)
    A float for a 1-D ``a`` or a table, one value per set for a 2-D ``a``.""",
    # A reference co-clustering (vectors or batches of sets) and a predicted one.
    "coclusterings": """\
z : array-like of shape (n_rows,) or (n_sets, n_rows)
    Reference row labels, or a batch of reference row label sets.
w : array-like of shape (n_cols,) or (n_sets, n_cols)
    Reference column labels, or a batch of reference column label sets.
z_pred : array-like of shape (n_rows,)
    Predicted row labels.
w_pred : array-like of shape (n_cols,)
    Predicted column labels.""",
    "coclusterings_per_set": _parameters("coclusterings", "per_set"),
    "match_per_set": """\
match : bool, default=True
    Match the clusters optimally, or use the identity map.

{{per_set}}""",
    "per_set": """\
Returns
-------
float or ndarray of shape (n_sets,)
    A float for 1-D references, one value per set for a batch.""",
    # -- models and inference --------------------------------------------------------
    # The parameters every family's model starts with.
    "proportions": """\
Parameters
----------
row_proportions : array-like of shape (g,)
    Row cluster proportions, positive, summing to one.
col_proportions : array-like of shape (m,)
    Column cluster proportions.""",
    "table_request": """\
kind : {families} or Family
    The family of the blocks, by name or as the object.
n_rows, n_cols : int
    Table shape.
n_row_clusters, n_col_clusters : int
    Cluster numbers.""",
    "model_table": """\
Parameters
----------
model : LatentBlockModel
    Model with the true parameters.
X : array-like of shape (n_rows, n_cols)
    The table. Missing entries may be marked by NaN (a float array), a NumPy
    masked array, explicit NaN values of a sparse table, or ``observed``.
observed : array-like of shape (n_rows, n_cols), optional
    Observed mask (booleans or 0/1; 1: observed). Only the observed entries (and,
    when the model has ``missing_probs``, the mask) enter the posterior; a row or
    column with no observed entry has the prior as its label posterior (missing
    at random).""",
    # The sparse tables' kernel, chosen for a call (lbm_bench.inference.kernel_choice).
    "kernel": """\
kernel : {"auto", "compiled", "scipy"}, optional
    Which kernel sums sparse tables, in this process and in every worker of the call:
    loops compiled by numba (``pip install 'lbm-bench[fast]'``) or scipy's products. The
    same bytes either way. ``"auto"`` takes the compiled kernel where numba imports and a
    table is large; ``"compiled"`` wherever it applies (an error where numba does not
    import). Default: ``LBM_BENCH_KERNEL`` in the environment, else ``"auto"``.""",
    "kind_attribute": """\
Attributes
----------
kind : str
    {families_or}.""",
    # Label sets to feed the Bayes rule and the floor certificate.
    "gibbs_samples_example": """\
Examples
--------
>>> from lbm_bench import random_model, gibbs_labels
>>> model = random_model("bernoulli", 2, 2, scale=1.0, rng=0)
>>> X, z, w = model.sample(40, 30, rng=1)
>>> samples = gibbs_labels(model, X, n_samples=200, n_chains=4, rng=2)""",
    # -- algorithms: X and the cluster numbers in, one co-clustering out -------------
    "coclustering": """\
Returns
-------
rows : ndarray of shape (n_rows,) of int64
cols : ndarray of shape (n_cols,) of int64""",
    "sklearn_algorithm": """\
Parameters
----------
X : array-like of shape (n_rows, n_cols)
n_row_clusters, n_col_clusters : int
rng : None, int or numpy.random.Generator
    Seeds scikit-learn's ``random_state``.

{{coclustering}}

Raises
------
ImportError
    When scikit-learn is missing (``pip install 'lbm-bench[sklearn]'``).""",
}


def _fill(text: str) -> str:
    lines = []
    for line in text.split("\n"):
        stripped = line.strip()
        if stripped.startswith("{{") and stripped.endswith("}}"):
            indent = line[: len(line) - len(line.lstrip())]
            block = _fill(_with_families(_BLOCKS[stripped[2:-2]]))  # blocks may name other blocks
            lines += [indent + part if part else "" for part in block.split("\n")]
        else:
            lines.append(line)
    return "\n".join(lines)


def fill_doc(obj: F) -> F:
    """Replace each ``{{name}}`` line of ``obj.__doc__`` by the shared block ``name``."""
    if obj.__doc__ is not None:  # None under python -OO
        obj.__doc__ = _fill(obj.__doc__)
    return obj
