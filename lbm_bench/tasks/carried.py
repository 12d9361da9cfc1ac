"""Settings of a process that every task carries to its worker.

Some choices hold for a whole call rather than for one function's arguments: which
kernel sums the sparse tables (``kernel=``, ``lbm-bench generate --kernel``) is one,
and it must hold in the workers too, which are other processes, started before the
call (loky keeps its workers for the next call) or on other machines (Dask). Such a
setting is set for a block of work with :func:`carrying` and read with
:func:`carried_value`; every task of :mod:`lbm_bench.tasks.pool` takes a copy of the
settings in force when it is handed over (:func:`carried_settings`) and runs under
them in its worker (:func:`carried_in`), nested calls included. A setting is a name
and a value (picklable); this module knows nothing of what they mean.

Examples
--------
>>> with carrying("answer", 42):
...     carried_value("answer")
42
>>> carried_value("answer") is None
True
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

__all__ = ["carried_in", "carried_settings", "carried_value", "carrying"]

#: The settings in force in this process, by name (the ones set; absent: not set).
_SETTINGS: dict[str, Any] = {}


def carried_value(name: str, default: Any = None) -> Any:
    """The value of the setting ``name`` in force, or ``default`` when it is not set."""
    return _SETTINGS.get(name, default)


def carried_settings() -> dict[str, Any]:
    """A copy of the settings in force, to be carried with a task (empty when none is set)."""
    return dict(_SETTINGS)


@contextlib.contextmanager
def carrying(name: str, value: Any) -> Iterator[None]:
    """Set ``name`` to ``value`` for the enclosed block, in this process and in the workers of
    the tasks it hands over; ``value=None`` leaves the setting as it is. The previous value
    comes back on exit."""
    if value is None:
        yield
        return
    had, previous = name in _SETTINGS, _SETTINGS.get(name)
    _SETTINGS[name] = value
    try:
        yield
    finally:
        if had:
            _SETTINGS[name] = previous
        else:
            _SETTINGS.pop(name, None)


@contextlib.contextmanager
def carried_in(settings: dict[str, Any]) -> Iterator[None]:
    """Run the enclosed block under the ``settings`` a task carried (:func:`carried_settings`
    of the process that handed it over)."""
    with contextlib.ExitStack() as stack:
        for name, value in settings.items():
            stack.enter_context(carrying(name, value))
        yield
