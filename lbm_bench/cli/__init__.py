"""Command line: ``lbm-bench generate | fit | info | show | evaluate | build | verify | fetch |
benchmark``.

One module per command (``generate_command.py``, ...: its parser and its run), what they
share (``common.py``), the library's argument names as the flags spell them (``flags.py``)
and the program that parses, runs and prints (``program.py``).

Every error that comes from the user's input (a bad argument, a file that is not
a table, a target that cannot be reached) is printed as one line on stderr with a
non-zero exit status, never as a traceback.
"""

from lbm_bench.cli.program import build_parser, main

__all__ = ["build_parser", "main"]
