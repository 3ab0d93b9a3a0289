"""Coscheduling, ported from scheduler-plugins pkg/coscheduling/coscheduling_test.go and
core/core_test.go, plus gang scheduling end to end in ``manage.py simulate``'s engine."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from fractions import Fraction
from typing import Any

import pytest

from schedviz.kube.crds import POD_GROUP_LABEL, PodGroup
from schedviz.kube.objects import Node, Pod
from schedviz.outoftree import coscheduling
from schedviz.outoftree.coscheduling import (
    Coscheduling,
    PermitOutcome,
    PodGroupManager,
    check_cluster_resource,
    decode_args,
)
from schedviz.outoftree.registry import new_registry, out_of_tree_registry
from schedviz.scheduler.clock import VirtualClock
from schedviz.scheduler.framework.cycle_state import (
    PODS_TO_ACTIVATE_KEY,
    CycleState,
    PodsToActivate,
)
from schedviz.scheduler.framework.interface import Code, Status, new_status
from schedviz.scheduler.framework.plugins.registry import new_in_tree_registry
from schedviz.scheduler.framework.runtime.framework import WaitingPod
from schedviz.scheduler.framework.types import (
    ActionType,
    ClusterEvent,
    NodeToStatus,
    PodInfo,
    QueuedPodInfo,
)
from schedviz.scheduler.testing.framework_helpers import FakeHandle
from schedviz.scheduler.testing.wrappers import make_node, make_pod, resource_list

SCHEDULE_TIMEOUT = 10.0
NOW = 1_700_000_000.0


class GangHandle(FakeHandle):
    """FakeHandle with what Coscheduling also uses: waiting pods and a virtual clock."""

    def __init__(
        self,
        pods: Sequence[Pod] = (),
        nodes: Sequence[Node] = (),
        pod_groups: Sequence[PodGroup] = (),
    ) -> None:
        # The informers list every pod; the snapshot holds those with a node.
        super().__init__(pods=pods, nodes=nodes, objects=[*pods, *pod_groups])
        self.clock = VirtualClock()
        self.clock_now = self.clock.now
        self.waiting: dict[str, WaitingPod] = {}

    def iterate_over_waiting_pods(self) -> list[WaitingPod]:
        return list(self.waiting.values())

    def hold(self, pod: Pod) -> WaitingPod:
        """The pod as the runtime holds it after Coscheduling's Permit said Wait."""
        waiting = WaitingPod(pod, pod.node_name, {coscheduling.NAME: SCHEDULE_TIMEOUT})
        self.waiting[pod.key] = waiting
        return waiting


def pod_group(
    name: str,
    namespace: str = "ns",
    min_member: int = 0,
    min_resources: dict[str, str | int] | None = None,
    created: float | None = None,
    timeout: int | None = None,
) -> PodGroup:
    """tu.MakePodGroup(): ``created`` is seconds since the epoch."""
    return PodGroup(
        name=name,
        namespace=namespace,
        min_member=min_member,
        min_resources=None if min_resources is None else resource_list(min_resources),
        schedule_timeout_seconds=timeout,
        creation_timestamp=(
            "" if created is None else datetime.fromtimestamp(created, UTC).isoformat()
        ),
    )


def member(name: str, group: str, namespace: str = "ns", node: str = "") -> Pod:
    return make_pod().name(name).namespace(namespace).label(POD_GROUP_LABEL, group).node(node).obj()


def plugin(
    handle: GangHandle,
    schedule_timeout: float | None = SCHEDULE_TIMEOUT,
    pod_group_backoff: float | None = None,
) -> Coscheduling:
    manager = PodGroupManager(handle, schedule_timeout)
    return Coscheduling(handle, manager, schedule_timeout, pod_group_backoff)


# ------------------------------------------------------------------ core_test.go

FOUR_CPU_NODES = [
    make_node().name("node-a").capacity({"cpu": "4"}).obj(),
    make_node().name("node-b").capacity({"cpu": "4"}).obj(),
]


@pytest.mark.parametrize(
    ("pod", "pending", "groups", "want"),
    [
        pytest.param(
            make_pod().name("p").obj(),
            [member("p1", "pg1"), member("p2", "pg2")],
            [pod_group("pg1", min_member=1), pod_group("pg2", min_member=1)],
            None,
            id="pod does not belong to any pg",
        ),
        pytest.param(
            member("p", "pg-non-existent"),
            [],
            [pod_group("pg1", min_member=1)],
            None,
            id="pod belongs to a non-existent pg",
        ),
        pytest.param(
            member("p", "pg1"),
            [member("pg2-1", "pg2")],
            [pod_group("pg1", min_member=2), pod_group("pg2", min_member=2)],
            "pre-filter pod p cannot find enough sibling pods, current pods number: 1, "
            "minMember of group: 2",
            id="pod count less than minMember",
        ),
        pytest.param(
            member("p1a", "pg1"),
            [member("p1b", "pg1")],
            [pod_group("pg1", min_member=2)],
            None,
            id="pod count equal minMember",
        ),
        pytest.param(
            member("p1a", "pg1"),
            [member("p1b", "pg1"), member("p1c", "pg1")],
            [pod_group("pg1", min_member=2)],
            None,
            id="pod count more than minMember",
        ),
        pytest.param(
            member("p1a", "pg1"),
            [member("p1b", "pg1"), member("p1c", "pg1")],
            [pod_group("pg1", min_member=2, min_resources={"cpu": "6"})],
            None,
            id="cluster's resource satisfies minResource",
        ),
        pytest.param(
            member("p1a", "pg1"),
            [member("p1b", "pg1"), member("p1c", "pg1")],
            [pod_group("pg1", min_member=2, min_resources={"cpu": "10"})],
            "resource gap: map[cpu:2]",
            id="cluster's resource cannot satisfy minResource",
        ),
    ],
)
def test_manager_pre_filter(
    pod: Pod, pending: list[Pod], groups: list[PodGroup], want: str | None
) -> None:
    handle = GangHandle([*pending, pod], FOUR_CPU_NODES, groups)
    assert PodGroupManager(handle, SCHEDULE_TIMEOUT).pre_filter(pod) == want


@pytest.mark.parametrize(
    ("pod", "existing", "groups", "want"),
    [
        pytest.param(
            make_pod().name("p").namespace("ns").obj(),
            [],
            [pod_group("pg1", min_member=2)],
            PermitOutcome.POD_GROUP_NOT_SPECIFIED,
            id="pod does not belong to any pg",
        ),
        pytest.param(
            member("p", "pg-non-existent"),
            [],
            [pod_group("pg1", min_member=2)],
            PermitOutcome.POD_GROUP_NOT_FOUND,
            id="pod specifies a non-existent pg",
        ),
        pytest.param(
            member("p", "pg1"),
            [],
            [pod_group("pg1", min_member=2)],
            PermitOutcome.WAIT,
            id="pod belongs to a pg that doesn't have quorum",
        ),
        pytest.param(
            member("p1a", "pg1"),
            [member("p1b", "pg1", node="node")],
            [pod_group("pg1", min_member=2)],
            PermitOutcome.SUCCESS,
            id="pod belongs to a pg that have quorum satisfied",
        ),
    ],
)
def test_manager_permit(
    pod: Pod, existing: list[Pod], groups: list[PodGroup], want: PermitOutcome
) -> None:
    node = make_node().name("node").capacity({"cpu": "4"}).obj()
    handle = GangHandle([*existing, pod], [node], groups)
    assert PodGroupManager(handle, SCHEDULE_TIMEOUT).permit(CycleState(), pod) is want


def _state_with_pods_to_activate() -> tuple[CycleState, PodsToActivate]:
    state = CycleState()
    pods_to_activate = PodsToActivate()
    state.write(PODS_TO_ACTIVATE_KEY, pods_to_activate)
    return state, pods_to_activate


def test_the_first_member_to_wait_activates_its_siblings() -> None:
    """core.go Permit asks for ActivateSiblings when no member is assigned yet; the siblings
    (not the pod itself, nor other groups' pods) go to PodsToActivate."""
    node = make_node().name("node").capacity({"cpu": "4"}).obj()
    first, second, third = member("p1", "pg"), member("p2", "pg"), member("p3", "pg")
    other = member("q1", "other")
    handle = GangHandle(
        [first, second, third, other],
        [node],
        [pod_group("pg", min_member=3), pod_group("other", min_member=2)],
    )
    state, pods_to_activate = _state_with_pods_to_activate()
    status, _ = plugin(handle).permit(state, first, "node")
    assert status == new_status(Code.Wait)
    assert sorted(pods_to_activate.map) == ["ns/p2", "ns/p3"]


def test_a_later_member_that_waits_activates_nobody() -> None:
    node = make_node().name("node").capacity({"cpu": "4"}).obj()
    first = member("p1", "pg", node="node")
    second, third = member("p2", "pg"), member("p3", "pg")
    handle = GangHandle([first, second, third], [node], [pod_group("pg", min_member=3)])
    state, pods_to_activate = _state_with_pods_to_activate()
    status, _ = plugin(handle).permit(state, second, "node")
    assert status == new_status(Code.Wait)
    assert pods_to_activate.map == {}


THREE_CPU_NODES = [
    make_node().name("node-a").capacity({"cpu": "3"}).obj(),
    make_node().name("node-b").capacity({"cpu": "3"}).obj(),
]


@pytest.mark.parametrize(
    ("existing", "want"),
    [
        pytest.param(
            [make_pod().name("p1").namespace("ns").node("node-a").req({"cpu": "2"}).obj()],
            None,
            id="Cluster resource enough",
        ),
        pytest.param(
            [
                make_pod().name("p1").namespace("ns").node("node-a").req({"cpu": "2"}).obj(),
                make_pod().name("p2").namespace("ns").node("node-b").req({"cpu": "1"}).obj(),
            ],
            "resource gap: map[cpu:1]",
            id="Cluster resource not enough",
        ),
        pytest.param(
            [
                make_pod()
                .name("p1")
                .namespace("ns")
                .label(POD_GROUP_LABEL, "pg1")
                .node("node-a")
                .req({"cpu": "2"})
                .obj(),
                make_pod().name("p2").namespace("ns").node("node-b").req({"cpu": "1"}).obj(),
            ],
            None,
            id="Cluster resource enough as p1's resource needs to be excluded from minResources",
        ),
    ],
)
def test_check_cluster_resource(existing: list[Pod], want: str | None) -> None:
    nodes = GangHandle(existing, THREE_CPU_NODES).snapshot_shared_lister().list()
    assert check_cluster_resource(nodes, {"cpu": Fraction(4)}, "ns/pg1") == want


# ------------------------------------------------------------------ coscheduling_test.go


@pytest.mark.parametrize(
    ("pod", "want"),
    [
        pytest.param(make_pod().name("p").namespace("ns").obj(), Code.Success, id="no podGroup"),
        pytest.param(
            member("p", "pg2"), Code.Wait, id="pods belong to a pg1, but quorum not satisfied"
        ),
        pytest.param(
            member("p", "pg1"), Code.Success, id="pods belong to a podGroup, and quorum satisfied"
        ),
    ],
)
def test_permit(pod: Pod, want: Code) -> None:
    node = make_node().name("node").capacity({"cpu": "4"}).obj()
    groups = [pod_group("pg1", min_member=1), pod_group("pg2", min_member=2)]
    status, _ = plugin(GangHandle([pod], [node], groups)).permit(CycleState(), pod, "node")
    assert (status.code if status is not None else Code.Success) == want


@pytest.mark.parametrize(
    ("group", "schedule_timeout", "want"),
    [
        pytest.param(pod_group("pg", min_member=3, timeout=5), 10.0, 5.0, id="group's timeout"),
        pytest.param(pod_group("pg", min_member=3), 10.0, 10.0, id="args' timeout"),
        pytest.param(pod_group("pg", min_member=3), None, 60.0, id="default wait time"),
    ],
)
def test_permit_waits_for_the_group_timeout_first(
    group: PodGroup, schedule_timeout: float | None, want: float
) -> None:
    pod = member("p1", "pg")
    status, timeout = plugin(GangHandle([pod], [], [group]), schedule_timeout).permit(
        CycleState(), pod, "node"
    )
    assert status == new_status(Code.Wait)
    assert timeout == want


def test_permit_rejects_a_pod_whose_group_does_not_exist() -> None:
    pod = member("p", "missing")
    status, timeout = plugin(GangHandle([pod])).permit(CycleState(), pod, "node")
    assert status == new_status(Code.Unschedulable, "PodGroup not found")
    assert timeout == 0


def test_permit_of_the_last_member_allows_its_waiting_siblings_only() -> None:
    node = make_node().name("node").capacity({"cpu": "4"}).obj()
    first, second = member("p1", "pg", node="node"), member("p2", "pg", node="node")
    stranger = member("q1", "other", node="node")
    third = member("p3", "pg")
    handle = GangHandle(
        [first, second, stranger, third],
        [node],
        [pod_group("pg", min_member=3), pod_group("other", min_member=2)],
    )
    waiting = [handle.hold(first), handle.hold(second), handle.hold(stranger)]

    status, timeout = plugin(handle).permit(CycleState(), third, "node")

    assert (status, timeout) == (None, 0)
    assert [w.allowed() for w in waiting] == [True, True, False]


@pytest.mark.parametrize(
    ("pod", "existing", "group", "want"),
    [
        pytest.param(
            make_pod().name("p").namespace("ns").obj(),
            [],
            pod_group("pg1", min_member=2),
            new_status(Code.Unschedulable, "can not find pod group"),
            id="pod does not belong to any pod group",
        ),
        pytest.param(
            member("p", "pg1"),
            [member("p1", "pg1", node="node")],
            pod_group("pg1", min_member=1),
            new_status(Code.Unschedulable),
            id="enough pods assigned, do not reject all",
        ),
        pytest.param(
            member("p", "pg1"),
            [member("p1", "pg1", node="node")],
            pod_group("pg1", min_member=2),
            new_status(
                Code.Unschedulable,
                "PodGroup ns/pg1 gets rejected due to Pod p is unschedulable even after PostFilter",
            ),
            id="pod failed at filter phase, reject all pods",
        ),
    ],
)
def test_post_filter(pod: Pod, existing: list[Pod], group: PodGroup, want: Status) -> None:
    node = make_node().name("node").capacity({"cpu": "4"}).obj()
    handle = GangHandle([*existing, pod], [node], [group])
    node_to_status = NodeToStatus({"node": Status()})
    _, status = plugin(handle).post_filter(CycleState(), pod, node_to_status)
    assert status == want


def test_post_filter_rejects_the_waiting_siblings() -> None:
    node = make_node().name("node").capacity({"cpu": "4"}).obj()
    sibling, stranger = member("p1", "pg", node="node"), member("q1", "other", node="node")
    failing = member("p2", "pg")
    handle = GangHandle(
        [sibling, stranger, failing],
        [node],
        [pod_group("pg", min_member=3), pod_group("other", min_member=3)],
    )
    held_sibling, held_stranger = handle.hold(sibling), handle.hold(stranger)

    plugin(handle).post_filter(CycleState(), failing, NodeToStatus())

    assert held_sibling.rejection == Status(
        Code.Unschedulable, ("optimistic rejection in PostFilter",), "Coscheduling"
    )
    assert held_stranger.rejection is None


def test_post_filter_leaves_the_group_alone_within_ten_percent_of_its_quorum() -> None:
    node = make_node().name("node").capacity({"cpu": "40"}).obj()
    assigned = [member(f"p{i}", "pg", node="node") for i in range(9)]
    failing = member("p9", "pg")
    handle = GangHandle([*assigned, failing], [node], [pod_group("pg", min_member=10)])
    held = handle.hold(assigned[0])

    _, status = plugin(handle).post_filter(CycleState(), failing, NodeToStatus())

    assert status == new_status(Code.Unschedulable)
    assert held.rejection is None


def test_unreserve_rejects_the_waiting_siblings() -> None:
    sibling, stranger = member("p1", "pg", node="node"), member("p1", "pg", namespace="other")
    leaving = member("p2", "pg", node="node")
    handle = GangHandle([sibling, stranger, leaving], [], [pod_group("pg", min_member=3)])
    held_sibling, held_stranger = handle.hold(sibling), handle.hold(stranger)

    plugin(handle).unreserve(CycleState(), leaving, "node")

    assert held_sibling.rejection == Status(
        Code.Unschedulable, ("rejection in Unreserve",), "Coscheduling"
    )
    assert held_stranger.rejection is None


def test_pod_group_backoff_time() -> None:
    """TestPodGroupBackoffTime: prevent pod falling into infinite scheduling loop."""
    pods = [member("pod1", "pg1"), member("pod2", "pg1"), member("pod3", "pg1")]
    node = make_node().name("node").capacity({"cpu": "4"}).obj()
    handle = GangHandle(pods, [node], [pod_group("pg1", min_member=3)])
    gang = plugin(handle, pod_group_backoff=1.0)

    status, _ = gang.permit(CycleState(), pods[0], "test")
    assert status is not None and status.code == Code.Wait
    gang.post_filter(CycleState(), pods[1], NodeToStatus())
    _, status = gang.pre_filter(CycleState(), pods[2], [])

    assert status == new_status(
        Code.UnschedulableAndUnresolvable, "podGroup ns/pg1 failed recently"
    )
    handle.clock.step(1.0)
    assert gang.pre_filter(CycleState(), pods[2], []) == (None, None)


def _queued(pod: Pod, initial_attempt: float | None = None) -> QueuedPodInfo:
    return QueuedPodInfo(PodInfo(pod), initial_attempt_timestamp=initial_attempt)


def _prio(name: str, namespace: str, priority: int, group: str = "") -> Pod:
    wrapper = make_pod().name(name).namespace(namespace).priority(priority)
    return (wrapper.label(POD_GROUP_LABEL, group) if group else wrapper).obj()


LOW, HIGH = 10, 100


@pytest.mark.parametrize(
    ("p1", "p2", "groups", "want"),
    [
        pytest.param(
            _queued(_prio("p1", "ns1", LOW)),
            _queued(_prio("p2", "ns2", HIGH)),
            [],
            False,
            id="p1.priority less than p2.priority",
        ),
        pytest.param(
            _queued(_prio("p1", "ns1", HIGH)),
            _queued(_prio("p2", "ns2", LOW)),
            [],
            True,
            id="p1.priority greater than p2.priority",
        ),
        pytest.param(
            _queued(_prio("p1", "ns1", HIGH), NOW + 1),
            _queued(_prio("p2", "ns2", HIGH), NOW + 2),
            [],
            True,
            id="equal priority. p1 is added to schedulingQ earlier than p2",
        ),
        pytest.param(
            _queued(_prio("p1", "ns1", HIGH), NOW + 2),
            _queued(_prio("p2", "ns2", HIGH), NOW + 1),
            [],
            False,
            id="equal priority. p2 is added to schedulingQ earlier than p1",
        ),
        pytest.param(
            _queued(_prio("p1", "ns1", LOW, "pg1")),
            _queued(_prio("p2", "ns2", HIGH)),
            [pod_group("pg1", "ns1")],
            False,
            id="p1.priority less than p2.priority, p1 belongs to pg1",
        ),
        pytest.param(
            _queued(_prio("p1", "ns1", HIGH, "pg1")),
            _queued(_prio("p2", "ns2", LOW)),
            [pod_group("pg1", "ns1")],
            True,
            id="p1.priority greater than p2.priority, p1 belongs to pg1",
        ),
        pytest.param(
            _queued(_prio("p1", "ns1", HIGH, "pg1"), NOW + 1),
            _queued(_prio("p2", "ns2", HIGH), NOW + 2),
            [pod_group("pg1", "ns1", created=NOW + 1)],
            True,
            id="equal priority. p1 is added to schedulingQ earlier than p2, p1 belongs to pg1",
        ),
        pytest.param(
            _queued(_prio("p1", "ns1", HIGH, "pg1"), NOW + 2),
            _queued(_prio("p2", "ns2", HIGH), NOW + 1),
            [pod_group("pg1", "ns1", created=NOW + 2)],
            False,
            id="equal priority. p2 is added to schedulingQ earlier than p1, p1 belongs to pg1",
        ),
        pytest.param(
            _queued(_prio("p1", "ns1", LOW, "pg1")),
            _queued(_prio("p2", "ns2", HIGH, "pg2")),
            [pod_group("pg1", "ns1", created=NOW + 1), pod_group("pg2", "ns2", created=NOW + 2)],
            False,
            id="p1.priority less than p2.priority, p1 belongs to pg1 and p2 belongs to pg2",
        ),
        pytest.param(
            _queued(_prio("p1", "ns1", HIGH, "pg1")),
            _queued(_prio("p2", "ns2", LOW, "pg1")),
            [pod_group("pg1", "ns1", created=NOW + 1), pod_group("pg2", "ns2", created=NOW + 2)],
            True,
            id="p1.priority greater than p2.priority, p1 belongs to pg1 and p2 belongs to pg2",
        ),
        pytest.param(
            _queued(_prio("p1", "ns1", HIGH, "pg1"), NOW + 1),
            _queued(_prio("p2", "ns2", HIGH, "pg2"), NOW + 2),
            [pod_group("pg1", "ns1", created=NOW + 1), pod_group("pg2", "ns2", created=NOW + 2)],
            True,
            id="equal priority. p1 is added to schedulingQ earlier than p2, "
            "p1 belongs to pg1 and p2 belongs to pg2",
        ),
        pytest.param(
            _queued(_prio("p1", "ns", LOW, "pg2"), NOW + 1),
            _queued(_prio("p2", "ns", HIGH, "pg1"), NOW + 2),
            [pod_group("pg1", "ns", created=NOW + 1), pod_group("pg2", "ns", created=NOW + 2)],
            False,
            id="equal priority. p2 is added to schedulingQ earlier than p1, "
            "p1 belongs to pg2 and p2 belongs to pg1",
        ),
        pytest.param(
            _queued(_prio("p1", "ns1", HIGH, "pg2"), NOW + 1),
            _queued(_prio("p2", "ns2", HIGH, "pg2"), NOW + 1),
            [pod_group("pg1", "ns1", created=NOW + 1), pod_group("pg2", "ns2", created=NOW + 2)],
            True,
            id="equal priority and creation time, p1 belongs pg1 and p2 belong to pg2",
        ),
        pytest.param(
            _queued(_prio("p1", "ns1", HIGH), NOW + 1),
            _queued(_prio("p2", "ns2", HIGH, "pg2"), NOW + 1),
            [pod_group("pg2", "ns2", created=NOW + 2)],
            True,
            id="equal priority and creation time, and p2 belong to pg2",
        ),
    ],
)
def test_less(p1: QueuedPodInfo, p2: QueuedPodInfo, groups: list[PodGroup], want: bool) -> None:
    assert plugin(GangHandle(pod_groups=groups)).less(p1, p2) is want


def test_less_keeps_a_group_together_in_name_order() -> None:
    """Siblings share their group's creation time, so only their names order them."""
    gang = plugin(GangHandle(pod_groups=[pod_group("pg", created=NOW)]))
    late_sibling = _queued(_prio("a", "ns", HIGH, "pg"), NOW + 50)
    early_sibling = _queued(_prio("b", "ns", HIGH, "pg"), NOW + 1)
    loner = _queued(_prio("c", "ns", HIGH), NOW + 10)
    assert gang.less(late_sibling, early_sibling)
    assert gang.less(early_sibling, loner) and gang.less(late_sibling, loner)


def test_it_registers_pod_adds_and_pod_group_changes() -> None:
    events = [e.event for e in plugin(GangHandle()).events_to_register()]
    assert events == [
        ClusterEvent("Pod", ActionType.Add),
        ClusterEvent("podgroups.v1alpha1.scheduling.x-k8s.io", ActionType.Add | ActionType.Update),
    ]


# ------------------------------------------------------------------ args and registry


def test_args_default_like_set_defaults_coscheduling_args() -> None:
    assert decode_args(None) == decode_args({}) == coscheduling.CoschedulingArgs(60, 0)
    assert decode_args({"permitWaitingTimeSeconds": 10, "podGroupBackoffSeconds": 2}) == (
        coscheduling.CoschedulingArgs(10, 2)
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"deniedPGExpirationTimeSeconds": 3}, 'unknown field "deniedPGExpirationTimeSeconds"'),
        ({"permitWaitingTimeSeconds": "10"}, "cannot unmarshal string into Go struct field"),
        ({"podGroupBackoffSeconds": -1}, "parse arguments failed"),
        ([1], "want args to be of type CoschedulingArgs"),
    ],
)
def test_new_refuses_bad_args(args: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        coscheduling.new(args, GangHandle())


def test_new_registry_is_the_in_tree_one_with_coscheduling_merged() -> None:
    registry = new_registry()
    assert set(registry) == {*new_in_tree_registry(), "Coscheduling"}
    assert registry["Coscheduling"] is coscheduling.new
    with pytest.raises(ValueError, match="a plugin named Coscheduling already exists"):
        registry.merge(out_of_tree_registry())
