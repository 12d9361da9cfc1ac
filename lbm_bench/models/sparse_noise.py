"""Sparse noise: the uniforms of a table that can give a non-zero entry, without the table.

A dense table is drawn from one uniform ``U_ij`` per entry (common random
numbers: the same uniforms at every scale of the calibration). For binaries
``x_ij = 1[U_ij < p]``; for counts we use the survival form
``x_ij = #{k >= 0 : P(X > k) > U_ij}``, which is non-zero iff
``U_ij < 1 - exp(-rate)``. In both cases an entry is non-zero only when its
uniform is *small*, so a sparse table only needs the uniforms below a
threshold, and those can be drawn without visiting the other entries.

**Levels.** The threshold of entry ``(i, j)`` at *level* ``L`` is
``T_ij(L) = 1 - exp(-a_i b_j L)``, where ``a`` and ``b`` are the row and column
exposures (ones except for the Poisson model with effects). A Poisson model is
covered by the level ``max rate``; a Bernoulli model by ``-log(1 - max p)``.

**Bands, drawn lazily.** Levels follow a fixed ladder ``L_0 < L_1 < ...``
(factor sqrt(2)). Band ``j`` holds the entries with ``T(L_{j-1}) <= U < T(L_j)``:
given that ``U >= T(L_{j-1})``, this happens with probability
``q = 1 - exp(-a_i b_j (L_j - L_{j-1}))``, independently across entries, and
then ``U`` is uniform on ``[T(L_{j-1}), T(L_j))``. So band ``j`` is drawn by
geometric skips over the entries (rows grouped by exposure, thinned to the
exact ``q``), dropping the entries already in an earlier band. Band ``j``
comes from its own stream (child ``j`` of the noise's seed), so the noise is
the same whatever order of levels the calibration asks for: it is exactly the
set of small uniforms of one dense uniform table. Memory and time are
proportional to the entries kept, about the table's non-zeros times at most
``sqrt(2)`` (the ladder's step) on top of the largest block density.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import sparse as sp

import lbm_bench._portable as portable
from lbm_bench._seeds import child_seed, draw_seed

__all__ = [
    "MAX_LEVEL",
    "SparseNoise",
    "candidate_entries",
    "ladder_level",
    "poisson_from_survival",
    "sparse_table_from_entries",
]

#: Level of the first band (all entries with ``a_i b_j L_0`` below it are in band 0).
_FIRST_LEVEL = 2.0**-24
#: Ratio of two consecutive levels of the ladder.
_LADDER_RATIO = math.sqrt(2.0)
#: Highest level (a Poisson rate, or ``-log(1 - p)``; 2048 covers p = 1 - 1e-9).
MAX_LEVEL = 2.0**11
#: Relative width of the exposure bins used to thin the geometric skips.
_BIN_RATIO = 1.25


def ladder_level(index: int) -> float:
    """Upper level of band ``index`` (band 0 covers ``(0, ladder_level(0)]``)."""
    return _FIRST_LEVEL * _LADDER_RATIO**index


def _band_for(level: float) -> int:
    """Index of the first band whose upper level is at least ``level``."""
    if level <= _FIRST_LEVEL:
        return 0
    index = int(math.ceil(math.log(level / _FIRST_LEVEL) / math.log(_LADDER_RATIO) - 1e-12))
    while ladder_level(index) < level:
        index += 1
    return index


class SparseNoise:
    """The uniforms below a level of an ``n_rows x n_cols`` table of uniforms.

    Parameters
    ----------
    n_rows, n_cols : int
    row_weights, col_weights : ndarray of shape (n_rows,), (n_cols,) or None
        Exposures ``a_i`` and ``b_j`` (None: ones).
    rng : numpy.random.Generator
        One integer is drawn from it: the seed of the bands.

    Attributes
    ----------
    positions : ndarray of int64
        Linear indices ``i * n_cols + j`` of the kept entries, increasing.
    uniforms : ndarray of float64
        Their uniforms, aligned with ``positions``.
    level : float
        Every entry with ``U_ij < T_ij(level)`` is kept (0 before the first draw).
    """

    def __init__(
        self,
        n_rows: int,
        n_cols: int,
        row_weights: np.ndarray | None,
        col_weights: np.ndarray | None,
        *,
        rng: np.random.Generator,
    ) -> None:
        self.shape = (int(n_rows), int(n_cols))
        self.row_weights = None if row_weights is None else np.asarray(row_weights, dtype=np.float64)
        self.col_weights = None if col_weights is None else np.asarray(col_weights, dtype=np.float64)
        self.seed = draw_seed(rng)
        self.n_bands = 0
        self.positions = np.empty(0, dtype=np.int64)
        self.uniforms = np.empty(0, dtype=np.float64)
        self._bins: list[np.ndarray] | None = None

    @property
    def level(self) -> float:
        return 0.0 if self.n_bands == 0 else ladder_level(self.n_bands - 1)

    @property
    def nbytes(self) -> int:
        return int(self.positions.nbytes + self.uniforms.nbytes)

    def entries(self, level: float) -> tuple[np.ndarray, np.ndarray]:
        """Kept ``(positions, uniforms)``, covering at least every ``U_ij < T_ij(level)``.

        Draws the missing bands. Raises ValueError above :data:`MAX_LEVEL`.
        """
        if not level <= MAX_LEVEL:
            raise ValueError(
                f"sparse tables need entry probabilities below 1 - 1e-9 and rates below {MAX_LEVEL:g};"
                f" this model needs level {level:.4g}: use a dense table (no density) or a smaller scale"
            )
        last = _band_for(level)
        if last >= self.n_bands:
            new = [self._band(j) for j in range(self.n_bands, last + 1)]
            positions = np.concatenate([self.positions] + [p for p, _ in new])
            uniforms = np.concatenate([self.uniforms] + [u for _, u in new])
            order = np.argsort(positions, kind="stable")  # merges sorted runs, earlier bands first
            positions, uniforms = positions[order], uniforms[order]
            first = np.ones(positions.size, dtype=bool)  # an entry belongs to its earliest band
            np.not_equal(positions[1:], positions[:-1], out=first[1:])
            self.positions, self.uniforms = positions[first], uniforms[first]
            self.n_bands = last + 1
        return self.positions, self.uniforms

    # -- one band ------------------------------------------------------------------
    def _row_bins(self) -> list[np.ndarray]:
        """The rows grouped by exposure (bins of ratio :data:`_BIN_RATIO`), once per noise."""
        if self._bins is None:
            if self.row_weights is None:
                self._bins = [np.arange(self.shape[0])]
            else:
                key = np.floor(portable.log(self.row_weights) / math.log(_BIN_RATIO)).astype(np.int64)
                order = np.argsort(key, kind="stable")
                bounds = np.flatnonzero(np.diff(key[order])) + 1
                self._bins = [np.sort(rows) for rows in np.split(order, bounds)]
        return self._bins

    def _band(self, index: int) -> tuple[np.ndarray, np.ndarray]:
        rng = np.random.default_rng(child_seed(self.seed, index))
        low = 0.0 if index == 0 else ladder_level(index - 1)
        high = ladder_level(index)
        n_rows, n_cols = self.shape
        b = np.ones(n_cols) if self.col_weights is None else self.col_weights
        a = np.ones(n_rows) if self.row_weights is None else self.row_weights
        b_max = float(b.max())
        weighted = self.row_weights is not None or self.col_weights is not None
        found, thinning = [], []
        for rows in self._row_bins():
            q_bin = -math.expm1(-float(a[rows].max()) * b_max * (high - low))
            if q_bin <= 0.0:
                continue
            virtual = _skip_sample(rows.size * n_cols, q_bin, rng)
            if not weighted:
                found.append(virtual)  # one bin of all rows: virtual indices are positions
                continue
            found.append(rows[virtual // n_cols] * np.int64(n_cols) + virtual % n_cols)
            thinning.append(rng.random(virtual.size) * q_bin)
        # candidates already in an earlier band are dropped by the caller (their U is smaller)
        positions = np.concatenate(found) if found else np.empty(0, dtype=np.int64)
        exposure = 1.0
        if weighted:
            rows, cols = np.divmod(positions, n_cols)
            exposure = a[rows] * b[cols]
        # in one call: each entry's own q = P(U < T(high) | U >= T(low)) and T(low); the band's
        # width is then T(high) - T(low) = q (1 - T(low))
        q, t_low = -portable.expm1(-exposure * np.array([[high - low], [low]]))
        if weighted:  # thinned to each entry's own q, every bin at once
            accept = np.concatenate(thinning) < q
            positions, q, t_low = positions[accept], q[accept], t_low[accept]
        uniforms = rng.random(positions.size)
        uniforms *= q - q * t_low
        uniforms += t_low
        return positions, uniforms


def _skip_sample(n_entries: int, q: float, rng: np.random.Generator) -> np.ndarray:
    """Increasing indices in ``[0, n_entries)``, each present independently with probability ``q``
    (cumulated geometric gaps)."""
    if q >= 1.0:
        return np.arange(n_entries, dtype=np.int64)
    chunks, last, mean = [], -1, n_entries * q
    while True:
        size = int(mean + 6 * math.sqrt(mean) + 16)
        gaps = rng.geometric(q, size=size)
        positions = last + np.cumsum(gaps, dtype=np.int64)
        if positions[-1] >= n_entries:
            chunks.append(positions[: np.searchsorted(positions, n_entries)])
            break
        chunks.append(positions)
        last = int(positions[-1])
        mean = max((n_entries - last) * q, 1.0)
    return np.concatenate(chunks)


def poisson_from_survival(uniforms: np.ndarray, rates: np.ndarray) -> np.ndarray:
    """Counts ``#{k >= 0 : P(X > k) > u}`` for ``X ~ Poisson(rate)``, elementwise.

    The survival form of the inverse CDF (``x > 0`` iff ``u < 1 - exp(-rate)``):
    a uniform ``u`` gives a Poisson(rate) count. Returns int64.
    """
    uniforms = np.asarray(uniforms, dtype=np.float64)
    rates = np.broadcast_to(np.asarray(rates, dtype=np.float64), uniforms.shape)
    counts = np.zeros(uniforms.shape, dtype=np.int64)
    survival = -portable.expm1(-rates)  # P(X > 0)
    active = np.flatnonzero(uniforms < survival)
    survival, lam = survival[active], rates[active]
    log_rate = portable.log(lam)
    k = 0
    while active.size:
        counts[active] += 1  # x > k
        k += 1
        pmf = portable.exp(-lam + k * log_rate - math.lgamma(k + 1))  # P(X = k)
        survival = survival - pmf  # P(X > k)
        keep = uniforms[active] < survival
        active, survival, lam, log_rate = active[keep], survival[keep], lam[keep], log_rate[keep]
    return counts


def sparse_table_from_entries(
    positions: np.ndarray, values: np.ndarray, shape: tuple[int, int], dtype: type
) -> sp.csr_array:
    """CSR table from increasing linear indices ``i * n_cols + j`` and their non-zero values."""
    n_rows, n_cols = shape
    rows, cols = np.divmod(positions, n_cols)
    indptr = np.zeros(n_rows + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n_rows), out=indptr[1:])
    index_dtype = np.int32 if max(n_cols, positions.size) < 2**31 else np.int64
    table = sp.csr_array(
        (values.astype(dtype), cols.astype(index_dtype), indptr.astype(index_dtype)), shape=shape
    )
    table.has_canonical_format = True  # sorted, unique
    return table


def candidate_entries(noise: Any, level: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The entries of a sparse model's noise that can be non-zero at ``level`` (the model's
    :meth:`~lbm_bench.models.base.LatentBlockModel.sparse_level`): linear positions,
    uniforms, rows, columns."""
    if not isinstance(noise, SparseNoise):
        raise TypeError(f"a sparse model needs SparseNoise (from draw_noise), got {type(noise).__name__}")
    positions, uniforms = noise.entries(level)
    rows, cols = np.divmod(positions, noise.shape[1])
    return positions, uniforms, rows, cols
