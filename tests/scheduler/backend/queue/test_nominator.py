"""Ports of the nominator tests in pkg/scheduler/backend/queue/scheduling_queue_test.go
(TestPriorityQueue_NominatedPodsForNode, _NominatedPodDeleted, _UpdateNominatedPodForNode) and of
nominator.go's behaviour."""

from __future__ import annotations

import dataclasses

import pytest

from schedviz.kube.objects import Pod
from schedviz.scheduler.backend.queue.nominator import Nominator, PodRef
from schedviz.scheduler.backend.queue.scheduling_queue import PriorityQueue
from schedviz.scheduler.clock import VirtualClock
from schedviz.scheduler.framework.interface import NominatingInfo
from schedviz.scheduler.framework.plugins.prioritysort import PrioritySort
from schedviz.scheduler.framework.types import PodInfo
from schedviz.scheduler.testing.wrappers import make_pod

HIGH_POD = make_pod().name("hpp").namespace("ns1").uid("hppns1").priority(1000).obj()
HIGH_NOMINATED_POD = dataclasses.replace(HIGH_POD, nominated_node_name="node1")
MED_POD = (
    make_pod()
    .name("mpp")
    .namespace("ns2")
    .uid("mppns2")
    .priority(500)
    .nominated_node_name("node1")
    .obj()
)
UNSCHEDULABLE_POD = (
    make_pod()
    .name("up")
    .namespace("ns1")
    .uid("upns1")
    .priority(0)
    .nominated_node_name("node1")
    .obj()
)
NON_EXISTENT_POD = make_pod().name("ne").namespace("ns1").uid("nens1").obj()
SCHEDULED_POD = make_pod().name("sp").namespace("ns1").uid("spns1").node("foo").obj()


def override(node: str) -> NominatingInfo:
    return NominatingInfo(nominated_node_name=node, mode_override=True)


def lister(*pods: Pod) -> dict[str, Pod]:
    return {p.key: p for p in pods}


def new_queue(*pods: Pod) -> PriorityQueue:
    known = lister(*pods)
    return PriorityQueue(less=PrioritySort().less, clock=VirtualClock(1000.0), pod_lister=known.get)


def state(nominator: Nominator) -> tuple[dict[str, str], dict[str, list[str]]]:
    return (
        dict(nominator.nominated_pod_to_node),
        {node: [ref.key for ref in refs] for node, refs in nominator.nominated_pods.items()},
    )


def test_nominated_pods_for_node_in_nomination_order_as_copies() -> None:
    """TestPriorityQueue_NominatedPodsForNode."""
    q = new_queue(MED_POD, UNSCHEDULABLE_POD, HIGH_POD)
    q.add(MED_POD)
    q.add(UNSCHEDULABLE_POD)
    q.add(HIGH_POD)
    popped = q.pop()
    assert popped is not None and popped.pod is HIGH_POD
    infos = q.nominated_pods_for_node("node1")
    assert [i.pod for i in infos] == [MED_POD, UNSCHEDULABLE_POD]
    infos[0].pod.name = "not mpp"
    assert [i.pod.name for i in q.nominated_pods_for_node("node1")] == ["mpp", "up"]
    assert q.nominated_pods_for_node("node2") == []


def test_nominated_pod_in_flight_is_a_bare_pod() -> None:
    pod = make_pod().name("p").uid("u").req({"cpu": "1"}).nominated_node_name("n").obj()
    q = new_queue(pod)
    q.add(pod)
    assert q.pop() is not None
    (info,) = q.nominated_pods_for_node("n")
    assert info.pod == Pod(name="p", namespace="default", uid="u")


@pytest.mark.parametrize(
    ("pod", "delete_pod", "want_len"),
    [
        pytest.param(MED_POD, False, 1, id="alive pod gets nominated"),
        pytest.param(HIGH_NOMINATED_POD, True, 0, id="deleted pod is not nominated"),
        pytest.param(HIGH_POD, False, 0, id="no nominatedNodeName, no nomination"),
    ],
)
def test_nominated_pod_deleted(pod: Pod, delete_pod: bool, want_len: int) -> None:
    """TestPriorityQueue_NominatedPodDeleted."""
    q = new_queue() if delete_pod else new_queue(pod)
    q.add_nominated_pod(PodInfo(pod), None)
    assert len(q.nominated_pods_for_node(pod.nominated_node_name)) == want_len


def test_update_nominated_pod_for_node() -> None:
    """TestPriorityQueue_UpdateNominatedPodForNode."""
    unbound_scheduled = dataclasses.replace(SCHEDULED_POD, node_name="")
    q = new_queue(MED_POD, UNSCHEDULABLE_POD, HIGH_POD, SCHEDULED_POD)
    q.add(MED_POD)
    q.add_nominated_pod(PodInfo(UNSCHEDULABLE_POD), override("node5"))
    q.add_nominated_pod(PodInfo(HIGH_POD), override("node2"))
    want = (
        {MED_POD.key: "node1", HIGH_POD.key: "node2", UNSCHEDULABLE_POD.key: "node5"},
        {"node1": [MED_POD.key], "node2": [HIGH_POD.key], "node5": [UNSCHEDULABLE_POD.key]},
    )
    assert state(q.nominator) == want
    popped = q.pop()
    assert popped is not None and popped.pod is MED_POD
    assert state(q.nominator) == want  # popping does not touch nominations

    q.add_nominated_pod(PodInfo(HIGH_POD), override("node4"))
    want = (
        {MED_POD.key: "node1", HIGH_POD.key: "node4", UNSCHEDULABLE_POD.key: "node5"},
        {"node1": [MED_POD.key], "node4": [HIGH_POD.key], "node5": [UNSCHEDULABLE_POD.key]},
    )
    assert state(q.nominator) == want
    # A pod the informer does not know, and one already bound there, are never nominated.
    q.add_nominated_pod(PodInfo(NON_EXISTENT_POD), override("node1"))
    assert state(q.nominator) == want
    q.add_nominated_pod(PodInfo(unbound_scheduled), override("node1"))
    assert state(q.nominator) == want

    q.delete_nominated_pod_if_exists(HIGH_POD)
    assert state(q.nominator) == (
        {MED_POD.key: "node1", UNSCHEDULABLE_POD.key: "node5"},
        {"node1": [MED_POD.key], "node5": [UNSCHEDULABLE_POD.key]},
    )


def test_pod_with_node_name_is_never_nominated_without_lister() -> None:
    nominator = Nominator()
    nominator.add_nominated_pod(PodInfo(SCHEDULED_POD), override("node1"))
    assert state(nominator) == ({}, {})


def test_update_keeps_reservation_made_before_the_pod_object_caught_up() -> None:
    """nominator.go UpdateNominatedPod: an update with no nominated node on either side keeps
    the node the scheduler reserved in memory."""
    nominator = Nominator()
    nominator.add_nominated_pod(PodInfo(HIGH_POD), override("node3"))
    relabelled = dataclasses.replace(HIGH_POD, labels={"a": "b"})
    nominator.update_nominated_pod(HIGH_POD, PodInfo(relabelled))
    assert state(nominator) == ({HIGH_POD.key: "node3"}, {"node3": [HIGH_POD.key]})
    # The pod object now carries a nomination of its own: it wins.
    moved = dataclasses.replace(relabelled, nominated_node_name="node9")
    nominator.update_nominated_pod(relabelled, PodInfo(moved))
    assert state(nominator) == ({HIGH_POD.key: "node9"}, {"node9": [HIGH_POD.key]})
    # ... and clearing it clears the nomination.
    nominator.update_nominated_pod(moved, PodInfo(relabelled))
    assert state(nominator) == ({}, {})


def test_mode_noop_uses_the_pods_own_nomination_and_empty_clears() -> None:
    nominator = Nominator()
    nominator.add_nominated_pod(PodInfo(MED_POD), NominatingInfo(mode_override=False))
    assert state(nominator) == ({MED_POD.key: "node1"}, {"node1": [MED_POD.key]})
    nominator.add_nominated_pod(PodInfo(MED_POD), override(""))
    assert state(nominator) == ({}, {})


def test_pods_on_one_node_keep_nomination_order() -> None:
    nominator = Nominator()
    pods = [make_pod().name(f"p{i}").obj() for i in range(3)]
    for pod in pods:
        nominator.add_nominated_pod(PodInfo(pod), override("n"))
    nominator.add_nominated_pod(PodInfo(pods[0]), override("n"))
    assert nominator.nominated_refs_for_node("n") == [
        PodRef.of(p) for p in (pods[1], pods[2], pods[0])
    ]


def test_queue_update_moves_a_nomination_with_the_pod() -> None:
    """TestPriorityQueue_Update ("add a nominatedNodeName"): the nominator follows the pod."""
    q = new_queue(HIGH_POD)
    q.update(HIGH_POD, HIGH_NOMINATED_POD)
    assert state(q.nominator) == ({HIGH_POD.key: "node1"}, {"node1": [HIGH_POD.key]})
    q.delete(HIGH_NOMINATED_POD)
    assert state(q.nominator) == ({}, {})
