"""The queue saved as data and restored: the restored queue does what the original would."""

from __future__ import annotations

import json
from typing import Any

import pytest

from schedviz.kube.objects import Node, Pod
from schedviz.scheduler.backend.queue.persistence import (
    QueueDataError,
    queue_from_data,
    queue_to_data,
)
from schedviz.scheduler.backend.queue.scheduling_queue import (
    PriorityQueue,
    QueueingHintFunction,
)
from schedviz.scheduler.clock import VirtualClock
from schedviz.scheduler.framework.interface import NominatingInfo
from schedviz.scheduler.framework.plugins.prioritysort import PrioritySort
from schedviz.scheduler.framework.plugins.schedulinggates import SchedulingGates
from schedviz.scheduler.framework.types import (
    ActionType,
    ClusterEvent,
    EventResource,
    PodInfo,
    QueueingHint,
)
from schedviz.scheduler.testing.wrappers import make_node, make_pod

START = 1_000_000.25
NODE_ADD = ClusterEvent(EventResource.Node, ActionType.Add)
GOOD = make_node().name("good").obj()
BAD = make_node().name("bad").obj()


def only_good_nodes(pod: Pod, old: object, new: object) -> QueueingHint:
    good = isinstance(new, Node) and new.name == "good"
    return QueueingHint.Queue if good else QueueingHint.QueueSkip


HINTS = {NODE_ADD: [("Fit", only_good_nodes), ("Waiter", only_good_nodes)]}
PODS = {
    name: make_pod().name(name).uid(name).priority(priority).obj()
    for name, priority in [("a", 10), ("b", 10), ("c", 5), ("d", 5), ("e", 1), ("f", 1)]
}
GATED = make_pod().name("g").uid("g").scheduling_gates(["example.com/wait"]).obj()
ALL_PODS = {**{p.key: p for p in PODS.values()}, GATED.key: GATED}
NODES = {"good": GOOD, "bad": BAD}


def encode(obj: object) -> Any:
    assert isinstance(obj, Node)
    return obj.name


def decode(data: Any) -> object:
    return NODES[data]


def queue(clock: VirtualClock) -> PriorityQueue:
    return PriorityQueue(
        less=PrioritySort().less,
        clock=clock,
        queueing_hints={
            "default-scheduler": {
                event: [QueueingHintFunction(plugin, fn) for plugin, fn in functions]
                for event, functions in HINTS.items()
            }
        },
        pre_enqueue_plugins={"default-scheduler": [SchedulingGates()]},
    )


def busy_queue(clock: VirtualClock) -> PriorityQueue:
    """A queue with something in every part: activeQ, both backoff heaps (with expiries), the
    pool with unschedulable and pending plugins and a gated pod, a pod in flight with an event
    seen meanwhile, a nomination."""
    q = queue(clock)
    for pod in [*PODS.values(), GATED]:
        q.add(pod)
    clock.step(0.3)
    retried = q.pop()  # a: rejected by Fit while a good node arrived -> backoff
    assert retried is not None
    q.move_all_to_active_or_backoff_queue(NODE_ADD, None, BAD)
    q.move_all_to_active_or_backoff_queue(NODE_ADD, None, GOOD)
    retried.unschedulable_plugins.add("Fit")
    q.add_unschedulable_if_not_present(retried, q.scheduling_cycle())
    rejected = q.pop()  # b: unschedulable by Fit -> pool
    assert rejected is not None
    rejected.unschedulable_plugins.add("Fit")
    q.add_unschedulable_if_not_present(rejected, q.scheduling_cycle())
    waiting = q.pop()  # c: pending on Waiter -> pool
    assert waiting is not None
    waiting.pending_plugins.add("Waiter")
    q.add_unschedulable_if_not_present(waiting, q.scheduling_cycle())
    failed = q.pop()  # d: an error -> error backoff
    assert failed is not None
    q.add_unschedulable_if_not_present(failed, q.scheduling_cycle())
    in_flight = q.pop()  # e: still in flight, with an event seen meanwhile
    assert in_flight is not None
    q.move_all_to_active_or_backoff_queue(NODE_ADD, None, BAD)
    q.add_nominated_pod(PodInfo(PODS["f"]), NominatingInfo("good", mode_override=True))
    clock.step(0.4)
    return q


def restored(data: dict[str, Any], clock: VirtualClock) -> PriorityQueue:
    q = queue(clock)
    # Through JSON, as the database keeps it.
    missing = queue_from_data(q, json.loads(json.dumps(data)), pods=ALL_PODS.get, decode=decode)
    assert missing == []
    return q


def drive(q: PriorityQueue, clock: VirtualClock) -> list[tuple[str, int]]:
    """The same life for either queue: the in-flight pod comes back rejected by Fit, a good
    node arrives, time passes through backoffs and flushes; which pods pop, with what attempts."""
    popped: list[tuple[str, int]] = []
    (in_flight,) = [p for p in q.active_q.in_flight_pods()]
    in_flight.unschedulable_plugins.add("Fit")
    q.add_unschedulable_if_not_present(in_flight, q.scheduling_cycle())
    for _ in range(40):
        q.flush_backoff_q_completed()
        while (pinfo := q.pop()) is not None:
            popped.append((pinfo.key, pinfo.attempts))
            pinfo.unschedulable_plugins.add("Fit")
            q.add_unschedulable_if_not_present(pinfo, q.scheduling_cycle())
        if len(popped) == 3:
            q.move_all_to_active_or_backoff_queue(NODE_ADD, None, GOOD)
        clock.step(0.5)
    q.flush_unschedulable_pods_leftover()
    return popped


def test_a_restored_queue_holds_the_same_pods_attempts_plugins_and_expiries() -> None:
    clock = VirtualClock(START)
    original = busy_queue(clock)
    data = queue_to_data(original, encode=encode)
    copy = restored(data, VirtualClock(clock.now()))
    assert queue_to_data(copy, encode=encode) == data
    assert copy.snapshot_state() == original.snapshot_state()
    assert copy.nominator.nominated_pod_to_node == {"default/f": "good"}
    pool = {p.key: p for p in copy.unschedulable_pods}
    assert pool["default/b"].unschedulable_plugins == {"Fit"}
    assert pool["default/c"].pending_plugins == {"Waiter"}
    assert [p.key for p, error in copy.backoff_q.ordered()] == ["default/a", "default/d"]
    assert pool["default/g"].gating_plugin == "SchedulingGates"
    expiries = {p.key: copy.backoff_q.get_backoff_time(p) for p in copy.backoff_q.items()}
    assert expiries == {
        p.key: original.backoff_q.get_backoff_time(p) for p in original.backoff_q.items()
    }


def test_a_restored_queue_reads_the_in_flight_events_and_pops_as_the_original_would() -> None:
    clock_a, clock_b = VirtualClock(START), VirtualClock(START)
    original = busy_queue(clock_a)
    copy = restored(queue_to_data(busy_queue(clock_b), encode=encode), clock_b)
    expected = drive(original, clock_a)
    assert drive(copy, clock_b) == expected
    # The pod in flight saw a node it may fit (the hint said Queue): it went to backoff and
    # was retried, its attempts counted on from the saved ones.
    assert ("default/e", 2) in expected
    assert queue_to_data(copy, encode=encode) == queue_to_data(original, encode=encode)


def test_pods_gone_since_the_save_are_left_out_and_named() -> None:
    clock = VirtualClock(START)
    data = queue_to_data(busy_queue(clock), encode=encode)
    q = queue(VirtualClock(clock.now()))
    present = {k: p for k, p in ALL_PODS.items() if k not in ("default/b", "default/f")}
    assert sorted(queue_from_data(q, data, pods=present.get, decode=decode)) == [
        "default/b",
        "default/f",
    ]
    assert q.get_pod("default/b") is None
    assert q.nominator.nominated_pod_to_node == {}
    assert [p.key for p in q.active_q.ordered()] == []


def test_in_flight_pods_requeued_keep_their_attempts_and_leave_no_marker() -> None:
    clock = VirtualClock(START)
    q = restored(queue_to_data(busy_queue(clock), encode=encode), VirtualClock(clock.now()))
    q.requeue_in_flight()
    assert q.in_flight_pods() == []
    assert q.active_q.in_flight_log() == []
    popped = [(p.key, p.attempts) for p in iter(q.pop, None)]
    # activeQ in order, then (PopFromBackoffQ) the head of backoffQ. e and f have one priority
    # and one timestamp: e's was taken first (it was added first), so e goes first.
    assert popped == [("default/e", 2), ("default/f", 1), ("default/a", 2)]


@pytest.mark.parametrize(
    "data",
    [{}, {"version": 99}, {"version": 1, "activeQ": [[{"pod": "default/a"}, 0]]}, []],
)
def test_data_of_another_format_or_malformed_is_refused(data: Any) -> None:
    with pytest.raises(QueueDataError):
        queue_from_data(queue(VirtualClock(START)), data, pods=ALL_PODS.get, decode=decode)
