"""The seed policy (lbm_bench._seeds): recorded seeds, named children, a release's derived seeds.

The values are pinned: a change of any would change the bytes of every table and release. No
module but ``_seeds.py`` numbers a stream, and docs/protocol.md draws the same seed tree."""

import ast
import re
from pathlib import Path

import numpy as np
import pytest

from lbm_bench._seeds import (
    SEED_TREE,
    TABLE_PARTS,
    Numbered,
    TableStreams,
    child_seed,
    derive_seed,
    draw_seed,
    resolve_seed,
    stream,
)
from lbm_bench.release import derive_seed as public_derive_seed
from lbm_bench.release import read_spec


def test_derive_seed_values_are_pinned():
    # values written in the tiny release's manifest before the release package split
    assert derive_seed(42, "table:bernoulli-30x20-2x2-r0.1-01") == 8357679349332458421
    assert derive_seed(42, "table:bernoulli-30x20-2x2-r0.1-02") == 7134977943084656668
    assert derive_seed(42, "calibration:bernoulli-30x20-2x2-r0.1") == 3449655932710290907
    assert public_derive_seed is derive_seed


def test_spec_seeds_come_from_derive_seed(tmp_path):
    from tests.release.helpers import TINY_SPEC

    path = tmp_path / "tiny.toml"
    path.write_text(TINY_SPEC)
    for table in read_spec(path).tables:
        assert table.seed == derive_seed(42, "table:" + table.id)
        assert table.calibration_seed == derive_seed(42, "calibration:" + table.config_id)
        assert 0 <= table.seed < 2**63


def test_derive_seed_depends_on_master_and_identity():
    seeds = {derive_seed(m, f"x:{i}") for m in (0, 1) for i in range(50)}
    assert len(seeds) == 100


def test_child_seed_is_spawn_without_its_counter():
    root = np.random.SeedSequence(20261122)
    spawned = root.spawn(5)
    for index in (4, 0, 2):  # any order, any number of times
        child = child_seed(root, index)
        assert child.spawn_key == spawned[index].spawn_key
        np.testing.assert_array_equal(child.generate_state(4), spawned[index].generate_state(4))
    grandchild = child_seed(child_seed(root, 1), 3)
    np.testing.assert_array_equal(grandchild.generate_state(4), spawned[1].spawn(4)[3].generate_state(4))
    # an int seeds the root: the streams of a sparse design's noise bands
    np.testing.assert_array_equal(child_seed(7, 2).generate_state(4),
                                  np.random.SeedSequence(7, spawn_key=(2,)).generate_state(4))
    assert np.random.default_rng(child_seed(20261122, 0)).random() == pytest.approx(
        np.random.default_rng(spawned[0]).random(), abs=0)


def test_resolve_seed_records_the_seed_of_a_run():
    assert resolve_seed(12) == 12 and resolve_seed(np.int64(12)) == 12
    drawn = 789974133212406140  # int(np.random.default_rng(3).integers(2**63))
    assert resolve_seed(np.random.default_rng(3)) == draw_seed(np.random.default_rng(3)) == drawn
    fresh = {resolve_seed(None) for _ in range(4)}
    assert len(fresh) == 4 and all(0 <= s < 2**63 for s in fresh)
    with pytest.raises(ValueError, match="rng must be a non-negative seed, got -1"):
        resolve_seed(-1)
    # a recorded seed is an int64 of the file: 2**63 and above refused before the work (issue 48)
    assert resolve_seed(2**63 - 1) == 2**63 - 1
    with pytest.raises(ValueError, match=r"rng must be below 2\*\*63 .*got 18446744073709551616"):
        resolve_seed(2**64)
    for bad in (True, 1.5, np.random.RandomState(0)):
        with pytest.raises(TypeError, match="rng must be None, an int or a numpy Generator"):
            resolve_seed(bad)


# -- the named streams ------------------------------------------------------------------------
PACKAGE = Path(__file__).resolve().parents[1] / "lbm_bench"
PROTOCOL_DOC = Path(__file__).resolve().parents[1] / "docs" / "protocol.md"


def test_stream_is_the_named_child():
    root = np.random.SeedSequence(20261122)
    for node, layout in SEED_TREE.items():
        for name, index in layout.children.items():
            if isinstance(index, Numbered):
                for k in (0, 3):
                    assert stream(root, node, name, k).spawn_key == (index.first + k,)
            else:
                assert stream(root, node, name).spawn_key == (index,)
    # the layouts today's bytes were made with (changing one changes every table)
    assert stream(root, "generate_table", "candidate", 0).spawn_key == (1,)
    assert stream(root, "calibration table", "mask").spawn_key == (4,)
    assert stream(root, "candidate", "mask").spawn_key == (0,)
    np.testing.assert_array_equal(stream(7, "noise bands", "band", 2).generate_state(4),
                                  child_seed(7, 2).generate_state(4))


def test_stream_refuses_unknown_names_and_wrong_numbers():
    root = np.random.SeedSequence(1)
    with pytest.raises(ValueError, match="node must be one of .*got 'table'"):
        stream(root, "table", "labels")
    with pytest.raises(ValueError, match="name must be a child of the seed node 'candidate' .*got 'noise'"):
        stream(root, "candidate", "noise")
    with pytest.raises(TypeError, match="number is needed for 'chains'"):
        stream(root, "chains", "chain")
    with pytest.raises(TypeError, match="number is for a numbered child"):
        stream(root, "candidate", "mask", 0)
    with pytest.raises(ValueError, match="number must be >= 0, got -1"):
        stream(root, "chains", "chain", -1)


def test_no_two_names_of_a_node_share_a_stream():
    """Fixed children have distinct indices, below a node's one numbered family (if any)."""
    for node, layout in SEED_TREE.items():
        fixed = [i for i in layout.children.values() if not isinstance(i, Numbered)]
        numbered = [i for i in layout.children.values() if isinstance(i, Numbered)]
        assert len(set(fixed)) == len(fixed) and len(numbered) <= 1, node
        assert all(i < n.first for i in fixed for n in numbered), node
        assert len(set(layout.own)) == len(layout.own), node


def test_table_streams_lay_out_a_candidate_and_a_calibration_table():
    seed = np.random.SeedSequence(3)
    calibration = TableStreams(seed, "calibration table")
    for part in TABLE_PARTS:  # a child each, a fresh Generator each time
        rng = calibration.rng(part)
        assert rng is not calibration.rng(part)
        assert rng.random() == np.random.default_rng(stream(seed, "calibration table", part)).random()
    candidate = TableStreams(seed, "candidate")
    shared = candidate.rng("labels")
    assert shared.random() == np.random.default_rng(seed).random()
    assert candidate.rng("labels") is shared is candidate.rng("noise")
    assert candidate.rng("mask") is not shared
    with pytest.raises(ValueError, match="'candidate' draws labels, noise, map starts, gibbs runs from its own"):
        candidate.rng("labels")  # the noise was asked for already
    assert candidate.rng("map starts") is shared
    skipping = TableStreams(seed, "candidate")
    with pytest.raises(ValueError, match="'map starts' asked for at position 0"):
        skipping.rng("map starts")
    with pytest.raises(ValueError, match="part must be one of labels, noise, mask, map starts, got 'gibbs'"):
        TableStreams(seed, "candidate").rng("gibbs")
    with pytest.raises(ValueError, match="node must lay out every part of a table; 'chains' lacks labels"):
        TableStreams(seed, "chains")


# -- no literal stream index outside _seeds.py ------------------------------------------------
def _literal_streams(source: str) -> list[str]:
    """The places in ``source`` that pick a child stream by hand: any call of ``child_seed``
    or ``.spawn``, a ``SeedSequence`` given a ``spawn_key``, or ``stream`` given an int
    literal (a child's index belongs to :data:`SEED_TREE`)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        args = list(node.args) + [k.value for k in node.keywords]
        where = f"line {node.lineno}: {ast.unparse(node)}"
        literal = any(isinstance(a, ast.Constant) and type(a.value) is int for a in args)
        if name in ("child_seed", "spawn"):
            found.append(where)
        elif name == "SeedSequence" and any(k.arg == "spawn_key" for k in node.keywords):
            found.append(where)
        elif name == "stream" and literal:
            found.append(where)
    return found


def test_the_literal_stream_check_finds_hand_numbered_streams():
    assert _literal_streams("x = child_seed(root, 2)\ny = child_seed(child_seed(root, 0), 1)\n") == [
        "line 1: child_seed(root, 2)", "line 2: child_seed(child_seed(root, 0), 1)",
        "line 2: child_seed(root, 0)"]
    assert len(_literal_streams("for c in root.spawn(4):\n    pass\n")) == 1
    assert len(_literal_streams("s = np.random.SeedSequence(1, spawn_key=(2,))\n")) == 1
    assert len(_literal_streams("s = stream(root, 'generate_table', 'candidate', 0)\n")) == 1
    assert _literal_streams("s = stream(root, 'chains', 'chain', c)\nr = np.random.SeedSequence(7)\n") == []


def test_no_module_but_seeds_numbers_a_stream():
    """Every child stream is picked by name (:func:`stream`); its index is written in
    ``_seeds.py`` alone."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "_seeds.py" and path.parent == PACKAGE:
            continue
        places = _literal_streams(path.read_text(encoding="utf-8"))
        if places:
            found[str(path.relative_to(PACKAGE))] = places
    assert found == {}


# -- docs/protocol.md draws the same tree -----------------------------------------------------
_BRANCH = re.compile(r"^(?P<prefix>(?:│   |    )*)[├└]── (?P<index>\S+) +(?P<rest>.*)$")


def _doc_tree(text: str) -> dict[str, tuple[dict[str, str], tuple[str, ...]]]:
    """The seed tree of docs/protocol.md: by node, its children (name -> index as written:
    ``0``, ``1+k``, ``t``) and what its own stream draws. A header line names a root node;
    a branch line one of its children (``own``: the node's own stream), nested under the
    child it belongs to."""
    section = text.split("### The seed tree", 1)[1]
    block = section.split("```text\n", 1)[1].split("```", 1)[0]
    tree: dict[str, tuple[dict[str, str], list[str]]] = {}
    path: list[str] = []
    for line in block.splitlines():
        if not line.strip():
            continue
        match = _BRANCH.match(line)
        if match is None:  # a root node, then its description
            path = [re.split(r" {2,}", line.strip())[0]]
            continue
        depth = len(match["prefix"]) // 4
        del path[depth + 1:]
        children, own = tree.setdefault(path[depth], ({}, []))
        if match["index"] == "own":
            own.extend(part.strip() for part in match["rest"].split(","))
            continue
        name = re.split(r" {2,}", match["rest"].strip())[0]
        assert name not in children, f"{path[depth]}: {name} twice"
        children[name] = match["index"]
        path.append(name)
    return {node: (children, tuple(own)) for node, (children, own) in tree.items()}


def _seed_tree() -> dict[str, tuple[dict[str, str], tuple[str, ...]]]:
    return {node: ({name: str(index) for name, index in layout.children.items()}, layout.own)
            for node, layout in SEED_TREE.items()}


def test_the_protocol_page_draws_the_seed_tree_of_seeds_py():
    """docs/protocol.md's seed tree has the names and indices of ``SEED_TREE``: renaming or
    renumbering a stream in one place only fails here."""
    assert _doc_tree(PROTOCOL_DOC.read_text(encoding="utf-8")) == _seed_tree()


def test_the_seed_tree_comparison_sees_a_renumbered_or_renamed_stream():
    text = PROTOCOL_DOC.read_text(encoding="utf-8")
    for old, new in (("├── 2      map starts", "├── 5      map starts"),
                     ("└── 0      mask", "└── 0      masks"),
                     ("├── own    labels, noise, map starts", "├── own    noise, labels, map starts"),
                     ("└── r      round", "└── 1+r    round")):
        assert text.count(old) == 1, old
        assert _doc_tree(text.replace(old, new)) != _seed_tree()
