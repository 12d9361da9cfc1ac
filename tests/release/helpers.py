"""Shared by the release tests: the tiny spec, committed specs shrunk, and byte-for-byte comparison of two
release directories that names the differing files and datasets."""

import hashlib
import json
import os
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[2]

def _toml_value(value) -> str:
    if isinstance(value, dict):  # an inline table (model_options)
        return "{ " + ", ".join(f"{k} = {_toml_value(v)}" for k, v in value.items()) + " }"
    return json.dumps(value)


def shrunk_spec(spec: Path, path: Path, *, defaults: dict, grid: dict) -> Path:
    """Write to ``path`` the committed release spec ``spec`` at a tiny size: its
    ``[defaults]`` updated with ``defaults`` and every ``[[grid]]`` with ``grid`` (the grids'
    kinds, clusters and model options are kept). Returns ``path``."""
    source = tomllib.loads(spec.read_text(encoding="utf-8"))
    source["defaults"].update(defaults)
    lines = []
    for name in ("release", "defaults"):
        lines.append(f"[{name}]")
        lines += [f"{key} = {_toml_value(value)}" for key, value in source[name].items()]
    for table in source["grid"]:
        table.update(grid)
        lines.append("[[grid]]")
        lines += [f"{key} = {_toml_value(value)}" for key, value in table.items()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


TINY_SPEC = """
[release]
name = "tiny"
version = "0.1"
seed = 42

[defaults]
tolerance = 0.03
n_samples = 200
n_chains = 4
burn_in = 10
screen_samples = 40
n_calibration_tables = 20
n_init = 3

[[grid]]
kinds = ["gaussian", "bernoulli"]
shapes = ["30x20"]
clusters = ["2x2"]
risks = [0.1]
replicates = 2

[[grid]]
kinds = ["poisson"]
shapes = ["24x24"]
clusters = ["3x2"]
risks = [0.15]
"""


def equal(x, y) -> bool:
    """Equal values, NaN equal to NaN, for HDF5 datasets and attributes."""
    import numpy as np

    x, y = np.asarray(x), np.asarray(y)
    if x.dtype.kind in "fc" and y.dtype.kind in "fc":
        return bool(np.array_equal(x, y, equal_nan=True))
    return bool(np.array_equal(x, y))


def _plain(value):
    """An attribute's value as Python values (``0.1``, not ``np.float64(0.1)``)."""
    import numpy as np

    return np.asarray(value).tolist()


def h5_differences(fa, fb) -> list[str]:
    """Paths, attributes, dtypes and storage settings that differ between two HDF5 files."""
    import h5py

    def items(f):
        paths = ["/"]
        f.visit(paths.append)
        return paths

    out = []
    for path in sorted(set(items(fa)) | set(items(fb))):
        x, y = fa.get(path), fb.get(path)
        if x is None or y is None:
            out.append(f"{path} (only in {'b' if x is None else 'a'})")
            continue
        if isinstance(x, h5py.Dataset):
            for what in ("dtype", "shape", "chunks", "compression", "compression_opts", "shuffle", "fillvalue"):
                if getattr(x, what) != getattr(y, what):
                    out.append(f"{path} {what} {getattr(x, what)} vs {getattr(y, what)}")
            if not equal(x[()], y[()]):
                out.append(f"{path} values")
        for key in sorted(set(x.attrs) | set(y.attrs)):
            if key not in x.attrs or key not in y.attrs:
                out.append(f"{path}@{key} (missing on one side)")
            elif getattr(x.attrs[key], "dtype", None) != getattr(y.attrs[key], "dtype", None):
                out.append(f"{path}@{key} dtype {getattr(x.attrs[key], 'dtype', None)} vs "
                           f"{getattr(y.attrs[key], 'dtype', None)}")
            elif not equal(x.attrs[key], y.attrs[key]):
                out.append(f"{path}@{key} values {_plain(x.attrs[key])!r} vs {_plain(y.attrs[key])!r}")
    return out


def same_bytes(a: Path, b: Path) -> None:
    """Assert two release directories hold the same files with the same bytes, naming
    the files that differ (and, for tables, the datasets) when they do not."""
    da, db = digests(a), digests(b)
    differing = sorted(k for k in set(da) | set(db) if da.get(k) != db.get(k))
    details = []
    for name in differing:
        if name.endswith(".h5") and name in da and name in db:
            import h5py

            with h5py.File(a / name, "r") as fa, h5py.File(b / name, "r") as fb:
                details.extend(f"{name}:{d}" for d in h5_differences(fa, fb))
            keep = os.environ.get("LBM_BENCH_KEEP_DIFF")
            if keep:  # debugging aid: keep both versions of the differing file
                import shutil

                Path(keep).mkdir(parents=True, exist_ok=True)
                shutil.copy(a / name, Path(keep) / (Path(name).name + ".a"))
                shutil.copy(b / name, Path(keep) / (Path(name).name + ".b"))
    assert not differing, f"files differ: {differing}; datasets/attributes: {details}"


def digests(out: Path) -> dict[str, str]:
    return {
        p.relative_to(out).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(out.rglob("*"))
        if p.is_file()
    }
