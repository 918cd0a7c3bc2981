"""Memory checked before it is spent."""

import pytest

from cvxclust._memory import MemoryNeed, available_bytes, check_memory, format_bytes, square_bytes


def test_refusal_names_the_need_the_availability_and_the_remedy():
    with pytest.raises(ValueError, match=r"dense X of order 100000 needs 74.5 GiB of memory and 16 GiB is "
                                         r"available: use method='lowrank'") as info:
        check_memory(square_bytes(100_000), "a dense X of order 100000", "use method='lowrank'",
                     available=16 * 1024 ** 3)
    assert isinstance(info.value, MemoryNeed)


def test_what_fits_passes_and_unknown_availability_passes(monkeypatch):
    check_memory(square_bytes(100, copies=3), "three copies", "-", available=10 ** 6)
    monkeypatch.setattr("cvxclust._memory.available_bytes", lambda: None)
    check_memory(10 ** 30, "anything", "-")


def test_the_machine_reports_its_memory_and_sizes_read_well():
    assert available_bytes() is None or available_bytes() > 0
    assert format_bytes(512) == "512 B" and format_bytes(1536) == "1.5 KiB"
    assert square_bytes(1000, copies=2.5) == 20_000_000
