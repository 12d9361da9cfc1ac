"""The families of latent block models, by name: the one list the package reads.

Every place that needs the families (the command line's ``--kind`` choices, the
kinds a release spec allows, the file format's dtypes and parameter datasets,
the validator, the memory guard, the EM baselines, the pictures) asks
:func:`get_family` or :func:`family_names`; none compares a kind with a name.

**Adding a family** is writing its module under ``lbm_bench/models/`` (one
subclass of :class:`~lbm_bench.models.base.LatentBlockModel` with its family
knowledge, see docs/architecture.md) and adding its class to
:data:`FAMILY_CLASSES` below.
"""

from __future__ import annotations

from typing import Any

from lbm_bench._docstrings import name_families
from lbm_bench._validation import describe_value
from lbm_bench.models.base import LatentBlockModel
from lbm_bench.models.bernoulli import BernoulliLBM
from lbm_bench.models.categorical import CategoricalLBM
from lbm_bench.models.gaussian import GaussianLBM
from lbm_bench.models.poisson import PoissonLBM

__all__ = ["FAMILY_CLASSES", "check_kind", "family_names", "get_family", "model_from_parameters", "sparse_family_names"]

#: The registered families, in the order they are listed (help, docs, option declarations).
FAMILY_CLASSES: tuple[type[LatentBlockModel], ...] = (GaussianLBM, PoissonLBM, BernoulliLBM, CategoricalLBM)

_BY_NAME: dict[str, type[LatentBlockModel]] = {cls.kind: cls for cls in FAMILY_CLASSES}
name_families(tuple(_BY_NAME))  # the shared docstrings list them (lbm_bench._docstrings)


def family_names() -> tuple[str, ...]:
    """The names of the registered families, e.g. ``("gaussian", "poisson", "bernoulli", "categorical")``."""
    return tuple(_BY_NAME)


def sparse_family_names() -> tuple[str, ...]:
    """The names of the families whose tables can be ``scipy.sparse`` (``can_be_sparse``)."""
    return tuple(name for name, family in _BY_NAME.items() if family.can_be_sparse)


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


def get_family(kind: Any) -> type[LatentBlockModel]:
    """The class of family ``kind`` (checked as :func:`check_kind` does).

    Examples
    --------
    >>> get_family("Bernoulli").table_dtype
    dtype('uint8')
    """
    return _BY_NAME[check_kind(kind)]


def model_from_parameters(
    kind: str, row_proportions: Any, col_proportions: Any, **block_parameters: Any
) -> LatentBlockModel:
    """Build a model of family ``kind`` from its parameters (as stored in files).

    Examples
    --------
    >>> model_from_parameters("bernoulli", [0.5, 0.5], [1.0], probs=[[0.2], [0.8]])
    BernoulliLBM(kind='bernoulli', clusters=2x1)
    """
    return get_family(kind)(row_proportions, col_proportions, **block_parameters)
