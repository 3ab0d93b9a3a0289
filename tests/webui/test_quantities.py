"""Quantities as the pages show them: kubectl's units, never an exponent."""

from __future__ import annotations

import pytest

from webui.quantities import cpu, memory

GI = 1 << 30


@pytest.mark.parametrize(
    ("amount", "shown"),
    [
        (0, "0"),
        (512, "512"),
        (512 << 20, "512Mi"),
        (3 * GI // 2, "1.5Gi"),
        (16 * GI, "16Gi"),
        (199 * GI, "199Gi"),
        # A thousand nodes' free memory: once "1.06e+05Gi".
        (106_000 * GI, "104Ti"),
        (5 << 50, "5Pi"),
        (-3 * GI, "-3Gi"),
    ],
)
def test_memory_is_shown_in_the_largest_binary_unit_without_an_exponent(
    amount: int, shown: str
) -> None:
    assert memory(amount) == shown


@pytest.mark.parametrize(
    ("milli", "shown"),
    [
        (0, "0"),
        (500, "500m"),
        (1000, "1"),
        (1950, "1.95"),
        (99_500, "99.5"),
        (106_000_000, "106000"),
        (-250, "-250m"),
    ],
)
def test_cpu_is_shown_in_cores_or_millicores_without_an_exponent(milli: int, shown: str) -> None:
    assert cpu(milli) == shown
