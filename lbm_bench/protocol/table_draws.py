"""A candidate table's draws from its seed, and what a calibration worker keeps of them.

A candidate table is drawn in two places, by one function (:func:`draw_candidate`): the
candidates of :func:`lbm_bench.generate_table` and the calibration's tables
(:class:`~lbm_bench.protocol.common_random_numbers.CommonRandomNumbers`). Its labels, noise, mask
and MAP starts come from the streams its seed's node lays out
(:class:`~lbm_bench._seeds.TableStreams`): a ``"candidate"`` draws its labels, noise and MAP
starts one after the other from its own stream and its mask from a child; a ``"calibration
table"`` draws each part from a child of its own, so that it is the same at every scale.
A worker process evaluating the calibration's tables keeps what it drew, by the
calibration's token, within the byte budget the parent gives it; an evicted table is
drawn again from the same seed, so what is kept changes no result.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, NamedTuple

import numpy as np

from lbm_bench._seeds import TableStreams
from lbm_bench.models.missing import MaskNoise

__all__ = [
    "CandidateDraws",
    "draw_candidate",
    "draw_table",
    "draws_nbytes",
    "keep_draws",
    "worker_draws",
]


class CandidateDraws(NamedTuple):
    """A candidate table's draws (:func:`draw_candidate`)."""

    #: The generating labels ``(z, w)``: ndarrays of shape (n_rows,) and (n_cols,).
    labels: tuple[np.ndarray, np.ndarray]
    #: The noise the table is made from (``model.table_from_noise``): (n_rows, n_cols), or a
    #: sparse noise.
    noise: Any
    #: The randomness of its mask of missing entries
    #: (:class:`~lbm_bench.models.missing.MaskNoise`), or None.
    mask: MaskNoise | None
    #: The stream its MAP draws its random starts from (a candidate's: its Gibbs runs' after them).
    starts: np.random.Generator


def draw_candidate(model, n_rows: int, n_cols: int, seed: np.random.SeedSequence, node: str,
                   missing=None) -> CandidateDraws:
    """A candidate table's labels, noise, mask and MAP starts, drawn from ``seed`` as its
    node lays them out, in the order of :data:`~lbm_bench._seeds.TABLE_PARTS`.

    Parameters
    ----------
    model : LatentBlockModel
        Draws the labels (its proportions) and the noise.
    n_rows, n_cols : int
        The table's shape.
    seed : SeedSequence
        The table's seed.
    node : {"candidate", "calibration table"}
        Its kind in the seed tree (:data:`~lbm_bench._seeds.SEED_TREE`): which stream draws
        each part.
    missing : MissingDesign, optional
        The design's missing entries (None: a complete table, no mask drawn).

    Returns
    -------
    CandidateDraws
        ``(labels, noise, mask, starts)``.
    """
    streams = TableStreams(seed, node)
    labels = model.sample_labels(n_rows, n_cols, rng=streams.rng("labels"))
    noise = model.draw_noise(n_rows, n_cols, rng=streams.rng("noise"))
    mask = None
    if missing is not None:
        mask = MaskNoise(n_rows, n_cols, missing, model.sparse, rng=streams.rng("mask"))
    return CandidateDraws(labels, noise, mask, streams.rng("map starts"))


def draw_table(design, n_rows, n_cols, table_seed):
    """A calibration table's draws, the same at every scale: ``((z, w), noise, mask noise or
    None)`` (:func:`draw_candidate` of its seed as a ``"calibration table"``, the design at
    scale 1; its MAP's starts are drawn afresh at each scale, from the same child)."""
    labels, noise, mask, _ = draw_candidate(design.model(1.0), n_rows, n_cols, table_seed,
                                            "calibration table", design.missing)
    return labels, noise, mask


#: What a worker process drew for the calibration's tables (labels, noise, mask noise), by
#: ``(token, table seed's spawn key)``, oldest first, and the bytes it holds: kept across the
#: scales of a calibration (the tables are the same at every scale) within the budget the
#: parent gives (a calibration's workers, :mod:`lbm_bench.protocol.common_random_numbers`).
#: Drawn again when evicted: the same draws from the same seeds, so what is kept changes no
#: result.
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
