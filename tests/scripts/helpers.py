"""Running the scripts of ``scripts/benchmarks/`` and ``scripts/figures/`` as a user does.

Two ways, both as scripts/README.md describes them:

* :func:`run_script`: ``python scripts/<folder>/<name>.py ARGS`` in a subprocess, from
  another working directory (the scripts find their sibling modules by themselves);
* :func:`load_script`: import the file by its path (what the script's own
  ``sys.path`` line makes work), to call its functions and check their values.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = ROOT / "scripts"
#: Seconds a smoke run may take before the test fails (they take a few seconds).
TIMEOUT = 300


def script_path(folder: str, name: str) -> Path:
    """``scripts/<folder>/<name>.py``, checked to exist."""
    path = SCRIPTS / folder / f"{name}.py"
    assert path.is_file(), path
    return path


def run_script(folder: str, name: str, *args: str, cwd: Path | None = None,
               check: bool = True) -> subprocess.CompletedProcess:
    """Run ``python scripts/<folder>/<name>.py ARGS`` (from ``cwd``, by default the
    checkout's parent: not the checkout, so that nothing relies on the working directory)."""
    result = subprocess.run([sys.executable, str(script_path(folder, name)), *map(str, args)],
                            cwd=cwd or ROOT.parent, capture_output=True, text=True, timeout=TIMEOUT)
    if check:
        assert result.returncode == 0, f"{name} {' '.join(map(str, args))} failed:\n{result.stderr}"
    return result


def load_script(folder: str, name: str) -> ModuleType:
    """Import ``scripts/<folder>/<name>.py`` by its path, under its own name (so that a
    sibling importing it by name gets the same module)."""
    path = script_path(folder, name)
    loaded = sys.modules.get(name)
    if loaded is not None and Path(getattr(loaded, "__file__", "")).resolve() == path:
        return loaded
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module
