"""The families of latent block models, by name: the one list the package reads.

A family is a :class:`~lbm_bench.models.family.Family` object. It is made once, at
the boundary where a user names it (``--kind``, a release spec's ``kinds``, the
``@kind`` of a file, a ``kind=`` argument): :func:`as_family` turns the name into
the object, which then travels; nothing inside the package looks a name up
again, and none compares a kind with a name.

**Adding a family** is writing its module under ``lbm_bench/models/`` (its model
class and facets, see docs/architecture.md) and adding its :class:`Family` to
:data:`FAMILIES` below.
"""

from __future__ import annotations

from typing import Any

from lbm_bench._docstrings import name_families
from lbm_bench._validation import describe_value
from lbm_bench.models.base import LatentBlockModel
from lbm_bench.models.bernoulli import BERNOULLI
from lbm_bench.models.categorical import CATEGORICAL
from lbm_bench.models.family import Family
from lbm_bench.models.gaussian import GAUSSIAN
from lbm_bench.models.poisson import POISSON

__all__ = [
    "FAMILIES",
    "as_family",
    "check_kind",
    "family_names",
    "get_family",
    "model_from_parameters",
    "sparse_family_names",
]

#: The registered families, in the order they are listed (help, docs, option declarations).
FAMILIES: tuple[Family, ...] = (GAUSSIAN, POISSON, BERNOULLI, CATEGORICAL)

_BY_NAME: dict[str, Family] = {family.kind: family for family in FAMILIES}
name_families(tuple(_BY_NAME))  # the shared docstrings list them (lbm_bench._docstrings)


def family_names() -> tuple[str, ...]:
    """The names of the registered families, in the registry's order.

    Each family is one module registered by name, and one object, a
    :class:`~lbm_bench.models.family.Family` (:func:`get_family`).

    Returns
    -------
    tuple of str

    Examples
    --------
    >>> family_names()
    ('gaussian', 'poisson', 'bernoulli', 'categorical')
    """
    return tuple(_BY_NAME)


def sparse_family_names() -> tuple[str, ...]:
    """The names of the families whose tables can be ``scipy.sparse`` (``can_be_sparse``)."""
    return tuple(family.kind for family in FAMILIES if family.model.can_be_sparse)


def check_kind(kind: Any) -> str:
    """Return a family name among :func:`family_names` (case-insensitive).

    Raises
    ------
    TypeError
        When ``kind`` is not a string.
    ValueError
        When it names no registered family (the message lists them).
    """
    if not isinstance(kind, str):
        raise TypeError(f"kind must be a string, got {describe_value(kind)}")
    lowered = kind.lower()
    if lowered not in _BY_NAME:
        raise ValueError(f"kind must be one of {', '.join(_BY_NAME)}; got {describe_value(kind)}")
    return lowered


def get_family(kind: Any) -> Family:
    """The family named ``kind`` (checked as :func:`check_kind` does).

    A family is its model class (the formulas, ``family.model``) and its facets: what
    storage (``family.storage``), pictures (``family.presentation``), design options
    (``family.options``), designs (``family.designs``) and the EM baselines
    (``family.estimation``) ask of it. Functions that take a ``kind`` take its name or the
    object; the name is turned into the object once, where it is given.

    Parameters
    ----------
    kind : str
        A name of :func:`family_names`, in any case.

    Returns
    -------
    Family

    Raises
    ------
    TypeError
        When ``kind`` is not a string.
    ValueError
        When it names no registered family.

    Examples
    --------
    >>> family = get_family("Bernoulli")
    >>> family.kind, family.model.table_dtype
    ('bernoulli', dtype('uint8'))
    >>> poisson = get_family("poisson")
    >>> poisson.storage.parameter_names, poisson.presentation.entries, list(poisson.options.fields)
    (('rates',), 'counts', ['base_rate', 'density', 'effects', 'effects_spread'])
    >>> get_family("ordinal")
    Traceback (most recent call last):
    ...
    ValueError: kind must be one of gaussian, poisson, bernoulli, categorical; got 'ordinal'
    """
    return _BY_NAME[check_kind(kind)]


def as_family(family: Family | str) -> Family:
    """``family`` itself when it is a :class:`~lbm_bench.models.family.Family`, else the
    family it names (:func:`get_family`): the one conversion of a name into a family,
    made at a public boundary (the functions that take ``kind`` as a name or a family).

    Examples
    --------
    >>> as_family("poisson") is as_family(as_family("poisson"))
    True
    """
    return family if isinstance(family, Family) else get_family(family)


def model_from_parameters(
    kind: Family | str, row_proportions: Any, col_proportions: Any, **block_parameters: Any
) -> LatentBlockModel:
    """Build a model of family ``kind`` (a family or its name) from its parameters (as stored in
    files).

    Parameters
    ----------
    kind : Family or str
        The family, or its name.
    row_proportions, col_proportions : array-like of shape (g,) and (m,)
        The class proportions.
    **block_parameters
        The family's block parameters by name (``means`` and ``stds``, ``rates``, ``probs``)
        and its other keyword arguments (``row_effects``, ``sparse``...).

    Returns
    -------
    LatentBlockModel

    Examples
    --------
    >>> model_from_parameters("bernoulli", [0.5, 0.5], [1.0], probs=[[0.2], [0.8]])
    BernoulliLBM(kind='bernoulli', clusters=2x1)
    """
    return as_family(kind).model(row_proportions, col_proportions, **block_parameters)
