"""scripts/checks/digits_degree_draws.py: the degrees of tables drawn from the digits' fitted
design, per choice of effects (quick: 300 images, 4x4 clusters, three draws at scale 1)."""

import re
import subprocess
import sys

import pytest

from tests.scripts.helpers import SCRIPTS

NAME = "digits_degree_draws"
SCRIPT = SCRIPTS / "checks" / f"{NAME}.py"


def test_quick_run_prints_one_line_per_choice_of_effects():
    pytest.importorskip("sklearn")
    done = subprocess.run([sys.executable, str(SCRIPT), "--quick"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.strip().splitlines()
    assert lines[0].startswith("source mean count ")
    pattern = re.compile(r"scale 1 effects (fitted|pooled|none) *: mean count [\d.]+-[\d.]+; KS rows median [\d.]+ "
                         r"\([\d.]+-[\d.]+\), columns median [\d.]+ \([\d.]+-[\d.]+\)")
    assert [pattern.fullmatch(line).group(1) for line in lines[1:]] == ["fitted", "pooled", "none"]
