"""Interruptions of the program (Ctrl-C, SIGTERM, SIGHUP) told apart from exceptions that code
raises.

A plugged-in algorithm may raise ``SystemExit`` or ``KeyboardInterrupt`` itself: that is
its failure, recorded as a failed run. A Ctrl-C or a ``kill`` sent to the program is the
user's (or the scheduler's) request to stop: it must stop the run. Both arrive as the
same exception classes, so the signal handlers of this module record that a signal came
(:func:`received`) before they raise:

* :func:`handled`, around the whole command of the command line: SIGINT raises
  ``KeyboardInterrupt``, and SIGTERM and SIGHUP (a closed terminal, a logged-out session)
  raise :class:`Terminated` (a ``KeyboardInterrupt``: every ``finally`` and cleanup written
  for Ctrl-C runs for a ``kill`` or a hang-up too, the workers stopped with the command,
  instead of the process dying with half-written output and its workers left running);
* :func:`watching`, around a call into foreign code: the same for SIGINT when Python's
  default handler is in place (a library user's program), and nothing otherwise.

The :class:`Watch` that :func:`watching` yields then says whether a ``BaseException`` caught
around foreign code was raised by that code (record it) or is an interruption (let it through).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Iterator

__all__ = [
    "Terminated", "Watch", "handled", "hide_tracker_reports", "hide_undeliverable_interrupts",
    "received", "watching"
]


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP, raised where the program was (:func:`handled`).

    Attributes
    ----------
    signal_number : int
        The signal (the command exits with 128 plus it, as a shell reports a killed tool).
    """

    def __init__(self, signal_number: int = signal.SIGTERM) -> None:
        super().__init__(signal_number)
        self.signal_number = int(signal_number)


#: The signals that stop a command as SIGTERM does (SIGHUP where the platform has it).
_TERMINATING = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP")
                     if hasattr(signal, name))


_received: list[int] = []


def received() -> bool:
    """Whether SIGINT, SIGTERM or SIGHUP reached this process through the handlers of this
    module."""
    return bool(_received)


def _on_interrupt(signum: int, frame: object) -> None:
    _received.append(signum)
    raise KeyboardInterrupt


def _on_terminate(signum: int, frame: object) -> None:
    _received.append(signum)
    raise Terminated(signum)


@contextlib.contextmanager
def handled() -> Iterator[None]:
    """Inside the block, SIGINT, SIGTERM and SIGHUP raise after recording the signal (main
    thread only; a SIGHUP ignored when the block starts, as under ``nohup``, stays ignored);
    the handlers in place before are restored after it."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    handlers = {signal.SIGINT: _on_interrupt}
    for signum in _TERMINATING:
        if signal.getsignal(signum) is not signal.SIG_IGN or signum == signal.SIGTERM:
            handlers[signum] = _on_terminate
    before = {signum: signal.getsignal(signum) for signum in handlers}
    for signum, handler in handlers.items():
        signal.signal(signum, handler)
    try:
        yield
    finally:
        for signum, handler in before.items():
            signal.signal(signum, handler)


class Watch:
    """What :func:`watching` yields: whether an exception caught inside its block is the
    watched code's own."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled  # a KeyboardInterrupt can be told apart: SIGINT is ours, or ignored
        self._start = len(_received)

    def interrupted(self) -> bool:
        """Whether SIGINT, SIGTERM or SIGHUP arrived since the block began."""
        return len(_received) > self._start

    def raised_by_code(self, exc: BaseException) -> bool:
        """Whether ``exc``, caught around foreign code, is that code's own (a failure to record):
        any exception but ``GeneratorExit`` and an interruption of this process (a signal that
        arrived in the block, or a ``KeyboardInterrupt`` when SIGINT cannot be told apart)."""
        if isinstance(exc, GeneratorExit):
            return False
        if isinstance(exc, KeyboardInterrupt):
            return self.enabled and not self.interrupted()
        return True


@contextlib.contextmanager
def watching() -> Iterator[Watch]:
    """Watch a call into foreign code: a SIGINT inside the block is recorded (Python's default
    handler, which raises ``KeyboardInterrupt``, is replaced by the recording one for the
    block, in the main thread); the :class:`Watch` yielded tells interruptions apart."""
    main = threading.current_thread() is threading.main_thread()
    handler = signal.getsignal(signal.SIGINT) if main else None
    if handler is not signal.default_int_handler:
        yield Watch(enabled=handler in (_on_interrupt, signal.SIG_IGN))
        return
    signal.signal(signal.SIGINT, _on_interrupt)
    try:
        yield Watch(enabled=True)
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)


#: The warnings filter that silences loky's resource tracker in the processes it is started in.
TRACKER_FILTER = "ignore::UserWarning:joblib.externals.loky.backend.resource_tracker"


def hide_tracker_reports() -> None:
    """loky's resource tracker, a process of its own started with the first workers, unlinks
    the semaphores of a pool killed by Ctrl-C or SIGTERM when the command exits, and may
    report them as leaked first ("There appear to be 1 leaked semlock objects", then
    FileNotFoundError for one the pool had unlinked already): two warnings after the
    command's one line, from a race between the pool's shutdown and the tracker, not a
    leak. The command line starts its tracker with that report silenced (the
    ``PYTHONWARNINGS`` its child processes inherit)."""
    current = os.environ.get("PYTHONWARNINGS", "")
    if TRACKER_FILTER not in current.split(","):
        os.environ["PYTHONWARNINGS"] = ",".join(part for part in (current, TRACKER_FILTER) if part)


def hide_undeliverable_interrupts() -> None:
    """A Ctrl-C that arrives while Python runs a finalizer (a weakref callback, a
    ``__del__``) cannot stop the program there, and Python prints it as "Exception
    ignored in ..." with a traceback. The command line shows an interrupt as one line,
    so it hides those; other exceptions raised in finalizers are shown as before."""
    hook = sys.unraisablehook
    if getattr(hook, "hides_interrupts", False):
        return

    def unraisable(info) -> None:
        if not isinstance(info.exc_value, KeyboardInterrupt):
            hook(info)

    unraisable.hides_interrupts = True
    sys.unraisablehook = unraisable
