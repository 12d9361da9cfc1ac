"""Giving freed memory back between stages and after tasks (lbm_bench.tasks.heap): unreachable
cycles are collected, the trim is called where glibc is, and nothing else changes."""

import gc
import sys
import weakref

import pytest

from lbm_bench.tasks import heap


class _Cycle:
    def __init__(self):
        self.me = self


def test_unreachable_cycles_are_collected_before_the_trim():
    gc.disable()  # only release_free_memory may collect the cycle
    try:
        ref = weakref.ref(_Cycle())
        assert ref() is not None  # a reference cycle outlives its last name
        heap.release_free_memory()
        assert ref() is None
    finally:
        gc.enable()


def test_without_collect_the_cycles_stay():
    gc.disable()
    try:
        ref = weakref.ref(_Cycle())
        heap.release_free_memory(collect=False)
        assert ref() is not None
    finally:
        gc.enable()
        gc.collect()


def test_the_trim_is_called_on_glibc_and_skipped_elsewhere(monkeypatch):
    calls = []

    class Libc:
        def malloc_trim(self, pad):
            calls.append(pad)
            return 1

    monkeypatch.setattr(heap, "_LIBC", Libc())
    assert heap.release_free_memory(collect=False) is True and calls == [0]
    monkeypatch.setattr(heap, "_LIBC", False)  # no glibc: nothing to call, no error
    assert heap.release_free_memory(collect=False) is False and calls == [0]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc_trim")
def test_the_real_libc_is_found_on_linux(monkeypatch):
    monkeypatch.setattr(heap, "_LIBC", None)
    assert heap.release_free_memory(collect=False) in (True, False)  # musl has no malloc_trim
    assert heap._LIBC is not None
