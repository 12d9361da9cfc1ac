"""The loops of the compiled kernel (lbm_bench.inference.compiled_loops): as plain Python (what
numba compiles) and compiled, against numpy and scipy; where their compiled forms are cached;
numba imported only when asked."""

import os
import subprocess
import sys

import numpy as np
import pytest
from scipy import sparse

from lbm_bench.inference import compiled_loops
from lbm_bench.inference.compiled_loops import (
    cache_folder,
    numba_status,
)


def _csr(seed, shape=(30, 20), density=0.2, binary=False):
    rng = np.random.default_rng(seed)
    X = sparse.random_array(shape, density=density, rng=rng, format="csr")
    X.data[:] = 1.0 if binary else rng.integers(1, 6, X.nnz)
    return X


def _loops(compiled):
    if not compiled:
        return compiled_loops  # the module's plain Python functions
    pytest.importorskip("numba", reason="numba is not installed (pip install 'lbm-bench[fast]')")
    return compiled_loops.compiled_loops()


@pytest.mark.parametrize("compiled", [False, pytest.param(True, marks=pytest.mark.numba)])
@pytest.mark.parametrize("binary", [False, True])
def test_class_sums_are_the_csr_product_with_the_one_hots(compiled, binary):
    X = _csr(1, binary=binary)
    rng = np.random.default_rng(2)
    onehot = (rng.integers(0, 3, (20, 4))[:, :, None] == np.arange(3)).reshape(20, 12)
    onehot = onehot.astype(np.uint8)
    for dtype in (np.int32, np.int64):
        out = np.full((12, 30), np.nan)
        _loops(compiled).class_sums(X.indptr, X.indices, X.data, binary, onehot,
                                    np.empty(12, dtype), out)
        assert np.array_equal(out, (X @ onehot.astype(np.float64)).T)


@pytest.mark.parametrize("compiled", [False, pytest.param(True, marks=pytest.mark.numba)])
@pytest.mark.parametrize("binary", [False, True])
def test_class_sums_of_rows_of_every_length_parity(compiled, binary):
    """Rows of 0, 1, 2, 3 and 4 entries: the entries taken two per pass, the odd one alone."""
    dense = np.zeros((5, 6))
    for r in range(5):
        dense[r, :r] = 1.0 if binary else np.arange(1, r + 1)
    X = sparse.csr_array(dense)
    onehot = (np.arange(6)[:, None] % 3 == np.arange(3)).astype(np.uint8)
    out = np.full((3, 5), np.nan)
    _loops(compiled).class_sums(X.indptr, X.indices, X.data.astype(np.uint8), binary, onehot,
                                np.empty(3, np.int32), out)
    assert np.array_equal(out, (X @ onehot.astype(np.float64)).T)


@pytest.mark.parametrize("compiled", [False, pytest.param(True, marks=pytest.mark.numba)])
@pytest.mark.parametrize("dtype", [np.uint8, np.int64])
def test_fill_onehot_is_numpy_s_one_hots_of_every_chain(compiled, dtype):
    rng = np.random.default_rng(5)
    labels = rng.integers(0, 4, (3, 50)).astype(dtype)
    want = (labels.T[:, :, None] == np.arange(4)).reshape(50, 12).astype(np.uint8)
    onehot = np.full((50, 12), 7, dtype=np.uint8)  # every stale value overwritten
    _loops(compiled).fill_onehot(labels, 4, onehot)
    assert np.array_equal(onehot, want)
    strided = np.full((50, 12), 7, dtype=np.uint8)
    _loops(compiled).fill_onehot(np.asfortranarray(labels)[:, ::1], 4, strided)  # any layout
    assert np.array_equal(strided, want)


@pytest.mark.parametrize("compiled", [False, pytest.param(True, marks=pytest.mark.numba)])
@pytest.mark.parametrize("binary", [False, True])
def test_moves_take_each_position_s_entries_from_its_old_row_to_its_new_one(compiled, binary):
    X = _csr(3, binary=binary)
    rng = np.random.default_rng(4)
    sums = rng.integers(0, 50, (6, 20)).astype(np.float64)
    positions = np.array([0, 5, 5, 29, 7], dtype=np.int64)
    old, new = np.array([0, 1, 2, 3, 0]), np.array([1, 0, 5, 4, 1])
    want = sums.copy()
    for p, a, b in zip(positions, old, new, strict=True):
        want[b] += X[[p]].toarray()[0]
        want[a] -= X[[p]].toarray()[0]
    direct = sums.copy()
    loops = _loops(compiled)
    loops.move_entries(X.indptr, X.indices, X.data, binary, positions, old, new, direct)
    assert np.array_equal(direct, want)
    moves, pairs = np.unique(old * 6 + new, return_inverse=True)
    staged = sums.copy()
    loops.move_entries_by_pair(X.indptr, X.indices, X.data, binary, positions, pairs.ravel(),
                               moves % 6, moves // 6, np.empty((moves.size, 20), np.int32),
                               staged)
    assert np.array_equal(staged, want)


@pytest.mark.parametrize("compiled", [False, pytest.param(True, marks=pytest.mark.numba)])
def test_row_gains_are_added_as_bincount_adds_them(compiled):
    """Each row's gains summed from 0 in its entries' order, then added: ``np.bincount``'s
    float operations, so the same bits."""
    X = _csr(5, shape=(40, 25), density=0.3)
    X.data[:] = np.random.default_rng(6).choice([1.0, 2.0, 7.0], X.nnz)
    values = np.unique(X.data)
    gains = np.random.default_rng(7).normal(size=(values.size, 3)) * 1e3
    start = np.random.default_rng(8).normal(size=(40, 3))
    want = start.copy()
    rows = np.repeat(np.arange(40), np.diff(X.indptr))
    inverse = np.searchsorted(values, X.data)
    for k in range(3):
        want[:, k] += np.bincount(rows, weights=gains[inverse, k], minlength=40)
    got = start.copy()
    index_of = np.zeros(7, dtype=np.int64)
    index_of[values.astype(np.int64) - 1] = np.arange(values.size)
    _loops(compiled).add_row_gains(X.indptr, X.data.astype(np.uint8), index_of, 1, gains, np.empty(3), got)
    assert np.array_equal(got, want)


@pytest.mark.numba
def test_the_compiled_loops_are_compiled_once_per_process():
    pytest.importorskip("numba", reason="numba is not installed (pip install 'lbm-bench[fast]')")
    assert compiled_loops.compiled_loops() is compiled_loops.compiled_loops()
    assert numba_status()[0] is not None and numba_status()[1] == ""


def test_the_cache_folder_is_numba_s_own_choice_or_a_writable_one(monkeypatch, tmp_path):
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    here = os.path.dirname(compiled_loops.__file__)
    monkeypatch.setattr(os, "access", lambda path, mode: not str(path).startswith(here))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_folder() == str(tmp_path / "lbm-bench" / "numba")  # the package's is read-only
    assert os.path.isdir(cache_folder())
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "mine"))
    assert cache_folder() is None  # the user's setting: numba's
    monkeypatch.delenv("NUMBA_CACHE_DIR")
    monkeypatch.setattr(os, "access", lambda path, mode: True)
    assert cache_folder() is None  # beside the module


@pytest.mark.numba
def test_a_read_only_package_caches_in_the_user_s_folder(tmp_path):
    """The module in a folder it cannot write (``os.access`` says so: root writes anywhere), run
    in fresh processes: its loops compile and are cached under ``XDG_CACHE_HOME``, where the
    next process finds them."""
    pytest.importorskip("numba", reason="numba is not installed (pip install 'lbm-bench[fast]')")
    package = tmp_path / "ro"
    package.mkdir()
    source = open(compiled_loops.__file__, encoding="utf-8").read()
    (package / "loops_copy.py").write_text(source, encoding="utf-8")
    code = (f"import os; access = os.access; os.access = lambda p, m: not str(p).startswith("
            f"{str(package)!r}) and access(p, m); "
            "import numpy as np, loops_copy as m; f = m.compiled_loops().class_sums; "
            "o = np.zeros((1, 1)); f(np.array([0, 1]), np.array([0]), np.ones(1), True, "
            "np.ones((1, 1), np.uint8), np.zeros(1, np.int32), o); print(o[0, 0], "
            "f.stats.cache_hits)")
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "PYTHONPATH": str(package)}
    env.pop("NUMBA_CACHE_DIR", None)
    hits = []
    for _ in range(2):
        done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                              text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        value, cached = done.stdout.split(maxsplit=1)
        assert value == "1.0"
        hits.append(cached)
    assert any((tmp_path / "cache" / "lbm-bench" / "numba").rglob("*.nbi"))
    assert not (package / "__pycache__").exists()
    assert hits[0].strip() in ("Counter()", "{}") and "1" in hits[1]  # compiled, then loaded


def test_the_package_imports_numba_only_to_compile():
    code = ("import sys, lbm_bench, lbm_bench.inference.kernels, lbm_bench.cli; "
            "print('numba' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"
