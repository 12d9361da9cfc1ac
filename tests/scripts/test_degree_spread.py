"""scripts/checks/degree_spread.py: the KS statistics of generated tables against their source,
against each other and against the fitted model's draws (quick: 300 digits, two 150x100 sources,
10%, four draws)."""

import re
import subprocess
import sys

import pytest

from tests.scripts.helpers import SCRIPTS

NAME = "degree_spread"
SCRIPT = SCRIPTS / "checks" / f"{NAME}.py"
_SPREAD = r"[\d.]+ \([\d.]+-[\d.]+\)"


def test_quick_run_prints_the_three_distributions_per_source_and_side():
    pytest.importorskip("sklearn")
    done = subprocess.run([sys.executable, str(SCRIPT), "--quick"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.strip().splitlines()
    heads = [line.split(":")[0] for line in lines if not line.startswith(" ")]
    assert heads == ["digits", "poisson-effects", "gaussian"]
    scale1 = re.compile(rf"  scale 1  (rows|cols) src-s1 {_SPREAD}  s1-s1 {_SPREAD}  src-s1\* \(fitted labels\) "
                        rf"{_SPREAD}")
    side = re.compile(rf"    (rows|cols) src-gen {_SPREAD}  gen-gen {_SPREAD} q90 [\d.]+  sd source [\d.]+ gen [\d.]+  "
                      r"(typical|beyond \(median [\d.]+x the q90\))")
    assert sum(bool(scale1.fullmatch(line)) for line in lines) == 6
    assert sum(bool(side.fullmatch(line)) for line in lines) == 6
    assert sum(line.startswith("   10% scale ") for line in lines) == 3


def test_unknown_sources_are_refused_in_one_line():
    done = subprocess.run([sys.executable, str(SCRIPT), "--sources", "poisson,nope"], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 2 and "unknown sources ['nope']" in done.stderr
