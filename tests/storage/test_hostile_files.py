"""Hostile and malformed files given to read_user_table (issue 48, sections 1 and 2, the readers'
rows): memory bounded by what a file declares (both sides of a declared shape, line ends of every
kind, compressed streams counted as they decompress), and one line naming the file for every
malformed input, never a traceback nor a silent misread. Each test failed on b48938f."""

import gzip

import h5py
import numpy as np
import pytest
import scipy.sparse as sp

from lbm_bench.protocol.memory import MemoryLimitError
from lbm_bench.storage.user_data import UserTableError, read_user_table


def _one_line(path, error=UserTableError, message="", **options):
    with pytest.raises(error) as info:
        read_user_table(path, **options)
    text = str(info.value)
    assert text.startswith(f"{path}: ") and message in text and "\n" not in text, text
    return text


# -- memory bounded by what a file declares ----------------------------------------------------------------
def test_a_matrix_market_shape_is_counted_on_both_sides(tmp_path):
    """3 x 1e14 passed the guard (rows only) and then asked for 728 TiB."""
    path = tmp_path / "wide.mtx"
    path.write_text("%%MatrixMarket matrix coordinate real general\n3 100000000000000 1\n1 1 1.0\n")
    _one_line(path, MemoryLimitError, "sparse 3x100000000000000 table", max_memory="250M")


def test_an_npz_shape_is_counted_on_both_sides(tmp_path):
    path = tmp_path / "wide.npz"
    np.savez(path, format=np.array("csr"), shape=np.array([3, 10**14]), data=np.ones(2),
             indices=np.array([0, 1]), indptr=np.array([0, 1, 2, 2]))
    _one_line(path, MemoryLimitError, "sparse 3x100000000000000 table", max_memory="250M")


def test_cr_only_lines_count_as_lines(tmp_path):
    """80 MB with CR-only line ends counted as one line, then peaked at 1.2-2.3 GB under 250M."""
    path = tmp_path / "cr.csv"
    path.write_bytes(b"1,2,3,4,5,6,7,8\r" * 1_000_000)
    _one_line(path, MemoryLimitError, "text table of at least 327680 lines of 8 cells", max_memory="250M")
    assert read_user_table(path, max_memory="1G").shape == (1_000_000, 8)  # read whole within the limit


def test_a_gzip_of_cr_lines_is_refused_as_it_decompresses(tmp_path):
    path = tmp_path / "cr.csv.gz"
    with gzip.open(path, "wb") as handle:
        for _ in range(40):
            handle.write(b"1,2,3,4\r" * 250_000)
    _one_line(path, MemoryLimitError, "text table of", max_memory="200M")


def test_a_gzip_of_spaces_without_newline_is_refused_by_its_line(tmp_path):
    """600 MB of spaces without a newline: count_lines grew its buffer quadratically (over 200 s)."""
    path = tmp_path / "spaces.csv.gz"
    with gzip.open(path, "wb") as handle:
        for _ in range(40):
            handle.write(b" " * (1 << 20))
    text = _one_line(path, MemoryLimitError, "text table of", max_memory="200M")
    assert "line " in text


def test_a_mtx_gz_of_comment_lines(tmp_path):
    """A 290 KB .mtx.gz of comment lines peaked at 1.3 GB under 200M: the comments are skipped."""
    path = tmp_path / "comments.mtx.gz"
    with gzip.open(path, "wb") as handle:
        handle.write(b"%%MatrixMarket matrix coordinate real general\n")
        for _ in range(270):
            handle.write(b"%" + b"x" * (1 << 20) + b"\n")
        handle.write(b"2 2 2\n1 1 1.0\n2 2 3.0\n")
    _one_line(path, message="comment lines run past 256 MiB", max_memory="200M")


def test_an_h5ad_indptr_declared_huge_is_not_read(tmp_path):
    """A compressed 400M-entry indptr (29 KB) was read whole (3.2 GB under 1G)."""
    path = tmp_path / "indptr.h5ad"
    with h5py.File(path, "w") as file:
        file.attrs["encoding-type"] = "anndata"
        group = file.create_group("X")
        group.attrs.update({"encoding-type": "csr_matrix", "shape": (2, 2)})
        group["data"], group["indices"] = np.array([1.0, 2.0]), np.array([0, 1])
        group.create_dataset("indptr", shape=(400_000_000,), dtype=np.int64, compression="gzip", chunks=(1 << 20,))
    _one_line(path, message="indptr has shape (400000000,), its shape (2, 2) needs 3 entries", max_memory="1G")


def test_an_h5ad_obs_index_declared_huge_is_not_read(tmp_path):
    path = tmp_path / "obs.h5ad"
    with h5py.File(path, "w") as file:
        file.attrs["encoding-type"] = "anndata"
        file["X"] = np.array([[1.0, 0.0], [0.0, 2.0]])
        obs = file.create_group("obs")
        obs.attrs["_index"] = "_index"
        obs.create_dataset("_index", shape=(300_000_000,), dtype=h5py.string_dtype(), compression="gzip",
                           chunks=(1 << 16,))
    _one_line(path, message="obs has 300000000 names for the 2 rows of X", max_memory="1G")


# -- one line naming the file -----------------------------------------------------------------------------
def test_an_npz_whose_format_is_an_integer(tmp_path):
    path = tmp_path / "fmt.npz"
    np.savez(path, format=np.array(5), shape=np.array([2, 2]), data=np.ones(2), indices=np.array([0, 1]),
             indptr=np.array([0, 1, 2]))
    _one_line(path, message="its 'format' entry is 5, not a scipy.sparse layout")


@pytest.mark.parametrize("name", ["t.csv.gz", "t.mtx.gz"])
@pytest.mark.parametrize("damage", ["truncated", "corrupt", "not gzip"])
def test_damaged_gzip_files(tmp_path, name, damage):
    if name.startswith("t.csv"):
        text = "".join(f"{i},{i % 7},{i % 3}\n" for i in range(20000))
    else:
        text = "%%MatrixMarket matrix coordinate real general\n9 9 9\n" + "".join(
            f"{i} {i} {i}.5\n" for i in range(1, 10)) + "%" * 20000 + "\n"
    data = gzip.compress(text.encode())
    data = {"truncated": data[: len(data) // 2], "corrupt": data[:30] + b"\x00" * 30 + data[60:],
            "not gzip": b",s" + text.encode()[:100]}[damage]
    (tmp_path / name).write_bytes(data)
    _one_line(tmp_path / name, message="gzip")


def test_h5ad_links_that_do_not_resolve(tmp_path):
    for name, link, words in (("soft.h5ad", h5py.SoftLink("/nothing"), "X is the soft link '/nothing'"),
                              ("ext.h5ad", h5py.ExternalLink("missing.h5", "/X"),
                               "X is the external link '/X' of 'missing.h5'")):
        with h5py.File(tmp_path / name, "w") as file:
            file.attrs["encoding-type"] = "anndata"
            file["X"] = link
            file.create_group("obs")
        _one_line(tmp_path / name, message=words + ", which does not resolve")


def _sparse_h5ad(path, indices=(0, 1), shape=(2, 2)):
    with h5py.File(path, "w") as file:
        file.attrs["encoding-type"] = "anndata"
        group = file.create_group("X")
        group.attrs.update({"encoding-type": "csr_matrix", "shape": shape})
        group["data"], group["indices"], group["indptr"] = np.array([1.0, 2.0]), np.array(indices), np.array([0, 1, 2])


def test_h5ad_float_indices_are_not_truncated(tmp_path):
    """Float indices 0.5 and 1.5 were read as 1 and 0."""
    _sparse_h5ad(tmp_path / "f.h5ad", indices=(0.5, 1.5))
    _one_line(tmp_path / "f.h5ad", message="indices hold float64 values, not integers")


def test_h5ad_shape_of_strings(tmp_path):
    """'invalid literal for int()' without the file name."""
    _sparse_h5ad(tmp_path / "s.h5ad", shape=np.array([b"a", b"b"]))
    _one_line(tmp_path / "s.h5ad", message="X (csr_matrix) has no shape of two sizes")


def test_h5ad_names_not_utf8(tmp_path):
    path = tmp_path / "n.h5ad"
    with h5py.File(path, "w") as file:
        file.attrs["encoding-type"] = "anndata"
        file["X"] = np.array([[1.0, 0.0], [0.0, 2.0]])
        obs = file.create_group("obs")
        obs.attrs["_index"] = "_index"
        obs["_index"] = np.array([b"a\xff", b"b"])
    _one_line(path, message="obs names are not UTF-8 text")


@pytest.mark.parametrize("value", [1e150, -1.7e308, 1e101])
def test_npy_values_beyond_1e100(tmp_path, value):
    """Near 1e150 or 1e308: RuntimeWarnings, then `int() argument must be ... not 'NoneType'`."""
    values = np.random.default_rng(0).normal(size=(5, 4))
    values[1, 2] = value
    np.save(tmp_path / "big.npy", values)
    _one_line(tmp_path / "big.npy", message=f"holds {value!r} at row 2, column 3: values must lie within 1e+100")


def test_uint64_beyond_2_53(tmp_path):
    """uint64 above 2^63: exit 0, a design with ICL +67108864 and rates 9.2e18."""
    values = np.arange(20, dtype=np.uint64).reshape(5, 4)
    values[0, 0] = 2**63 + 5
    np.save(tmp_path / "u.npy", values)
    _one_line(tmp_path / "u.npy", message="holds 9223372036854775813 at row 1, column 1: values must lie within 2^53")


def test_an_integer_mtx_holding_a_fraction(tmp_path):
    path = tmp_path / "i.mtx"
    path.write_text("%%MatrixMarket matrix coordinate integer general\n3 3 3\n1 1 1.5\n2 2 1\n3 3 2\n")
    _one_line(path, message="an integer Matrix Market file holding 1.5, not an integer below 2^53")


def test_a_sparse_file_within_the_guard_still_reads(tmp_path):
    sp.save_npz(tmp_path / "ok.npz", sp.random(30, 20, density=0.2, random_state=0, format="csr"))
    assert read_user_table(tmp_path / "ok.npz", max_memory="250M").shape == (30, 20)


#: The peak of a process reading a file: VmHWM, the high-water mark of its own memory (ru_maxrss would
#: keep the RSS of the pytest process forked before the exec).
_PEAK = """
import sys
from lbm_bench.storage.user_data import read_user_table
table = read_user_table(sys.argv[1])
peak = next(line for line in open("/proc/self/status") if line.startswith("VmHWM:")).split()[1]
print(int(peak) * 1024, table.read_memory)
"""


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["csv", "csv.gz", "mtx", "npz", "h5ad", "npy"])
def test_the_guards_estimate_bounds_the_measured_peak(tmp_path, fmt):
    """Issue 48: the estimate of every reader bounds the peak memory of the process that reads (the
    interpreter's baseline included), measured on a table of 4 million entries."""
    import subprocess
    import sys

    import scipy.io

    rng = np.random.default_rng(0)
    X = sp.random(200_000, 20, density=1.0 if fmt in ("csv", "csv.gz", "npy") else 0.3, random_state=1,
                  format="csr", data_rvs=lambda k: rng.integers(1, 9, k).astype(np.float64))
    path = tmp_path / f"t.{fmt}"
    if fmt.startswith("csv"):
        text = "\n".join(",".join(map(str, row)) for row in X.toarray().astype(int)) + "\n"
        path.write_bytes(gzip.compress(text.encode()) if fmt.endswith(".gz") else text.encode())
    elif fmt == "mtx":
        scipy.io.mmwrite(path, X)
    elif fmt == "npz":
        sp.save_npz(path, X)
    elif fmt == "npy":
        np.save(path, X.toarray())
    else:
        with h5py.File(path, "w") as file:
            file.attrs["encoding-type"] = "anndata"
            group = file.create_group("X")
            group.attrs.update({"encoding-type": "csr_matrix", "shape": X.shape})
            for name in ("data", "indices", "indptr"):
                group[name] = getattr(X, name)
    done = subprocess.run([sys.executable, "-c", _PEAK, str(path)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    peak, estimate = map(int, done.stdout.split())
    assert peak <= estimate, (fmt, peak / 2**20, estimate / 2**20)


#: A bomb or a declared size, read under a limit: the process's peak (VmHWM) and the refusal's first words.
_BOMB_PEAK = """
import sys
from lbm_bench.storage.user_data import read_user_table
try:
    read_user_table(sys.argv[1], max_memory=sys.argv[2])
    refusal = "read"
except ValueError as exc:
    refusal = type(exc).__name__
peak = next(line for line in open("/proc/self/status") if line.startswith("VmHWM:")).split()[1]
print(int(peak) * 1024, refusal)
"""


def _gzip_of(path, piece, times):
    with gzip.open(path, "wb") as handle:
        for _ in range(times):
            handle.write(piece)


def _comment_lines(path):
    """A valid .mtx.gz whose table comes after 290 MiB of comment lines (a 290 KB file)."""
    with gzip.open(path, "wb") as handle:
        handle.write(b"%%MatrixMarket matrix coordinate real general\n")
        for _ in range(290):
            handle.write(b"%" + b"x" * (1 << 20) + b"\n")
        handle.write(b"2 2 2\n1 1 1.0\n2 2 3.0\n")


def _h5ad_huge(path, key):
    with h5py.File(path, "w") as file:
        file.attrs["encoding-type"] = "anndata"
        if key == "indptr":
            group = file.create_group("X")
            group.attrs.update({"encoding-type": "csr_matrix", "shape": (2, 2)})
            group["data"], group["indices"] = np.array([1.0, 2.0]), np.array([0, 1])
            group.create_dataset("indptr", shape=(400_000_000,), dtype=np.int64, compression="gzip",
                                 chunks=(1 << 20,))
        else:
            file["X"] = np.array([[1.0, 0.0], [0.0, 2.0]])
            file.create_group("obs").attrs["_index"] = "_index"
            file["obs"].create_dataset("_index", shape=(300_000_000,), dtype=h5py.string_dtype(),
                                       compression="gzip", chunks=(1 << 16,))


BOMBS = {  # issue 48, section 1: each peaked at 1.2 to 5.5 GB under a limit of 200M to 1G
    "cr.csv": lambda p: p.write_bytes(b"1,2,3,4,5,6,7,8\r" * 1_000_000),
    "cr.csv.gz": lambda p: _gzip_of(p, b"1,2,3,4\r" * 250_000, 40),
    "spaces.csv.gz": lambda p: _gzip_of(p, b" " * (1 << 20), 600),
    "comments.mtx.gz": _comment_lines,
    "wide.mtx": lambda p: p.write_text("%%MatrixMarket matrix coordinate real general\n3 100000000000000 1\n1 1 1\n"),
    "wide.npz": lambda p: np.savez(p, format=np.array("csr"), shape=np.array([3, 10**14]), data=np.ones(2),
                                   indices=np.array([0, 1]), indptr=np.array([0, 1, 2, 2])),
    "indptr.h5ad": lambda p: _h5ad_huge(p, "indptr"),
    "obs.h5ad": lambda p: _h5ad_huge(p, "obs"),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(BOMBS))
def test_bombs_and_declared_sizes_stay_within_the_limit(tmp_path, name):
    """Issue 48: the guard's limit bounds the measured peak (VmHWM, the interpreter included) of a
    reader given a bomb or a file declaring a huge size: refused before it holds more."""
    import subprocess
    import sys

    path = tmp_path / name
    BOMBS[name](path)
    done = subprocess.run([sys.executable, "-c", _BOMB_PEAK, str(path), "250M"], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    peak, refusal = done.stdout.split()
    assert refusal in ("MemoryLimitError", "ReadLimitError", "UserTableError"), refusal
    assert int(peak) <= 250 * 2**20, (name, int(peak) / 2**20)
