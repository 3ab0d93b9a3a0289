"""Quantities as people read them, in the units kubectl writes: CPU in cores (``1.95``) or
millicores (``500m``), memory in binary units (``512Mi``, ``16Gi``, ``104Ti``). Never an
exponent: a domain of a thousand nodes reads ``104Ti``, not ``1.06e+05Gi``."""

from __future__ import annotations

MEMORY_UNITS = (
    ("Ei", 1 << 60),
    ("Pi", 1 << 50),
    ("Ti", 1 << 40),
    ("Gi", 1 << 30),
    ("Mi", 1 << 20),
    ("Ki", 1 << 10),
)


def cpu(milli: int) -> str:
    """Millicores: ``500m`` under one core, else cores to three decimals (``1.95``, ``2``)."""
    if milli < 0:
        return "-" + cpu(-milli)
    if milli < 1000 and milli % 1000:
        return f"{milli}m"
    return f"{milli / 1000:.3f}".rstrip("0").rstrip(".")


def memory(amount: int) -> str:
    """Bytes in the largest binary unit they fill, three significant digits at most (below
    100 of the unit) or whole units (``512Mi``, ``1.5Gi``, ``104Ti``); under 1Ki, bytes."""
    if amount < 0:
        return "-" + memory(-amount)
    for unit, size in MEMORY_UNITS:
        if amount >= size:
            value = amount / size
            shown = f"{value:.0f}" if value >= 100 else f"{value:.3g}"
            return f"{shown}{unit}"
    return str(amount)
