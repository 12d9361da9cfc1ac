"""The catalog of algorithms: the built-ins by name, the per-family LBM algorithms, and the loader
of plugged-in ones.

An *algorithm* is any callable

    fit(X, n_row_clusters, n_col_clusters, *, rng) -> (rows, cols)

returning two 1-D integer label arrays of shapes (n_rows,) and (n_cols,),
0-based, with at most ``n_row_clusters`` and ``n_col_clusters`` distinct values
(fewer when clusters empty out). :data:`ALGORITHMS` registers the built-ins by
the short names that ``lbm-bench benchmark --algorithm NAME`` accepts, and
:func:`resolve_algorithm` also accepts ``"module:function"`` (a module on the path,
or a file of the current directory) and ``"path/to/file.py:function"``.

The algorithms of the **unknown-clusters track** choose the numbers of clusters
themselves, up to a maximum:

    fit(X, max_row_clusters, max_col_clusters, *, rng) -> (rows, cols)

:data:`SELECTION_ALGORITHMS` registers its built-ins (``cem-icl``, ``vem-icl``,
``sparsebm-selection``). Each track's :class:`Contract` (in :data:`CONTRACTS`) says how its
algorithms are called and holds its built-ins, and :func:`resolve_algorithm` looks a name up
in the built-ins of its ``track`` (the track itself, what it runs and writes, is
:mod:`lbm_bench.scoring.benchmark`'s). An algorithm of
that track may name, as its attribute ``given_counts``, the algorithm of the
known-clusters track it is to be compared with (``cem_icl.given_counts == "cem"``).

The per-family algorithms (``gaussian_cem``, ..., ``bernoulli_vem``: block CEM
or VEM with the family forced, their defaults otherwise) are generated from the
registered families (:data:`lbm_bench.models.registry.FAMILIES`), one for each family
and method, in :data:`FAMILY_ALGORITHMS`; they are registered as
``"gaussian-cem"`` and so on.
"""

from __future__ import annotations

import importlib
import inspect
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from lbm_bench._validation import check_choice
from lbm_bench.algorithms.kmeans import double_kmeans
from lbm_bench.algorithms.lbm_em import cem, vem
from lbm_bench.algorithms.selection import cem_icl, vem_icl
from lbm_bench.algorithms.sparsebm import sparsebm_lbm, sparsebm_selection
from lbm_bench.algorithms.spectral import spectral_biclustering, spectral_coclustering
from lbm_bench.models.family import Family
from lbm_bench.models.registry import FAMILIES

# and the per-family algorithms (gaussian_cem, ...), module attributes (__getattr__ below)
__all__ = [
    "ALGORITHMS",
    "CHOSEN_COUNTS",
    "CONTRACTS",
    "FAMILY_ALGORITHMS",
    "GIVEN_COUNTS",
    "LBM_METHODS",
    "SELECTION_ALGORITHMS",
    "MASKED_INPUT",
    "Algorithm",
    "Contract",
    "algorithm_source",
    "family_algorithm_attribute",
    "fits_family",
    "resolve_algorithm",
]

#: The algorithm protocol: ``fit(X, n_row_clusters, n_col_clusters, *, rng) -> (rows, cols)``.
Algorithm = Callable[..., tuple[np.ndarray, np.ndarray]]
#: An algorithm with this attribute set to True is handed a table with missing entries as a
#: NumPy masked array in the table's dtype (``lbm-bench benchmark``), instead of float64 with
#: NaN; the built-in CEM and VEM ask for it (the dtype then tells the family).
MASKED_INPUT = "masked_input"

#: The block EM methods, by name, with what their per-family algorithms call them.
LBM_METHODS: dict[str, tuple[Algorithm, str]] = {
    "cem": (cem, "Block CEM"),
    "vem": (vem, "Block VEM"),
}


def _fitted_blocks(family: Family) -> str:
    """What the EM baselines fit of a family, for the docstrings of its algorithms."""
    blocks = family.presentation.block_description
    return blocks + (", without row or column effects" if family.model.has_effects else "")


def _family_algorithm(family: Family, method: str) -> Algorithm:
    """``method`` (``"cem"`` or ``"vem"``) with ``family`` forced, as an algorithm."""
    fit, title = LBM_METHODS[method]
    kind = family.kind

    def algorithm(
        X: ArrayLike,
        n_row_clusters: int,
        n_col_clusters: int,
        *,
        rng: np.random.Generator | int | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        return fit(X, n_row_clusters, n_col_clusters, kind=family, rng=rng)

    algorithm.__name__ = algorithm.__qualname__ = f"{kind}_{method}"
    setattr(algorithm, MASKED_INPUT, True)
    algorithm.kind = kind  # the name of the family it fits (see fits_family)
    algorithm.__doc__ = (
        f"{title} with {_fitted_blocks(family)}.\n\n"
        f"    :func:`lbm_bench.algorithms.{method}` with ``kind={kind!r}`` and its defaults;\n"
        "    returns ``(rows, cols)``, two int64 arrays of shapes (n_rows,) and (n_cols,).\n"
    )
    return algorithm


#: The per-family algorithms by function name (``"gaussian_cem"``, ...): one for
#: each registered family (:data:`~lbm_bench.models.registry.FAMILIES`) and each method.
FAMILY_ALGORITHMS: dict[str, Algorithm] = {
    f"{family.kind}_{method}": _family_algorithm(family, method)
    for family in FAMILIES
    for method in LBM_METHODS
}
__all__ += sorted(FAMILY_ALGORITHMS)


def __getattr__(name: str) -> Algorithm:
    """The per-family algorithms as attributes of the module (``catalog.poisson_cem``: where
    pickle finds them by reference), looked up in :data:`FAMILY_ALGORITHMS` (PEP 562)."""
    return family_algorithm_attribute(__name__, name)


def __dir__() -> list[str]:
    return sorted([*globals(), *FAMILY_ALGORITHMS])


def family_algorithm_attribute(module: str, name: str) -> Algorithm:
    """The per-family algorithm ``name`` of :data:`FAMILY_ALGORITHMS`, as an attribute of
    ``module`` (its module ``__getattr__``): AttributeError as Python words it otherwise."""
    try:
        return FAMILY_ALGORITHMS[name]
    except KeyError:
        raise AttributeError(f"module {module!r} has no attribute {name!r}") from None


for _fit, _ in LBM_METHODS.values():
    setattr(_fit, MASKED_INPUT, True)

#: Built-in algorithms by short name; ``"cem"`` and ``"vem"`` infer the family from
#: the table, ``"gaussian-cem"`` ... ``"bernoulli-vem"`` (one per family and method) force it.
ALGORITHMS: dict[str, Algorithm] = {
    "cem": cem,
    "vem": vem,
    "double-kmeans": double_kmeans,
    "spectral-coclustering": spectral_coclustering,
    "spectral-biclustering": spectral_biclustering,
    "sparsebm": sparsebm_lbm,
    **{name.replace("_", "-"): fit for name, fit in FAMILY_ALGORITHMS.items()},
}


#: Built-in algorithms of the unknown-clusters track (they choose the numbers of clusters).
SELECTION_ALGORITHMS: dict[str, Algorithm] = {
    "cem-icl": cem_icl,
    "vem-icl": vem_icl,
    "sparsebm-selection": sparsebm_selection,
}

@dataclass(frozen=True)
class Contract:
    """How the algorithms of one benchmark track are called, and the track's built-ins by name.

    Attributes
    ----------
    track : str
        The track's name (``lbm-bench benchmark --track``).
    signature : str
        How its algorithms are called, e.g. ``"fit(X, n_row_clusters, n_col_clusters, *, rng)"``.
    builtins : mapping of str to callable
        Its built-in algorithms by registry name.
    """

    track: str
    signature: str
    builtins: Mapping[str, Algorithm]

    def readers_of(self, kind: str) -> list[str]:
        """The built-ins that can be given a table of family ``kind`` whose values do not tell
        the family (they take a ``kind=`` keyword, or fit that family only: :func:`fits_family`).

        Examples
        --------
        >>> CHOSEN_COUNTS.readers_of("categorical")
        ['cem-icl', 'vem-icl']
        """
        return [name for name, fit in self.builtins.items() if fits_family(fit, kind) != "values"]


#: The known-clusters track's contract: an algorithm is told the table's numbers of clusters.
GIVEN_COUNTS = Contract("known-clusters", "fit(X, n_row_clusters, n_col_clusters, *, rng)",
                        ALGORITHMS)
#: The unknown-clusters track's contract: an algorithm chooses them, up to a maximum.
CHOSEN_COUNTS = Contract("unknown-clusters", "fit(X, max_row_clusters, max_col_clusters, *, rng)",
                         SELECTION_ALGORITHMS)
#: The contracts of the benchmark tracks, by track name.
CONTRACTS: dict[str, Contract] = {
    contract.track: contract
    for contract in (GIVEN_COUNTS, CHOSEN_COUNTS)
}


def fits_family(algorithm: Algorithm, kind: str) -> str:
    """How an algorithm meets a table of family ``kind``: ``"kind"`` when it takes a ``kind``
    keyword (block CEM and VEM, and any algorithm written that way: it is told the
    family), ``"own"`` when it declares ``kind`` as the one family it fits (attribute
    ``algorithm.kind``: ``categorical_cem``...), ``"values"`` otherwise (it reads the
    entries as numbers).

    Examples
    --------
    >>> own = FAMILY_ALGORITHMS["categorical_cem"]
    >>> fits_family(cem, "categorical"), fits_family(own, "categorical")
    ('kind', 'own')
    >>> fits_family(double_kmeans, "categorical")
    'values'
    """
    if getattr(algorithm, "kind", None) == kind:
        return "own"
    try:
        parameters = inspect.signature(algorithm).parameters
    except (TypeError, ValueError):  # a callable without a signature (a C function)
        return "values"
    return "kind" if "kind" in parameters else "values"


def _is_path(module_name: str) -> bool:
    """``"./myalgo.py"``, ``"algos/myalgo.py"``: a file, not a dotted module name."""
    return module_name.endswith(".py") or "/" in module_name or os.sep in module_name


def _module_from_file(path_text: str, spec: str) -> ModuleType:
    """Import the Python file ``path_text`` (relative to the current directory) as a module."""
    import hashlib
    import importlib.util

    path = Path(path_text).expanduser().resolve()
    if not path.is_file():
        raise ValueError(f"algorithm {spec!r}: no file {path_text} (looked for {path})")
    # a unique, stable module name per file, so two files named alike do not collide
    digest = hashlib.sha256(str(path).encode()).hexdigest()[:12]
    module_name = f"_lbm_bench_user_{_identifier(path.stem)}_{digest}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    loader_spec = importlib.util.spec_from_file_location(module_name, path)
    if loader_spec is None or loader_spec.loader is None:
        raise ValueError(f"algorithm {spec!r}: {path} is not an importable Python file")
    module = importlib.util.module_from_spec(loader_spec)
    sys.modules[module_name] = module
    try:
        loader_spec.loader.exec_module(module)
    except BaseException as exc:
        del sys.modules[module_name]
        if not isinstance(exc, Exception):
            raise  # SystemExit, an interruption: _import_attribute tells them apart
        raise ValueError(
            f"algorithm {spec!r}: importing {path} failed: {type(exc).__name__}: {exc}") from exc
    return module


def _identifier(text: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in text)


def _import_module(module_name: str, spec: str) -> ModuleType:
    """Import a dotted module name; when it is not importable but its file (or package) is
    in the current directory, import it from there (as ``python -m`` would), so that
    ``myalgo:fit`` works for ``./myalgo.py`` without ``PYTHONPATH=.``."""
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        top = module_name.split(".")[0]
        cwd = os.getcwd()
        in_cwd = Path(cwd, f"{top}.py").is_file() or Path(cwd, top, "__init__.py").is_file()
        if exc.name != top or not in_cwd:
            raise ValueError(
                f"cannot import module {module_name!r} of algorithm {spec!r}: {exc} (a file of "
                f"the current directory can be named by its path, e.g. './{top}.py:FUNCTION')"
            ) from exc
    except ImportError as exc:
        raise ValueError(
            f"cannot import module {module_name!r} of algorithm {spec!r}: {exc}") from exc
    sys.path.insert(0, cwd)
    try:
        return importlib.import_module(module_name)
    except Exception as exc:
        raise ValueError(
            f"algorithm {spec!r}: importing {module_name} from the current directory failed: "
            f"{type(exc).__name__}: {exc}"
        ) from exc
    finally:
        sys.path.remove(cwd)


def _import_attribute(spec: str) -> Any:
    from lbm_bench._interrupts import watching

    module_name, _, attribute = spec.rpartition(":")
    if not module_name or not attribute:
        raise ValueError(
            f"algorithm {spec!r} must be a registry name, 'module:function' or "
            "'path/to/file.py:function'"
        )
    with watching() as watch:
        try:
            target: Any = (_module_from_file(module_name, spec) if _is_path(module_name)
                           else _import_module(module_name, spec))
        except ValueError:
            raise
        # a module that raises, or calls sys.exit, while it is imported
        except BaseException as exc:
            if not watch.raised_by_code(exc):
                raise
            text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            raise ValueError(f"algorithm {spec!r}: importing {module_name} raised {text}") from None
    for part in attribute.split("."):
        try:
            target = getattr(target, part)
        except AttributeError:
            raise ValueError(
                f"module {module_name!r} has no attribute {attribute!r} (algorithm {spec!r})"
            ) from None
    return target


def algorithm_source(algorithm: Algorithm) -> str | None:
    """The file an algorithm was loaded from (its module's ``__file__``), or None when unknown.

    Examples
    --------
    >>> algorithm_source(resolve_algorithm("cem")[1]).endswith("lbm_em.py")
    True
    """
    module = sys.modules.get(getattr(algorithm, "__module__", None) or "")
    path = getattr(module, "__file__", None)
    return str(Path(path).resolve()) if path else None


def resolve_algorithm(name: str, *, track: str = GIVEN_COUNTS.track) -> tuple[str, Algorithm]:
    """Find an algorithm by registry name or ``"module:function"``.

    Parameters
    ----------
    name : str
        A key of the track's registry (:data:`ALGORITHMS`, or :data:`SELECTION_ALGORITHMS`
        for the unknown-clusters track; case and ``_``/``-`` insensitive);
        ``"package.module:function"`` (the attribute may be dotted, e.g.
        ``"module:Class.method"``), imported with importlib, or, when the module
        is not importable and ``module.py`` (or the package ``module/``) is in the
        current directory, from there; or ``"path/to/file.py:function"``, a Python
        file imported by its path (relative to the current directory).
    track : str, default="known-clusters"
        The track whose built-ins ``name`` is looked up in (a key of :data:`CONTRACTS`); a
        built-in of another track is refused saying which track it belongs to.

    Returns
    -------
    name : str
        The registry key, or ``name`` itself for ``"module:function"`` and
        ``"file.py:function"`` (:func:`algorithm_source` tells which file was loaded).
    algorithm : callable
        Called as the track's contract says (``signature``), e.g.
        ``fit(X, n_row_clusters, n_col_clusters, *, rng) -> (rows, cols)``.

    Raises
    ------
    ValueError
        For an unknown name, a module that cannot be imported, a missing
        attribute or a non-callable one.

    Examples
    --------
    >>> resolve_algorithm("double_kmeans")[0]
    'double-kmeans'
    >>> resolve_algorithm("lbm_bench.algorithms:poisson_cem")[1].__name__
    'poisson_cem'
    """
    if not isinstance(name, str):
        raise TypeError(f"algorithm name must be a string, got {type(name).__name__}")
    check_choice("track", track, tuple(CONTRACTS))
    registry = CONTRACTS[track].builtins
    spec = name.strip()
    if ":" not in spec:
        key = spec.lower().replace("_", "-")
        if key not in registry:
            known = ", ".join(registry)
            other = next((c for c in CONTRACTS.values() if c.track != track and key in c.builtins),
                         None)
            if other is not None:
                raise ValueError(
                    f"{name!r} is an algorithm of the {other.track} track, called as "
                    f"{other.signature} (track={other.track!r}); the {track} track's built-ins are "
                    f"{known}, or 'module:function'"
                )
            raise ValueError(
                f"unknown algorithm {name!r}: expected one of {known}, or 'module:function'"
            )
        return key, registry[key]
    target = _import_attribute(spec)
    if not callable(target):
        raise ValueError(f"algorithm {spec!r} is not callable (got {type(target).__name__})")
    return spec, target
