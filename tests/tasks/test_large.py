"""The large-table threshold (lbm_bench.tasks.large): one constant, asked through is_large."""

from lbm_bench.tasks import large
from lbm_bench.tasks.large import LARGE_TABLE_ENTRIES, is_large


def test_a_table_is_large_from_the_threshold_on():
    assert LARGE_TABLE_ENTRIES == 2**22
    assert is_large(2**11, 2**11) and is_large(2**22, 1) and is_large(10**6, 10**4)
    assert not is_large(2**11, 2**11 - 1) and not is_large(1, 2**22 - 1)


def test_is_large_reads_the_threshold_when_called(monkeypatch):
    """Tests lower the threshold in one place, and every decision follows (chains, MAP starts,
    the floor's descents, the build's spread, verify's large tables)."""
    monkeypatch.setattr(large, "LARGE_TABLE_ENTRIES", 600)
    assert is_large(30, 20) and not is_large(24, 24)
