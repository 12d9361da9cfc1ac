"""Speed benchmarks (``lbm-bench bench``): each row prints a ratio against a baseline
run in the same process. Not imported by the library."""

__all__: list[str] = []
