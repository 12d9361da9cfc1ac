"""Hostile input, at random (issue 35): label files, table files with damaged attributes and
datasets, damaged releases and release specs thrown at ``info``, ``evaluate``, ``verify`` and
``build``. Whatever the input, the command line answers with an exit status (0, 1 or 2) and, on
an error, one line on stderr, never a traceback, a numpy repr (``np.float64(5.5)``) or an
``[Errno N]``. A seeded loop (the same cases on every run; a failure prints its case), in
process for speed, with a few subprocess checks of the entry point."""

from __future__ import annotations

import contextlib
import io
import json
import random
import shutil
import subprocess
import sys
from pathlib import Path

import h5py
import numpy as np
import pytest

from lbm_bench.cli import main

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data"
#: The committed sample tables the damage starts from (every format version and storage).
SAMPLES = ["table_v1.h5", "table_v1_1.h5", "table_v1_1_sparse.h5", "table_v1_2_categorical.h5",
           "table_v1_3_missing_sparse.h5"]
#: What an error line must not hold.
FORBIDDEN = ("Traceback", "np.float64(", "np.int64(", "np.str_(", "[Errno", "array(")

SPEC = """
[release]
name = "fuzz"
version = "0.1"
seed = 5

[defaults]
tolerance = 0.05
n_samples = 200
n_chains = 4
burn_in = 10
screen_samples = 0
n_calibration_tables = 6
n_init = 2

[[grid]]
kinds = ["bernoulli"]
shapes = ["24x16"]
clusters = ["2x2"]
risks = [0.1]
"""


def _run(args: list[str]) -> tuple[int, str, str]:
    """``main(args)`` in this process: its status and what it printed. An exception that
    escapes ``main`` (other than argparse's exit) fails the case."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = main(args)
        except SystemExit as exc:  # argparse: usage errors exit 2, --help 0
            status = exc.code
    return status, out.getvalue(), err.getvalue()


def _check(args: list[str], case: str) -> int:
    where = f"case {case}: lbm-bench {' '.join(map(str, args))}"
    try:
        status, out, err = _run(args)
    except Exception as exc:  # escaped main: the traceback a user would see
        import traceback

        pytest.fail(f"{where}: {type(exc).__name__} escaped the command line\n{traceback.format_exc()[-3000:]}")
    assert status in (0, 1, 2), f"{where}: exit status {status}\n{err}"
    for text in (out, err):
        for word in FORBIDDEN:
            assert word not in text, f"{where}: {word!r} in the output\n{text[-3000:]}"
    if status == 2:  # one error line (besides the notes that a label file's header was skipped)
        lines = [line for line in err.strip().splitlines() if not line.startswith("note: ")]
        assert len(lines) == 1 and lines[0].startswith("lbm-bench"), f"{where}: not one error line\n{err}"
    return status


# --------------------------------------------------------------------------- #
# Label files                                                                 #
# --------------------------------------------------------------------------- #

_WORDS = ["0", "1", "2", "-1", "2.0", "1e3", "2.5", "nan", "inf", "-inf", "1O", "label", '"x"', "1,2", " ", "",
          "99999999999999999999999", "1e308", "0x10", "٣", "\x00", "\ufeff1", "3\r", "+1", "1_000", "None", "True"]


def _label_text(rng: random.Random, n: int) -> str:
    kind = rng.random()
    if kind < 0.5:  # a valid vector, relabelled at random: huge values, few or many clusters
        scale = rng.choice([1, 7, 10**9, 2**62 // 8])
        values = [rng.randrange(rng.choice([1, 2, 3, n])) * scale for _ in range(rng.choice([n, n, n, n - 1, n + 1]))]
        lines = [str(v) for v in values]
        if rng.random() < 0.2:
            lines.insert(0, rng.choice(["label", '"cluster"', "V1", "O", "nan"]))
    else:  # damaged: words and numbers mixed
        lines = [rng.choice(_WORDS) if rng.random() < 0.3 else str(rng.randrange(-3, 5))
                 for _ in range(rng.choice([0, 1, n, n]))]
    return rng.choice(["\n", "\r\n"]).join(lines) + rng.choice(["", "\n"])


def _label_npy(rng: random.Random, n: int, path: Path) -> None:
    choice = rng.randrange(8)
    if choice == 0:
        array = np.arange(n) % 3 * rng.choice([1, 10**9])
    elif choice == 1:
        array = np.random.default_rng(rng.randrange(100)).normal(size=n)
    elif choice == 2:
        array = np.zeros((n, 2), dtype=np.int64)
    elif choice == 3:
        array = np.array(["a"] * n)
    elif choice == 4:
        array = np.ones(n, dtype=bool)
    elif choice == 5:
        array = np.zeros(n, dtype=np.complex128)
    elif choice == 6:
        array = np.array([np.nan] * n)
    else:
        array = np.array([0, -1, 2 ** 63 - 1][: max(1, n % 3)], dtype=np.uint64)
    np.save(path, array)
    if rng.random() < 0.2:  # damage the header or the data
        data = bytearray(path.read_bytes())
        data[rng.randrange(len(data))] = rng.randrange(256)
        path.write_bytes(bytes(data[: rng.randrange(len(data) + 1)]))


def test_random_label_files_never_raise(tmp_path):
    rng = random.Random(35)
    table = DATA / "table_v1_1.h5"
    n_rows, n_cols = 12, 10
    statuses = []
    for case in range(700):
        files = []
        for side, n in (("rows", n_rows), ("cols", n_cols)):
            if rng.random() < 0.25:
                path = tmp_path / f"{side}{case}.npy"
                _label_npy(rng, n, path)
            else:
                path = tmp_path / f"{side}{case}.{rng.choice(['txt', 'csv', 'labels'])}"
                path.write_bytes(_label_text(rng, n).encode("utf-8", errors="surrogatepass"))
            files.append(path)
        args = ["evaluate", str(table), "--rows", str(files[0]), "--cols", str(files[1])]
        statuses.append(_check(args + (["--json"] if rng.random() < 0.3 else []), f"labels {case}"))
    assert statuses.count(0) > 30 and statuses.count(2) > 300  # both paths were exercised


# --------------------------------------------------------------------------- #
# Damaged table files                                                         #
# --------------------------------------------------------------------------- #

def _random_value(rng: random.Random):
    return rng.choice([
        np.float64(np.nan), np.float64(np.inf), -1, 0, 2**40, 5.5, "5.5", b"\xff\xfe", "", "gaussian", "9.9",
        np.arange(3), np.zeros((2, 2)), np.array([b"a", b"b"]), True, np.int8(-3), "1.0", "x" * 300,
    ])


def _damage(path: Path, rng: random.Random) -> str:
    """One or two random damages of ``path``; their description."""
    done = []
    for _ in range(rng.choice([1, 1, 2])):
        what = rng.random()
        if what < 0.15:  # bytes
            data = bytearray(path.read_bytes())
            if rng.random() < 0.5:
                data = data[: rng.randrange(len(data))]
                done.append(f"truncated to {len(data)} bytes")
            else:
                for _ in range(rng.randrange(1, 20)):
                    data[rng.randrange(len(data))] = rng.randrange(256)
                done.append("bytes flipped")
            path.write_bytes(bytes(data))
            return "; ".join(done)
        with h5py.File(path, "r+") as f:
            names: list[str] = []
            f.visit(names.append)
            objects = ["/"] + names
            target = rng.choice(objects)
            item = f[target]
            if what < 0.45 and len(item.attrs):  # an attribute: deleted or another value
                key = rng.choice(list(item.attrs))
                if rng.random() < 0.3:
                    del item.attrs[key]
                    done.append(f"{target}@{key} deleted")
                else:
                    value = _random_value(rng)
                    item.attrs[key] = value
                    done.append(f"{target}@{key} = {value!r}"[:80])
            elif what < 0.75 and isinstance(item, h5py.Dataset):  # a dataset: another shape, dtype or values
                values = item[()]
                del f[target]
                choice = rng.randrange(5)
                try:
                    if choice == 0:
                        new = np.zeros((3,) * max(1, np.ndim(values)), dtype=np.float64)
                    elif choice == 1:
                        new = np.asarray(values).astype(np.float64) + np.nan
                    elif choice == 2:
                        new = np.asarray(values).astype(np.int64) * -1 - 5
                    elif choice == 3:
                        new = np.asarray(values)[..., :-1] if np.ndim(values) else np.asarray(values)
                    else:
                        new = np.array(b"not an array")
                except (TypeError, ValueError):  # a text dataset: no numbers to change
                    new = np.zeros(2)
                f.create_dataset(target, data=new)
                done.append(f"{target} replaced ({choice})")
            elif target != "/":  # an item deleted
                del f[target]
                done.append(f"{target} deleted")
    return "; ".join(done) or "nothing"


def test_damaged_table_files_never_raise(tmp_path):
    rng = random.Random(350)
    np.savetxt(tmp_path / "rows.txt", np.arange(12) % 2, fmt="%d")
    np.savetxt(tmp_path / "cols.txt", np.arange(10) % 2, fmt="%d")
    statuses = []
    for case in range(300):
        path = tmp_path / f"t{case}.h5"
        shutil.copy(DATA / rng.choice(SAMPLES), path)
        what = _damage(path, rng)
        command = rng.random()
        if command < 0.6:
            args = ["info", str(path)] + (["--json"] if rng.random() < 0.4 else [])
        else:
            args = ["evaluate", str(path), "--rows", str(tmp_path / "rows.txt"), "--cols", str(tmp_path / "cols.txt")]
        statuses.append(_check(args, f"table {case} ({what})"))
        path.unlink()
    assert statuses.count(2) > 60 and statuses.count(0) > 10


# --------------------------------------------------------------------------- #
# Damaged releases and random specs                                           #
# --------------------------------------------------------------------------- #

@pytest.fixture(scope="module")
def release(tmp_path_factory):
    from lbm_bench.release import build_release

    folder = tmp_path_factory.mktemp("fuzz-release")
    (folder / "fuzz.toml").write_text(SPEC)
    report = build_release(folder / "fuzz.toml", folder / "release")
    assert report.ok, report.summary()
    return folder / "release"


def _json_damage(value, rng: random.Random):
    """``value`` (parsed JSON) with one random change somewhere inside."""
    if isinstance(value, dict) and value:
        key = rng.choice(list(value))
        roll = rng.random()
        if roll < 0.3:
            return {k: v for k, v in value.items() if k != key}
        if roll < 0.6:
            return {**value, key: rng.choice([None, -1, 1e308, "x", [], {}, True, "../../etc/passwd", 2**70])}
        return {**value, key: _json_damage(value[key], rng)}
    if isinstance(value, list) and value:
        index = rng.randrange(len(value))
        if rng.random() < 0.3:
            return value[:index] + value[index + 1:]
        return value[:index] + [_json_damage(value[index], rng)] + value[index + 1:]
    return rng.choice([None, 0, -5, 3.5, "?", [1], {"a": 1}, float("nan")])


def test_damaged_releases_never_raise(release, tmp_path):
    rng = random.Random(3500)
    files = sorted(p.relative_to(release) for p in release.rglob("*") if p.is_file())
    statuses = []
    for case in range(80):
        copy = tmp_path / f"r{case}"
        shutil.copytree(release, copy)
        target = copy / rng.choice(files)
        roll = rng.random()
        if target.name == "manifest.json" or roll < 0.3 and target.suffix == ".json":
            try:
                damaged = json.dumps(_json_damage(json.loads(target.read_text()), rng))
            except ValueError:
                damaged = "{"
            target.write_text(damaged)
        elif target.suffix == ".h5":
            _damage(target, rng)
        elif roll < 0.5:
            target.unlink()
        else:
            text = target.read_bytes()
            cut = rng.randrange(len(text) + 1)
            target.write_bytes(text[:cut] + rng.choice([b"", b"\x00\xff", b"\nzz  ../x\n", b"[[grid]]\nkinds=1\n"]))
        statuses.append(_check(["verify", str(copy)] + (["--against", str(release)] if rng.random() < 0.3 else []),
                               f"release {case} ({target.relative_to(copy)})"))
        shutil.rmtree(copy)
    assert statuses.count(1) + statuses.count(2) > 40


def _spec_damage(rng: random.Random) -> str:
    lines = SPEC.strip().splitlines()
    for _ in range(rng.choice([1, 1, 2, 3])):
        index = rng.randrange(len(lines))
        roll = rng.random()
        if roll < 0.25:
            del lines[index]
        elif roll < 0.7 and "=" in lines[index]:
            key = lines[index].split("=")[0]
            lines[index] = f"{key}= {rng.choice(_SPEC_VALUES)}"
        elif roll < 0.85:
            lines.insert(index, rng.choice(["[[grid]]", "[defaults]", "bogus = 1", "model_options = { missing = 0.5 }",
                                            "missing = 0.3", "categories = 300", "density = 0.9",
                                            "kinds = [\"categorical\"]"]))
        else:
            lines[index] = lines[index][: rng.randrange(len(lines[index]) + 1)]
        if not lines:
            break
    return "\n".join(lines) + "\n"


_SPEC_VALUES = ['"x"', "-1", "0", "1e400", "nan", "inf", "[]", "[1, 2]", '["9x9"]', '["0x5"]', '["2x2", "x"]',
                "true", "{}", "2.5", '"0.1"', "[0.0]", "[1.5]", "999999999999999999999", '["poisson", "bogus"]',
                '["gaussian", "gaussian"]', "1979-05-27", '["30x20"]', "[0.99]", '{ missing = 2 }']


def test_random_specs_never_raise(tmp_path, monkeypatch):
    """Specs damaged at random go through parsing, validation, the folder's lock and its claim;
    the tables themselves are not built (a stub: the loop is about the spec's checks)."""
    from lbm_bench.release import build as build_module

    monkeypatch.setattr(build_module, "_build_locked",
                        lambda spec, out, *args, **kw: build_module.BuildReport(out_dir=out))
    rng = random.Random(35000)
    statuses = []
    for case in range(1400):
        spec = tmp_path / f"s{case}.toml"
        spec.write_text(_spec_damage(rng), encoding="utf-8")
        statuses.append(_check(["build", str(spec), "--out", str(tmp_path / f"out{case % 7}"), "-q"]
                               + (["--force"] if rng.random() < 0.5 else []), f"spec {case}: {spec.read_text()!r}"))
    assert statuses.count(2) > 500 and statuses.count(0) > 30


def test_the_entry_point_answers_damaged_input_in_one_line(tmp_path):
    """The same through ``python -m lbm_bench.cli``: no traceback from the interpreter either."""
    path = tmp_path / "t.h5"
    shutil.copy(DATA / "table_v1_1.h5", path)
    with h5py.File(path, "r+") as f:
        f.attrs["n_rows"] = np.float64(5.5)
    (tmp_path / "rows.txt").write_text("0\n" * 11 + "1e400\n")
    (tmp_path / "spec.toml").write_text(SPEC.replace("n_samples = 200", "n_samples = [1]"))
    for args in (["info", str(path)], ["evaluate", str(DATA / "table_v1_1.h5"), "--rows", str(tmp_path / "rows.txt"),
                                       "--cols", str(tmp_path / "rows.txt")],
                 ["build", str(tmp_path / "spec.toml"), "--out", str(tmp_path / "out")],
                 ["verify", str(tmp_path)]):
        done = subprocess.run([sys.executable, "-m", "lbm_bench.cli", *args], capture_output=True, text=True)
        assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
        assert not any(word in done.stderr for word in FORBIDDEN), done.stderr
