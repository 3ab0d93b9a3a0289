"""The keyed heap: upstream's order for ties, or first come first served for activeQ."""

from __future__ import annotations

from schedviz.scheduler.backend.queue.heap import Heap


def _by_rank(a: tuple[str, int], b: tuple[str, int]) -> bool:
    return a[1] < b[1]


def _drain(heap: Heap[tuple[str, int]]) -> list[str]:
    names = []
    while (item := heap.pop()) is not None:
        names.append(item[0])
    return names


def test_with_fifo_ties_equal_items_leave_in_arrival_order() -> None:
    heap: Heap[tuple[str, int]] = Heap(lambda item: item[0], _by_rank, fifo_ties=True)
    for name in ["p1", "p2", "p3", "p4", "p5"]:
        heap.add_or_update((name, 0))
    heap.add_or_update(("urgent", -1))
    assert _drain(heap) == ["urgent", "p1", "p2", "p3", "p4", "p5"]


def test_an_update_keeps_its_place_in_line() -> None:
    heap: Heap[tuple[str, int]] = Heap(lambda item: item[0], _by_rank, fifo_ties=True)
    for name in ["p1", "p2", "p3"]:
        heap.add_or_update((name, 0))
    heap.add_or_update(("p1", 0))
    assert heap.ordered() == [("p1", 0), ("p2", 0), ("p3", 0)]
    assert _drain(heap) == ["p1", "p2", "p3"]


def test_without_fifo_ties_equal_items_follow_container_heap() -> None:
    heap: Heap[tuple[str, int]] = Heap(lambda item: item[0], _by_rank)
    for name in ["p1", "p2", "p3", "p4", "p5"]:
        heap.add_or_update((name, 0))
    # container/heap: Pop swaps the last item to the root and stops at once on ties.
    assert _drain(heap) == ["p1", "p5", "p4", "p3", "p2"]


def test_the_pop_order_stays_right_across_pops_adds_and_deletes() -> None:
    heap: Heap[tuple[str, int]] = Heap(lambda item: item[0], _by_rank, fifo_ties=True)
    for index in range(10):
        heap.add_or_update((f"p{index}", index % 3))
    assert [n for n, _ in heap.ordered(3)] == ["p0", "p3", "p6"]
    heap.pop()
    assert [n for n, _ in heap.ordered(3)] == ["p3", "p6", "p9"]
    heap.add_or_update(("first", -1))
    assert [n for n, _ in heap.ordered(2)] == ["first", "p3"]
    heap.delete("p3")
    assert [n for n, _ in heap.ordered(2)] == ["first", "p6"]
    assert heap.ordered() == sorted(
        heap.items(), key=lambda item: (item[1], int(item[0][1:]) if item[0] != "first" else -1)
    )


def test_the_kept_head_is_what_a_fresh_one_would_be_across_random_adds_and_pops() -> None:
    """The head kept across arrivals (with fifo_ties) against one worked out from scratch."""
    import random

    rng = random.Random(7)
    heap: Heap[tuple[str, int]] = Heap(lambda item: item[0], _by_rank, fifo_ties=True)
    for n in range(40):  # more than the heads asked for below
        heap.add_or_update((f"first{n}", rng.randrange(5)))
    for step in range(600):
        action = rng.random()
        if action < 0.5:
            heap.add_or_update((f"p{step}", rng.randrange(5)))
        elif action < 0.7:
            heap.pop()
        else:
            # Mostly short heads, which the arrivals past their end must leave alone.
            limit = None if rng.random() < 0.02 else rng.choice([1, 2, 3, 10])
            fresh: Heap[tuple[str, int]] = Heap(lambda item: item[0], _by_rank, fifo_ties=True)
            fresh.load(heap.storage(), heap.next_arrival)
            assert heap.ordered(limit) == fresh.ordered(limit), step


# (name, order, tie rank)
Ranked = tuple[str, int, int]


def _ranked_heap() -> Heap[Ranked]:
    return Heap(lambda item: item[0], lambda a, b: a[1] < b[1], tie_rank=lambda item: item[2])


def test_with_a_tie_rank_equal_items_leave_by_their_rank_not_their_arrival() -> None:
    heap = _ranked_heap()
    for item in [("p1", 0, 3), ("p2", 0, 1), ("p3", 0, 2), ("first", -1, 9)]:
        heap.add_or_update(item)
    assert [name for name, _, _ in heap.ordered()] == ["first", "p2", "p3", "p1"]
    names = []
    while (popped := heap.pop()) is not None:
        names.append(popped[0])
    assert names == ["first", "p2", "p3", "p1"]


def test_an_update_with_another_rank_takes_its_new_place_and_a_load_reads_the_ranks() -> None:
    heap = _ranked_heap()
    for item in [("p1", 0, 1), ("p2", 0, 2), ("p3", 0, 3)]:
        heap.add_or_update(item)
    heap.add_or_update(("p1", 0, 4))
    assert [name for name, _, _ in heap.ordered()] == ["p2", "p3", "p1"]
    copy = _ranked_heap()
    # Arrival numbers in storage do not matter: the items carry their ranks.
    copy.load([(item, 0) for item, _ in heap.storage()], 0)
    assert copy.ordered() == heap.ordered()
