"""The seed policy: how a seed becomes random streams, in one place.

Same seed, same bytes, whatever the number of workers or the order of the work. Four
rules, each one function below (or one line of numpy):

1. **A seed becomes a Generator once**, at the top of a public function:
   ``rng = np.random.default_rng(rng)`` (``rng`` is None: fresh entropy from the
   operating system; an int; or a Generator, used as it is), and the Generator is
   passed down. No global state, no legacy ``RandomState``.
2. **A recorded seed is an int in [0, 2**63).** What must be reproduced later from a
   number (a table records the seed that reproduces it) is :func:`resolve_seed`: the
   int itself, or one drawn from the Generator (:func:`draw_seed`) or from fresh
   entropy. A Generator that must seed a tree of streams gives its root the same way:
   ``np.random.SeedSequence(draw_seed(rng))``.
3. **Parts of a computation get children, not shared streams.** The ``index``-th
   child of a ``SeedSequence`` is :func:`child_seed`: what ``seed.spawn`` would give
   as that child, without the counter ``spawn`` keeps, so that a part's stream depends
   on its index alone, never on what was spawned before it, in which batch or on which
   worker. The children in use (changing one changes bytes):

   - :func:`lbm_bench.generate_table`, from ``SeedSequence(seed)``: child 0 the
     calibration, child ``k + 1`` the ``k``-th candidate table (whose child 0 draws its
     mask of missing entries, when the design has some);
   - the calibration's common random numbers: child ``t`` is table ``t``, whose
     children 0 to 4 draw its labels, its noise, its MAP's random starts, its short
     Gibbs run and its mask of missing entries;
   - a sparse design's noise: child ``b`` of its seed draws band ``b``;
   - :func:`lbm_bench.select_lbm`: ``spawn`` in a fixed order (cells of the grid,
     rounds of the path), in the main process.

4. **A release derives each seed from its master seed and an identity**
   (:func:`derive_seed`: ``"table:<id>"``, ``"calibration:<config>"``,
   ``"<algorithm>:<table id>"``), never from an order: adding a table to a spec, or
   building on more workers, changes no other table's bytes.
"""

from __future__ import annotations

import hashlib

import numpy as np

__all__ = ["child_seed", "derive_seed", "draw_seed", "resolve_seed"]

#: Recorded seeds lie in [0, SEED_BOUND): non-negative 63-bit ints (an int64 in any file format).
SEED_BOUND = 2**63


def draw_seed(rng: np.random.Generator) -> int:
    """A seed in ``[0, 2**63)`` drawn from ``rng`` (one ``integers`` call).

    Examples
    --------
    >>> draw_seed(np.random.default_rng(0)) == draw_seed(np.random.default_rng(0))
    True
    """
    return int(rng.integers(SEED_BOUND))


def resolve_seed(rng: np.random.Generator | int | None) -> int:
    """An integer seed that reproduces the run: ``rng`` itself when it is an int,
    else one drawn from ``rng`` (or from fresh OS entropy when None).

    Raises
    ------
    ValueError
        When ``rng`` is a negative int.
    TypeError
        When ``rng`` is none of None, an int or a numpy Generator.
    """
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool):
        if rng < 0:
            raise ValueError(f"rng must be a non-negative seed, got {rng}")
        return int(rng)
    if rng is None:
        return _state_seed(np.random.SeedSequence())
    if isinstance(rng, np.random.Generator):
        return draw_seed(rng)
    raise TypeError(f"rng must be None, an int or a numpy Generator, got {type(rng).__name__}")


def child_seed(seed: np.random.SeedSequence | int, index: int) -> np.random.SeedSequence:
    """The ``index``-th child of ``seed`` (a SeedSequence, or an int that seeds one),
    without the state that ``spawn`` keeps.

    Examples
    --------
    >>> root = np.random.SeedSequence(7)
    >>> child_seed(root, 2).generate_state(1) == root.spawn(3)[2].generate_state(1)
    array([ True])
    >>> child_seed(7, 2).spawn_key
    (2,)
    """
    if not isinstance(seed, np.random.SeedSequence):
        seed = np.random.SeedSequence(seed)
    return np.random.SeedSequence(seed.entropy, spawn_key=tuple(seed.spawn_key) + (index,))


def derive_seed(master: int, identity: str) -> int:
    """A 63-bit seed from the master seed and an identity string (order-free).

    Parameters
    ----------
    master : int
        The master seed (a release's ``seed``, a benchmark's ``--seed``).
    identity : str
        What the seed is for, e.g. ``"table:<id>"`` or ``"calibration:<config>"``.

    Returns
    -------
    int
        ``SeedSequence(master, spawn_key=digest(identity))``'s seed in ``[0, 2**63)``
        (the first four 32-bit words of the identity's SHA-256 as the spawn key): the
        same for the same arguments on any machine.

    Examples
    --------
    >>> derive_seed(0, "table:a") == derive_seed(0, "table:a") != derive_seed(0, "table:b")
    True
    """
    digest = hashlib.sha256(identity.encode()).digest()
    key = tuple(int.from_bytes(digest[i : i + 4], "little") for i in range(0, 16, 4))
    return _state_seed(np.random.SeedSequence(master, spawn_key=key))


def _state_seed(seed: np.random.SeedSequence) -> int:
    """The seed in ``[0, 2**63)`` of a SeedSequence's first 64 bits of state."""
    state = seed.generate_state(2, np.uint32)
    return int(state.view(np.uint64)[0] >> np.uint64(1))
