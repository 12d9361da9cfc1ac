"""The program (lbm_bench.cli.program): the parser of every command, one-line errors with a
non-zero exit whatever the command, the exit statuses of a closed pipe and of signals, ``python -m``."""

import os
import subprocess
import sys

import pytest

from lbm_bench.cli import main
from tests.cli.helpers import REPO, run_cli


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
    result = run_cli(*args)
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) >= 1 and message in result.stderr
    if not args[0] == "generate" or "expected two integers" not in message:
        assert len(lines) == 1, result.stderr
    assert not (REPO / "x.h5").exists()


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


def test_an_error_line_names_the_commands_flags_once():
    """The one place where a refusal's Python arguments become the command's flags: a refusal and
    a run that could not complete with the command's arguments, a record's refusal with its
    fields, an OS error in words."""
    import errno

    from lbm_bench.cli.flags import OptionsError
    from lbm_bench.cli.program import error_line

    refusal = ValueError("target_risk=0.95 cannot\n be reached")
    assert error_line("generate", refusal, ["target_risk"]) == (
        "lbm-bench generate: error: --risk 0.95 cannot be reached")
    failure = RuntimeError("refused: more than max_size (1 KiB)")
    assert error_line("fetch", failure, ["max_size"]) == (
        "lbm-bench fetch: error: refused: more than --max-size (1 KiB)")
    assert error_line("info", ValueError("jobs must be >= 1, got 0")) == (
        "lbm-bench info: error: jobs must be >= 1, got 0")  # a name not passed on is left as it is
    options = OptionsError("n_chains (40) exceeds n_samples (30)", ["n_samples", "n_chains"])
    assert error_line("generate", options) == (
        "lbm-bench generate: error: --chains (40) exceeds --samples (30)")
    missing = FileNotFoundError(errno.ENOENT, "No such file or directory", "t.h5")
    assert error_line("info", missing) == "lbm-bench info: error: t.h5: no such file or directory"
