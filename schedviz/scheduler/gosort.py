"""Go's ``sort.Slice``, comparison for comparison and swap for swap.

Mirrors src/sort/zsortfunc.go and sort.go of the Go release kube-scheduler v1.34 is built with
(pattern-defeating quicksort: insertion sort up to 12 elements, ninther pivots, heapsort
fallback, ``breakPatterns`` with the xorshift seeded by the length). Upstream sorts with
``sort.Slice`` where the comparison is not a strict weak order: ``MoreImportantPod`` is true both
ways for two pods of equal priority without ``status.startTime`` (``GetPodStartTime`` returns
``time.Now()`` for each). Python's stable sort would keep such pods in place; Go's algorithm
moves them, and which pod is preempted depends on that. Only the exact algorithm gives
upstream's order.
"""

from __future__ import annotations

from collections.abc import Callable, MutableSequence
from typing import TypeVar

T = TypeVar("T")

_MAX_INSERTION = 12
_SHORTEST_NINTHER = 50
_MAX_SWAPS = 4 * 3
_SHORTEST_SHIFTING = 50
_PARTIAL_MAX_STEPS = 5
_UNKNOWN, _INCREASING, _DECREASING = 0, 1, 2
_MASK64 = (1 << 64) - 1


def sort_slice(data: MutableSequence[T], less: Callable[[T, T], bool]) -> None:
    """Sorts ``data`` in place as ``sort.Slice(data, less)`` does."""
    length = len(data)
    if length <= _MAX_INSERTION:
        # What pdqsort does with a short slice, written out (most slices sorted are short).
        for i in range(1, length):
            j = i
            while j > 0 and less(data[j], data[j - 1]):
                data[j], data[j - 1] = data[j - 1], data[j]
                j -= 1
        return
    _Sorter(data, less).pdqsort(0, length, length.bit_length())


class _Sorter:
    __slots__ = ("data", "less_items")

    def __init__(self, data: MutableSequence[T], less: Callable[[T, T], bool]) -> None:
        self.data: MutableSequence[object] = data  # type: ignore[assignment]
        self.less_items: Callable[[object, object], bool] = less  # type: ignore[assignment]

    def less(self, i: int, j: int) -> bool:
        return self.less_items(self.data[i], self.data[j])

    def swap(self, i: int, j: int) -> None:
        data = self.data
        data[i], data[j] = data[j], data[i]

    def insertion_sort(self, a: int, b: int) -> None:
        for i in range(a + 1, b):
            j = i
            while j > a and self.less(j, j - 1):
                self.swap(j, j - 1)
                j -= 1

    def sift_down(self, lo: int, hi: int, first: int) -> None:
        root = lo
        while True:
            child = 2 * root + 1
            if child >= hi:
                return
            if child + 1 < hi and self.less(first + child, first + child + 1):
                child += 1
            if not self.less(first + root, first + child):
                return
            self.swap(first + root, first + child)
            root = child

    def heap_sort(self, a: int, b: int) -> None:
        first, lo, hi = a, 0, b - a
        for i in range((hi - 1) // 2, -1, -1):
            self.sift_down(i, hi, first)
        for i in range(hi - 1, -1, -1):
            self.swap(first, first + i)
            self.sift_down(lo, i, first)

    def pdqsort(self, a: int, b: int, limit: int) -> None:
        was_balanced = True
        was_partitioned = True
        while True:
            length = b - a
            if length <= _MAX_INSERTION:
                self.insertion_sort(a, b)
                return
            if limit == 0:
                self.heap_sort(a, b)
                return
            if not was_balanced:
                self.break_patterns(a, b)
                limit -= 1
            pivot, hint = self.choose_pivot(a, b)
            if hint == _DECREASING:
                self.reverse_range(a, b)
                pivot = (b - 1) - (pivot - a)
                hint = _INCREASING
            likely_sorted = was_balanced and was_partitioned and hint == _INCREASING
            if likely_sorted and self.partial_insertion_sort(a, b):
                return
            if a > 0 and not self.less(a - 1, pivot):
                a = self.partition_equal(a, b, pivot)
                continue
            mid, already_partitioned = self.partition(a, b, pivot)
            was_partitioned = already_partitioned
            left_len, right_len = mid - a, b - mid
            balance_threshold = length // 8
            if left_len < right_len:
                was_balanced = left_len >= balance_threshold
                self.pdqsort(a, mid, limit)
                a = mid + 1
            else:
                was_balanced = right_len >= balance_threshold
                self.pdqsort(mid + 1, b, limit)
                b = mid

    def partition(self, a: int, b: int, pivot: int) -> tuple[int, bool]:
        self.swap(a, pivot)
        i, j = a + 1, b - 1
        while i <= j and self.less(i, a):
            i += 1
        while i <= j and not self.less(j, a):
            j -= 1
        if i > j:
            self.swap(j, a)
            return j, True
        self.swap(i, j)
        i += 1
        j -= 1
        while True:
            while i <= j and self.less(i, a):
                i += 1
            while i <= j and not self.less(j, a):
                j -= 1
            if i > j:
                break
            self.swap(i, j)
            i += 1
            j -= 1
        self.swap(j, a)
        return j, False

    def partition_equal(self, a: int, b: int, pivot: int) -> int:
        self.swap(a, pivot)
        i, j = a + 1, b - 1
        while True:
            while i <= j and not self.less(a, i):
                i += 1
            while i <= j and self.less(a, j):
                j -= 1
            if i > j:
                break
            self.swap(i, j)
            i += 1
            j -= 1
        return i

    def partial_insertion_sort(self, a: int, b: int) -> bool:
        i = a + 1
        for _ in range(_PARTIAL_MAX_STEPS):
            while i < b and not self.less(i, i - 1):
                i += 1
            if i == b:
                return True
            if b - a < _SHORTEST_SHIFTING:
                return False
            self.swap(i, i - 1)
            if i - a >= 2:
                for j in range(i - 1, 0, -1):
                    if not self.less(j, j - 1):
                        break
                    self.swap(j, j - 1)
            if b - i >= 2:
                for j in range(i + 1, b):
                    if not self.less(j, j - 1):
                        break
                    self.swap(j, j - 1)
        return False

    def break_patterns(self, a: int, b: int) -> None:
        length = b - a
        if length < 8:
            return
        state = length
        modulus = 1 << length.bit_length()
        start = a + (length // 4) * 2 - 1
        for idx in range(start, start + 3):
            state ^= (state << 13) & _MASK64
            state ^= state >> 7
            state ^= (state << 17) & _MASK64
            other = state & (modulus - 1)
            if other >= length:
                other -= length
            self.swap(idx, a + other)

    def choose_pivot(self, a: int, b: int) -> tuple[int, int]:
        length = b - a
        swaps = [0]
        i = a + length // 4 * 1
        j = a + length // 4 * 2
        k = a + length // 4 * 3
        if length >= 8:
            if length >= _SHORTEST_NINTHER:
                i = self.median(i - 1, i, i + 1, swaps)
                j = self.median(j - 1, j, j + 1, swaps)
                k = self.median(k - 1, k, k + 1, swaps)
            j = self.median(i, j, k, swaps)
        if swaps[0] == 0:
            return j, _INCREASING
        if swaps[0] == _MAX_SWAPS:
            return j, _DECREASING
        return j, _UNKNOWN

    def order2(self, a: int, b: int, swaps: list[int]) -> tuple[int, int]:
        if self.less(b, a):
            swaps[0] += 1
            return b, a
        return a, b

    def median(self, a: int, b: int, c: int, swaps: list[int]) -> int:
        a, b = self.order2(a, b, swaps)
        b, c = self.order2(b, c, swaps)
        a, b = self.order2(a, b, swaps)
        return b

    def reverse_range(self, a: int, b: int) -> None:
        i, j = a, b - 1
        while i < j:
            self.swap(i, j)
            i += 1
            j -= 1
