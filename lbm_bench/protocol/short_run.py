"""Short Gibbs runs of the calibration's tables, started at their generating labels.

The calibration (:mod:`lbm_bench.protocol.calibration`) measures, on each of its
tables at a scale, the risk that the rejection step certifies: the floor
(``criterion="bayes"``, :func:`~lbm_bench.inference.floor.floor_risk`) or the
conditional risk of the table's X-only MAP labels (``"map"``). Both are posterior
expectations given the table, estimated from label sets drawn from ``p(z, w | X)``.

A calibration table was generated from its labels ``(z0, w0)``: given ``X`` they
are one exact posterior draw, so a chain of the blockwise Gibbs sampler started
there is stationary from its first sweep and needs no burn-in (the certifying run
of :func:`~lbm_bench.generate_table` starts half of its chains there for the same
reason). :func:`short_runs` runs :data:`SHORT_RUN_CHAINS` such chains per table and
keeps :data:`SHORT_RUN_SAMPLES` sets in all. The generating labels only start the
chains: the MAP is computed from ``X`` alone, and the floor's descent starts from
the sets' marginal modes and from sets, never from ``(z0, w0)``.

The sweeps are the sampler's one loop (:func:`~lbm_bench.inference.chains.run_chains`).
Tables too small for the block-sum engine's index updates are run together, one
sweep of all of them at a time (one table's run costs little more than the Python
calls of its sweeps); every chain of every table draws its uniforms from its own
stream (:class:`~lbm_bench.inference.chains.ChainStreams`, the children of one seed
drawn from the table's Generator) and its block sums by its own products, so a
table's sets are those of
``gibbs_labels(model, X, n_samples=SHORT_RUN_SAMPLES, n_chains=SHORT_RUN_CHAINS,
burn_in=0, init=[(z0, w0)], rng=its_generator)`` bit for bit, whatever the
other tables of the batch. So are tables whose block sums are exact (integer
statistics: counts, binaries, codes; :func:`exact_sums`): every route of the sums
(index update or full product, chosen for the batch as a whole) gives the same bits,
and the tables run together with the engine's own routes. Other tables run one by one.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from lbm_bench.inference.chains import ChainStreams, chain_seeds, run_chains
from lbm_bench.inference.engine import Sweeper
from lbm_bench.inference.gibbs import GibbsSamples

__all__ = ["SHORT_RUN_CHAINS", "SHORT_RUN_SAMPLES", "exact_sums", "short_runs"]

#: Label sets kept per calibration table, over all its chains (as the screening run).
SHORT_RUN_SAMPLES = 200
#: Chains per calibration table, all started at the table's generating labels.
SHORT_RUN_CHAINS = 4


def short_runs(
    sweeper: Sweeper,
    labels: Sequence[tuple[np.ndarray, np.ndarray]],
    rngs: Sequence[np.random.Generator],
    *,
    n_samples: int = SHORT_RUN_SAMPLES,
    n_chains: int = SHORT_RUN_CHAINS,
) -> list[GibbsSamples]:
    """Label sets of every table of ``sweeper``, from chains started at its generating labels.

    Parameters
    ----------
    sweeper : Sweeper
        The B tables (their model is the sampled one).
    labels : sequence of B (z0, w0)
        Generating labels of each table: the chains' start (no burn-in).
    rngs : sequence of B numpy.random.Generator
        Each table's Generator: one seed drawn from it roots its chains' streams.
    n_samples, n_chains : int
        Sets kept per table, over its ``n_chains`` chains (``n_samples / n_chains`` each;
        ``n_chains`` must divide ``n_samples``).

    Returns
    -------
    list of B GibbsSamples
    """
    B = sweeper.n_tables
    if len(labels) != B or len(rngs) != B:
        raise ValueError(
            f"labels and rngs must hold {B} entries, got {len(labels)} and {len(rngs)}")
    if n_samples % n_chains:
        raise ValueError(f"n_chains ({n_chains}) must divide n_samples ({n_samples})")
    per_chain = n_samples // n_chains
    if B == 1 or _always_full(sweeper, n_chains):
        return _run(sweeper, labels, rngs, per_chain, n_chains, forced_full=B > 1)
    if exact_sums(sweeper):
        return _run(sweeper, labels, rngs, per_chain, n_chains, forced_full=False)
    # the tables as given (with their masks of missing entries), not the storage's copies
    tables = sweeper.data if sweeper.data is not None else sweeper.storage.tables
    return [
        _run(Sweeper.for_table(sweeper.model, table), [pair], [rng], per_chain, n_chains,
             forced_full=False)[0] for table, pair, rng in zip(tables, labels, rngs, strict=True)
    ]


def _always_full(sweeper: Sweeper, n_chains: int) -> bool:
    """Whether one table alone takes the full product at every half-sweep (both sides),
    so that running tables together changes no block sum."""
    return all(
        side.always_full(side.full_work(1, n_chains)) for side in (sweeper.rows, sweeper.cols))


def exact_sums(sweeper: Sweeper) -> bool:
    """Whether every route of ``sweeper``'s block sums gives the same bits: tables without
    row or column weights (exposures: their sums are not integers) whose storage says so on
    both sides (counts of codes, integer sparse entries), or whose dense statistics are all
    integers with totals per table below ``2**53`` (float64 sums of them are then exact in
    any order). Weights are refused whatever the storage says: the likelihood's sums of
    exposures are not integers, and the tables they weigh run one by one as before.

    Examples
    --------
    >>> import numpy as np
    >>> from lbm_bench import random_design
    >>> model = random_design("poisson", 2, 2, rng=0).model(1.0)
    >>> exact_sums(Sweeper(model, [np.arange(12).reshape(4, 3)]))
    True
    >>> model = random_design("gaussian", 2, 2, rng=0).model(1.0)
    >>> exact_sums(Sweeper(model, [np.full((4, 3), 0.5)]))
    False
    """
    if sweeper.row_weights is not None or sweeper.col_weights is not None:
        return False
    if all(side.exact_sums for side in (sweeper.rows, sweeper.cols)):
        return True
    try:
        stats = sweeper.stats
    except TypeError:  # a storage without dense statistics that does not say its sums are exact
        return False
    for table in stats:  # one table at a time: no copy of the whole batch
        if not np.all(np.isfinite(table)) or not np.array_equal(table, np.rint(table)):
            return False
        if np.abs(table).sum() >= 2.0**53:
            return False
    return True


def _run(
    sweeper: Sweeper,
    labels: Sequence[tuple[np.ndarray, np.ndarray]],
    rngs: Sequence[np.random.Generator],
    per_chain: int,
    n_chains: int,
    *,
    forced_full: bool,
) -> list[GibbsSamples]:
    """The sweeps of :func:`~lbm_bench.inference.gibbs.gibbs_labels` (no burn-in, no
    thinning) on B tables at once, each with its own uniforms."""
    n, d = sweeper.n_rows, sweeper.n_cols
    w = np.stack([np.broadcast_to(np.asarray(w0), (n_chains, d)) for _, w0 in labels])
    streams = ChainStreams([[np.random.default_rng(seed) for seed in chain_seeds(rng, n_chains)]
                            for rng in rngs])
    run = run_chains(sweeper, w, per_chain, streams, **({"max_changed": -1} if forced_full else {}))
    lengths = np.full(n_chains, per_chain)
    return [
        GibbsSamples(rows=rows.reshape(-1, n), cols=cols.reshape(-1, d), chain_lengths=lengths,
                     burn_in=0, thin=1) for rows, cols in zip(run.rows, run.cols, strict=True)
    ]
