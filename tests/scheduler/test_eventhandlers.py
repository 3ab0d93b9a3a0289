"""The informers' handlers (schedviz/scheduler/eventhandlers.py, upstream eventhandlers.go): a
nominated pod's nomination changing, the pod deleted or bound, moves the unschedulable pods of
lower or equal priority (eventhandlers_test.go TestEventHandlers_MoveToActiveOnNominatedNodeUpdate,
queueing hints on, as they are locked in v1.34)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import pytest

from schedviz.kube.objects import Pod
from schedviz.scheduler.apis.config.v1 import decode_configuration
from schedviz.scheduler.backend.queue.scheduling_queue import (
    PriorityQueue,
    QueueingHintFunction,
)
from schedviz.scheduler.clock import VirtualClock
from schedviz.scheduler.framework.plugins.prioritysort import PrioritySort
from schedviz.scheduler.framework.plugins.registry import new_in_tree_registry
from schedviz.scheduler.framework.types import EVENT_ASSIGNED_POD_DELETE, QueueingHint
from schedviz.scheduler.scheduler import Scheduler
from schedviz.scheduler.store import MODIFIED, ClusterStore
from schedviz.scheduler.testing.wrappers import make_pod

HIGH, MID, LOW = 100, 50, 10

HIGH_POD = make_pod().name("hpp").namespace("ns1").uid("hppns1").priority(HIGH).obj()
MED_NOMINATED_POD = (
    make_pod()
    .name("mpp")
    .namespace("ns2")
    .uid("mppns1")
    .priority(MID)
    .nominated_node_name("node1")
    .obj()
)
MED_POD = make_pod().name("smpp").namespace("ns3").uid("mppns2").priority(MID).obj()
LOW_POD = make_pod().name("lpp").namespace("ns4").uid("lppns1").priority(LOW).obj()
UNSCHEDULABLE = [HIGH_POD, MED_NOMINATED_POD, MED_POD, LOW_POD]


def queue_hint_for_pod_delete(pod: Pod, old: object, new: object) -> QueueingHint:
    """Schedulable after the delete of a pod that held a nomination, not otherwise."""
    assert isinstance(old, Pod)
    return QueueingHint.Queue if old.nominated_node_name else QueueingHint.QueueSkip


def scheduler_with_unschedulable_pods() -> Scheduler:
    """A scheduler whose queue holds the four pods in unschedulablePods, each rejected by
    fooPlugin1, with backoff off (a move goes to activeQ)."""
    config = decode_configuration(
        {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
    )
    clock = VirtualClock()
    sched = Scheduler(config, new_in_tree_registry(), ClusterStore(), clock)
    sched.queue = PriorityQueue(
        less=PrioritySort().less,
        clock=clock,
        pod_initial_backoff=0.0,
        pod_max_backoff=0.0,
        queueing_hints={
            "default-scheduler": {
                EVENT_ASSIGNED_POD_DELETE: [
                    QueueingHintFunction("fooPlugin1", queue_hint_for_pod_delete)
                ]
            }
        },
    )
    for pod in UNSCHEDULABLE:
        sched.queue.add(pod)
        popped = sched.queue.pop()
        assert popped is not None
        popped.unschedulable_plugins.add("fooPlugin1")
        assert sched.queue.add_unschedulable_if_not_present(popped, 0) is None
    return sched


def update_nominated_node(name: str) -> Callable[[Scheduler], None]:
    def update(sched: Scheduler) -> None:
        updated = dataclasses.replace(MED_NOMINATED_POD, nominated_node_name=name)
        sched.update_pod_in_scheduling_queue(MED_NOMINATED_POD, updated)

    return update


def nominate_high_priority_pod(sched: Scheduler) -> None:
    updated = dataclasses.replace(HIGH_POD, nominated_node_name="node2")
    sched.update_pod_in_scheduling_queue(HIGH_POD, updated)


def delete_nominated_pod(sched: Scheduler) -> None:
    sched.delete_pod_from_scheduling_queue(MED_NOMINATED_POD)


def bind_nominated_pod(sched: Scheduler) -> None:
    # The informer's update of a pod now bound: a delete of the old object for the queue.
    bound = dataclasses.replace(MED_NOMINATED_POD, node_name="node1")
    sched._on_pod(MODIFIED, MED_NOMINATED_POD, bound)


def bind_pod_without_nomination(sched: Scheduler) -> None:
    bound = dataclasses.replace(MED_POD, node_name="node1")
    sched._on_pod(MODIFIED, MED_POD, bound)


@pytest.mark.parametrize(
    ("update", "want_in_active_or_backoff"),
    [
        pytest.param(
            update_nominated_node("node2"),
            {"lpp", "smpp", "mpp"},
            id="Update of a nominated node name to a different value should trigger "
            "rescheduling of lower priority pods",
        ),
        pytest.param(
            update_nominated_node(""),
            {"lpp", "smpp", "mpp"},
            id="Removal of a nominated node name should trigger rescheduling of lower "
            "priority pods",
        ),
        pytest.param(
            delete_nominated_pod,
            {"lpp", "smpp"},
            id="Removal of a pod that had nominated node name should trigger rescheduling "
            "of lower priority pods",
        ),
        pytest.param(
            nominate_high_priority_pod,
            set(),
            id="Addition of a nominated node name to the high priority pod that did not have "
            "it before shouldn't trigger rescheduling",
        ),
        # Not in upstream's table: a bind reaches the queue's handler as the delete of the
        # unscheduled object (its FilteringResourceEventHandler), nomination included.
        pytest.param(
            bind_nominated_pod,
            {"lpp", "smpp"},
            id="Binding a pod that had nominated node name triggers rescheduling of lower "
            "or equal priority pods",
        ),
        pytest.param(
            bind_pod_without_nomination,
            set(),
            id="Binding a pod without a nominated node name moves nothing by its delete",
        ),
    ],
)
def test_move_to_active_on_nominated_node_update(
    update: Callable[[Scheduler], None], want_in_active_or_backoff: set[str]
) -> None:
    sched = scheduler_with_unschedulable_pods()
    assert sched.queue.pods_in_active_q() == []
    update(sched)
    moved = sched.queue.pods_in_active_q() + sched.queue.pods_in_backoff_q()
    assert sorted(pod.name for pod in moved) == sorted(want_in_active_or_backoff)


def test_the_move_names_the_event_its_object_and_the_hint_plugin() -> None:
    sched = scheduler_with_unschedulable_pods()
    bind_nominated_pod(sched)
    assert sched.queue.snapshot_state()["moves"] == [
        {
            "event": "AssignedPodDelete",
            "pod": pod.key,
            "queue": "Active",
            "plugin": "fooPlugin1",
            "object": "ns2/mpp",
        }
        for pod in (MED_POD, LOW_POD)
    ]
