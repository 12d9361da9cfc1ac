"""Other CPUs, emulated on this one: numpy's and OpenBLAS's lower dispatch levels (issue 35).

numpy picks the SIMD loops of its ufuncs at import from what the CPU offers
(``numpy.lib.introspect.opt_func_info``), and OpenBLAS its kernels; both can be told
to use a lower level than the machine's: ``NPY_DISABLE_CPU_FEATURES`` names numpy's
dispatch targets to leave out (numpy 2.4 on x86-64: ``X86_V3``, ``X86_V4``,
``AVX512_ICL``, ``AVX512_SPR``; the baseline ``X86_V2`` is always there), and
``OPENBLAS_CORETYPE`` names OpenBLAS's kernel. A subprocess run with both computes
what a machine of that level computes with the same libraries (the C library's
functions excepted: glibc picks its own versions by CPU, see docs/releases.md).

``run_at_level(level, code)`` runs Python ``code`` so, from the repository root, and
returns what it printed as JSON, after checking that the level took: numpy's float64
``exp`` runs the level's loop, and every OpenBLAS loaded uses the level's kernel.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from pathlib import Path

from numpy.lib.introspect import opt_func_info

REPO = Path(__file__).resolve().parent.parent

#: Each level: numpy's targets left out, OpenBLAS's kernel, and the loop numpy's float64
#: exp then runs. "avx2": a CPU with AVX2 and FMA but no AVX-512 (numpy's X86_V3,
#: OpenBLAS's Haswell kernels, also those of AMD Zen); "baseline": numpy's baseline
#: loops (X86_V2) and OpenBLAS's SSE kernels.
LEVELS = {
    "avx2": ({"NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL AVX512_SPR", "OPENBLAS_CORETYPE": "Haswell"},
             "X86_V3"),
    "baseline": ({"NPY_DISABLE_CPU_FEATURES": "X86_V3 X86_V4 AVX512_ICL AVX512_SPR", "OPENBLAS_CORETYPE": "Nehalem"},
                 "baseline(X86_V2)"),
}

_REPORT = """
import json as _json
from numpy.lib.introspect import opt_func_info as _info
import scipy.linalg  # noqa: F401 - loads scipy's OpenBLAS too
try:
    from threadpoolctl import threadpool_info as _pools
    _cores = sorted({p.get("architecture") for p in _pools() if p.get("internal_api") == "openblas"})
except ImportError:
    _cores = None
print(_json.dumps({"exp": _info(func_name="^exp$", signature="^float64")["exp"]["dd"]["current"],
                   "openblas": _cores}))
"""


def native_exp_target() -> str:
    """The loop of numpy's float64 ``exp`` in this process ("X86_V4", "X86_V3", "baseline(X86_V2)")."""
    return opt_func_info(func_name="^exp$", signature="^float64")["exp"]["dd"]["current"]


def available_levels() -> list[str]:
    """The levels this machine can emulate: none off x86-64; "baseline" on any x86-64
    machine; "avx2" too on one with AVX2 and FMA (OpenBLAS's Haswell kernels need them)."""
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return []
    return ["avx2", "baseline"] if native_exp_target() in ("X86_V3", "X86_V4") else ["baseline"]


def level_environment(level: str) -> dict[str, str]:
    """This process's environment with the level's variables."""
    return {**os.environ, **LEVELS[level][0]}


def run_at_level(level: str, code: str, timeout: float = 600) -> object:
    """Run ``code`` (which prints one JSON value, last) in a Python subprocess at ``level``
    from the repository root; returns that value. AssertionError when the level did not
    take (numpy's exp in another loop, or OpenBLAS with another kernel)."""
    result = subprocess.run([sys.executable, "-c", code + "\n" + _REPORT], env=level_environment(level),
                            cwd=REPO, capture_output=True, text=True, timeout=timeout)
    assert result.returncode == 0, f"at level {level}:\n{result.stderr[-3000:]}"
    *_, value, report = result.stdout.strip().splitlines()
    report = json.loads(report)
    environment, exp_target = LEVELS[level]
    assert report["exp"] == exp_target, f"numpy's exp ran {report['exp']} at level {level}"
    assert not report["openblas"] or report["openblas"] == [environment["OPENBLAS_CORETYPE"]], report["openblas"]
    return json.loads(value)
