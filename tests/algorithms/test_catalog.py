"""The registry (lbm_bench.algorithms.catalog): output contract, reproducibility, names."""

import numpy as np
import pytest

from lbm_bench import algorithms
from lbm_bench.algorithms import (
    ALGORITHMS,
    FAMILY_ALGORITHMS,
    cem,
    double_kmeans,
    infer_kind,
    resolve_algorithm,
    vem,
)
from lbm_bench.models.registry import family_names, get_family
from tests.algorithms.common import (
    FAMILY_NAMES,
    KINDS,
    builtins,
    matching_error,
)


@pytest.mark.parametrize("name", ["cem", "vem"])
def test_builtin_lbm_infers_the_family(easy, name):
    """cem and vem infer the family of a table from its values, except for a family never
    inferred (categorical codes look like counts): the benchmark harness passes its kind."""
    kind, _, X, z, w = easy
    told = {}
    if get_family(kind).estimation.inference_order is None:
        assert infer_kind(X) == "poisson"
        told = {"kind": kind}
    else:
        assert infer_kind(X) == kind
    rows, cols = resolve_algorithm(name)[1](X, 3, 3, rng=6, **told)
    assert matching_error(z, rows) <= 0.02
    assert matching_error(w, cols) <= 0.02


@pytest.mark.parametrize("name", builtins())
@pytest.mark.parametrize("kind", KINDS)
def test_builtins_honour_the_output_contract(small_tables, name, kind):
    X = small_tables[kind]
    rows, cols = ALGORITHMS[name](X, 3, 2, rng=0)
    for labels, size, k in ((rows, 30, 3), (cols, 20, 2)):
        assert isinstance(labels, np.ndarray) and labels.shape == (size,)
        assert labels.dtype == np.int64
        assert labels.min() >= 0 and labels.max() < k


@pytest.mark.parametrize("name", builtins())
def test_same_rng_gives_same_labels(small_tables, name):
    X = small_tables["gaussian"]
    first = ALGORITHMS[name](X, 3, 2, rng=11)
    second = ALGORITHMS[name](X, 3, 2, rng=np.random.default_rng(11))
    np.testing.assert_array_equal(first[0], second[0])
    np.testing.assert_array_equal(first[1], second[1])


def test_family_wrappers_have_the_algorithm_signature(small_tables):
    for kind in KINDS:
        for method in ("cem", "vem"):
            rows, cols = getattr(algorithms, f"{kind}_{method}")(small_tables[kind], 3, 2, rng=0)
            assert rows.shape == (30,) and cols.shape == (20,)


def test_single_clusters_and_tiny_tables():
    X = np.random.default_rng(0).normal(size=(3, 2))
    for fit in (cem, vem, double_kmeans):
        rows, cols = fit(X, 1, 1, rng=0)
        assert rows.tolist() == [0, 0, 0] and cols.tolist() == [0, 0]
        rows, cols = fit(X, 3, 2, rng=0)  # as many clusters as rows and columns
        if fit is vem:  # VEM may empty a cluster: one-row Gaussian blocks are not fitted exactly
            assert set(rows.tolist()) <= {0, 1, 2} and set(cols.tolist()) <= {0, 1}
        else:
            assert sorted(rows.tolist()) == [0, 1, 2] and sorted(cols.tolist()) == [0, 1]


def test_registry_names():
    assert set(ALGORITHMS) == {
        "cem",
        "vem",
        "double-kmeans",
        "spectral-coclustering",
        "spectral-biclustering",
        "sparsebm",
        *FAMILY_NAMES,
    }
    for name, fit in ALGORITHMS.items():
        assert resolve_algorithm(name) == (name, fit)
    assert resolve_algorithm("Double_KMeans") == ("double-kmeans", double_kmeans)
    assert resolve_algorithm("Poisson_CEM") == ("poisson-cem", algorithms.poisson_cem)


def test_per_family_entries_match_the_family_table(small_tables):
    """One registry entry per (family, method), named after both, that is the
    method with the family forced: same labels as cem/vem(kind=...) from the same seed."""
    assert set(family_names()) == set(KINDS)
    expected = {f"{kind}_{method}" for kind in family_names() for method in ("cem", "vem")}
    assert set(FAMILY_ALGORITHMS) == expected
    assert set(FAMILY_NAMES) == {name.replace("_", "-") for name in expected}
    for name, fit in FAMILY_ALGORITHMS.items():
        kind, method = name.split("_")
        assert fit.__name__ == name and getattr(algorithms, name) is fit
        assert ALGORITHMS[f"{kind}-{method}"] is fit
        assert resolve_algorithm(f"lbm_bench.algorithms:{name}")[1] is fit
        assert get_family(kind).presentation.block_description in fit.__doc__
        X = small_tables[kind]
        got = fit(X, 3, 2, rng=4)
        want = {"cem": cem, "vem": vem}[method](X, 3, 2, kind=kind, rng=4)
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])
    # the family is forced, not inferred: counts stored as floats are fitted as counts
    counts = small_tables["poisson"].astype(float)
    assert algorithms.poisson_cem(counts, 3, 2, rng=0)[0].shape == (30,)
    with pytest.raises(ValueError, match="X must hold 0/1 values"):
        algorithms.bernoulli_vem(counts, 3, 2, rng=0)


@pytest.mark.parametrize("name", FAMILY_NAMES)
def test_per_family_entries_honour_the_output_contract(small_tables, name):
    rows, cols = ALGORITHMS[name](small_tables[name.split("-")[0]], 3, 2, rng=0)
    assert rows.dtype == cols.dtype == np.int64
    assert rows.shape == (30,) and cols.shape == (20,)
    assert rows.max() < 3 and cols.max() < 2


def test_per_family_algorithms_pickle_by_reference():
    """joblib workers of ``lbm-bench benchmark`` receive the algorithms by reference."""
    import pickle

    for fit in FAMILY_ALGORITHMS.values():
        assert pickle.loads(pickle.dumps(fit)) is fit


def test_resolve_module_function():
    name, fit = resolve_algorithm("lbm_bench.algorithms:double_kmeans")
    assert name == "lbm_bench.algorithms:double_kmeans" and fit is double_kmeans
    assert resolve_algorithm("lbm_bench.algorithms:poisson_vem")[1] is algorithms.poisson_vem


@pytest.mark.parametrize(
    "name, match",
    [
        ("kmeans", "unknown algorithm 'kmeans'"),
        ("", "unknown algorithm"),
        ("lbm_bench.no_such_module:fit", "cannot import module 'lbm_bench.no_such_module'"),
        ("lbm_bench.algorithms:no_such_function", "has no attribute 'no_such_function'"),
        ("lbm_bench.algorithms:ALGORITHMS", "is not callable"),
        ("lbm_bench.algorithms:", "must be a registry name, 'module:function' or 'path/to/file.py:function'"),
        (":cem", "must be a registry name, 'module:function' or 'path/to/file.py:function'"),
    ],
)
def test_resolve_algorithm_errors(name, match):
    with pytest.raises(ValueError, match=match):
        resolve_algorithm(name)


def test_resolve_algorithm_needs_a_string():
    with pytest.raises(TypeError, match="must be a string"):
        resolve_algorithm(cem)


_USER_ALGORITHM = """
import numpy as np

def fit(X, n_row_clusters, n_col_clusters, *, rng):
    return np.arange(X.shape[0]) % n_row_clusters, np.arange(X.shape[1]) % n_col_clusters
"""


def test_module_of_the_current_directory_without_pythonpath(tmp_path, monkeypatch):
    """``myalgo:fit`` finds ``./myalgo.py`` (issue 27, item 3), leaves sys.path as it was,
    and algorithm_source names the file it loaded."""
    import sys

    (tmp_path / "nc_myalgo.py").write_text(_USER_ALGORITHM)
    monkeypatch.chdir(tmp_path)
    path_before = list(sys.path)
    monkeypatch.delitem(sys.modules, "nc_myalgo", raising=False)
    name, fit = resolve_algorithm("nc_myalgo:fit")
    assert name == "nc_myalgo:fit" and sys.path == path_before
    rows, cols = fit(np.zeros((5, 4)), 2, 2, rng=None)
    assert rows.tolist() == [0, 1, 0, 1, 0] and cols.tolist() == [0, 1, 0, 1]
    assert algorithms.algorithm_source(fit) == str((tmp_path / "nc_myalgo.py").resolve())
    monkeypatch.delitem(sys.modules, "nc_myalgo", raising=False)


def test_a_python_file_by_its_path(tmp_path, monkeypatch):
    (tmp_path / "algos").mkdir()
    (tmp_path / "algos" / "mine.py").write_text(_USER_ALGORITHM)
    monkeypatch.chdir(tmp_path)
    for spec in ("./algos/mine.py:fit", "algos/mine.py:fit", f"{tmp_path}/algos/mine.py:fit"):
        name, fit = resolve_algorithm(spec)
        assert name == spec and fit.__name__ == "fit"
        assert algorithms.algorithm_source(fit) == str((tmp_path / "algos" / "mine.py").resolve())
    assert resolve_algorithm("./algos/mine.py:fit")[1] is resolve_algorithm("algos/mine.py:fit")[1]
    with pytest.raises(ValueError, match=r"no file ./algos/other.py"):
        resolve_algorithm("./algos/other.py:fit")
    with pytest.raises(ValueError, match="has no attribute 'nope'"):
        resolve_algorithm("./algos/mine.py:nope")
    (tmp_path / "broken.py").write_text("import no_such_package_xyz\n")
    with pytest.raises(ValueError, match=r"importing .*broken.py failed: ModuleNotFoundError"):
        resolve_algorithm("./broken.py:fit")


def test_a_missing_module_says_how_to_name_a_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match=r"cannot import module 'nc_absent'.*'./nc_absent.py:FUNCTION'"):
        resolve_algorithm("nc_absent:fit")
    # a module of the current directory whose own import fails: that error, not "not found"
    (tmp_path / "nc_needs.py").write_text("import no_such_package_xyz\n")
    with pytest.raises(ValueError, match="importing nc_needs from the current directory failed"):
        resolve_algorithm("nc_needs:fit")
