"""What a calibration table is drawn from, and what a worker keeps of it across scales.

A calibration table (:class:`~lbm_bench.protocol.calibration.CommonRandomNumbers`) is the
same at every scale: its generating labels, its noise and the uniforms of its mask come from
children of its seed. A worker process evaluating the calibration's tables keeps what it drew,
by the calibration's token, within the byte budget the parent gives it; an evicted table is
drawn again from the same seed, so what is kept changes no result.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import numpy as np

from lbm_bench._seeds import child_seed
from lbm_bench.models.missing import MaskNoise

__all__ = ["draw_labels", "draw_mask_noise", "draw_noise", "draw_table", "draws_nbytes", "keep_draws", "worker_draws"]


def draw_labels(design, n_rows, n_cols, table_seed):
    """The generating labels ``(z, w)`` of a calibration table, from its seed's child 0."""
    rng = np.random.default_rng(child_seed(table_seed, 0))
    return design.model(1.0).sample_labels(n_rows, n_cols, rng=rng)


def draw_noise(design, n_rows, n_cols, table_seed):
    """The noise a calibration table is made from at every scale, from its seed's child 1."""
    rng = np.random.default_rng(child_seed(table_seed, 1))
    return design.model(1.0).draw_noise(n_rows, n_cols, rng=rng)


def draw_mask_noise(design, n_rows, n_cols, table_seed):
    """The uniforms of a calibration table's mask of missing entries, from its seed's child 4."""
    rng = np.random.default_rng(child_seed(table_seed, 4))
    return MaskNoise(n_rows, n_cols, design.missing, design.density is not None, rng=rng)


def draw_table(design, n_rows, n_cols, table_seed):
    """A calibration table's draws: ``((z, w), noise, mask noise or None)``."""
    mask = None if design.missing is None else draw_mask_noise(design, n_rows, n_cols, table_seed)
    return (draw_labels(design, n_rows, n_cols, table_seed), draw_noise(design, n_rows, n_cols, table_seed), mask)


#: What a worker process drew for the calibration's tables (labels, noise, mask noise), by
#: ``(token, table seed's spawn key)``, oldest first, and the bytes it holds: kept across the
#: scales of a calibration (the tables are the same at every scale) within the budget the
#: parent gives (:meth:`CommonRandomNumbers._parallel`). Drawn again when evicted: the same
#: draws from the same seeds, so what is kept changes no result.
_WORKER_DRAWS: OrderedDict[tuple[str, tuple[int, ...]], tuple[Any, int]] = OrderedDict()
_WORKER_BYTES = [0]


def draws_nbytes(draws) -> int:
    """Bytes held by a table's draws (a sparse noise counts the bands drawn so far)."""
    (z, w), noise, mask = draws
    return int(z.nbytes + w.nbytes + noise.nbytes + (0 if mask is None else mask.nbytes))


def worker_draws(design, n_rows, n_cols, seed, token):
    """A table's labels, noise and mask noise in a worker: the kept ones, or drawn from its seed."""
    key = (token, tuple(seed.spawn_key))
    if key in _WORKER_DRAWS:
        _WORKER_DRAWS.move_to_end(key)
        return _WORKER_DRAWS[key][0]
    return draw_table(design, n_rows, n_cols, seed)


def keep_draws(token, seed, draws, budget: int) -> None:
    """Keep a table's draws in this worker (after use: a sparse noise has drawn its bands),
    the oldest evicted beyond ``budget`` bytes; a table larger than the budget is not kept."""
    key = (token, tuple(seed.spawn_key))
    old = _WORKER_DRAWS.pop(key, None)
    if old is not None:
        _WORKER_BYTES[0] -= old[1]
    size = draws_nbytes(draws)
    if size > budget:
        return
    while _WORKER_DRAWS and _WORKER_BYTES[0] + size > budget:
        _, (_, evicted) = _WORKER_DRAWS.popitem(last=False)
        _WORKER_BYTES[0] -= evicted
    _WORKER_DRAWS[key] = (draws, size)
    _WORKER_BYTES[0] += size
