"""scripts/checks/hostile_probes.py: the probes of issues 35 and 48 each give one line and exit 2, or
a correct result, and leave nothing behind (the quick groups here, issue 48's limits and readers
among them: the whole run, about four minutes, is the closing measurement of issues 35 and 48, and
it times evaluate, which no test does)."""

import subprocess
import sys

from tests.scripts.helpers import SCRIPTS

NAME = "hostile_probes"
SCRIPT = SCRIPTS / "checks" / f"{NAME}.py"


def _run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=1800)


#: Issue 48's probes in the quick groups (the limits group).
LIMITS = ("generate -o a FIFO --force", "generate -o a dangling link", "fit DATA -o DATA --force",
          "generate --seed 2**64", "generate -o t.csv (warned)", "fit --samples 1e8 --max-memory 2G",
          "evaluate 4e10 declared label sets", "show 4e10 declared label sets", "generate --scheduler notanaddress",
          "generate --design D --base-rate 2")


def test_the_quick_probes_hold():
    done = _run("--only", "info,messages,outputs,limits,readers")
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.strip().splitlines()
    assert lines[-1] == "0 probe(s) failed" and len(lines) >= 21 + 27  # 27 probes of the readers (issue 48)
    assert all(line.startswith("ok ") for line in lines[:-1])
    for name in LIMITS:  # issue 48's quick probes ran
        assert any(line.startswith(f"ok   {name} ") for line in lines), name


def test_an_unknown_group_is_refused():
    done = _run("--only", "nothing")
    assert done.returncode == 2 and "--only: no group nothing" in done.stderr
