"""``python -m lbm_bench`` is the ``lbm-bench`` command (handy under a profiler:
``python -m cProfile -s tottime -m lbm_bench generate ...``)."""

import sys

from lbm_bench.cli import main

if __name__ == "__main__":
    sys.exit(main())
