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
comes from its own stream (the ``"band"`` ``j`` of the noise's seed, the root of its
``"noise bands"``: :data:`~lbm_bench._seeds.SEED_TREE`), so the noise is
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
from lbm_bench._seeds import draw_seed, stream
from lbm_bench.tasks.heap import release_free_memory

__all__ = [
    "MAX_LEVEL",
    "SparseNoise",
    "candidate_entries",
    "ladder_level",
    "poisson_from_survival",
    "sparse_table_from_entries",
    "sparse_table_from_noise",
]

#: Level of the first band (all entries with ``a_i b_j L_0`` below it are in band 0).
_FIRST_LEVEL = 2.0**-24
#: Ratio of two consecutive levels of the ladder.
_LADDER_RATIO = math.sqrt(2.0)
#: Highest level (a Poisson rate, or ``-log(1 - p)``; 2048 covers p = 1 - 1e-9).
MAX_LEVEL = 2.0**11
#: Relative width of the exposure bins used to thin the geometric skips.
_BIN_RATIO = 1.25
#: Entries merged at once when bands are added to the kept entries (bounds the temporaries).
_MERGE_ENTRIES = 1 << 20
#: Candidates turned into table entries at once (bounds the temporaries).
_TABLE_CHUNK = 1 << 22
#: Expected candidates (an upper bound) above which a noise with no band drawn yet builds its
#: table range by range without keeping the candidates (:meth:`SparseNoise.ranges`): about
#: 256 MiB of kept entries, the most a calibration worker keeps of all its tables.
_STREAM_CANDIDATES = 1 << 24


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
        self.row_weights = None if row_weights is None else np.asarray(
            row_weights, dtype=np.float64)
        self.col_weights = None if col_weights is None else np.asarray(
            col_weights, dtype=np.float64)
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
        last = _check_level(level)
        if last >= self.n_bands:
            runs = [(self.positions, self.uniforms)]
            runs += [self._band(j) for j in range(self.n_bands, last + 1)]
            self.positions, self.uniforms = _merge_runs(runs, self.shape[0] * self.shape[1])
            self.n_bands = last + 1
        return self.positions, self.uniforms

    def expected_candidates(self, level: float) -> float:
        """An upper bound of the expected candidates of the bands covering ``level``:
        ``sum_ij T_ij(L) <= L sum_i a_i sum_j b_j`` (``L`` the last band's level), at most
        every entry."""
        top = ladder_level(_band_for(level))
        n_rows, n_cols = self.shape
        a = n_rows if self.row_weights is None else float(self.row_weights.sum())
        b = n_cols if self.col_weights is None else float(self.col_weights.sum())
        return float(min(n_rows * n_cols, top * a * b))

    def ranges(self, level: float):
        """The entries of :meth:`entries` (``(positions, uniforms)`` covering ``level``, by
        increasing position) in consecutive parts, for building a table part by part.

        A noise with bands already drawn, or one expected to keep fewer than
        :data:`_STREAM_CANDIDATES` candidates, draws and keeps them (:meth:`entries`). A
        larger noise with no band drawn yet keeps nothing: its bands' positions are drawn
        (the uniforms too when the band is thinned over bins of rows), and the bands are
        merged range by range as :meth:`entries` would merge them, a band's uniforms drawn
        for one range after the other (they are consecutive draws of its stream, in the
        order of its positions): the same parts, without the kept arrays (a table of 1e8
        stored entries keeps about 2-3e8 candidates, 16 bytes each); the heap's free pages
        are then given back (:func:`~lbm_bench.tasks.heap.release_free_memory`: the ranges'
        temporaries, a few MiB each, would otherwise stay resident). Calling it again
        draws the bands again.
        """
        last = _check_level(level)
        if self.n_bands > 0 or self.expected_candidates(level) < _STREAM_CANDIDATES:
            positions, uniforms = self.entries(level)
            for start in range(0, positions.size, _TABLE_CHUNK):
                yield positions[start:start + _TABLE_CHUNK], uniforms[start:start + _TABLE_CHUNK]
            return
        runs = [self._band(j, lazy=True) for j in range(last + 1)]
        yield from _merged_ranges(runs, self.shape[0] * self.shape[1])
        del runs
        release_free_memory(collect=False)  # the ranges' temporaries, before the table's next stage

    # -- one band ------------------------------------------------------------------
    def _row_bins(self) -> list[np.ndarray]:
        """The rows grouped by exposure (bins of ratio :data:`_BIN_RATIO`), once per noise."""
        if self._bins is None:
            if self.row_weights is None:
                self._bins = [np.arange(self.shape[0])]
            else:
                key = np.floor(portable.log(self.row_weights) / math.log(_BIN_RATIO)).astype(
                    np.int64)
                order = np.argsort(key, kind="stable")
                bounds = np.flatnonzero(np.diff(key[order])) + 1
                self._bins = [np.sort(rows) for rows in np.split(order, bounds)]
        return self._bins

    def _band(self, index: int, lazy: bool = False) -> tuple[np.ndarray, Any]:
        """Band ``index``'s positions and uniforms, by increasing position; with ``lazy``, a
        band drawn over one bin of rows gives its uniforms as :class:`_BandUniforms`."""
        rng = np.random.default_rng(stream(self.seed, "noise bands", "band", index))
        low = 0.0 if index == 0 else ladder_level(index - 1)
        high = ladder_level(index)
        n_rows, n_cols = self.shape
        b = np.ones(n_cols) if self.col_weights is None else self.col_weights
        a = np.ones(n_rows) if self.row_weights is None else self.row_weights
        b_max = float(b.max())
        weighted = self.row_weights is not None or self.col_weights is not None
        found = []
        widths = np.array([[high - low], [low]])
        for rows in self._row_bins():
            q_bin = -math.expm1(-float(a[rows].max()) * b_max * (high - low))
            if q_bin <= 0.0:
                continue
            virtual = _skip_sample(rows.size * n_cols, q_bin, rng)
            if not weighted:
                found.append(virtual)  # one bin of all rows: virtual indices are positions
                continue
            # thinned to each entry's own q as the bin is drawn: its thinning uniforms are the
            # next draws of the stream, so only the kept candidates outlive the bin
            thinning = rng.random(virtual.size)
            thinning *= q_bin
            found.append(_thinned(virtual, rows, thinning, a, b, n_cols, widths[0]))
            del virtual, thinning
        # candidates already in an earlier band are dropped by the caller (their U is smaller)
        positions = np.concatenate(found) if found else np.empty(0, dtype=np.int64)
        del found
        # each entry's own q = P(U < T(high) | U >= T(low)) and T(low), from its position
        if weighted:
            return _thinned_run(positions, rng, a, b, n_cols, widths)
        # in one call: the band's q and T(low); its width is then T(high) - T(low) = q (1 - T(low))
        q, t_low = -portable.expm1(-1.0 * widths)
        uniforms = _BandUniforms(rng, q, t_low)
        if lazy:  # one bin: the positions increase, drawn in that order
            return positions, uniforms
        return _sorted_run(positions, uniforms.take(positions.size))


class _BandUniforms:
    """A band's uniforms in order, drawn as they are taken: uniforms on [0, 1) of the band's
    stream scaled to ``[T(low), T(high))`` (``q`` and ``t_low``: scalars, or one per entry
    for a thinned band taken at once). Taking ``k`` then ``l`` gives the ``k + l`` of one take."""

    def __init__(self, rng: np.random.Generator, q: np.ndarray, t_low: np.ndarray) -> None:
        self.rng, self.q, self.t_low = rng, q, t_low

    def take(self, size: int) -> np.ndarray:
        uniforms = self.rng.random(size)
        uniforms *= self.q - self.q * self.t_low
        uniforms += self.t_low
        return uniforms


def _check_level(level: float) -> int:
    """The last band covering ``level``; ValueError above :data:`MAX_LEVEL`."""
    if not level <= MAX_LEVEL:
        raise ValueError(
            f"sparse tables need entry probabilities below 1 - 1e-9 and rates below {MAX_LEVEL:g}; "
            f"this model needs level {level:.4g}: use a dense table (no density) or a smaller scale"
        )
    return _band_for(level)


def _sorted_run(positions: np.ndarray, uniforms: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A band's entries by increasing position (its positions are distinct: a stable sort
    and any other give the same order)."""
    if positions.size > 1 and not np.all(positions[1:] > positions[:-1]):
        order = np.argsort(positions, kind="stable")
        positions, uniforms = positions[order], uniforms[order]
    return positions, uniforms


def _merge_runs(runs: list[tuple[np.ndarray, np.ndarray]],
                n_entries: int) -> tuple[np.ndarray, np.ndarray]:
    """The entries of ``runs`` (each by increasing distinct position; earlier runs: earlier
    bands) by increasing position, an entry kept from its earliest run only.

    The same arrays as one stable sort of the runs' concatenation, built over consecutive
    ranges of positions (:func:`_merged_ranges`) into arrays allocated once: the temporaries
    are those of one range, not of the whole table.
    """
    total = sum(p.size for p, _ in runs)
    positions = np.empty(total, dtype=np.int64)
    uniforms = np.empty(total, dtype=np.float64)
    filled = 0
    for part_positions, part_uniforms in _merged_ranges(runs, n_entries):
        kept = part_positions.size
        positions[filled:filled + kept] = part_positions
        uniforms[filled:filled + kept] = part_uniforms
        filled += kept
    if filled < total:  # entries drawn again by a later band (a few): views of the arrays' start
        positions, uniforms = positions[:filled], uniforms[:filled]
    return positions, uniforms


def _merged_ranges(runs: list[tuple[np.ndarray, Any]], n_entries: int):
    """The merged entries of ``runs`` (see :func:`_merge_runs`) over consecutive ranges of
    positions of about :data:`_MERGE_ENTRIES` candidates each, range after range; a run's
    uniforms are an array or :class:`_BandUniforms` (taken range after range)."""
    total = sum(p.size for p, _ in runs)
    n_ranges = max(1, -(-total // _MERGE_ENTRIES))
    cuts = np.linspace(0, n_entries, n_ranges + 1).round().astype(np.int64)
    bounds = [np.searchsorted(p, cuts) for p, _ in runs]
    for r in range(n_ranges):
        parts = [(p[b[r]:b[r + 1]],
                  u[b[r]:b[r + 1]] if isinstance(u, np.ndarray) else u.take(b[r + 1] - b[r]))
                 for (p, u), b in zip(runs, bounds, strict=True)]
        part_positions = np.concatenate([p for p, _ in parts])
        part_uniforms = np.concatenate([u for _, u in parts])
        del parts
        order = np.argsort(part_positions, kind="stable")  # merges sorted runs, earlier bands first
        part_positions, part_uniforms = part_positions[order], part_uniforms[order]
        first = np.ones(part_positions.size, dtype=bool)  # an entry belongs to its earliest band
        np.not_equal(part_positions[1:], part_positions[:-1], out=first[1:])
        yield part_positions[first], part_uniforms[first]


def _entry_widths(positions: np.ndarray, a: np.ndarray, b: np.ndarray, n_cols: int,
                  widths: np.ndarray) -> np.ndarray:
    """``[q, T(low)]`` of each entry at ``positions`` (shape (2, k); ``widths``: the band's
    level width and lower level, shape (2, 1)): elementwise, the same bits on any part."""
    rows, cols = np.divmod(positions, n_cols)
    return -portable.expm1(-(a[rows] * b[cols]) * widths)


def _thinned(virtual: np.ndarray, rows: np.ndarray, thinning: np.ndarray, a: np.ndarray,
             b: np.ndarray, n_cols: int, width: np.ndarray) -> np.ndarray:
    """The positions of the candidates of a bin of rows (``virtual``: ``local row * n_cols +
    col`` over the bin's ``rows``) that their own ``q`` keeps (``thinning`` below it), over
    chunks of :data:`_TABLE_CHUNK` candidates (elementwise: the same as on all at once).

    ``q`` is row 0 of :func:`_entry_widths` (``width``: the band's level width, shape (1,)),
    computed alone and from the candidates' rows and columns: the positions of the candidates
    that are dropped are never formed, nor their ``T(low)``."""
    kept = []
    for start in range(0, virtual.size, _TABLE_CHUNK):
        local, cols = np.divmod(virtual[start:start + _TABLE_CHUNK], n_cols)
        bin_rows = rows[local]
        del local
        q = -portable.expm1(-(a[bin_rows] * b[cols]) * width)
        keep = thinning[start:start + _TABLE_CHUNK] < q
        kept.append(bin_rows[keep] * np.int64(n_cols) + cols[keep])
    return np.concatenate(kept) if kept else np.empty(0, dtype=np.int64)


def _thinned_run(positions: np.ndarray, rng: np.random.Generator, a: np.ndarray, b: np.ndarray,
                 n_cols: int, widths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A thinned band's entries by increasing position and their uniforms: the next draws of
    the band's stream in the order of ``positions`` (bin after bin), scaled to each entry's
    ``[T(low), T(high))``. The same arrays as :class:`_BandUniforms` taken at once and
    :func:`_sorted_run` (its ``q`` and ``T(low)`` are elementwise functions of the position,
    computed here chunk by chunk after the sort instead of kept for every candidate)."""
    uniforms = rng.random(positions.size)
    if positions.size > 1 and not np.all(positions[1:] > positions[:-1]):
        order = np.argsort(positions, kind="stable")
        positions = positions[order]
        uniforms = uniforms[order]
        del order
    for start in range(0, positions.size, _TABLE_CHUNK):
        q, t_low = _entry_widths(positions[start:start + _TABLE_CHUNK], a, b, n_cols, widths)
        part = uniforms[start:start + _TABLE_CHUNK]
        part *= q - q * t_low
        part += t_low
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
    return _csr_table([(positions, values)], shape, dtype)


def sparse_table_from_noise(noise: Any, level: float, values: Any, dtype: type) -> sp.csr_array:
    """The CSR table of a sparse model's noise: ``values(uniforms, rows, cols)`` gives the
    entries of the candidates at ``level`` (:func:`candidate_entries`; zero where the entry
    is zero), called on the consecutive parts of :meth:`SparseNoise.ranges` so that the
    temporaries are a part's (the same table as on all candidates at once: ``values`` is
    elementwise); a large noise keeps no candidates (see there)."""
    if not isinstance(noise, SparseNoise):
        raise TypeError("a sparse model needs SparseNoise (from draw_noise), got "
                        f"{type(noise).__name__}")
    n_cols = noise.shape[1]

    def nonzeros():
        for positions, uniforms in noise.ranges(level):
            rows, cols = np.divmod(positions, n_cols)
            entries = values(uniforms, rows, cols)
            nonzero = entries != 0
            yield positions[nonzero], entries[nonzero]

    return _csr_table(nonzeros(), noise.shape, dtype)


def _csr_table(parts: Any, shape: tuple[int, int], dtype: type) -> sp.csr_array:
    """CSR table from consecutive parts of ``(positions, values)`` (an iterable, consumed
    once), the positions (linear indices ``i * n_cols + j``) increasing over the parts; each
    part is converted to columns and row counts in turn, and only those are kept."""
    n_rows, n_cols = shape
    counts = np.zeros(n_rows, dtype=np.int64)
    col_parts, data_parts = [], []
    col_dtype = np.int32 if n_cols < 2**31 else np.int64
    for positions, values in parts:
        for start in range(0, positions.size, _TABLE_CHUNK):
            rows, part_cols = np.divmod(positions[start:start + _TABLE_CHUNK], n_cols)
            counts += np.bincount(rows, minlength=n_rows)
            col_parts.append(part_cols.astype(col_dtype))
            data_parts.append(np.asarray(values[start:start + _TABLE_CHUNK], dtype=dtype))
    nnz = int(counts.sum())
    index_dtype = np.int32 if max(n_cols, nnz) < 2**31 else np.int64
    cols = np.concatenate(col_parts, dtype=index_dtype) if col_parts else np.empty(
        0, dtype=index_dtype)
    del col_parts
    data = np.concatenate(data_parts) if data_parts else np.empty(0, dtype=dtype)
    del data_parts
    indptr = np.zeros(n_rows + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    table = sp.csr_array((data, cols, indptr.astype(index_dtype)), shape=shape)
    table.has_canonical_format = True  # sorted, unique
    return table


def candidate_entries(noise: Any,
                      level: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The entries of a sparse model's noise that can be non-zero at ``level`` (the model's
    :meth:`~lbm_bench.models.base.LatentBlockModel.sparse_level`): linear positions,
    uniforms, rows, columns."""
    if not isinstance(noise, SparseNoise):
        raise TypeError("a sparse model needs SparseNoise (from draw_noise), got "
                        f"{type(noise).__name__}")
    positions, uniforms = noise.entries(level)
    rows, cols = np.divmod(positions, noise.shape[1])
    return positions, uniforms, rows, cols
