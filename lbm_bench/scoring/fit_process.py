"""The entry point of a timed fit's own process: ``python -m lbm_bench.scoring.fit_process FD``.

``lbm-bench benchmark --timeout`` runs each plugged-in fit in a fresh interpreter
(:func:`~lbm_bench.scoring.algorithm_call.fit_labels`), which runs this module. It is a
module of its own, imported by nothing in the package: running a module as ``__main__``
that the package had already imported (``lbm_bench.scoring`` imports ``algorithm_call``)
made the interpreter warn on every timed run.
"""

from __future__ import annotations

import sys

from lbm_bench.scoring.algorithm_call import child_main

__all__: list[str] = []

if __name__ == "__main__":
    child_main(int(sys.argv[1]))
