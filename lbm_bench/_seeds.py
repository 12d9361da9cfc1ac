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
3. **Parts of a computation get named children, not shared streams.** A child of a
   ``SeedSequence`` is :func:`stream`: the child a node of :data:`SEED_TREE` names, by
   the node's name and the child's (and a number, for children that come in a numbered
   family): ``stream(table_seed, "calibration table", "labels")``,
   ``stream(root, "generate_table", "candidate", attempt)``. It is what ``seed.spawn``
   would give as that child (:func:`child_seed`), without the counter ``spawn`` keeps,
   so that a part's stream depends on its name alone, never on what was spawned before
   it, in which batch or on which worker. No module but this one writes a child's
   index (``tests/test_seeds.py`` walks the package's code); docs/protocol.md draws the
   same tree (and a test compares the two).
4. **A release derives each seed from its master seed and an identity**
   (:func:`derive_seed`: ``"table:<id>"``, ``"calibration:<config>"``,
   ``"<algorithm>:<table id>"``), never from an order: adding a table to a spec, or
   building on more workers, changes no other table's bytes.

**The seed tree** (:data:`SEED_TREE`; changing an index changes bytes). Each node is a
kind of ``SeedSequence``: its named children, and what its own stream (the Generator
``np.random.default_rng(seed)`` of the node's seed) draws, in that order. A node's root
is a seed (``generate_table``: ``SeedSequence(seed)``), a child of another node, or drawn
from a stream (``SeedSequence(draw_seed(rng))``):

- ``generate_table`` (:func:`lbm_bench.generate_table`, ``SeedSequence(seed)``): child 0
  the ``calibration``, child ``1 + k`` the ``k``-th ``candidate`` (attempt ``k``);
- ``calibration`` (its stream is the calibration's ``rng``): its stream draws the random
  design (when none is given), then the root of the ``calibration tables``; child 1 the
  row and column ``effects`` of a given design at another shape
  (:meth:`~lbm_bench.models.design.ModelDesign.at_shape`);
- ``calibration tables`` (the calibration's common random numbers): child ``t`` the
  ``calibration table`` ``t``;
- ``calibration table``: children 0 to 4 its ``labels``, its ``noise``, its ``map
  starts`` (the stream that draws the root of its MAP's ``random starts``), its ``short
  run`` (the stream that draws the root of its short Gibbs run's ``chains``) and its
  ``mask`` of missing entries;
- ``candidate``: its stream draws its labels, its noise, its MAP's starts, then its
  Gibbs runs (each the root of its ``chains``); child 0 its ``mask`` of missing entries;
- ``random starts`` (a MAP's, drawn from the stream its starts come from): child ``k``
  the random ``start`` ``k``;
- ``chains`` (a Gibbs run's, drawn from its stream): child ``c`` the ``chain`` ``c``;
- ``noise bands`` (a sparse noise's, drawn from its stream; a sparse mask's too): child
  ``b`` the ``band`` ``b``;
- ``grid search`` and ``path search`` (:func:`lbm_bench.select_lbm`'s, drawn from its
  ``rng``): child ``i`` the ``i``-th ``cell`` of the grid (row-major), child ``r`` the
  ``r``-th ``round`` of the path (numbered across its stages).

**A candidate table's layout.** A candidate table is drawn in two places: the candidates
of :func:`lbm_bench.generate_table` and the calibration's tables. Its parts
(:data:`TABLE_PARTS`: labels, noise, mask, MAP starts) come from the streams its node
lays out (:class:`TableStreams`): a part the node names as a child is drawn from that
child; the others from the node's own stream, shared in the order the node lists them.
A ``calibration table`` names every part (each from its own child: the parts can be drawn
apart, and again at every scale); a ``candidate`` names only its mask (its labels, noise
and MAP starts come one after the other from its own stream, as its Gibbs runs after them).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = [
    "SEED_TREE",
    "TABLE_PARTS",
    "Numbered",
    "SeedNode",
    "TableStreams",
    "check_seed",
    "child_seed",
    "derive_seed",
    "draw_seed",
    "resolve_seed",
    "stream",
]

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


def check_seed(name: str, seed: Any, *, recorded: bool = False) -> Any:
    """``seed`` as given, refused when it is an int below 0, or with ``recorded`` (a seed a file
    keeps) one at or above :data:`SEED_BOUND`; anything else is left to the caller.

    Raises
    ------
    ValueError
        Naming ``name`` and the value, before any work is done.
    """
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        if seed < 0:
            raise ValueError(f"{name} must be a non-negative seed, got {seed}")
        if recorded and seed >= SEED_BOUND:
            raise ValueError(f"{name} must be below 2**63 (a seed is recorded as a signed "
                             f"64-bit integer), got {seed}")
    return seed


def resolve_seed(rng: np.random.Generator | int | None) -> int:
    """An integer seed that reproduces the run: ``rng`` itself when it is an int,
    else one drawn from ``rng`` (or from fresh OS entropy when None).

    Raises
    ------
    ValueError
        When ``rng`` is an int outside ``[0, 2**63)`` (:func:`check_seed`).
    TypeError
        When ``rng`` is none of None, an int or a numpy Generator.
    """
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool):
        return int(check_seed("rng", rng, recorded=True))
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


@dataclass(frozen=True)
class Numbered:
    """A numbered family of children: the ``k``-th is child ``first + k``.

    ``letter`` is the name docs/protocol.md's seed tree gives ``k`` (``1+k``, or ``t``
    when ``first`` is 0).
    """

    first: int
    letter: str

    def __str__(self) -> str:
        return self.letter if self.first == 0 else f"{self.first}+{self.letter}"


@dataclass(frozen=True)
class SeedNode:
    """A kind of ``SeedSequence`` in the seed tree.

    ``children`` maps each child's name to its index (an int) or to its numbered family
    (:class:`Numbered`); ``own`` names what the node's own stream
    (``np.random.default_rng(seed)``) draws, in that order.
    """

    children: Mapping[str, int | Numbered]
    own: tuple[str, ...] = ()


#: The seed tree, by node (docs/protocol.md, "The seed tree", draws the same; a test
#: compares them). Changing a name here changes no byte; changing an index does.
SEED_TREE: dict[str, SeedNode] = {
    "generate_table": SeedNode({"calibration": 0, "candidate": Numbered(1, "k")}),
    "calibration": SeedNode({"effects": 1}, own=("design", "calibration tables")),
    "calibration tables": SeedNode({"calibration table": Numbered(0, "t")}),
    "calibration table": SeedNode(
        {"labels": 0, "noise": 1, "map starts": 2, "short run": 3, "mask": 4}
    ),
    "candidate": SeedNode({"mask": 0}, own=("labels", "noise", "map starts", "gibbs runs")),
    "random starts": SeedNode({"start": Numbered(0, "k")}),
    "chains": SeedNode({"chain": Numbered(0, "c")}),
    "noise bands": SeedNode({"band": Numbered(0, "b")}),
    "grid search": SeedNode({"cell": Numbered(0, "i")}),
    "path search": SeedNode({"round": Numbered(0, "r")}),
}

#: The parts of a candidate table, in the order they are drawn (:class:`TableStreams`).
TABLE_PARTS = ("labels", "noise", "mask", "map starts")


def stream(
    parent: np.random.SeedSequence | int, node: str, name: str, number: int | None = None
) -> np.random.SeedSequence:
    """The child ``name`` of ``parent``, a seed of the kind ``node`` of :data:`SEED_TREE`
    (the ``number``-th of the family ``name`` when that child is :class:`Numbered`).

    Parameters
    ----------
    parent : SeedSequence or int
        The node's seed (an int seeds a ``SeedSequence``).
    node : str
        What ``parent`` is: a key of :data:`SEED_TREE`.
    name : str
        The child, one of the node's children.
    number : int, optional
        Which of a numbered family (``0`` for the first); only for a numbered child.

    Returns
    -------
    SeedSequence
        :func:`child_seed` of ``parent`` at the child's index.

    Raises
    ------
    ValueError
        When the node or the child is unknown, or ``number`` is negative.
    TypeError
        When ``number`` is missing for a numbered child or given for another.

    Examples
    --------
    >>> root = np.random.SeedSequence(7)
    >>> stream(root, "calibration table", "noise").spawn_key
    (1,)
    >>> stream(root, "generate_table", "candidate", 2).spawn_key
    (3,)
    """
    children = _node(node).children
    if name not in children:
        known = ", ".join(map(repr, children))
        raise ValueError(f"name must be a child of the seed node {node!r} ({known}), got {name!r}")
    index = children[name]
    if not isinstance(index, Numbered):
        if number is not None:
            raise TypeError(f"number is for a numbered child; {node!r}'s {name!r} is child "
                            f"{index}, got {number}")
        return child_seed(parent, index)
    if number is None:
        raise TypeError(f"number is needed for {node!r}'s numbered child {name!r}")
    if number < 0:
        raise ValueError(f"number must be >= 0, got {number}")
    return child_seed(parent, index.first + int(number))


class TableStreams:
    """The Generators a candidate table's parts are drawn from, as its node lays them out.

    A part (:data:`TABLE_PARTS`) that ``node`` names as a child is drawn from that
    child's stream, a fresh Generator each time it is asked for; the others come from the
    node's own stream (one Generator, ``np.random.default_rng(seed)``), shared in the
    order the node's ``own`` lists them, which is the order they must be asked for.

    Parameters
    ----------
    seed : SeedSequence
        The table's seed.
    node : str
        Its kind: ``"calibration table"`` (every part from its own child) or
        ``"candidate"`` (the mask from its child; labels, noise and MAP starts from its
        own stream, one after the other).

    Examples
    --------
    >>> seed = np.random.SeedSequence(5)
    >>> streams = TableStreams(seed, "candidate")
    >>> streams.rng("labels") is streams.rng("noise")  # the candidate's shared stream
    True
    >>> mask = streams.rng("mask").random()
    >>> mask == np.random.default_rng(stream(seed, "candidate", "mask")).random()
    True
    """

    def __init__(self, seed: np.random.SeedSequence, node: str) -> None:
        layout = _node(node)
        missing = [p for p in TABLE_PARTS if p not in layout.children and p not in layout.own]
        if missing:
            raise ValueError(f"node must lay out every part of a table; {node!r} lacks "
                             f"{', '.join(missing)}")
        self.seed, self.node = seed, node
        self._own: np.random.Generator | None = None
        self._next = 0  # the position in the node's ``own`` of the next part it draws

    def rng(self, part: str) -> np.random.Generator:
        """The Generator ``part`` is drawn from (ValueError for a part the node's own
        stream drew already, or one asked for before the parts it comes after)."""
        layout = SEED_TREE[self.node]
        if part in layout.children:
            return np.random.default_rng(stream(self.seed, self.node, part))
        if part not in layout.own:
            raise ValueError(f"part must be one of {', '.join(TABLE_PARTS)}, got {part!r}")
        position = layout.own.index(part)
        if position < self._next - 1 or position > self._next:
            raise ValueError(f"{self.node!r} draws {', '.join(layout.own)} from its own stream "
                             f"in this order; {part!r} asked for at position {self._next}")
        self._next = position + 1
        if self._own is None:
            self._own = np.random.default_rng(self.seed)
        return self._own


def _node(node: str) -> SeedNode:
    """The node ``node`` of :data:`SEED_TREE` (ValueError naming the known ones)."""
    if node not in SEED_TREE:
        raise ValueError(f"node must be one of {', '.join(map(repr, SEED_TREE))}, got {node!r}")
    return SEED_TREE[node]


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
