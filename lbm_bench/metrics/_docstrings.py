"""Docstring sections shared by the metrics (one wording for one argument kind).

A function decorated with ``@fill_doc`` has each line ``{{name}}`` of its
docstring replaced by the block ``name`` below, indented like that line.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

__all__ = ["fill_doc"]

F = TypeVar("F", bound=Callable[..., object])

_BLOCKS = {
    # Two partitions, or one contingency table.
    "pair": """\
a : array-like of shape (n_samples,) or (k, l)
    Labels, or a contingency table when ``b`` is None.
b : array-like of shape (n_samples,), optional
    Labels of the other partition.""",
    "pair_float": """\
Parameters
----------
{{pair}}

{{returns_float}}""",
    "returns_float": """\
Returns
-------
float""",
    # A reference (one vector or a batch of sets, or a table) and a prediction.
    "pair_batch": """\
Parameters
----------
a : array-like of shape (n_samples,) or (n_sets, n_samples) or (k, l)
    Reference labels, a batch of reference label sets (each compared with
    ``b``), or a contingency table when ``b`` is None.
b : array-like of shape (n_samples,), optional
    Predicted labels.

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
    "coclusterings_per_set": """\
Parameters
----------
{{coclusterings}}

{{per_set}}""",
    "match_per_set": """\
match : bool, default=True
    Match the clusters optimally, or use the identity map.

{{per_set}}""",
    "per_set": """\
Returns
-------
float or ndarray of shape (n_sets,)
    A float for 1-D references, one value per set for a batch.""",
}


def _fill(text: str) -> str:
    lines = []
    for line in text.split("\n"):
        stripped = line.strip()
        if stripped.startswith("{{") and stripped.endswith("}}"):
            indent = line[: len(line) - len(line.lstrip())]
            block = _fill(_BLOCKS[stripped[2:-2]])  # blocks may name other blocks
            lines += [indent + part if part else "" for part in block.split("\n")]
        else:
            lines.append(line)
    return "\n".join(lines)


def fill_doc(func: F) -> F:
    """Replace each ``{{name}}`` line of ``func.__doc__`` by the shared block ``name``."""
    if func.__doc__ is not None:  # None under python -OO
        func.__doc__ = _fill(func.__doc__)
    return func
