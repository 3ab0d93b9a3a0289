"""Go's sort.Slice: a proper order sorts as any sort does; a comparison true both ways moves
elements exactly as Go's pdqsort does (upstream's victims without a start time)."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from schedviz.scheduler.gosort import _Sorter, sort_slice


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


@pytest.mark.parametrize("length", range(13))
def test_a_short_slice_makes_pdqsorts_comparisons_and_swaps(length: int) -> None:
    rng = random.Random(length)
    values = [rng.randint(0, 3) for _ in range(length)]
    answers = [rng.random() < 0.5 for _ in range(200)]

    def comparison(calls: list[tuple[int, int]]) -> Callable[[int, int], bool]:
        def less(a: int, b: int) -> bool:
            calls.append((a, b))
            # Not an order: an answer fixed by the call's position, true both ways at times.
            return answers[len(calls) % len(answers)]

        return less

    got, got_calls = list(values), []
    sort_slice(got, comparison(got_calls))
    want, want_calls = list(values), []
    _Sorter(want, comparison(want_calls)).pdqsort(0, length, length.bit_length())
    assert (got, got_calls) == (want, want_calls)
