"""A keyed binary heap: items are found, updated and removed by key.

Mirrors pkg/scheduler/backend/heap/heap.go, which builds on Go's container/heap, with the same
sift-up and sift-down steps, so items the less function ranks equal leave in upstream's order.
With ``fifo_ties`` they leave in the order they arrived instead, or, given ``tie_rank``, in the
order of the rank each item carries (activeQ and backoffQ: the order in which the queue took the
pods' timestamps): upstream's pods practically never tie there (PrioritySort compares nanosecond
timestamps), but in virtual time many pods are queued at the same instant, and the order their
timestamps were taken in is what distinct timestamps would have given them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class Heap(Generic[T]):
    __slots__ = (
        "_arrivals",
        "_fifo_ties",
        "_index",
        "_items",
        "_key",
        "_keys",
        "_less",
        "_next_arrival",
        "_ordered",
        "_ranks",
        "_rest",
        "_tie_rank",
    )

    def __init__(
        self,
        key: Callable[[T], str],
        less: Callable[[T, T], bool],
        *,
        fifo_ties: bool = False,
        tie_rank: Callable[[T], int] | None = None,
    ) -> None:
        self._key = key
        self._less = less
        # A tie rank orders ties as arrival does otherwise.
        self._fifo_ties = fifo_ties or tie_rank is not None
        self._tie_rank = tie_rank
        self._items: list[T] = []
        # Each item's key and arrival number, beside it in the array: the sifts compare and
        # swap by position without working a key out again (a pod's key is built each time).
        self._keys: list[str] = []
        self._ranks: list[int] = []
        self._index: dict[str, int] = {}
        # When each key arrived (or its tie rank), for ties; an update keeps the item's place in
        # line unless the updated item carries another rank.
        self._arrivals: dict[str, int] = {}
        self._next_arrival = 0
        # The head of the heap in pop order, kept between changes: traces ask for it every
        # cycle, and between two cycles the usual change is one pop of the head. With
        # ``fifo_ties``, the rest of the items too, as a heap the head was popped from: the head
        # grows from it when it runs short, rather than from a new copy of the whole heap.
        self._ordered: list[T] | None = None
        self._rest: Heap[T] | None = None

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: object) -> bool:
        return key in self._index

    def add_or_update(self, item: T) -> None:
        key = self._key(item)
        index = self._index.get(key)
        tie_rank = self._tie_rank
        if index is not None:
            self._ordered = self._rest = None
            self._items[index] = item
            if tie_rank is not None:
                self._ranks[index] = self._arrivals[key] = tie_rank(item)
            self._fix(index)
            return
        rank = self._next_arrival if tie_rank is None else tie_rank(item)
        self._arrivals[key] = rank
        self._push(item, key, rank)
        self._next_arrival += 1
        self._insert_ordered(item, key)

    def _push(self, item: T, key: str, rank: int) -> None:
        self._index[key] = len(self._items)
        self._items.append(item)
        self._keys.append(key)
        self._ranks.append(rank)
        self._up(len(self._items) - 1)

    def _insert_ordered(self, item: T, key: str) -> None:
        """Keeps the head in pop order across the arrival of ``item``. With ``fifo_ties`` the
        pop order is the items sorted by ``_before`` (a total order: ties go by arrival), so the
        new item takes its sorted place in the head, or, when it comes after the head and the
        head is not the whole heap, joins the rest. Otherwise the head is worked out again when
        asked."""
        ordered = self._ordered
        if ordered is None or not self._fifo_ties:
            self._ordered = self._rest = None
            return
        before = self._before
        low, high = 0, len(ordered)
        while low < high:
            middle = (low + high) // 2
            if before(item, ordered[middle]):
                high = middle
            else:
                low = middle + 1
        # The head held every item but the new one: the new one may end it.
        if low < len(ordered) or len(ordered) == len(self._items) - 1:
            ordered.insert(low, item)
        elif self._rest is not None:
            self._rest._push(item, key, self._arrivals[key])

    def delete(self, key: str) -> T | None:
        """Removes the item with this key and returns it (None when absent)."""
        index = self._index.get(key)
        if index is None:
            return None
        self._ordered = self._rest = None
        last = len(self._items) - 1
        if index != last:
            self._swap(index, last)
            if not self._down(index, last):
                self._up(index)
        self._arrivals.pop(key, None)
        return self._remove_last()

    def peek(self) -> T | None:
        return self._items[0] if self._items else None

    def pop(self) -> T | None:
        if not self._items:
            return None
        self._arrivals.pop(self._keys[0], None)
        item = self._pop_existing()
        ordered = self._ordered
        if ordered and ordered[0] is item:
            del ordered[0]
        else:
            self._ordered = self._rest = None
        return item

    def get(self, key: str) -> T | None:
        index = self._index.get(key)
        return None if index is None else self._items[index]

    def items(self) -> list[T]:
        """The items in heap (storage) order, as upstream's List."""
        return list(self._items)

    def storage(self) -> list[tuple[T, int]]:
        """The items in storage order with their arrival numbers, what ``load`` takes back."""
        return list(zip(self._items, self._ranks, strict=True))

    @property
    def next_arrival(self) -> int:
        return self._next_arrival

    def load(self, entries: list[tuple[T, int]], next_arrival: int) -> None:
        """Replaces the contents with ``storage()`` of a heap ordered by the same less function:
        the same array, so pops come out in the same order, ties included. Entries left out are
        made up for by sifting (container/heap's Init), which leaves a valid heap unchanged."""
        self._items = [item for item, _ in entries]
        self._keys = list(map(self._key, self._items))
        self._index = {key: i for i, key in enumerate(self._keys)}
        tie_rank = self._tie_rank
        self._arrivals = {
            key: arrival if tie_rank is None else tie_rank(item)
            for key, (item, arrival) in zip(self._keys, entries, strict=True)
        }
        self._ranks = [self._arrivals[key] for key in self._keys]
        # Arrival numbers go on after the saved ones (tie ranks are the items' own).
        arrivals = () if tie_rank is not None else self._arrivals.values()
        self._next_arrival = max([next_arrival, *(a + 1 for a in arrivals)])
        self._ordered = self._rest = None
        n = len(self._items)
        for i in range(n // 2 - 1, -1, -1):
            self._down(i, n)

    def ordered(self, limit: int | None = None) -> list[T]:
        """The first ``limit`` items (all by default) in the order successive pops would return
        them; the heap is left intact."""
        count = len(self._items) if limit is None else min(limit, len(self._items))
        # Twice what is asked, so that many pops can be answered before it runs short again.
        depth = len(self._items) if limit is None else min(2 * limit, len(self._items))
        cached, rest = self._ordered, self._rest
        if cached is not None and len(cached) < count and rest is not None:
            while len(cached) < depth and rest._items:
                cached.append(rest._pop_existing())
        if cached is None or len(cached) < count:
            copy: Heap[T] = Heap(
                self._key, self._less, fifo_ties=self._fifo_ties, tie_rank=self._tie_rank
            )
            copy._items = list(self._items)
            copy._keys = list(self._keys)
            copy._ranks = list(self._ranks)
            copy._index = dict(self._index)
            copy._arrivals = self._arrivals
            cached = self._ordered = [copy._pop_existing() for _ in range(depth)]
            self._rest = copy if self._fifo_ties else None
        return cached[:count]

    def _pop_existing(self) -> T:
        last = len(self._items) - 1
        self._swap(0, last)
        self._down(0, last)
        return self._remove_last()

    # container/heap ------------------------------------------------------------------------

    def _remove_last(self) -> T:
        item = self._items.pop()
        del self._index[self._keys.pop()]
        self._ranks.pop()
        return item

    def _before(self, a: T, b: T) -> bool:
        """``less``; with ``fifo_ties``, ties go to the item that arrived first."""
        if self._less(a, b):
            return True
        if not self._fifo_ties or self._less(b, a):
            return False
        return self._arrivals[self._key(a)] < self._arrivals[self._key(b)]

    def _before_at(self, i: int, j: int) -> bool:
        """``_before`` of the items at positions i and j."""
        items = self._items
        if self._less(items[i], items[j]):
            return True
        if not self._fifo_ties or self._less(items[j], items[i]):
            return False
        return self._ranks[i] < self._ranks[j]

    def _swap(self, i: int, j: int) -> None:
        items, keys, ranks = self._items, self._keys, self._ranks
        items[i], items[j] = items[j], items[i]
        keys[i], keys[j] = keys[j], keys[i]
        ranks[i], ranks[j] = ranks[j], ranks[i]
        self._index[keys[i]] = i
        self._index[keys[j]] = j

    def _fix(self, i: int) -> None:
        if not self._down(i, len(self._items)):
            self._up(i)

    def _up(self, j: int) -> None:
        while j > 0:
            parent = (j - 1) // 2
            if not self._before_at(j, parent):
                break
            self._swap(parent, j)
            j = parent

    def _down(self, i0: int, n: int) -> bool:
        i = i0
        while True:
            left = 2 * i + 1
            if left >= n:
                break
            child = left
            right = left + 1
            if right < n and self._before_at(right, left):
                child = right
            if not self._before_at(child, i):
                break
            self._swap(i, child)
            i = child
        return i > i0
