"""Ports of pkg/scheduler/backend/queue/scheduling_queue_test.go (v1.34/v1.35 behaviour:
queueing hints on, SchedulerPopFromBackoffQ on unless a case says otherwise)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from typing import cast

import msgpack
import pytest

from schedviz.kube.objects import Pod, Toleration
from schedviz.scheduler.backend.queue.active_queue import InFlightEvent
from schedviz.scheduler.backend.queue.scheduling_queue import (
    EVENT_UNSCHEDULED_POD_ADD,
    EVENT_UNSCHEDULED_POD_UPDATE,
    PENDING_PODS_SUMMARY,
    PriorityQueue,
    QueueingHintFunction,
    QueueingStrategy,
)
from schedviz.scheduler.clock import VirtualClock
from schedviz.scheduler.framework.interface import Code, PreEnqueuePlugin, Status, new_status
from schedviz.scheduler.framework.plugins import names
from schedviz.scheduler.framework.plugins.prioritysort import PrioritySort
from schedviz.scheduler.framework.plugins.schedulinggates import SchedulingGates
from schedviz.scheduler.framework.types import (
    EVENT_ASSIGNED_POD_ADD,
    EVENT_UNSCHEDULABLE_TIMEOUT,
    ActionType,
    ClusterEvent,
    EventResource,
    PodInfo,
    QueuedPodInfo,
    QueueingHint,
    QueueingHintFn,
)
from schedviz.scheduler.testing.wrappers import make_node, make_pod

NODE_ADD = ClusterEvent(EventResource.Node, ActionType.Add)
PV_ADD = ClusterEvent(EventResource.PersistentVolume, ActionType.Add)
PV_UPDATE = ClusterEvent(EventResource.PersistentVolume, ActionType.Update)
PVC_ADD = ClusterEvent(EventResource.PersistentVolumeClaim, ActionType.Add)
CSI_NODE_UPDATE = ClusterEvent(EventResource.CSINode, ActionType.Update)

LOW, MID, HIGH = 0, 100, 1000
MEDIUM = (LOW + HIGH) // 2
START = 1_000_000.25  # deliberately not on a window boundary

HIGH_POD = make_pod().name("hpp").namespace("ns1").uid("hppns1").priority(HIGH).obj()
HIGH_NOMINATED_POD = (
    (make_pod().name("hpp").namespace("ns1").uid("hppns1").priority(HIGH))
    .nominated_node_name("node1")
    .obj()
)
MED_POD = (
    make_pod()
    .name("mpp")
    .namespace("ns2")
    .uid("mppns2")
    .annotation("annot2", "val2")
    .priority(MEDIUM)
    .nominated_node_name("node1")
    .obj()
)
UNSCHEDULABLE_POD = (
    make_pod()
    .name("up")
    .namespace("ns1")
    .uid("upns1")
    .annotation("annot2", "val2")
    .priority(LOW)
    .nominated_node_name("node1")
    .obj()
)


def queue_hint_return_queue(pod: Pod, old: object, new: object) -> QueueingHint:
    return QueueingHint.Queue


def queue_hint_return_skip(pod: Pod, old: object, new: object) -> QueueingHint:
    return QueueingHint.QueueSkip


def hints(
    table: Mapping[ClusterEvent, Sequence[tuple[str, QueueingHintFn]]],
) -> dict[str, dict[ClusterEvent, list[QueueingHintFunction]]]:
    """A hint map for the default profile, from (plugin, hint fn) pairs per event."""
    return {
        "default-scheduler": {
            event: [QueueingHintFunction(plugin, fn) for plugin, fn in functions]
            for event, functions in table.items()
        }
    }


def new_queue(
    clock: VirtualClock | None = None,
    hint_table: Mapping[ClusterEvent, Sequence[tuple[str, QueueingHintFn]]] | None = None,
    pre_enqueue: Sequence[PreEnqueuePlugin] = (),
    **kwargs: object,
) -> PriorityQueue:
    return PriorityQueue(
        less=PrioritySort().less,
        clock=clock or VirtualClock(START),
        queueing_hints=hints(hint_table or {}),
        pre_enqueue_plugins={"default-scheduler": list(pre_enqueue)},
        **kwargs,  # type: ignore[arg-type]
    )


def pop(q: PriorityQueue, pod: Pod) -> QueuedPodInfo:
    pinfo = q.pop()
    assert pinfo is not None
    assert pinfo.pod is pod, f"popped {pinfo.key}, wanted {pod.key}"
    return pinfo


def lookup(pod: Pod, *plugins: str) -> QueuedPodInfo:
    """upstream's newQueuedPodInfoForLookup: a bare queued pod with rejecting plugins."""
    return QueuedPodInfo(pod_info=PodInfo(pod), unschedulable_plugins=set(plugins))


def clone(pod: Pod, name: str) -> Pod:
    return dataclasses.replace(pod, name=name, uid=name + pod.namespace)


def with_annotation(pod: Pod, key: str, value: str) -> Pod:
    return dataclasses.replace(pod, annotations={**pod.annotations, key: value})


class AllowlistPreEnqueue(PreEnqueuePlugin):
    """upstream's test preEnqueuePlugin: admits pods with one of the allowed labels."""

    def __init__(self, allowlists: Sequence[str] = (), name: str = "preEnqueuePlugin") -> None:
        self.allowlists = list(allowlists)
        self._name = name

    def name(self) -> str:
        return self._name

    def pre_enqueue(self, pod: Pod) -> Status | None:
        if any(label in self.allowlists for label in pod.labels):
            return None
        return new_status(Code.UnschedulableAndUnresolvable, "pod name not in allowlists")


# --------------------------------------------------------------------------------- Add / Pop


def test_add_orders_by_priority_and_nominates() -> None:
    """TestPriorityQueue_Add."""
    q = new_queue()
    q.add(MED_POD)
    q.add(UNSCHEDULABLE_POD)
    q.add(HIGH_POD)
    assert q.nominator.nominated_pod_to_node == {
        MED_POD.key: "node1",
        UNSCHEDULABLE_POD.key: "node1",
    }
    assert [r.key for r in q.nominator.nominated_pods["node1"]] == [
        MED_POD.key,
        UNSCHEDULABLE_POD.key,
    ]
    pop(q, HIGH_POD)
    pop(q, MED_POD)
    pop(q, UNSCHEDULABLE_POD)
    assert len(q.nominator.nominated_pods["node1"]) == 2


def test_add_with_reverse_priority_less_func() -> None:
    """TestPriorityQueue_AddWithReversePriorityLessFunc."""
    q = new_queue()
    q.add(MED_POD)
    q.add(HIGH_POD)
    pop(q, HIGH_POD)
    pop(q, MED_POD)


def test_pop_counts_attempts_marks_in_flight_and_clears_rejectors() -> None:
    """TestPop, as of v1.34: Pop clears the rejectors of the last attempt (later upstream keeps
    them for logging and clears them in handleSchedulingFailure)."""
    pod = make_pod().name("targetpod").uid("pod1").obj()
    q = new_queue(hint_table={PV_ADD: [("fooPlugin1", queue_hint_return_queue)]})
    q.add(pod)
    popped = pop(q, pod)
    assert popped.attempts == 1
    assert popped.initial_attempt_timestamp == START
    assert q.in_flight_pods() == [pod]
    popped.pending_plugins = {"fooPlugin1"}
    assert q.add_unschedulable_if_not_present(popped, q.scheduling_cycle()) is None
    q.move_all_to_active_or_backoff_queue(PV_ADD, None, None)
    popped = pop(q, pod)
    assert popped.pending_plugins == set()
    assert popped.attempts == 2
    assert q.scheduling_cycle() == 2


def test_pop_returns_none_when_empty() -> None:
    assert new_queue().pop() is None


@pytest.mark.parametrize(
    ("pop_from_backoff_q", "want"),
    [
        pytest.param(True, ["mpp", "hpp"], id="activeQ then backoffQ"),
        pytest.param(False, ["mpp"], id="activeQ only"),
    ],
)
def test_priority_queue_pop(pop_from_backoff_q: bool, want: list[str]) -> None:
    """TestPriorityQueue_Pop: with PopFromBackoffQ an empty activeQ yields backoffQ's head, never
    errorBackoffQ's nor the pool's."""
    high2 = make_pod().name("hpp2").namespace("ns1").uid("hpp2ns1").priority(HIGH).obj()
    q = new_queue(pop_from_backoff_q=pop_from_backoff_q)
    q.add(MED_POD)
    q.backoff_q.add(q.new_queued_pod_info(HIGH_POD, "plugin"))
    q.backoff_q.add(q.new_queued_pod_info(high2))
    q.unschedulable_pods.add_or_update(q.new_queued_pod_info(UNSCHEDULABLE_POD, "plugin"))
    got = []
    while (pinfo := q.pop()) is not None:
        got.append(pinfo.pod.name)
    assert got == want
    assert q.last_popped_from_backoff_q is pop_from_backoff_q


# --------------------------------------------------------------------- AddUnschedulableIfNotPresent


def test_add_unschedulable_if_not_present() -> None:
    """TestPriorityQueue_AddUnschedulableIfNotPresent."""
    q = new_queue()
    q.add(UNSCHEDULABLE_POD)
    pop(q, UNSCHEDULABLE_POD)
    q.add(HIGH_NOMINATED_POD)
    assert q.add_unschedulable_if_not_present(lookup(UNSCHEDULABLE_POD, "plugin"), 1) is None
    pop(q, HIGH_NOMINATED_POD)
    assert len(q.nominator.nominated_pods) == 1
    # No event happened while it was in flight: the pool.
    pool_pod = q.unschedulable_pods.get(UNSCHEDULABLE_POD.key)
    assert pool_pod is not None and pool_pod.pod is UNSCHEDULABLE_POD
    assert q.in_flight_pods() == [HIGH_NOMINATED_POD]


def test_add_unschedulable_refuses_pods_already_queued_but_is_done_with_them() -> None:
    q = new_queue()
    q.add(HIGH_POD)
    popped = pop(q, HIGH_POD)
    q.add(HIGH_POD)  # a duplicate, as after a bug
    assert (
        q.add_unschedulable_if_not_present(popped, q.scheduling_cycle())
        == "Pod ns1/hpp is already present in the active queue"
    )
    assert q.in_flight_pods() == []


def test_add_unschedulable_if_not_present_backoff() -> None:
    """TestPriorityQueue_AddUnschedulableIfNotPresent_Backoff: pods in flight during a move
    request go to backoffQ."""
    q = new_queue()
    pods = [
        make_pod().name(f"pod{i}").namespace(f"ns{i}").uid(f"upns{i}").priority(i).obj()
        for i in range(10)
    ]
    for p in pods:
        q.add(p)
    for i in range(9, 0, -1):
        pop(q, pods[i])
    q.move_all_to_active_or_backoff_queue(EVENT_UNSCHEDULABLE_TIMEOUT, None, None)
    old_cycle = q.scheduling_cycle()
    pop(q, pods[0])
    for p in pods[1:]:
        assert q.add_unschedulable_if_not_present(lookup(p, "plugin"), old_cycle) is None
    for p in pods[1:]:
        assert q.backoff_q.has(p.key), p.key


def test_error_goes_to_backoff_and_counts_consecutive_errors() -> None:
    clock = VirtualClock(START)
    q = new_queue(clock)
    q.add(HIGH_POD)
    popped = pop(q, HIGH_POD)
    q.add_unschedulable_if_not_present(popped, q.scheduling_cycle())
    assert (popped.consecutive_errors_count, popped.unschedulable_count) == (1, 0)
    assert q.snapshot_state()["backoffQ"] == [
        {"pod": "ns1/hpp", "attempts": 1, "backoffExpiration": math.floor(START + 1), "error": True}
    ]
    # The error heap is never popped early: it waits for the flush.
    assert q.pop() is None
    wakeup = q.next_wakeup()
    assert wakeup == math.floor(START + 1) + 1
    clock.set(wakeup)
    q.flush_backoff_q_completed()
    popped = pop(q, HIGH_POD)
    popped.unschedulable_plugins = {"plugin"}
    q.add_unschedulable_if_not_present(popped, q.scheduling_cycle())
    assert (popped.consecutive_errors_count, popped.unschedulable_count) == (0, 1)
    assert q.unschedulable_pods.get(HIGH_POD.key) is popped


# ---------------------------------------------------------------------------- in-flight pods


def _in_flight_names(q: PriorityQueue) -> list[object]:
    return [e.event if isinstance(e, InFlightEvent) else e.name for e in q.active_q.in_flight_log()]


def test_in_flight_events_are_recorded_only_while_pods_are_in_flight() -> None:
    """Test_InFlightPods: interested events are recorded after the pod marker; uninteresting ones
    and events before any pop are not."""
    pod1 = make_pod().name("targetpod").uid("pod1").obj()
    q = new_queue(hint_table={PV_ADD: [("fooPlugin1", queue_hint_return_queue)]})
    q.add(pod1)
    q.move_all_to_active_or_backoff_queue(PVC_ADD, None, None)
    pop(q, pod1)
    q.move_all_to_active_or_backoff_queue(PV_ADD, None, None)
    q.move_all_to_active_or_backoff_queue(PV_UPDATE, None, None)
    assert _in_flight_names(q) == ["targetpod", PV_ADD]


def test_in_flight_intermediate_pod_done_keeps_events_others_need() -> None:
    """Test_InFlightPods: one intermediate pod comes back; the log keeps what pod1/pod3 need."""
    pods = [make_pod().name(n).uid(u).obj() for n, u in (("p1", "1"), ("p2", "2"), ("p3", "3"))]
    table = {
        e: [("fooPlugin1", queue_hint_return_queue)]
        for e in (PV_ADD, NODE_ADD, EVENT_ASSIGNED_POD_ADD)
    }
    clock = VirtualClock(START)
    q = new_queue(clock, table)
    for p in pods:
        q.add(p)
        clock.step(1)
    q.move_all_to_active_or_backoff_queue(PVC_ADD, None, None)
    pop(q, pods[0])
    q.move_all_to_active_or_backoff_queue(PV_ADD, None, None)
    pop(q, pods[1])
    q.move_all_to_active_or_backoff_queue(NODE_ADD, None, None)
    pop(q, pods[2])
    q.move_all_to_active_or_backoff_queue(EVENT_ASSIGNED_POD_ADD, None, None)
    q.add_unschedulable_if_not_present(lookup(pods[1]), q.scheduling_cycle())
    assert [p.pod.name for p in q.backoff_q.items()] == ["p2"]
    assert {p.name for p in q.in_flight_pods()} == {"p1", "p3"}
    assert _in_flight_names(q) == ["p1", PV_ADD, NODE_ADD, "p3", EVENT_ASSIGNED_POD_ADD]
    # When every pod is done, the log is empty.
    q.add_unschedulable_if_not_present(lookup(pods[0]), q.scheduling_cycle())
    q.add_unschedulable_if_not_present(lookup(pods[2]), q.scheduling_cycle())
    assert q.active_q.in_flight_log() == []


@pytest.mark.parametrize(
    ("table", "requeued", "want_queue"),
    [
        pytest.param(
            {EVENT_ASSIGNED_POD_ADD: [("fooPlugin1", queue_hint_return_skip)]},
            lambda pod: lookup(pod, "fooPlugin1"),
            "unschedulable",
            id="rejector's hint says QueueSkip: the pool",
        ),
        pytest.param(
            {EVENT_ASSIGNED_POD_ADD: [("fooPlugin1", queue_hint_return_queue)]},
            lambda pod: lookup(pod),
            "backoff",
            id="no rejector: backoffQ whatever the hints",
        ),
        pytest.param(
            {NODE_ADD: [("fooPlugin1", queue_hint_return_queue)]},
            lambda pod: lookup(pod, "fooPlugin1"),
            "unschedulable",
            id="the rejector registered nothing for the event: the pool",
        ),
        pytest.param(
            {
                EVENT_ASSIGNED_POD_ADD: [
                    ("fooPlugin2", queue_hint_return_skip),
                    ("fooPlugin1", queue_hint_return_queue),
                ]
            },
            lambda pod: lookup(pod, "fooPlugin1", "fooPlugin2"),
            "backoff",
            id="one rejector's Queue beats another's Skip: backoffQ",
        ),
        pytest.param(
            {
                EVENT_ASSIGNED_POD_ADD: [
                    ("fooPlugin3", queue_hint_return_skip),
                    ("fooPlugin2", queue_hint_return_queue),
                    ("fooPlugin1", queue_hint_return_queue),
                ]
            },
            lambda pod: dataclasses.replace(
                lookup(pod, "fooPlugin2", "fooPlugin3"), pending_plugins={"fooPlugin1"}
            ),
            "active",
            id="a Pending plugin's Queue: activeQ at once",
        ),
    ],
)
def test_in_flight_pod_requeued_by_events_seen_meanwhile(
    table: Mapping[ClusterEvent, Sequence[tuple[str, QueueingHintFn]]],
    requeued: object,
    want_queue: str,
) -> None:
    """Test_InFlightPods: determineSchedulingHintForInFlightPod."""
    pod = make_pod().name("targetpod").uid("pod1").obj()
    q = new_queue(hint_table=table)
    q.add(pod)
    pop(q, pod)
    q.move_all_to_active_or_backoff_queue(EVENT_ASSIGNED_POD_ADD, None, None)
    assert callable(requeued)
    pinfo = requeued(pod)
    assert q.add_unschedulable_if_not_present(pinfo, q.scheduling_cycle()) is None
    where = {
        "active": q.active_q.has(pod.key),
        "backoff": q.backoff_q.has(pod.key),
        "unschedulable": pod.key in q.unschedulable_pods,
    }
    assert [k for k, v in where.items() if v] == [want_queue]
    assert q.in_flight_pods() == []
    assert q.active_q.in_flight_log() == []


def test_events_before_the_pop_are_ignored() -> None:
    """Test_InFlightPods: "events before popping Pod are ignored"."""
    pod = make_pod().name("targetpod").uid("pod1").obj()
    q = new_queue(hint_table={EVENT_ASSIGNED_POD_ADD: [("fooPlugin1", queue_hint_return_skip)]})
    q.add(pod)
    q.move_all_to_active_or_backoff_queue(EVENT_UNSCHEDULABLE_TIMEOUT, None, None)
    pop(q, pod)
    q.move_all_to_active_or_backoff_queue(EVENT_ASSIGNED_POD_ADD, None, None)
    q.add_unschedulable_if_not_present(lookup(pod, "fooPlugin1"), q.scheduling_cycle())
    assert pod.key in q.unschedulable_pods


def test_duplicate_pod_in_active_q_is_discarded_on_pop() -> None:
    """Test_InFlightPods: "Pop is made twice for the same Pod"."""
    pod1, pod2, pod3 = (make_pod().name(f"p{i}").uid(str(i)).obj() for i in (1, 2, 3))
    clock = VirtualClock(START)
    q = new_queue(clock)
    for p in (pod1, pod2):
        q.add(p)
        clock.step(1)
    pop(q, pod1)
    pop(q, pod2)
    q.active_q.add(lookup(pod1))  # the bug: pod1 is queued while being scheduled
    q.add(pod3)
    pop(q, pod3)
    assert len(q.active_q) == 0
    for p in (pod1, pod2, pod3):
        q.add_unschedulable_if_not_present(lookup(p), q.scheduling_cycle())
    assert sorted(p.pod.name for p in q.backoff_q.items()) == ["p1", "p2", "p3"]
    assert q.in_flight_pods() == []


# ---------------------------------------------------------------------------------- Update


UPDATE_HINTS = {
    EVENT_UNSCHEDULED_POD_UPDATE: [
        ("queuePlugin", queue_hint_return_queue),
        ("skipPlugin", queue_hint_return_skip),
    ]
}


def _prepare_not_in_queue(q: PriorityQueue, clock: VirtualClock) -> tuple[Pod, Pod]:
    return MED_POD, with_annotation(MED_POD, "foo", "test")


def _prepare_nominated(q: PriorityQueue, clock: VirtualClock) -> tuple[Pod, Pod]:
    return HIGH_POD, HIGH_NOMINATED_POD


def _prepare_in_active(q: PriorityQueue, clock: VirtualClock) -> tuple[Pod, Pod]:
    q.add(HIGH_POD)
    return HIGH_POD, HIGH_POD


def _prepare_in_backoff(q: PriorityQueue, clock: VirtualClock) -> tuple[Pod, Pod]:
    pinfo = q.new_queued_pod_info(MED_POD)
    q.backoff_q.add(pinfo)
    return MED_POD, MED_POD


def _prepare_pool_backing_off(q: PriorityQueue, clock: VirtualClock) -> tuple[Pod, Pod]:
    pinfo = q.new_queued_pod_info(MED_POD, "queuePlugin")
    pinfo.unschedulable_count += 1
    q.unschedulable_pods.add_or_update(pinfo)
    return MED_POD, with_annotation(MED_POD, "foo", "test")


def _prepare_pool_backoff_over(q: PriorityQueue, clock: VirtualClock) -> tuple[Pod, Pod]:
    old, new = _prepare_pool_backing_off(q, clock)
    clock.step(q.backoff_q.pod_max_backoff)
    return old, new


def _prepare_pool_skip(q: PriorityQueue, clock: VirtualClock) -> tuple[Pod, Pod]:
    q.unschedulable_pods.add_or_update(q.new_queued_pod_info(MED_POD, "skipPlugin"))
    return MED_POD, with_annotation(MED_POD, "foo", "test1")


def _prepare_in_flight(q: PriorityQueue, clock: VirtualClock) -> tuple[Pod, Pod]:
    q.add(MED_POD)
    pop(q, MED_POD)
    return MED_POD, with_annotation(MED_POD, "foo", "bar")


@pytest.mark.parametrize(
    ("prepare", "want_queue", "want_nominated"),
    [
        pytest.param(_prepare_not_in_queue, "active", False, id="not queued: activeQ"),
        pytest.param(_prepare_nominated, "active", True, id="gets a nominated node"),
        pytest.param(_prepare_in_active, "active", False, id="stays in activeQ"),
        pytest.param(_prepare_in_backoff, "backoff", False, id="stays in backoffQ"),
        pytest.param(_prepare_pool_backing_off, "backoff", False, id="pool, backing off"),
        pytest.param(_prepare_pool_backoff_over, "active", False, id="pool, backoff over"),
        pytest.param(_prepare_pool_skip, "unschedulable", False, id="pool, hint QueueSkip"),
        pytest.param(_prepare_in_flight, None, False, id="in flight: no queue"),
    ],
)
def test_update(prepare: object, want_queue: str | None, want_nominated: bool) -> None:
    """TestPriorityQueue_Update."""
    clock = VirtualClock(START)
    q = new_queue(clock, UPDATE_HINTS)
    assert callable(prepare)
    old, new = prepare(q, clock)
    q.update(old, new)
    found = {
        "active": q.active_q.get(new.key),
        "backoff": q.backoff_q.get(new.key),
        "unschedulable": q.unschedulable_pods.get(new.key),
    }
    present = {name: p for name, p in found.items() if p is not None}
    if want_queue is None:
        assert present == {}
        return
    assert list(present) == [want_queue]
    assert present[want_queue].pod is new
    if want_nominated:
        assert len(q.nominator.nominated_pods) == 1


def test_update_when_in_flight_requeues_on_return() -> None:
    """TestPriorityQueue_UpdateWhenInflight."""
    q = new_queue(
        hint_table={EVENT_UNSCHEDULED_POD_UPDATE: [("fakePlugin", queue_hint_return_queue)]}
    )
    pod = make_pod().name("test-pod").namespace("test-ns").uid("test-uid").obj()
    q.add(pod)
    pop(q, pod)
    updated = dataclasses.replace(pod, tolerations=(Toleration(key="foo", effect="NoSchedule"),))
    q.update(pod, updated)
    assert q.add_unschedulable_if_not_present(lookup(updated, "fakePlugin"), 1) is None
    pinfo = q.backoff_q.get(updated.key)
    assert pinfo is not None and pinfo.pod is updated


def test_gated_pod_moves_when_its_gates_are_removed() -> None:
    """TestPerPodSchedulingMetrics ("A gated pod is created and scheduled after lifting gate"),
    with the real SchedulingGates plugin and its hint."""
    gates = SchedulingGates()
    clock = VirtualClock(START)
    traced: list[tuple[str, str, Code | None]] = []
    q = PriorityQueue(
        less=PrioritySort().less,
        clock=clock,
        pre_enqueue_plugins={"default-scheduler": [gates]},
        queueing_hints={
            "default-scheduler": {
                registered.event: [QueueingHintFunction(gates.name(), registered.queueing_hint_fn)]
                for registered in gates.events_to_register()
                if registered.queueing_hint_fn is not None
            }
        },
        on_pre_enqueue=lambda key, plugin, status: traced.append(
            (key, plugin, None if status is None else status.code)
        ),
    )
    pod = make_pod().name("gated").scheduling_gates(["example.com/gate"]).obj()
    q.add(pod)
    state = q.snapshot_state()
    assert state["gated"] == [
        {
            "pod": "default/gated",
            "attempts": 0,
            "gatingPlugin": names.SCHEDULING_GATES,
            "since": START,
        }
    ]
    assert state["unschedulablePods"] == []
    # Unrelated events never move a gated pod: its gating plugin registered none of them.
    q.move_all_to_active_or_backoff_queue(NODE_ADD, None, make_node().name("n").obj())
    q.flush_unschedulable_pods_leftover()
    clock.step(600)
    q.flush_unschedulable_pods_leftover()
    assert pod.key in q.unschedulable_pods
    ungated = dataclasses.replace(pod, scheduling_gates=())
    q.update(pod, ungated)
    popped = pop(q, ungated)
    assert popped.attempts == 1
    assert popped.initial_attempt_timestamp == START + 600
    assert traced == [
        ("default/gated", names.SCHEDULING_GATES, Code.UnschedulableAndUnresolvable),
        ("default/gated", names.SCHEDULING_GATES, None),
    ]


# --------------------------------------------------------------------------- Delete / Activate


def test_delete() -> None:
    """TestPriorityQueue_Delete."""
    q = new_queue()
    q.update(HIGH_POD, HIGH_NOMINATED_POD)
    q.add(UNSCHEDULABLE_POD)
    q.delete(HIGH_NOMINATED_POD)
    assert q.active_q.has(UNSCHEDULABLE_POD.key)
    assert not q.active_q.has(HIGH_NOMINATED_POD.key)
    assert len(q.nominator.nominated_pods) == 1
    q.delete(UNSCHEDULABLE_POD)
    assert q.nominator.nominated_pods == {}


@pytest.mark.parametrize(
    ("where", "in_flight", "want_active", "want_event"),
    [
        pytest.param("active", None, 1, False, id="already in activeQ"),
        pytest.param(None, None, 0, False, id="unknown pod"),
        pytest.param(None, HIGH_NOMINATED_POD, 0, True, id="in flight: ForceActivate recorded"),
        pytest.param(None, MED_POD, 0, False, id="another pod in flight"),
        pytest.param("unschedulable", None, 1, False, id="in the pool"),
        pytest.param("backoff", None, 1, False, id="in backoffQ"),
    ],
)
def test_activate(
    where: str | None, in_flight: Pod | None, want_active: int, want_event: bool
) -> None:
    """TestPriorityQueue_Activate."""
    q = new_queue()
    if in_flight is not None:
        q.active_q.add(lookup(in_flight))
        assert q.pop() is not None
    pinfo = QueuedPodInfo(pod_info=PodInfo(HIGH_NOMINATED_POD))
    if where == "active":
        q.add(HIGH_NOMINATED_POD)
    elif where == "unschedulable":
        q.unschedulable_pods.add_or_update(pinfo)
    elif where == "backoff":
        q.backoff_q.add(pinfo)
    q.activate({"test_pod": HIGH_NOMINATED_POD})
    assert len(q.active_q) == want_active
    events = [e for e in q.active_q.in_flight_log() if isinstance(e, InFlightEvent)]
    if want_event:
        assert events == [
            InFlightEvent(
                ClusterEvent("*", ActionType.All, "ForceActivate"), None, HIGH_NOMINATED_POD
            )
        ]
    else:
        assert events == []


@pytest.mark.parametrize(
    ("plugins", "pod_label", "event", "moves_from_backoff_q", "pop_from_backoff_q", "want"),
    [
        pytest.param((), "p", "UnschedulablePodAdd", False, True, True, id="no plugins"),
        pytest.param(
            (AllowlistPreEnqueue(), AllowlistPreEnqueue(name="second")),
            "p",
            "UnschedulablePodAdd",
            False,
            True,
            False,
            id="rejected",
        ),
        pytest.param(
            (AllowlistPreEnqueue(["foo", "bar"]), AllowlistPreEnqueue(["foo"], name="second")),
            "bar",
            "BackoffComplete",
            False,
            False,
            False,
            id="rejected after backoff without PopFromBackoffQ",
        ),
        pytest.param(
            (AllowlistPreEnqueue(["foo", "bar"]), AllowlistPreEnqueue(["foo"], name="second")),
            "bar",
            "BackoffComplete",
            True,
            True,
            True,
            id="from backoffQ with PopFromBackoffQ: PreEnqueue not run",
        ),
        pytest.param(
            (AllowlistPreEnqueue(["foo", "bar"]), AllowlistPreEnqueue(["bar"], name="second")),
            "bar",
            "UnschedulablePodAdd",
            False,
            True,
            True,
            id="all plugins pass",
        ),
    ],
)
def test_move_to_active_q(
    plugins: Sequence[PreEnqueuePlugin],
    pod_label: str,
    event: str,
    moves_from_backoff_q: bool,
    pop_from_backoff_q: bool,
    want: bool,
) -> None:
    """TestPriorityQueue_moveToActiveQ: a pod PreEnqueue rejects waits in the pool, gated, and an
    update that does not open its gate leaves it there."""
    pod = make_pod().name("p").label(pod_label, "").obj()
    q = new_queue(
        pre_enqueue=plugins,
        pod_initial_backoff=30.0,
        pod_max_backoff=60.0,
        pop_from_backoff_q=pop_from_backoff_q,
    )
    got = q._move_to_active_q(q.new_queued_pod_info(pod), event, moves_from_backoff_q)
    assert got is want
    assert len(q.unschedulable_pods) == (0 if want else 1)
    q.update(pod, with_annotation(pod, "foo", ""))
    assert len(q.unschedulable_pods) == (0 if want else 1)


# ------------------------------------------------------------------- MoveAllToActiveOrBackoffQueue


def test_move_all_to_active_or_backoff_queue() -> None:
    """TestPriorityQueue_MoveAllToActiveOrBackoffQueue."""
    clock = VirtualClock(START)
    q = new_queue(clock, {NODE_ADD: [("fooPlugin", queue_hint_return_queue)]})
    hpp1 = clone(HIGH_POD, "hpp1")
    hpp2 = clone(HIGH_POD, "hpp2")

    def in_flight() -> set[str]:
        return {p.name for p in q.in_flight_pods()}

    q.add(UNSCHEDULABLE_POD)
    pop(q, UNSCHEDULABLE_POD)
    q.add(HIGH_POD)
    pop(q, HIGH_POD)
    assert in_flight() == {"up", "hpp"}
    q.add_unschedulable_if_not_present(q.new_queued_pod_info(UNSCHEDULABLE_POD, "fooPlugin"), 2)
    q.add_unschedulable_if_not_present(q.new_queued_pod_info(HIGH_POD, "fooPlugin"), 2)
    assert in_flight() == set()
    q.add(hpp1)
    pop(q, hpp1)
    error_pinfo = q.new_queued_pod_info(hpp1)
    q.add_unschedulable_if_not_present(error_pinfo, q.scheduling_cycle())
    q.add(hpp2)
    pop(q, hpp2)
    q.add_unschedulable_if_not_present(q.new_queued_pod_info(hpp2, "barPlugin"), 4)
    # NodeAdd moves the fooPlugin pods to backoffQ; hpp2's barPlugin has no hint for it.
    q.move_all_to_active_or_backoff_queue(NODE_ADD, None, None)
    q.add(MED_POD)
    assert len(q.active_q) == 1
    pop(q, MED_POD)
    assert len(q.backoff_q) == 3
    clock.step(q.backoff_q.pod_max_backoff)
    q.backoff_q.pop_all_backoff_completed()
    assert in_flight() == {"mpp"}

    for p in (UNSCHEDULABLE_POD, HIGH_POD, hpp1):
        q.add(p)
        pop(q, p)
    q.add_unschedulable_if_not_present(q.new_queued_pod_info(UNSCHEDULABLE_POD, "fooPlugin"), 5)
    q.add_unschedulable_if_not_present(q.new_queued_pod_info(HIGH_POD, "fooPlugin"), 6)
    q.add_unschedulable_if_not_present(q.new_queued_pod_info(hpp1), 7)
    assert in_flight() == {"mpp"}
    q.add(MED_POD)
    for p in (UNSCHEDULABLE_POD, HIGH_POD, hpp2):
        assert p.key in q.unschedulable_pods
    assert q.backoff_q.has(hpp1.key)
    assert len(q.active_q) == 1

    clock.step(q.backoff_q.pod_max_backoff)
    q.flush_backoff_q_completed()
    q.move_all_to_active_or_backoff_queue(NODE_ADD, None, None)
    assert len(q.active_q) == 4
    assert len(q.backoff_q) == 0
    assert in_flight() == {"mpp"}
    assert len(q.unschedulable_pods) == 1  # hpp2 stays, whatever its backoff


ERRING_HINT_CALLS: list[str] = []


def _erring_hint(pod: Pod, old: object, new: object) -> QueueingHint:
    ERRING_HINT_CALLS.append(pod.name)
    raise RuntimeError("QueueingHintFn should not be called as pod is gated")


def _gated(pinfo: QueuedPodInfo, plugin: str, events: list[ClusterEvent]) -> QueuedPodInfo:
    pinfo.gating_plugin = plugin
    pinfo.unschedulable_plugins = {plugin}
    pinfo.gating_plugin_events = events
    return pinfo


@pytest.mark.parametrize(
    ("make_pinfo", "hint", "duration", "want_queue"),
    [
        pytest.param(
            lambda p: QueuedPodInfo(pod_info=PodInfo(p), pending_plugins={"foo"}),
            queue_hint_return_queue,
            0.0,
            "active",
            id="Pending plugin's Queue: activeQ",
        ),
        pytest.param(
            lambda p: QueuedPodInfo(pod_info=PodInfo(p), unschedulable_plugins={"foo"}),
            queue_hint_return_queue,
            0.0,
            "backoff",
            id="Queue while backing off: backoffQ",
        ),
        pytest.param(
            lambda p: QueuedPodInfo(pod_info=PodInfo(p), unschedulable_plugins={"foo"}),
            queue_hint_return_queue,
            2.0,
            "active",
            id="Queue after the backoff: activeQ",
        ),
        pytest.param(
            lambda p: QueuedPodInfo(pod_info=PodInfo(p), unschedulable_plugins={"foo"}),
            queue_hint_return_skip,
            0.0,
            "unschedulable",
            id="QueueSkip: the pool",
        ),
        pytest.param(
            lambda p: _gated(
                QueuedPodInfo(pod_info=PodInfo(p)),
                names.SCHEDULING_GATES,
                [EVENT_UNSCHEDULED_POD_UPDATE],
            ),
            _erring_hint,
            0.0,
            "unschedulable",
            id="gated by a plugin not interested: hint not called",
        ),
        pytest.param(
            lambda p: _gated(QueuedPodInfo(pod_info=PodInfo(p)), "foo", [NODE_ADD]),
            queue_hint_return_queue,
            0.0,
            "backoff",
            id="gated by a plugin interested: hint called",
        ),
    ],
)
def test_move_all_with_queueing_hint(
    make_pinfo: object, hint: QueueingHintFn, duration: float, want_queue: str
) -> None:
    """TestPriorityQueue_MoveAllToActiveOrBackoffQueueWithQueueingHint."""
    ERRING_HINT_CALLS.clear()
    clock = VirtualClock(1_735_689_600.0)  # 2025-01-01T00:00:00Z, on a window boundary
    pod = make_pod().name("pod1").namespace("ns1").uid("1").label("foo", "bar").obj()
    q = new_queue(
        clock,
        {
            NODE_ADD: [("foo", hint)],
            EVENT_UNSCHEDULED_POD_UPDATE: [(names.SCHEDULING_GATES, queue_hint_return_queue)],
        },
        pre_enqueue=[SchedulingGates(), AllowlistPreEnqueue(["foo"], name="foo")],
    )
    q.add(pod)
    pop(q, pod)
    assert callable(make_pinfo)
    pinfo = make_pinfo(pod)
    assert q.add_unschedulable_if_not_present(pinfo, q.scheduling_cycle()) is None
    clock.step(duration)
    q.move_all_to_active_or_backoff_queue(NODE_ADD, None, None)
    where = {
        "active": len(q.active_q) > 0,
        "backoff": len(q.backoff_q) > 0,
        "unschedulable": pod.key in q.unschedulable_pods,
    }
    assert [k for k, v in where.items() if v] == [want_queue]
    assert ERRING_HINT_CALLS == []


def test_erring_hint_counts_as_queue() -> None:
    """Test_isPodWorthRequeuing: "Treat the event as Queue when QueueHintFn returns error"."""
    q = new_queue(hint_table={NODE_ADD: [("fooPlugin1", _erring_hint)]})
    pinfo = lookup(make_pod().name("pod1").namespace("ns1").obj(), "fooPlugin1")
    node = make_node().obj()
    assert (
        q._is_pod_worth_requeuing(pinfo, NODE_ADD, None, node)
        == QueueingStrategy.QUEUE_AFTER_BACKOFF
    )


@pytest.mark.parametrize(
    ("pinfo", "event", "new_obj", "table", "want"),
    [
        pytest.param(
            lookup(make_pod().name("pod1").obj(), "fooPlugin1"),
            NODE_ADD,
            None,
            {EVENT_ASSIGNED_POD_ADD: [("fooPlugin1", queue_hint_return_queue)]},
            QueueingStrategy.QUEUE_SKIP,
            id="no hint registered for the event",
        ),
        pytest.param(
            lookup(make_pod().name("pod1").obj(), "fooPlugin1"),
            EVENT_UNSCHEDULABLE_TIMEOUT,
            None,
            {},
            QueueingStrategy.QUEUE_AFTER_BACKOFF,
            id="wildcard event",
        ),
        pytest.param(
            lookup(make_pod().name("pod1").obj(), "fooPlugin1"),
            ClusterEvent("*", ActionType.All, "ForceActivate"),
            make_pod().name("pod2").obj(),
            {},
            QueueingStrategy.QUEUE_SKIP,
            id="wildcard event for another pod",
        ),
        pytest.param(
            lookup(make_pod().name("pod1").obj()),
            NODE_ADD,
            None,
            {},
            QueueingStrategy.QUEUE_AFTER_BACKOFF,
            id="no rejector",
        ),
        pytest.param(
            lookup(make_pod().name("pod1").obj(), "fooPlugin1", "fooPlugin2"),
            NODE_ADD,
            None,
            {
                NODE_ADD: [
                    ("fooPlugin1", queue_hint_return_skip),
                    ("fooPlugin2", queue_hint_return_queue),
                ]
            },
            QueueingStrategy.QUEUE_AFTER_BACKOFF,
            id="one Queue among Skips",
        ),
        pytest.param(
            lookup(make_pod().name("pod1").obj(), "fooPlugin1"),
            ClusterEvent(EventResource.Node, ActionType.UpdateNodeLabel),
            None,
            {
                ClusterEvent(EventResource.Node, ActionType.Update): [
                    ("fooPlugin1", queue_hint_return_queue)
                ]
            },
            QueueingStrategy.QUEUE_AFTER_BACKOFF,
            id="a registered Update covers a specific update",
        ),
    ],
)
def test_is_pod_worth_requeuing(
    pinfo: QueuedPodInfo,
    event: ClusterEvent,
    new_obj: object,
    table: Mapping[ClusterEvent, Sequence[tuple[str, QueueingHintFn]]],
    want: QueueingStrategy,
) -> None:
    """Test_isPodWorthRequeuing."""
    q = new_queue(hint_table=table)
    assert q._is_pod_worth_requeuing(pinfo, event, None, new_obj) == want


@pytest.mark.parametrize(
    ("precheck", "want"),
    [
        pytest.param(None, {"p0", "p1", "p2", "p3", "p4"}, id="no precheck"),
        pytest.param(lambda p: p.effective_priority >= 2, {"p2", "p3", "p4"}, id="priority >= 2"),
        pytest.param(
            lambda p: p.effective_priority % 2 == 0 and p.effective_priority >= 2,
            {"p2", "p4"},
            id="even and >= 2",
        ),
        pytest.param(lambda p: p.effective_priority < 0, set(), id="none"),
    ],
)
def test_move_all_pre_enqueue_checks(precheck: object, want: set[str]) -> None:
    """TestMoveAllToActiveOrBackoffQueue_PreEnqueueChecks."""
    clock = VirtualClock(1_000_000.0)
    q = new_queue(clock)
    for i in range(5):
        pod = make_pod().name(f"p{i}").priority(i).obj()
        q.add(pod)
        pinfo = pop(q, pod)
        pinfo.unschedulable_plugins = {"plugin"}
        q.add_unschedulable_if_not_present(pinfo, q.scheduling_cycle())
    q.move_all_to_active_or_backoff_queue(
        EVENT_UNSCHEDULABLE_TIMEOUT,
        None,
        None,
        precheck,  # type: ignore[arg-type]
    )
    clock.step(2 * q.backoff_q.pod_max_backoff)
    assert {p.pod.name for p in q.backoff_q.pop_all_backoff_completed()} == want


def test_precheck_not_called_for_events_nobody_registered() -> None:
    q = new_queue()
    q.unschedulable_pods.add_or_update(lookup(HIGH_POD, "plugin"))

    def precheck(pod: Pod) -> bool:
        raise AssertionError("preCheck shouldn't be called")

    q.move_all_to_active_or_backoff_queue(PV_ADD, None, None, precheck)


# ------------------------------------------------------------------------ assigned pod events


def _affinity_pod() -> Pod:
    return (
        make_pod()
        .name("afp")
        .namespace("ns1")
        .uid("afp")
        .annotation("annot2", "val2")
        .pod_affinity_exists("service", "region", required=True)
        .obj()
    )


@pytest.mark.parametrize(
    ("unsched_plugin", "assigned", "event", "want_requeue"),
    [
        pytest.param(
            names.INTER_POD_AFFINITY,
            make_pod()
            .name("lbp")
            .namespace("ns1")
            .label("service", "securityscan")
            .node("node1")
            .obj(),
            None,
            True,
            id="affinity: matching pod",
        ),
        pytest.param(
            names.INTER_POD_AFFINITY,
            make_pod()
            .name("lbp")
            .namespace("unrelated")
            .label("unrelated", "unrelated")
            .node("node1")
            .obj(),
            None,
            False,
            id="affinity: unrelated pod",
        ),
        pytest.param(
            names.POD_TOPOLOGY_SPREAD,
            make_pod()
            .name("lbp")
            .namespace("ns1")
            .label("service", "securityscan")
            .node("node1")
            .obj(),
            None,
            True,
            id="spread: same namespace",
        ),
        pytest.param(
            names.POD_TOPOLOGY_SPREAD,
            make_pod()
            .name("lbp")
            .namespace("unrelated")
            .label("unrelated", "unrelated")
            .node("node1")
            .obj(),
            None,
            False,
            id="spread: unrelated pod",
        ),
        pytest.param(
            "fakePlugin",
            make_pod()
            .name("lbp")
            .namespace("unrelated")
            .label("unrelated", "unrelated")
            .node("node1")
            .obj(),
            None,
            False,
            id="other plugins: never",
        ),
        pytest.param(
            names.NODE_RESOURCES_FIT,
            make_pod().name("lbp").namespace("ns2").node("node1").obj(),
            ClusterEvent(EventResource.AssignedPod, ActionType.UpdatePodScaleDown),
            True,
            id="scale down: any pod",
        ),
    ],
)
def test_assigned_pod_added_and_updated(
    unsched_plugin: str, assigned: Pod, event: ClusterEvent | None, want_requeue: bool
) -> None:
    """TestPriorityQueue_AssignedPodAdded_ and TestPriorityQueue_AssignedPodUpdated."""
    label_update = ClusterEvent(EventResource.Pod, ActionType.UpdatePodLabel)
    all_three = [
        ("fakePlugin", queue_hint_return_queue),
        (names.INTER_POD_AFFINITY, queue_hint_return_queue),
        (names.POD_TOPOLOGY_SPREAD, queue_hint_return_queue),
    ]
    table = {
        EVENT_ASSIGNED_POD_ADD: all_three,
        label_update: all_three,
        ClusterEvent(EventResource.Pod, ActionType.UpdatePodScaleDown): [
            (names.NODE_RESOURCES_FIT, queue_hint_return_queue)
        ],
    }
    for updated in (False, True):
        if event is not None and not updated:
            continue
        clock = VirtualClock(START)
        q = new_queue(clock, table)
        pod = _affinity_pod()
        q.add(pod)
        pop(q, pod)
        q.add_unschedulable_if_not_present(q.new_queued_pod_info(pod, unsched_plugin), 1)
        clock.step(1.0 + 1.0)
        if updated:
            q.assigned_pod_updated(assigned, assigned, event or label_update)
        else:
            q.assigned_pod_added(assigned)
        assert q.active_q.has(pod.key) is want_requeue


# ----------------------------------------------------------------------- order and timestamps


def test_recently_tried_pods_go_back() -> None:
    """TestRecentlyTriedPodsGoBack."""
    clock = VirtualClock(START)
    q = new_queue(clock)
    for i in range(5):
        q.add(
            make_pod()
            .name(f"test-pod-{i}")
            .namespace("ns1")
            .uid(f"tp00{i}")
            .priority(HIGH)
            .nominated_node_name("node1")
            .obj()
        )
    clock.step(1e-6)
    p1 = q.pop()
    assert p1 is not None
    p1.unschedulable_plugins = {"plugin"}
    q.add_unschedulable_if_not_present(p1, q.scheduling_cycle())
    clock.step(q.backoff_q.pod_max_backoff)
    q.move_all_to_active_or_backoff_queue(EVENT_UNSCHEDULABLE_TIMEOUT, None, None)
    for i in range(5):
        assert (q.pop() is p1) == (i == 4)


def test_pod_failed_multiple_times_does_not_block_newer_pod() -> None:
    """TestPodFailedSchedulingMultipleTimesDoesNotBlockNewerPod."""
    clock = VirtualClock(START)
    q = new_queue(clock)
    unsched = make_pod().name("test-pod-unscheduled").namespace("ns1").priority(HIGH).obj()
    q.add(unsched)
    pop(q, unsched)
    q.add_unschedulable_if_not_present(lookup(unsched, "plugin"), q.scheduling_cycle())
    clock.step(1.0 + 1.0)
    q.move_all_to_active_or_backoff_queue(EVENT_UNSCHEDULABLE_TIMEOUT, None, None)
    pop(q, unsched)
    newer = make_pod().name("test-newer-pod").namespace("ns1").priority(HIGH).obj()
    q.add(newer)
    q.add_unschedulable_if_not_present(lookup(unsched, "plugin"), q.scheduling_cycle())
    clock.step(1.0 + 1.0)
    q.move_all_to_active_or_backoff_queue(EVENT_UNSCHEDULABLE_TIMEOUT, None, None)
    pop(q, newer)


def test_high_priority_backoff() -> None:
    """TestHighPriorityBackoff: an unschedulable high-priority pod does not block others."""
    q = new_queue()
    mid = make_pod().name("test-midpod").namespace("ns1").priority(MID).obj()
    high = make_pod().name("test-highpod").namespace("ns1").priority(HIGH).obj()
    q.add(mid)
    q.add(high)
    pop(q, high)
    q.add_unschedulable_if_not_present(lookup(high, "fooPlugin"), q.scheduling_cycle())
    q.move_all_to_active_or_backoff_queue(EVENT_UNSCHEDULABLE_TIMEOUT, None, None)
    pop(q, mid)


def test_high_priority_flush_unschedulable_pods_leftover() -> None:
    """TestHighPriorityFlushUnschedulablePodsLeftover."""
    clock = VirtualClock(START)
    q = new_queue(clock, {NODE_ADD: [("fakePlugin", queue_hint_return_queue)]})
    mid = make_pod().name("test-midpod").namespace("ns1").priority(MID).obj()
    high = make_pod().name("test-highpod").namespace("ns1").priority(HIGH).obj()
    q.add(high)
    pop(q, high)
    q.add(mid)
    pop(q, mid)
    q.add_unschedulable_if_not_present(q.new_queued_pod_info(high, "fakePlugin"), 2)
    q.add_unschedulable_if_not_present(q.new_queued_pod_info(mid, "fakePlugin"), 2)
    clock.step(300.0 + 1.0)
    q.flush_unschedulable_pods_leftover()
    pop(q, high)
    pop(q, mid)


@pytest.mark.parametrize(
    ("limit", "step", "want_moved"),
    [
        pytest.param(None, 300.0, ["test-pod-2", "test-pod-1"], id="default 5 minutes"),
        pytest.param(30.0, 30.0, ["test-pod-2", "test-pod-1"], id="user-defined 30 s"),
        pytest.param(30.0, 28.5, ["test-pod-2"], id="only pods strictly older than the limit"),
    ],
)
def test_flush_unschedulable_pods_leftover(
    limit: float | None, step: float, want_moved: list[str]
) -> None:
    """TestPriorityQueue_initPodMaxInUnschedulablePodsDuration."""
    clock = VirtualClock(START)
    q = (
        new_queue(clock)
        if limit is None
        else new_queue(clock, pod_max_in_unschedulable_pods_duration=limit)
    )
    for name, age in (("test-pod-1", 1.0), ("test-pod-2", 2.0)):
        pod = make_pod().name(name).namespace("ns").nominated_node_name("node1").obj()
        pinfo = QueuedPodInfo(pod_info=PodInfo(pod), timestamp=START - age, unschedulable_count=1)
        q.unschedulable_pods.add_or_update(pinfo)
    assert q.next_unschedulable_timeout() == math.nextafter(START - 2 + (limit or 300.0), math.inf)
    clock.step(step)
    q.flush_unschedulable_pods_leftover()
    assert [p.pod.name for p in q.active_q.ordered()] == want_moved


def _add_active_directly(q: PriorityQueue, pinfo: QueuedPodInfo) -> None:
    q.active_q.add(pinfo)


def _add_unschedulable(q: PriorityQueue, pinfo: QueuedPodInfo) -> None:
    pinfo.unschedulable_count += 1
    q.unschedulable_pods.add_or_update(pinfo)


def _pod_timestamp_infos() -> tuple[QueuedPodInfo, QueuedPodInfo]:
    pod1 = make_pod().name("test-pod-1").namespace("ns1").nominated_node_name("node1").obj()
    pod2 = make_pod().name("test-pod-2").namespace("ns2").nominated_node_name("node2").obj()
    return (
        QueuedPodInfo(pod_info=PodInfo(pod1), timestamp=START),
        QueuedPodInfo(pod_info=PodInfo(pod2), timestamp=START + 1),
    )


@pytest.mark.parametrize("scenario", ["activeQ", "unschedulablePods", "backoffQ"])
def test_pod_timestamp(scenario: str) -> None:
    """TestPodTimestamp: pods of one priority leave by the time they entered."""
    clock = VirtualClock(START)
    q = new_queue(clock)
    info1, info2 = _pod_timestamp_infos()
    if scenario == "activeQ":
        _add_active_directly(q, info2)
        _add_active_directly(q, info1)
    elif scenario == "unschedulablePods":
        _add_unschedulable(q, info2)
        _add_unschedulable(q, info1)
        clock.step(3)
        q.move_all_to_active_or_backoff_queue(EVENT_UNSCHEDULABLE_TIMEOUT, None, None)
    else:
        _add_active_directly(q, info2)
        q.backoff_q.add(info1)
        clock.step(3)
        q.flush_backoff_q_completed()
        q.move_all_to_active_or_backoff_queue(EVENT_UNSCHEDULABLE_TIMEOUT, None, None)
    assert [q.pop() for _ in range(2)] == [info1, info2]


# ------------------------------------------------------------------------------ backoff flow


@pytest.mark.parametrize("pop_from_backoff_q", [True, False])
def test_backoff_flow(pop_from_backoff_q: bool) -> None:
    """TestBackOffFlow: 1, 2, 4, 8, 10, 10, 10 seconds for successive rejections."""
    clock = VirtualClock(START)
    q = new_queue(clock, pop_from_backoff_q=pop_from_backoff_q)
    pod = make_pod().name("test-pod").namespace("test-ns").uid("test-uid").obj()
    q.add(pod)
    for i, want in enumerate([1.0, 2.0, 4.0, 8.0, 10.0, 10.0, 10.0]):
        timestamp = clock.now()
        pinfo = pop(q, pod)
        assert pinfo.attempts == i + 1
        pinfo.unschedulable_plugins.add("unsched-plugin")
        assert q.add_unschedulable_if_not_present(pinfo, i) is None
        q.move_all_to_active_or_backoff_queue(EVENT_UNSCHEDULABLE_TIMEOUT, None, None)
        assert q.backoff_q.has(pod.key)
        assert pinfo.backoff_expiration is not None
        backoff = pinfo.backoff_expiration - timestamp
        if pop_from_backoff_q:
            # The expiry is truncated to its window; it completes when the window is over.
            backoff = math.floor(backoff) + 1.0
        assert backoff == pytest.approx(want)
        assert q.next_wakeup() == pytest.approx(
            pinfo.backoff_expiration + (1.0 if pop_from_backoff_q else 0.0)
        )
        clock.step(1.0)
        q.flush_backoff_q_completed()
        assert q.backoff_q.has(pod.key), "still backing off after an early flush"
        clock.step(backoff)
        q.flush_backoff_q_completed()
        assert not q.backoff_q.has(pod.key)


def test_next_wakeup_jumps_to_the_flush_that_moves_the_pod() -> None:
    clock = VirtualClock(START)
    q = new_queue(clock)
    assert q.next_wakeup() is None
    q.add(HIGH_POD)
    pinfo = pop(q, HIGH_POD)
    pinfo.unschedulable_plugins = {"p"}
    q.add_unschedulable_if_not_present(pinfo, 1)
    q.move_all_to_active_or_backoff_queue(EVENT_UNSCHEDULABLE_TIMEOUT, None, None)
    wakeup = q.next_wakeup()
    assert wakeup == math.floor(START + 1.0) + 1.0
    clock.set(wakeup - 0.001)
    q.flush_backoff_q_completed()
    assert q.backoff_q.has(HIGH_POD.key)
    clock.set(wakeup)
    q.flush_backoff_q_completed()
    assert q.active_q.has(HIGH_POD.key)


# ------------------------------------------------------------------------ pending pods / trace


def test_pending_pods() -> None:
    """TestPriorityQueue_PendingPods."""
    q = new_queue()
    q.add(UNSCHEDULABLE_POD)
    pop(q, UNSCHEDULABLE_POD)
    q.add(HIGH_POD)
    pop(q, HIGH_POD)
    q.add(MED_POD)
    q.add_unschedulable_if_not_present(q.new_queued_pod_info(UNSCHEDULABLE_POD, "plugin"), 2)
    q.add_unschedulable_if_not_present(q.new_queued_pod_info(HIGH_POD, "plugin"), 2)
    want = {MED_POD.key, UNSCHEDULABLE_POD.key, HIGH_POD.key}
    pods, summary = q.pending_pods()
    assert {p.key for p in pods} == want
    assert (
        summary
        == PENDING_PODS_SUMMARY.format(1, 0, 2)
        == "activeQ:1; backoffQ:0; unschedulablePods:2"
    )
    q.move_all_to_active_or_backoff_queue(EVENT_UNSCHEDULABLE_TIMEOUT, None, None)
    pods, summary = q.pending_pods()
    assert {p.key for p in pods} == want
    assert summary == "activeQ:1; backoffQ:2; unschedulablePods:0"


def _pending_counts(q: PriorityQueue) -> dict[str, int]:
    state = q.snapshot_state()
    return {
        "active": len(state["activeQ"]),
        "backoff": len(state["backoffQ"]),
        "gated": len(state["gated"]),
        "unschedulable": len(state["unschedulablePods"]),
    }


def _metric_pods() -> tuple[list[QueuedPodInfo], list[QueuedPodInfo]]:
    def make(n: int, prefix: str, label: str, timestamp: float) -> list[QueuedPodInfo]:
        return [
            QueuedPodInfo(
                pod_info=PodInfo(
                    make_pod().name(f"{prefix}-{i}").namespace(f"ns{i}").label(label, "").obj()
                ),
                timestamp=timestamp,
            )
            for i in range(1, n + 1)
        ]

    pinfos = make(50, "x", "queueable", START)
    gated = make(10, "y", "failme", START)
    for pinfo in gated:
        _gated(pinfo, "preEnqueuePlugin", [EVENT_UNSCHEDULED_POD_UPDATE])
    return pinfos + gated, make(20, "z", "queueable", START + 2)


def _op_add_active(q: PriorityQueue, p: QueuedPodInfo) -> None:
    q.add(p.pod)


def _op_add_unschedulable(q: PriorityQueue, p: QueuedPodInfo) -> None:
    if not p.gated:
        p.unschedulable_count += 1
    q.unschedulable_pods.add_or_update(p)


def _op_add_backoff(q: PriorityQueue, p: QueuedPodInfo) -> None:
    q.backoff_q.add(p)


def _op_move_all(q: PriorityQueue, p: QueuedPodInfo | None) -> None:
    q.move_all_to_active_or_backoff_queue(EVENT_UNSCHEDULABLE_TIMEOUT, None, None)


def _op_clock(q: PriorityQueue, p: QueuedPodInfo | None) -> None:
    q._clock.step(3.0)  # type: ignore[attr-defined]


def _op_flush_backoff(q: PriorityQueue, p: QueuedPodInfo | None) -> None:
    _op_clock(q, p)
    q.flush_backoff_q_completed()


def _op_delete(q: PriorityQueue, p: QueuedPodInfo) -> None:
    q.delete(p.pod)


def _op_update_queueable(q: PriorityQueue, p: QueuedPodInfo) -> None:
    q.update(p.pod, dataclasses.replace(p.pod, labels={"queueable": ""}))


@pytest.mark.parametrize(
    ("steps", "want"),
    [
        pytest.param(
            [(_op_add_active, slice(0, 30)), (_op_add_unschedulable, slice(30, 60))],
            {"active": 30, "backoff": 0, "gated": 10, "unschedulable": 20},
            id="activeQ and pool",
        ),
        pytest.param(
            [
                (_op_add_active, slice(0, 15)),
                (_op_add_backoff, slice(15, 40)),
                (_op_add_unschedulable, slice(40, 60)),
            ],
            {"active": 15, "backoff": 25, "gated": 10, "unschedulable": 10},
            id="all queues",
        ),
        pytest.param(
            [(_op_add_unschedulable, slice(0, 60)), (_op_clock, None), (_op_move_all, None)],
            {"active": 50, "backoff": 0, "gated": 10, "unschedulable": 0},
            id="pool moved to activeQ, gated pods stay",
        ),
        pytest.param(
            [
                (_op_add_unschedulable, slice(20, 60)),
                (_op_clock, None),
                (_op_add_unschedulable, "delayed"),
                (_op_move_all, None),
            ],
            {"active": 30, "backoff": 20, "gated": 10, "unschedulable": 0},
            id="some pods still backing off",
        ),
        pytest.param(
            [
                (_op_add_unschedulable, slice(0, 40)),
                (_op_add_active, slice(40, 50)),
                (_op_move_all, None),
                (_op_flush_backoff, None),
            ],
            {"active": 50, "backoff": 0, "gated": 0, "unschedulable": 0},
            id="move all then flush backoffQ",
        ),
        pytest.param(
            [
                (_op_add_active, slice(0, 30)),
                (_op_add_unschedulable, slice(30, 60)),
                (_op_delete, slice(0, 2)),
                (_op_delete, slice(30, 33)),
                (_op_delete, slice(50, 54)),
            ],
            {"active": 28, "backoff": 0, "gated": 6, "unschedulable": 17},
            id="deletes",
        ),
        pytest.param(
            [
                (_op_add_active, slice(0, 30)),
                (_op_add_unschedulable, slice(30, 60)),
                (_op_update_queueable, slice(50, 55)),
            ],
            {"active": 35, "backoff": 0, "gated": 5, "unschedulable": 20},
            id="updates open the gate of five",
        ),
    ],
)
def test_pending_pods_counts(steps: list[tuple[object, object]], want: dict[str, int]) -> None:
    """TestPendingPodsMetric, counted from the trace snapshot."""
    q = new_queue(
        VirtualClock(START),
        {EVENT_UNSCHEDULED_POD_UPDATE: [("preEnqueuePlugin", queue_hint_return_queue)]},
        pre_enqueue=[AllowlistPreEnqueue(["queueable"])],
    )
    pinfos, delayed = _metric_pods()
    for op, which in steps:
        assert callable(op)
        if which is None:
            op(q, None)
            continue
        selected = delayed if which == "delayed" else pinfos[cast(slice, which)]
        for pinfo in selected:
            op(q, pinfo)
    assert _pending_counts(q) == want
    _, summary = q.pending_pods()
    assert summary == PENDING_PODS_SUMMARY.format(
        want["active"], want["backoff"], want["gated"] + want["unschedulable"]
    )


def test_per_pod_scheduling_metrics() -> None:
    """TestPerPodSchedulingMetrics: attempts count pops; the initial attempt time stays."""
    clock = VirtualClock(START)
    q = new_queue(clock)
    pod = make_pod().name("test-pod").namespace("test-ns").uid("test-uid").obj()
    q.add(pod)
    pinfo = pop(q, pod)
    pinfo.unschedulable_plugins = {"plugin"}
    q.add_unschedulable_if_not_present(pinfo, 1)
    clock.set(START + 300.0 + 1e-9)
    q.flush_unschedulable_pods_leftover()
    updated = dataclasses.replace(pod, annotations={"generation": "1"})
    q.update(pod, updated)
    pinfo = pop(q, updated)
    assert pinfo.attempts == 2
    assert pinfo.initial_attempt_timestamp == START


def test_snapshot_state_is_json_and_in_pop_order() -> None:
    import json

    clock = VirtualClock(START)
    q = new_queue(clock)
    q.add(MED_POD)
    q.add(HIGH_POD)
    q.add(UNSCHEDULABLE_POD)
    popped = pop(q, HIGH_POD)
    popped.unschedulable_plugins = {"NodeResourcesFit"}
    q.add_unschedulable_if_not_present(popped, 1)
    pop(q, MED_POD)
    state = q.snapshot_state()
    json.dumps(state)
    assert state == {
        "activeQ": [{"pod": "ns1/up", "attempts": 0}],
        "backoffQ": [],
        "unschedulablePods": [
            {
                "pod": "ns1/hpp",
                "attempts": 1,
                "unschedulablePlugins": ["NodeResourcesFit"],
                "pendingPlugins": [],
                "since": START,
            }
        ],
        "gated": [],
        "inFlight": [{"pod": "ns2/mpp", "attempts": 1}],
        "inFlightEvents": [],
        # hpp's failure was its own, not an event's: no move.
        "moves": [],
    }


def test_snapshot_state_shares_what_did_not_change_and_never_edits_earlier_snapshots() -> None:
    """Snapshots hand the entries and lists that still hold to the next one: each equals a
    snapshot made from scratch, and each packs, at the end, to the bytes it packed to when it
    was made, whatever the queue did meanwhile (pops, failures, gates changing in place)."""
    clock = VirtualClock(START)
    gate_a = AllowlistPreEnqueue(["a"], name="gateA")
    gate_b = AllowlistPreEnqueue(["b"], name="gateB")
    q = new_queue(
        clock, {NODE_ADD: [("fooPlugin", queue_hint_return_queue)]}, pre_enqueue=[gate_a, gate_b]
    )
    limit = 3
    made: list[tuple[dict[str, object], bytes]] = []

    def snapshot() -> dict[str, object]:
        state = q.snapshot_state(limit)
        # From scratch; another limit (the live view's) leaves this one's reuse alone.
        q._snapshot_caches.pop(None, None)
        full = q.snapshot_state()
        assert state == {name: entries[:limit] for name, entries in full.items()}
        made.append((state, msgpack.packb(state)))
        return state

    pods = [make_pod().name(f"p{i}").label("a", "").label("b", "").obj() for i in range(6)]
    for p in pods:
        q.add(p)
    first = snapshot()
    popped = pop(q, pods[0])
    second = snapshot()
    assert cast(list[object], second["activeQ"])[0] is cast(list[object], first["activeQ"])[1]
    popped.unschedulable_plugins = {"fooPlugin"}
    q.add_unschedulable_if_not_present(popped, q.scheduling_cycle())
    third = snapshot()
    assert snapshot()["unschedulablePods"] is third["unschedulablePods"]
    # Gated by gateB, then, the plugins changing their minds, by gateA: in place, in the pool.
    gated = make_pod().name("gated").label("a", "").obj()
    q.add(gated)
    snapshot()
    gate_a.allowlists, gate_b.allowlists = [], ["a"]
    q.activate({gated.key: gated})
    gated_entries = cast(list[dict[str, object]], snapshot()["gated"])
    assert gated_entries[0]["gatingPlugin"] == "gateA"
    gate_a.allowlists, gate_b.allowlists = ["a"], ["b"]
    q.update(pods[0], with_annotation(pods[0], "k", "v"))
    snapshot()
    q.move_all_to_active_or_backoff_queue(NODE_ADD, None, None)
    snapshot()
    for p in pods[1:4]:
        pop(q, p)
        snapshot()
    q.requeue_in_flight()
    snapshot()
    assert [msgpack.packb(state) for state, _ in made] == [packed for _, packed in made]


def test_move_all_asks_a_gated_pod_again_once_its_gate_changed_in_place() -> None:
    """An event that passed a pool pod over is asked again once the pod changed in the pool."""
    calls: list[str] = []

    def recording_hint(pod: Pod, old: object, new: object) -> QueueingHint:
        calls.append(pod.name)
        return QueueingHint.QueueSkip

    gate_a = AllowlistPreEnqueue(["a"], name="gateA")
    gate_b = AllowlistPreEnqueue(["b"], name="gateB")
    q = new_queue(None, {NODE_ADD: [("gateA", recording_hint)]}, pre_enqueue=[gate_a, gate_b])
    gated = make_pod().name("gated").label("a", "").obj()
    q.add(gated)
    q.move_all_to_active_or_backoff_queue(NODE_ADD, None, None)
    assert calls == []  # gateB registered no event: passed over
    gate_a.allowlists, gate_b.allowlists = [], ["a"]
    q.activate({gated.key: gated})
    q.move_all_to_active_or_backoff_queue(NODE_ADD, None, None)
    assert calls == ["gated"]


def test_event_labels_match_upstream() -> None:
    assert EVENT_UNSCHEDULED_POD_ADD.label() == "UnschedulablePodAdd"
    assert EVENT_UNSCHEDULED_POD_UPDATE.label() == "UnschedulablePodUpdate"
    assert EVENT_UNSCHEDULABLE_TIMEOUT.label() == "UnschedulableTimeout"


def test_snapshot_state_limit_keeps_the_heads() -> None:
    clock = VirtualClock(START)
    q = new_queue(clock)
    pods = [make_pod().name(f"p{i}").priority(i).obj() for i in range(6)]
    for p in pods:
        q.add(p)
    state = q.snapshot_state(limit=2)
    assert state["activeQ"] == [
        {"pod": "default/p5", "attempts": 0},
        {"pod": "default/p4", "attempts": 0},
    ]
    assert [e["pod"] for e in q.snapshot_state()["activeQ"]] == [
        f"default/p{i}" for i in range(5, -1, -1)
    ]
    assert len(q.active_q) == 6


@pytest.mark.parametrize(
    ("plugins", "pod_label", "pop_from_backoff_q", "want"),
    [
        pytest.param((), "p", True, True, id="no plugins"),
        pytest.param(
            (AllowlistPreEnqueue(), AllowlistPreEnqueue(name="second")),
            "p",
            False,
            True,
            id="would reject, but PreEnqueue does not run without PopFromBackoffQ",
        ),
        pytest.param(
            (AllowlistPreEnqueue(), AllowlistPreEnqueue(name="second")),
            "p",
            True,
            False,
            id="rejected on the way into backoffQ",
        ),
        pytest.param(
            (AllowlistPreEnqueue(["foo", "bar"]), AllowlistPreEnqueue(["bar"], name="second")),
            "bar",
            True,
            True,
            id="all plugins pass",
        ),
    ],
)
def test_move_to_backoff_q(
    plugins: Sequence[PreEnqueuePlugin], pod_label: str, pop_from_backoff_q: bool, want: bool
) -> None:
    """TestPriorityQueue_moveToBackoffQ."""
    pod = make_pod().name("p").label(pod_label, "").obj()
    q = new_queue(
        pre_enqueue=plugins,
        pod_initial_backoff=30.0,
        pod_max_backoff=60.0,
        pop_from_backoff_q=pop_from_backoff_q,
    )
    pinfo = q.new_queued_pod_info(pod)
    assert q._move_to_backoff_q(pinfo, EVENT_UNSCHEDULED_POD_ADD.label()) is want
    assert q.backoff_q.has(pod.key) is want
    assert (pod.key in q.unschedulable_pods) is not want


def test_concurrent_event_seen_by_a_pod_popped_later_still_counts() -> None:
    """Test_InFlightPods: "pod is enqueued to activeQ because the pending plugin has a hint fn and
    it returns Queue for a concurrent event that was received while some other pod was in
    flight"."""
    pod1 = make_pod().name("targetpod").uid("pod1").obj()
    pod2 = make_pod().name("targetpod2").uid("pod2").obj()
    clock = VirtualClock(START)
    q = new_queue(
        clock,
        {
            EVENT_ASSIGNED_POD_ADD: [
                ("fooPlugin3", queue_hint_return_skip),
                ("fooPlugin2", queue_hint_return_queue),
                ("fooPlugin1", queue_hint_return_queue),
            ]
        },
    )
    for p in (pod1, pod2):
        q.add(p)
        clock.step(1)
    popped1 = pop(q, pod1)
    q.move_all_to_active_or_backoff_queue(NODE_ADD, None, None)
    popped2 = pop(q, pod2)
    q.move_all_to_active_or_backoff_queue(EVENT_ASSIGNED_POD_ADD, None, None)
    q.add_unschedulable_if_not_present(popped1, q.scheduling_cycle())
    popped2.unschedulable_plugins = {"fooPlugin2", "fooPlugin3"}
    popped2.pending_plugins = {"fooPlugin1"}
    q.add_unschedulable_if_not_present(popped2, q.scheduling_cycle())
    assert [p.pod.name for p in q.active_q.items()] == ["targetpod2"]
    assert [p.pod.name for p in q.backoff_q.items()] == ["targetpod"]
    assert q.in_flight_pods() == []
    assert q.active_q.in_flight_log() == []


def test_pods_rejected_at_one_instant_leave_backoff_q_in_the_order_they_failed() -> None:
    # q2-backoffq-tie-order (qdiff): a failed at t and waits in the pool; b failed at t too,
    # after a, but an event seen in flight sent it to backoffQ at once; then an event moves a
    # to backoffQ. Same window, priority and timestamp: upstream's timestamps (nanoseconds)
    # put a first, the order their attempts failed, not the order they reached backoffQ.
    clock = VirtualClock(START)
    q = new_queue(clock, {NODE_ADD: [("Fit", queue_hint_return_queue)]})
    a, b = (make_pod().name(n).uid(n).priority(MID).obj() for n in ("a", "b"))
    q.add(a)
    q.add(b)
    first, second = pop(q, a), pop(q, b)
    first.unschedulable_plugins.add("Fit")
    q.add_unschedulable_if_not_present(first, q.scheduling_cycle())
    q.move_all_to_active_or_backoff_queue(NODE_ADD, None, make_node().name("n").obj())
    assert [p.key for p, _ in q.backoff_q.ordered()] == ["default/a"]
    # b was in flight during that event: it comes back to backoffQ.
    second.unschedulable_plugins.add("Fit")
    q.add_unschedulable_if_not_present(second, q.scheduling_cycle())
    assert first.timestamp == second.timestamp
    assert [p.key for p, _ in q.backoff_q.ordered()] == ["default/a", "default/b"]
    assert [pop(q, a).key, pop(q, b).key] == ["default/a", "default/b"]


def test_moves_since_the_last_pop_name_event_pod_queue_plugin_and_object() -> None:
    clock = VirtualClock(START)
    q = new_queue(
        clock,
        {
            NODE_ADD: [("Skipper", queue_hint_return_skip), ("Fit", queue_hint_return_queue)],
            PV_ADD: [("Fit", queue_hint_return_queue)],
        },
    )
    a, b = (make_pod().name(n).uid(n).priority(MID).obj() for n in ("a", "b"))
    for pod in (a, b):
        q.add(pod)
    rejected = pop(q, a)
    rejected.unschedulable_plugins.update({"Fit", "Skipper"})
    q.add_unschedulable_if_not_present(rejected, q.scheduling_cycle())
    in_flight = pop(q, b)
    node = make_node().name("node-1").obj()
    q.move_all_to_active_or_backoff_queue(NODE_ADD, None, node)
    in_flight.unschedulable_plugins.add("Fit")
    q.add_unschedulable_if_not_present(in_flight, q.scheduling_cycle())
    clock.step(2.0)
    q.flush_backoff_q_completed()
    moves = q.snapshot_state()["moves"]
    assert moves == [
        {"event": "NodeAdd", "pod": "default/a", "queue": "Backoff", "plugin": "Fit",
         "object": "node-1"},
        {"event": "ScheduleAttemptFailure", "pod": "default/b", "queue": "Backoff",
         "plugin": "Fit", "cause": "NodeAdd", "object": "node-1"},
        {"event": "BackoffComplete", "pod": "default/a", "queue": "Active"},
        {"event": "BackoffComplete", "pod": "default/b", "queue": "Active"},
    ]  # fmt: skip
    assert q.moves_since_pop == 4
    assert q.snapshot_state(limit=1)["moves"] == moves[:1]
    pop(q, a)
    assert q.snapshot_state()["moves"] == []
    assert q.moves_since_pop == 0
