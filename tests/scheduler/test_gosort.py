"""Go's sort.Slice: a proper order sorts as any sort does; a comparison true both ways moves
elements exactly as Go's pdqsort does (upstream's victims without a start time)."""

from __future__ import annotations

import random

import pytest

from schedviz.scheduler.gosort import sort_slice


@pytest.mark.parametrize("length", [0, 1, 2, 7, 12, 13, 40, 49, 50, 51, 200, 1000])
def test_a_strict_order_sorts_like_sorted(length: int) -> None:
    rng = random.Random(length)
    for values in (
        [rng.randint(0, 30) for _ in range(length)],
        list(range(length)),
        list(range(length, 0, -1)),
        [5] * length,
    ):
        got = list(values)
        sort_slice(got, lambda a, b: a < b)
        assert got == sorted(values)


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        # Insertion sort (<= 12 elements) swaps every adjacent pair it looks at: a reversal.
        (["a", "b"], ["b", "a"]),
        (["a", "b", "c"], ["c", "b", "a"]),
        (list("abcdefghijkl"), list("lkjihgfedcba")),
    ],
)
def test_a_comparison_true_both_ways_reverses_short_slices(
    values: list[str], expected: list[str]
) -> None:
    sort_slice(values, lambda a, b: True)
    assert values == expected


def test_a_comparison_true_both_ways_on_a_long_slice_keeps_every_element() -> None:
    values = list(range(100))
    sort_slice(values, lambda a, b: True)
    assert sorted(values) == list(range(100))
