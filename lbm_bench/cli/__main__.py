"""``python -m lbm_bench.cli`` is the ``lbm-bench`` command."""

import sys

from lbm_bench.cli import main

if __name__ == "__main__":
    sys.exit(main())
