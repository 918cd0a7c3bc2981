"""Memory checked before it is spent: the bytes a solver's arrays would take against what the
machine has, refused with an error that says how much and what to do instead (rather than the
operating system ending the process)."""

from __future__ import annotations

import os

__all__ = ["MemoryNeed", "available_bytes", "check_memory", "format_bytes", "square_bytes"]


def available_bytes() -> int | None:
    """Memory the process can still take: ``MemAvailable`` of ``/proc/meminfo`` where the system
    has it, else the physical memory (``os.sysconf``); None where neither is known."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return int(os.sysconf("SC_PHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, OSError, ValueError):
        return None


def square_bytes(n: int, copies: float = 1.0, itemsize: int = 8) -> int:
    """Bytes of ``copies`` dense ``n x n`` arrays of ``itemsize``-byte numbers."""
    return int(copies * itemsize * int(n) * int(n))


def format_bytes(nbytes: float) -> str:
    """``nbytes`` in the largest unit of 1024 that keeps it at least 1 (``1.5 GiB``)."""
    size = float(nbytes)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(size) < 1024.0 or unit == "TiB":
            return f"{size:.3g} {unit}" if unit != "B" else f"{int(size)} B"
        size /= 1024.0
    raise AssertionError  # the loop returns at TiB


class MemoryNeed(ValueError):
    """A ValueError for a problem or an option whose arrays would not fit in memory."""


def check_memory(nbytes: float, what: str, instead: str, available: int | None = None) -> None:
    """Raise :class:`MemoryNeed` (a ValueError) where ``nbytes`` exceed the memory available
    (:func:`available_bytes`, or ``available``); the message names ``what`` needs them, both sizes,
    and ``instead`` (what to do).  Unknown availability passes."""
    available = available_bytes() if available is None else available
    if available is not None and nbytes > available:
        raise MemoryNeed(f"{what} needs {format_bytes(nbytes)} of memory and {format_bytes(available)} is available: "
                         f"{instead}")
