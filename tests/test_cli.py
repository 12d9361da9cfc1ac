"""The command line: round trips and one-line errors with a non-zero exit."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from lbm_bench import load_table
from lbm_bench.cli import main

REPO = Path(__file__).resolve().parents[1]
SMALL = ["--kind", "bernoulli", "--shape", "30x24", "--clusters", "2x2", "--risk", "0.1",
         "--tolerance", "0.03", "--samples", "200", "--calibration-tables", "20", "--seed", "3"]


@pytest.fixture(scope="module")
def table_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("cli") / "t.h5"
    assert main(["generate", *SMALL, "-o", str(path)]) == 0
    return path


def _run(*args):
    """Run the installed entry point in a subprocess (as a user would)."""
    return subprocess.run([sys.executable, "-m", "lbm_bench.cli", *map(str, args)],
                          capture_output=True, text=True, cwd=REPO)


def test_generate_writes_a_table_and_prints_a_summary(table_file, capsys):
    table = load_table(table_file)
    assert table.data.shape == (30, 24) and table.seed == 3
    assert table.criterion == "bayes" and abs(table.bayes_risk.risk - 0.1) <= 0.03
    assert main(["info", str(table_file)]) == 0
    out = capsys.readouterr().out
    assert "bernoulli table 30x24" in out and "seed 3" in out
    assert "floor (Bayes labels for l_item" in out and "Gibbs risk of the MAP labels" in out
    assert main(["info", "--json", str(table_file)]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["n_rows"] == 30 and info["criterion"] == "bayes" and info["format_version"] == "1.1"
    assert info["bayes_risk"] == table.bayes_risk.risk and info["risk"] == table.risk.risk


def test_info_json_is_strict_json(table_file, capsys):
    """JSON has no NaN: a value that is not a number (here the rejection's balance, not
    measured for this table) is printed as null, which every JSON parser reads."""
    assert load_table(table_file).rejection.balance is None  # stored as NaN
    assert main(["info", "--json", str(table_file)]) == 0

    def refuse(constant):
        raise ValueError(f"{constant} is not JSON")

    info = json.loads(capsys.readouterr().out, parse_constant=refuse)
    assert info["balance"] is None and info["n_rows"] == 30


def test_evaluate_text_and_npy(table_file, tmp_path, capsys):
    table = load_table(table_file)
    rows, cols = tmp_path / "rows.txt", tmp_path / "cols.npy"
    rows.write_text("\n".join(str(v + 1) for v in table.map_rows) + "\n")  # 1-based, as R writes
    np.save(cols, table.map_cols)
    assert main(["evaluate", str(table_file), "--rows", str(rows), "--cols", str(cols), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["risk"] == pytest.approx(table.risk.risk, abs=1e-12)
    assert report["map_excess_risk"] == pytest.approx(0.0, abs=1e-12)
    assert report["bayes_risk"] == table.bayes_risk.risk and report["map_risk"] == table.risk.risk
    assert report["excess_risk"] == pytest.approx(table.risk.risk - table.bayes_risk.risk, abs=1e-12)
    assert report["reference"] == "bayes" and report["note"] == ""
    assert main(["evaluate", str(table_file), "--rows", str(rows), "--cols", str(cols)]) == 0
    out = capsys.readouterr().out
    assert "excess risk" in out and "floor (Bayes, l_item)" in out and "MAP labels (paper)" in out


def test_evaluate_a_format_1_0_file_says_it_has_no_floor(tmp_path, capsys):
    sample = REPO / "tests" / "data" / "table_v1.h5"
    table = load_table(sample)
    rows, cols = tmp_path / "rows.txt", tmp_path / "cols.txt"
    rows.write_text("\n".join(map(str, table.map_rows)))
    cols.write_text("\n".join(map(str, table.map_cols)))
    assert main(["evaluate", str(sample), "--rows", str(rows), "--cols", str(cols), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["reference"] == "map" and "no floor" in report["note"]
    assert report["bayes_risk"] == report["map_risk"] == table.risk.risk
    assert main(["evaluate", str(sample), "--rows", str(rows), "--cols", str(cols)]) == 0
    out = capsys.readouterr().out
    assert "note: format 1.0 file: no floor stored" in out and "reference (MAP; no floor)" in out


@pytest.mark.parametrize(
    "args, message",
    [
        (["generate", "--kind", "gaussian", "--shape", "20", "--clusters", "2x2", "--risk", "0.1", "-o", "x.h5"],
         "expected two integers"),
        (["generate", "--kind", "gaussian", "--shape", "20x20", "--clusters", "2x2", "--risk", "0.95", "-o", "x.h5"],
         "cannot be reached"),
        (["generate", "--kind", "gaussian", "--shape", "20x20", "--clusters", "2x2", "--risk", "5.5", "-o", "x.h5"],
         "error: --risk must lie in (0, 1), got 5.5"),  # the request's arguments named as flags (issue 35)
        (["generate", "--kind", "gaussian", "--shape", "20x20", "--clusters", "2x2", "--risk", "0.1",
          "--samples", "0", "-o", "x.h5"], "--samples must be >= 1"),
        (["generate", "--kind", "gaussian", "--shape", "20x20", "--clusters", "2x2", "--risk", "0.1",
          "-o", "no/such/dir/x.h5"], "does not exist"),
        (["generate", "--kind", "bernoulli", "--shape", "20x20", "--clusters", "2x2", "--risk", "0.1",
          "--density", "0.05", "--effects", "-o", "x.h5"], "error: --effects is defined for the poisson kind"),
        (["generate", "--kind", "gaussian", "--shape", "20x20", "--clusters", "2x2", "--risk", "0.1",
          "--density", "0.05", "-o", "x.h5"], "error: --density is defined for the poisson and bernoulli kinds"),
        (["generate", "--kind", "poisson", "--shape", "20x20", "--clusters", "2x2", "--risk", "0.1",
          "--effects", "--effects-spread", "-1", "-o", "x.h5"], "--effects-spread must be finite"),
        (["info", "README.md"], "README.md"),
        (["info", "missing.h5"], "missing.h5"),
        (["build", "missing.toml", "--out", "x"], "does not exist"),
        (["verify", "."], "no manifest.json"),
        (["verify", ".", "--jobs", "0"], "--jobs must be >= 1, got 0"),
        (["benchmark", ".", "--algorithm", "nosuch", "--out", "x"], "nosuch"),
    ],
)
def test_errors_are_one_line(args, message):
    result = _run(*args)
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) >= 1 and message in result.stderr
    if not args[0] == "generate" or "expected two integers" not in message:
        assert len(lines) == 1, result.stderr
    assert not (REPO / "x.h5").exists()


def test_evaluate_errors(table_file, tmp_path):
    bad = tmp_path / "rows.txt"
    bad.write_text("0\n1\n")
    good = tmp_path / "cols.txt"
    good.write_text("\n".join("0" for _ in range(24)))
    result = _run("evaluate", table_file, "--rows", bad, "--cols", good)
    assert result.returncode == 2 and "rows must have length 30" in result.stderr
    bad.write_text("a\nb\nc\n")
    result = _run("evaluate", table_file, "--rows", bad, "--cols", good)
    assert result.returncode == 2 and "not an integer label" in result.stderr
    result = _run("evaluate", REPO / "pyproject.toml", "--rows", good, "--cols", good)
    assert result.returncode == 2 and "Traceback" not in result.stderr


def test_generate_sparse_poisson_with_effects_and_their_spread(tmp_path, capsys):
    """--density, --effects and --effects-spread (issue 16, item 1) reach the model and the file."""
    from scipy import sparse

    path = tmp_path / "p.h5"
    assert main(["generate", "--kind", "poisson", "--shape", "240x160", "--clusters", "2x2", "--risk", "0.1",
                 "--tolerance", "0.04", "--samples", "200", "--calibration-tables", "5", "--seed", "4",
                 "--density", "0.05", "--effects", "--effects-spread", "0.6", "-q", "-o", str(path)]) == 0
    table = load_table(path)
    assert isinstance(table.data, sparse.csr_array) and table.data.nnz / (240 * 160) == pytest.approx(0.05, rel=0.3)
    assert table.options["model_options"] == {"density": 0.05, "effects": True, "effects_spread": 0.6}
    assert table.model.row_effects.shape == (240,) and table.model.col_effects.shape == (160,)
    assert 0.4 < np.std(np.log(table.model.row_effects)) < 0.8  # the spread, not the default 0.3
    assert main(["info", str(path)]) == 0
    assert "poisson table 240x160, 2x2 clusters, seed 4, sparse:" in capsys.readouterr().out


def test_generate_refuses_to_overwrite(table_file):
    before = table_file.read_bytes()
    result = _run("generate", *SMALL, "-o", table_file)
    assert result.returncode == 2 and "exists" in result.stderr
    assert table_file.read_bytes() == before


def test_generate_never_replaces_a_file_created_meanwhile(tmp_path, monkeypatch, capsys):
    """Two ``generate -o same.h5`` at once: the one that finishes second must not replace
    the first one's table (the file appears after the up-front check)."""
    import lbm_bench.storage.writer as writer

    out = tmp_path / "same.h5"
    write = writer._write_image

    def the_other_process_finishes_first(image, temporary):
        out.write_bytes(b"the other table")
        write(image, temporary)

    monkeypatch.setattr(writer, "_write_image", the_other_process_finishes_first)
    assert main(["generate", *SMALL, "-q", "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err == (f"lbm-bench generate: error: output {out} was created by another process meanwhile; "
                   "not replaced (use --force to overwrite)\n")
    assert out.read_bytes() == b"the other table" and [p.name for p in tmp_path.iterdir()] == ["same.h5"]
    assert main(["generate", *SMALL, "-q", "--force", "-o", str(out)]) == 0  # --force replaces
    assert load_table(out).seed == 3


@pytest.mark.skipif(sys.platform == "win32", reason="RLIMIT_FSIZE is POSIX")
def test_generate_under_a_file_size_limit_says_so_in_one_line(tmp_path):
    """``ulimit -f`` below the table's size: one line in words, exit 2, no file left
    (HDF5 used to print its internals over two lines, then crash at exit)."""
    import resource

    def limit_file_size():
        resource.setrlimit(resource.RLIMIT_FSIZE, (10_000, resource.RLIM_INFINITY))

    out = tmp_path / "big.h5"
    done = subprocess.run([sys.executable, "-m", "lbm_bench.cli", "generate", *SMALL, "-q", "-o", str(out)],
                          capture_output=True, text=True, cwd=REPO, preexec_fn=limit_file_size, timeout=300)
    assert done.returncode == 2, done.stderr[-2000:]
    assert done.stderr == (f"lbm-bench generate: error: could not write {out}: file too large "
                           "(over the file-size limit of this process, see ulimit -f)\n")
    assert list(tmp_path.iterdir()) == []


def test_an_interrupt_inside_a_finalizer_is_not_shown_as_a_traceback(monkeypatch):
    """Ctrl-C while Python runs a weakref callback cannot stop the program there; Python
    would print "Exception ignored in ..." and a traceback under "interrupted"."""
    from types import SimpleNamespace

    from lbm_bench._interrupts import hide_undeliverable_interrupts

    shown = []
    monkeypatch.setattr(sys, "unraisablehook", shown.append)
    hide_undeliverable_interrupts()
    hide_undeliverable_interrupts()  # once only, however many times main runs
    interrupt, other = SimpleNamespace(exc_value=KeyboardInterrupt()), SimpleNamespace(exc_value=ValueError("x"))
    sys.unraisablehook(interrupt)
    sys.unraisablehook(other)
    assert shown == [other]


def test_a_reader_that_closes_the_pipe_stops_the_command_quietly(table_file):
    """``lbm-bench info T | head -1``: when the reader has gone, the command stops with the
    shell's status for SIGPIPE (141) and no "Broken pipe" error or traceback."""
    proc = subprocess.Popen([sys.executable, "-m", "lbm_bench.cli", "info", str(table_file)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO)
    proc.stdout.close()  # before the interpreter has started: its first write meets a closed pipe
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141
    assert err == ""


def test_version_and_help(capsys):
    for args in (["--version"], *([c, "--help"] for c in
                 ("generate", "info", "evaluate", "build", "verify", "benchmark"))):
        with pytest.raises(SystemExit) as exc:
            main(args)
        assert exc.value.code == 0
    assert "usage: lbm-bench build" in capsys.readouterr().out


def test_speed_benchmarks_are_not_a_command(capsys):
    """The speed benchmarks are scripts of the checkout (scripts/benchmarks/), not in the wheel."""
    with pytest.raises(SystemExit) as exc:
        main(["bench", "--quick"])
    assert exc.value.code == 2 and "invalid choice: 'bench'" in capsys.readouterr().err


def test_python_dash_m_runs_the_cli():
    import subprocess
    import sys

    import lbm_bench

    result = subprocess.run([sys.executable, "-m", "lbm_bench", "--version"], capture_output=True, text=True)
    assert result.returncode == 0 and lbm_bench.__version__ in result.stdout + result.stderr


@pytest.mark.parametrize("option, message", [
    (["--missing", "1"], "--missing must lie in [0, 1), got 1.0"),
    (["--missing", "-0.1"], "--missing must lie in [0, 1), got -0.1"),
    (["--missing", "nan"], "--missing must lie in [0, 1), got nan"),
    (["--missing-mechanism", "block"], "--missing-mechanism is set but --missing is 0"),
    (["--missing", "0.3", "--missing-mechanism", "mnar"], "--missing-mechanism must be one of"),
    (["--missing", "0.97"], "cannot be reached with 97% of the entries missing"),
    (["--missing", "0.2", "--density", "0.1"], "--missing=0.2 is more than --density=0.1"),
])
def test_bad_missing_options_are_one_line_exit_2_nothing_written(option, message, tmp_path):
    out = tmp_path / "t.h5"
    result = _run("generate", *SMALL, *option, "-o", out)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and "Traceback" not in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_missing_entries_through_the_command_line(tmp_path, capsys):
    out = tmp_path / "m.h5"
    assert main(["generate", *SMALL, "--missing", "0.3", "--missing-mechanism", "block", "-o", str(out), "-q"]) == 0
    table = load_table(out)
    assert table.missing_mechanism == "block" and np.isnan(table.data).any()
    assert main(["info", str(out)]) == 0
    assert "missing entries: " in capsys.readouterr().out
    assert main(["info", "--json", str(out)]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["format_version"] == "1.3" and info["missing_mechanism"] == "block"
    assert info["missing_fraction"] == info["n_missing"] / (30 * 24)


def test_evaluate_refuses_a_complete_table_holding_nan(table_file, tmp_path):
    import shutil

    import h5py

    bad = tmp_path / "nan.h5"
    shutil.copyfile(table_file, bad)
    with h5py.File(bad, "r+") as f:  # a Bernoulli table cannot even hold NaN: write a Gaussian one's
        data = f["data"][()].astype(np.float64)
        data[0, 0] = np.nan
        del f["data"]
        f.create_dataset("data", data=data)
        f.attrs["kind"] = "gaussian"
    rows = tmp_path / "rows.txt"
    rows.write_text("\n".join("0" for _ in range(30)))
    result = _run("evaluate", bad, "--rows", rows, "--cols", rows)
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1
    assert "NaN" in result.stderr and "stores 0 there, under its observed mask" in result.stderr


_WRITERS = {
    "generate": lambda out, force: ["generate", "--kind", "gaussian", "--shape", "3000x2000", "--clusters", "3x2",
                                    "--risk", "0.1", "-q", "-o", str(out)] + (["--force"] if force else []),
    "show": lambda out, force: ["show", str(REPO / "tests" / "data" / "table_v1.h5"), "-o", str(out)]
                               + (["--force"] if force else []),
    "build": lambda out, force: ["build", str(REPO / "repository" / "mini.toml"), "--out", str(out), "-q"],
    "benchmark": lambda out, force: ["benchmark", str(REPO / "tests" / "data"), "--algorithm", "cem", "--out",
                                     str(out), "-q"],
    "fetch": lambda out, force: ["fetch", "https://example.invalid/r.tar.gz", "--cache", str(out), "-q"],
    "fit": lambda out, force: ["fit", str(REPO / "tests" / "data" / "table_v1.h5"), "-o", str(out), "-q"]
                              + (["--force"] if force else []),
}


@pytest.mark.parametrize("command", sorted(_WRITERS))
def test_an_unwritable_output_is_refused_before_the_work(command, tmp_path, capsys, monkeypatch):
    """A parent that is a file, a directory where a file goes (even with --force), a folder where
    no file can be created (a read-only file system): one line, exit 2, at once (generate's
    3000x2000 table would take minutes), nothing written, no [Errno N]."""
    import errno
    import time

    from lbm_bench import _atomic

    (tmp_path / "afile").write_text("a file")
    (tmp_path / "adir").mkdir()
    files = command in ("generate", "show", "fit")
    cases = [(tmp_path / "afile" / "out", "afile is a file, not a folder")]
    cases.append((tmp_path / "adir", "is a directory") if files else (tmp_path / "afile", "is a file, not a folder"))
    for out, words in cases:
        start = time.perf_counter()
        assert main(_WRITERS[command](out, True)) == 2
        err = capsys.readouterr().err
        assert words in err and len(err.strip().splitlines()) == 1 and "Errno" not in err
        assert time.perf_counter() - start < 20
    real_open = os.open

    def read_only(path, flags, *args):
        if ".probe-" in str(path):
            raise OSError(errno.EROFS, "Read-only file system", str(path))
        return real_open(path, flags, *args)

    monkeypatch.setattr(_atomic.os, "open", read_only)
    assert main(_WRITERS[command](tmp_path / "ro" / "out" if not files else tmp_path / "out.h5", False)) == 2
    err = capsys.readouterr().err
    assert err.strip().endswith("cannot be written: read-only file system") and "Errno" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["adir", "afile"]
