"""The entry point of a timed fit's own process (lbm_bench.scoring.fit_process): the child
that ``benchmark --timeout`` starts prints nothing of its own."""

import subprocess
import sys

EXITS = """
import sys


def exits(X, g, m, *, rng):
    sys.exit(0)
"""


def test_a_timed_fit_prints_nothing_of_its_own(release, tmp_path):
    """The child runs a module the package does not import: running the one the package had
    imported (algorithm_call) made the interpreter print runpy's RuntimeWarning ("found in
    sys.modules") on every timed run, a second line beside the benchmark's one."""
    (tmp_path / "plugin.py").write_text(EXITS)
    done = subprocess.run([sys.executable, "-m", "lbm_bench.cli", "benchmark", str(release), "--algorithm",
                           f"{tmp_path / 'plugin.py'}:exits", "--out", str(tmp_path / "out"), "-q",
                           "--timeout", "60"], capture_output=True, text=True)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.strip().endswith("SystemExit: 0 (raised by the algorithm)")
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
