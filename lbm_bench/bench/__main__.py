"""``python -m lbm_bench.bench``: the Gibbs/MAP benchmark."""

from lbm_bench.bench.gibbs_map import main

if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
