"""lbm_bench._interrupts: a Ctrl-C or SIGTERM told apart from the same exceptions raised by code."""

import os
import signal
import time

import pytest

from lbm_bench._interrupts import Terminated, handled, received, watching


def test_exceptions_raised_by_code_are_its_own():
    with watching() as watch:
        for exc in (SystemExit(0), KeyboardInterrupt(), ValueError("x"), type("Stop", (BaseException,), {})()):
            assert watch.raised_by_code(exc)
        assert not watch.raised_by_code(GeneratorExit())
        assert not watch.interrupted()


@pytest.fixture(autouse=True)
def pythons_own_sigint_handler():
    """Each test starts in a program with Python's own SIGINT handler (watching()'s case) and
    gives back the handler it found: pytest may start with SIGINT ignored (a background job of
    a non-interactive shell inherits SIG_IGN, as CI's runs did: a probe of every test's
    handlers found none changed, SIG_IGN from the start), and watching() then rightly leaves
    the signal alone."""
    outer = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, outer)


def _deliver(signum: int) -> None:
    """Send ``signum`` to this process and wait until Python runs its handler: with other
    threads alive in the test process (loky's executor manager after a parallel test), the
    kernel may hand the signal to one of them, and the main thread then runs the handler at
    its next check, not before ``os.kill`` returns. Returns after 5 s if nothing was raised."""
    os.kill(os.getpid(), signum)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        time.sleep(0.001)


def test_a_real_sigint_inside_the_block_is_an_interruption():
    with watching() as watch:
        with pytest.raises(KeyboardInterrupt) as caught:
            _deliver(signal.SIGINT)
        assert watch.interrupted() and not watch.raised_by_code(caught.value)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler and received()


def test_handled_makes_sigterm_raise_and_restores_the_handlers():
    before = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    with handled():
        with pytest.raises(Terminated):
            _deliver(signal.SIGTERM)
        assert issubclass(Terminated, KeyboardInterrupt)  # every cleanup written for Ctrl-C runs
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before


def test_handled_makes_sighup_stop_the_command_as_sigterm_does():
    """A closed terminal (SIGHUP) killed the command outright and left its loky workers for five
    minutes; it stops as for SIGTERM now, its cleanup run, its signal kept (exit 129). A SIGHUP
    ignored on entry (``nohup``) stays ignored."""
    before = signal.getsignal(signal.SIGHUP)
    with handled():
        with pytest.raises(Terminated) as caught:
            _deliver(signal.SIGHUP)
        assert caught.value.signal_number == signal.SIGHUP
    assert signal.getsignal(signal.SIGHUP) == before
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        with handled():
            assert signal.getsignal(signal.SIGHUP) == signal.SIG_IGN
    finally:
        signal.signal(signal.SIGHUP, before)


def test_the_command_line_starts_its_workers_with_the_resource_tracker_silenced(monkeypatch):
    """hide_tracker_reports adds one filter to PYTHONWARNINGS (once, keeping what was there):
    a child process, as loky's resource tracker is, then drops the tracker's leak reports of a
    killed pool and still shows other warnings."""
    import subprocess
    import sys

    from lbm_bench._interrupts import TRACKER_FILTER, hide_tracker_reports

    monkeypatch.setenv("PYTHONWARNINGS", "default")
    hide_tracker_reports()
    hide_tracker_reports()
    assert os.environ["PYTHONWARNINGS"] == f"default,{TRACKER_FILTER}"
    code = ("import warnings\n"
            "warnings.warn_explicit('There appear to be 1 leaked semlock objects', UserWarning, 'rt.py', 1,"
            " module='joblib.externals.loky.backend.resource_tracker')\n"
            "warnings.warn_explicit('another warning', UserWarning, 'x.py', 1, module='x')\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=dict(os.environ))
    assert "leaked" not in done.stderr and "another warning" in done.stderr
