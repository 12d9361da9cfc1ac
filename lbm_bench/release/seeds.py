"""Seeds of a release: derived from the master seed and an identity, never from order.

Every seed of a release (a table's, a configuration's calibration, an algorithm's
run in :func:`lbm_bench.scoring.benchmark.run_benchmark`) is
``SeedSequence(master, spawn_key=digest(identity))``, so it does not depend on the
order of the grid, the number of workers or the backend.
"""

from __future__ import annotations

import hashlib

import numpy as np

__all__ = ["derive_seed"]


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
        A seed in ``[0, 2**63)``; the same for the same arguments on any machine.

    Examples
    --------
    >>> derive_seed(0, "table:a") == derive_seed(0, "table:a") != derive_seed(0, "table:b")
    True
    """
    digest = hashlib.sha256(identity.encode()).digest()
    key = tuple(int.from_bytes(digest[i : i + 4], "little") for i in range(0, 16, 4))
    state = np.random.SeedSequence(master, spawn_key=key).generate_state(2, np.uint32)
    return int(state.view(np.uint64)[0] >> np.uint64(1))

