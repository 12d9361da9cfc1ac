"""Files the tests of the commands share: a small generated table, a user's counts and the design
file fitted to them."""

import numpy as np
import pytest

from lbm_bench import get_family
from lbm_bench.cli import main
from tests.cli.helpers import SMALL


@pytest.fixture(scope="module")
def table_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("cli") / "t.h5"
    assert main(["generate", *SMALL, "-o", str(path)]) == 0
    return path


@pytest.fixture(scope="module")
def counts(tmp_path_factory):
    folder = tmp_path_factory.mktemp("fit")
    model = get_family("poisson").model([0.6, 0.4], [0.5, 0.5], [[0.5, 4.0], [3.0, 1.0]])
    X, _, _ = model.sample(120, 80, rng=0)
    np.save(folder / "counts.npy", X)
    return folder / "counts.npy"


@pytest.fixture(scope="module")
def design_file(counts):
    out = counts.with_name("design.toml")
    assert main(["fit", str(counts), "--max-clusters", "4x4", "--samples", "200", "-o", str(out),
                 "-q"]) == 0
    return out
