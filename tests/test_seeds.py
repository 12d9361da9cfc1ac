"""The seed policy (lbm_bench._seeds): recorded seeds, children, a release's derived seeds.

The values are pinned: a change of any would change the bytes of every table and release."""

import numpy as np
import pytest

from lbm_bench._seeds import child_seed, derive_seed, draw_seed, resolve_seed
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
    for bad in (True, 1.5, np.random.RandomState(0)):
        with pytest.raises(TypeError, match="rng must be None, an int or a numpy Generator"):
            resolve_seed(bad)
