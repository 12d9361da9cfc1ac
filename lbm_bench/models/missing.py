"""Missing entries: how a table's entries go missing, and the likelihood of what is seen.

A table may have missing entries; its *observed mask* ``M`` (``M_ij = 1``: entry
``(i, j)`` is seen) is drawn with the table. Two mechanisms, for every family:

``"random"`` (missing completely at random)
    each entry is missing independently with probability ``rate``. The mask says
    nothing about the labels: it is *ignorable*, and the posterior of the labels
    given what a user sees uses only the observed entries.
``"block"`` (missing by block, not at random)
    an entry of block ``(k, l)`` is missing with its own probability ``q_kl``::

        logit(q_kl) = c + scale * spread * P_kl

    where ``P`` is a ``g x m`` pattern of standard normals drawn with the design
    (centred, unit standard deviation), ``spread`` the ``missing_spread`` option
    (default 0.5) and ``c`` is solved at each scale so that the expected fraction
    of missing entries, ``sum_kl pi_k rho_l q_kl``, equals ``rate``. At scale 0
    every block has the rate (the mask carries no information, the risk is that
    of guessing); as the scale grows the mask, like the entries, tells the blocks
    apart (the same reason the Gaussian variances move with the scale). The mask
    then carries information about the labels: its Bernoulli terms enter the
    likelihood and the certificate.

The likelihood of what is seen, the observed-data family the engine sums, is
:mod:`lbm_bench.models.observed`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import optimize, special
from scipy import sparse as sp

from lbm_bench._records import choice, setting
from lbm_bench._validation import (
    check_block_array,
    check_choice,
    check_positive_float,
    check_probability,
)
from lbm_bench.models.data import DenseTableData, SparseTableData, TableData
from lbm_bench.models.sparse_noise import SparseNoise, sparse_table_from_entries

__all__ = [
    "DEFAULT_SPREAD",
    "MECHANISMS",
    "MISSING_OPTION_FIELDS",
    "MaskNoise",
    "MissingDesign",
    "draw_missing_pattern",
    "expand_missing",
    "mask_table",
    "unreachable_risk",
]

#: The mechanisms by which entries go missing (module documentation).
MECHANISMS = ("random", "block")
#: Default spread of the block mechanism's missing logits at scale 1.
DEFAULT_SPREAD = 0.5
#: Rows of uniforms drawn at once for a dense mask (bounds the temporary memory).
_MASK_CHUNK_ENTRIES = 1 << 20


def _rate(name: str, value: Any) -> float:
    return check_probability(name, value, allow_zero=True)


def _spread(name: str, value: Any) -> float:
    return check_positive_float(name, value, allow_zero=True)


#: The design options of missing entries, shared by every family (declared once here,
#: listed with the other shared options in :data:`lbm_bench.models.design.SHARED_OPTION_FIELDS`).
MISSING_OPTION_FIELDS = {
    "missing": setting(
        0.0, _rate, "--missing",
        "fraction of entries missing, in [0, 1) (0: a complete table); the risk is certified on "
        "the "
        "observed entries",
    ),
    "missing_mechanism": setting(
        "random", choice(*MECHANISMS), "--missing-mechanism",
        "how entries go missing: 'random' (completely at random) or 'block' (each block its own "
        "rate: "
        "not at random, the mask informs the labels)",
    ),
    "missing_spread": setting(
        DEFAULT_SPREAD, _spread, "--missing-spread",
        "block mechanism: spread of the blocks' missing logits at scale 1",
    ),
}
_MAPPING_KEYS = {"rate": "missing", "mechanism": "missing_mechanism", "spread": "missing_spread"}


def expand_missing(options: Mapping[str, Any]) -> dict[str, Any]:
    """Options with ``missing={"rate": r, "mechanism": m, "spread": s}`` written as the three
    options ``missing``, ``missing_mechanism`` and ``missing_spread`` (a rate alone is left
    as it is).

    Raises
    ------
    ValueError
        For an unknown key of the mapping, or a key also given as its own option.

    Examples
    --------
    >>> expand_missing({"missing": {"rate": 0.3, "mechanism": "block"}})
    {'missing': 0.3, 'missing_mechanism': 'block'}
    """
    out = dict(options)
    value = out.get("missing")
    if not isinstance(value, Mapping):
        return out
    unknown = sorted(set(value) - set(_MAPPING_KEYS))
    if unknown or "rate" not in value:
        raise ValueError(
            "missing must be a rate in [0, 1) or a mapping with keys rate, mechanism (and spread), "
            f"got {dict(value)!r}"
        )
    for key, name in _MAPPING_KEYS.items():
        if key in value:
            if name != "missing" and name in out:
                raise ValueError(f"{name} is given twice: as missing[{key!r}] and as {name}")
            out[name] = value[key]
    return out


def draw_missing_pattern(n_row_clusters: int, n_col_clusters: int,
                         rng: np.random.Generator) -> np.ndarray:
    """The block mechanism's pattern: ``g x m`` standard normals, centred and scaled to unit
    standard deviation (redrawn in the degenerate case of equal values)."""
    while True:
        pattern = rng.standard_normal((n_row_clusters, n_col_clusters))
        pattern -= pattern.mean()
        sd = float(pattern.std())
        if sd > 1e-8:
            return pattern / sd


@dataclass(frozen=True)
class MissingDesign:
    """How a design's tables lose entries (scale-free, like the rest of the design).

    Attributes
    ----------
    rate : float
        Expected fraction of missing entries, in (0, 1).
    mechanism : {"random", "block"}
    pattern : ndarray of shape (g, m) or None
        The block mechanism's pattern (None for "random").
    spread : float
        The block mechanism's spread of missing logits at scale 1.
    """

    rate: float
    mechanism: str = "random"
    pattern: np.ndarray | None = dataclasses.field(default=None, compare=False, repr=False)
    spread: float = DEFAULT_SPREAD

    def __post_init__(self) -> None:
        rate = check_probability("missing", self.rate)
        object.__setattr__(self, "rate", rate)
        check_choice("missing_mechanism", self.mechanism, MECHANISMS)
        object.__setattr__(self, "spread", _spread("missing_spread", self.spread))
        if self.mechanism == "block":
            if self.pattern is None:
                raise ValueError("the block mechanism needs its pattern")
            pattern = np.asarray(self.pattern, dtype=np.float64)
            object.__setattr__(self, "pattern",
                               check_block_array("missing pattern", pattern, pattern.shape))

    @property
    def informative(self) -> bool:
        """Whether the mask informs the labels (the block mechanism): its terms enter the
        likelihood."""
        return self.mechanism == "block"

    def block_probs(self, row_proportions: np.ndarray, col_proportions: np.ndarray,
                    scale: float) -> np.ndarray:
        """Missing probabilities ``q_kl`` of the blocks at ``scale``, (g, m): the rate everywhere
        for "random"; for "block", ``expit(c + scale * spread * pattern)`` with the offset ``c``
        that keeps the expected missing fraction at the rate."""
        g, m = len(row_proportions), len(col_proportions)
        if self.mechanism == "random":
            return np.full((g, m), self.rate)
        spread = scale * self.spread * self.pattern
        mass = np.outer(row_proportions, col_proportions)
        centre = float(special.logit(self.rate))
        reach = float(np.abs(spread).max()) + 1.0

        def excess(c: float) -> float:
            return float(np.sum(mass * special.expit(c + spread))) - self.rate

        offset = optimize.brentq(excess, centre - reach, centre + reach, xtol=1e-13, rtol=1e-15)
        return np.clip(special.expit(offset + spread), 1e-12, 1 - 1e-12)


# ---------------------------------------------------------------------------
# Drawing masks
# ---------------------------------------------------------------------------
class MaskNoise:
    """The randomness of a table's mask, fixed across scales (common random numbers).

    An entry is missing when its uniform ``V_ij`` is below its block's probability
    ``q_kl``. A dense table keeps its ``V`` (the block mechanism, whose ``q`` moves
    with the scale) or directly the mask (the random mechanism: one byte per entry); a
    sparse table keeps only the uniforms below the largest ``q``
    (:class:`~lbm_bench.models.sparse_noise.SparseNoise`), so the missing set is drawn
    without visiting the other entries.

    Parameters
    ----------
    n_rows, n_cols : int
    missing : MissingDesign
    sparse : bool
        Whether the table is sparse.
    rng : numpy.random.Generator
        The mask's own stream.
    """

    def __init__(self, n_rows: int, n_cols: int, missing: MissingDesign, sparse: bool, *,
                 rng: np.random.Generator) -> None:
        self.shape = (int(n_rows), int(n_cols))
        self.missing = missing
        self.sparse = bool(sparse)
        self._observed: np.ndarray | None = None
        self._uniforms: np.ndarray | None = None
        self._noise: SparseNoise | None = None
        if self.sparse:
            self._noise = SparseNoise(n_rows, n_cols, None, None, rng=rng)
        elif missing.mechanism == "random":
            self._observed = _dense_uniforms(self.shape, rng, threshold=missing.rate)
        else:
            self._uniforms = _dense_uniforms(self.shape, rng)

    @property
    def nbytes(self) -> int:
        parts = (self._observed, self._uniforms)
        extra = self._noise.nbytes if self._noise is not None else 0
        return int(sum(p.nbytes for p in parts if p is not None) + extra)

    def observed(self, probs: np.ndarray, z: np.ndarray, w: np.ndarray) -> np.ndarray:
        """Dense observed mask (bool, n_rows x n_cols) for block probabilities ``probs``."""
        if self._observed is not None:
            return self._observed
        out = np.empty(self.shape, dtype=bool)
        step = max(1, _MASK_CHUNK_ENTRIES // max(self.shape[1], 1))
        for start in range(0, self.shape[0], step):
            rows = slice(start, start + step)
            np.greater_equal(self._uniforms[rows], probs[np.ix_(z[rows], w)], out=out[rows])
        return out

    def missing_csr(self, probs: np.ndarray, z: np.ndarray, w: np.ndarray) -> sp.csr_array:
        """Sparse missing entries (a canonical CSR array of ones) for block probabilities
        ``probs``."""
        level = -math.log1p(-float(probs.max()))
        positions, uniforms = self._noise.entries(level)
        rows, cols = np.divmod(positions, self.shape[1])
        keep = uniforms < probs[z[rows], w[cols]]
        return sparse_table_from_entries(positions[keep], np.ones(int(keep.sum())), self.shape,
                                         np.uint8)


def _dense_uniforms(shape: tuple[int, int], rng: np.random.Generator,
                    threshold: float | None = None) -> np.ndarray:
    """Uniforms of a table, drawn by bands of rows (the same stream as one draw); with a
    ``threshold``, the observed mask ``U >= threshold`` instead (no float64 table kept)."""
    n_rows, n_cols = shape
    out = np.empty(shape, dtype=bool if threshold is not None else np.float64)
    step = max(1, _MASK_CHUNK_ENTRIES // max(n_cols, 1))
    for start in range(0, n_rows, step):
        band = rng.random((min(step, n_rows - start), n_cols))
        if threshold is None:
            out[start:start + step] = band
        else:
            np.greater_equal(band, threshold, out=out[start:start + step])
    return out


def mask_table(data: Any, noise: MaskNoise, probs: np.ndarray, z: np.ndarray, w: np.ndarray, *,
               copy: bool = True) -> TableData:
    """A complete table (dense array or CSR) with the mask of ``noise`` at block missing
    probabilities ``probs``: a :class:`~lbm_bench.models.data.TableData` holding 0 at its
    missing entries (a dense table is zeroed in place with ``copy=False``)."""
    table = TableData.of(data)
    if table.is_sparse:
        return SparseTableData(table.table).with_missing_csr(noise.missing_csr(probs, z, w))
    observed = noise.observed(probs, z, w)
    values = np.array(table.table, copy=True) if copy else table.table
    np.putmask(values, ~observed, 0)  # +0, not -0.0 (a product would keep the sign)
    return DenseTableData(values, observed)


def unreachable_risk(rate: float, n_rows: int, n_cols: int, row_proportions: np.ndarray,
                     col_proportions: np.ndarray) -> float:
    """A lower bound of the mean risk at any scale when entries go missing completely at random.

    A row with no observed entry (probability ``rate ** n_cols``) is classified from the
    prior alone: its label is wrong with probability at least ``1 - max_k pi_k``, whatever
    the labelling; likewise for columns. Then ``E[l_row] >= rate^d (1 - max pi)``,
    ``E[l_col] >= rate^n (1 - max rho)`` and ``E[l_item] >= max(E[l_row], E[l_col])`` (a
    loose bound: the calibration finds the rest). Not a bound for the block mechanism,
    whose mask informs the labels.

    Examples
    --------
    >>> round(unreachable_risk(0.9, 60, 10, [0.5, 0.5], [0.5, 0.5]), 4)
    0.1743
    """
    row = rate**n_cols * (1.0 - float(np.max(row_proportions)))
    col = rate**n_rows * (1.0 - float(np.max(col_proportions)))
    return max(row, col)
