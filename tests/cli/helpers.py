"""What the tests of the commands share: the checkout, a small table request and the command run
as a user would (a subprocess)."""

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SMALL = ["--kind", "bernoulli", "--shape", "30x24", "--clusters", "2x2", "--risk", "0.1",
         "--tolerance", "0.03", "--samples", "200", "--calibration-tables", "20", "--seed", "3"]


def run_cli(*args):
    """Run the installed entry point in a subprocess (as a user would)."""
    return subprocess.run([sys.executable, "-m", "lbm_bench.cli", *map(str, args)],
                          capture_output=True, text=True, cwd=REPO)
