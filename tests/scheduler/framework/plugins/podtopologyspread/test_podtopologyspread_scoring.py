"""Ports podtopologyspread/scoring_test.go: TestPreScoreSkip, TestPreScoreStateEmptyNodes,
TestPodTopologySpreadScore.

Upstream's ``TopologyPairToPodCounts`` is compared here per constraint (counts per domain); the
weights are compared as upstream builds them, with ``topology_normalizing_weight(size)``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import pytest

from schedviz.kube.objects import (
    LABEL_HOSTNAME,
    LABEL_TOPOLOGY_ZONE,
    TAINT_NODE_UNSCHEDULABLE,
    LabelSelector,
    Node,
    OwnerReference,
    Pod,
    Taint,
    TopologySpreadConstraint,
)
from schedviz.scheduler.apis.config.types_pluginargs import (
    LIST_DEFAULTING,
    SYSTEM_DEFAULTING,
    PodTopologySpreadArgs,
)
from schedviz.scheduler.framework.cycle_state import CycleState
from schedviz.scheduler.framework.interface import Code, NodeScore, Status
from schedviz.scheduler.framework.plugins.podtopologyspread import new
from schedviz.scheduler.framework.plugins.podtopologyspread.scoring import (
    get_pre_score_state,
    go_round,
    topology_normalizing_weight,
)
from schedviz.scheduler.framework.types import NodeInfo
from schedviz.scheduler.testing.framework_helpers import FakeHandle
from schedviz.scheduler.testing.wrappers import label_selector, make_node, make_pod

HARD = "DoNotSchedule"
SOFT = "ScheduleAnyway"
FOO = label_selector(expressions=[("foo", "Exists", [])])
BAR = label_selector(expressions=[("bar", "Exists", [])])
TAINTS = [Taint(TAINT_NODE_UNSCHEDULABLE, "NoSchedule")]


@dataclass
class ReplicaSet:
    """The fields of apps/v1 ReplicaSet that DefaultSelector reads."""

    name: str
    namespace: str = "default"
    selector: LabelSelector | None = None


@dataclass
class Service:
    """The fields of core/v1 Service that DefaultSelector reads."""

    name: str
    namespace: str = "default"
    selector: dict[str, str] | None = field(default_factory=dict)


def owned_by_replica_set(pod: Pod, name: str) -> Pod:
    owner = OwnerReference(kind="ReplicaSet", name=name, controller=True)
    return dataclasses.replace(pod, owner_references=(owner,))


def pod_on(name: str, node: str, *labels: str, namespace: str = "default") -> Pod:
    wrapper = make_pod().name(name).namespace(namespace).node(node)
    for label in labels:
        wrapper = wrapper.label(label, "")
    return wrapper.obj()


def pods_on(node: str, prefix: str, count: int, *labels: str) -> list[Pod]:
    return [pod_on(f"{prefix}{i}", node, *labels) for i in range(1, count + 1)]


def foo_spread(counts: dict[str, int]) -> list[Pod]:
    """Pods labelled foo, ``count`` of them on each node, named p-<node letter><i>."""
    return [
        pod
        for node, count in counts.items()
        for pod in pods_on(node, f"p-{node[-1]}", count, "foo")
    ]


def host(name: str, **labels: str) -> Node:
    return make_node().name(name).label(LABEL_HOSTNAME, name).labels(labels).obj()


def zone_host(name: str, zone: str) -> Node:
    return host(name, zone=zone)


def node_label(name: str, **labels: str) -> Any:
    return make_node().name(name).label("node", name).labels(labels)


def foo_on_a_and_b() -> list[Node]:
    return [
        node_label("node-a", foo="").obj(),
        node_label("node-b", foo="").obj(),
        node_label("node-c").obj(),
    ]


def taint_on_c() -> list[Node]:
    return [
        node_label("node-a").obj(),
        node_label("node-b").obj(),
        node_label("node-c").taints(TAINTS).obj(),
    ]


def soft_pod(*constraints: tuple[Any, ...], labels: tuple[str, ...] = ("foo",)) -> Any:
    wrapper = make_pod().name("p")
    for label in labels:
        wrapper = wrapper.label(label, "")
    for constraint in constraints:
        wrapper = wrapper.spread_constraint(*constraint)
    return wrapper


def node_infos(handle: FakeHandle, nodes: list[Node]) -> list[NodeInfo]:
    infos = []
    for node in nodes:
        info = handle.snapshot.get(node.name)
        assert info is not None
        infos.append(info)
    return infos


# ---------------------------------------------------------------------------------------------
# TestPreScoreSkip


def test_pre_score_skips_pod_without_soft_constraints() -> None:
    nodes = [host("node-a"), host("node-b")]
    handle = FakeHandle(nodes=nodes)
    plugin = new(PodTopologySpreadArgs(defaulting_type=LIST_DEFAULTING), handle)
    status = plugin.pre_score(CycleState(), make_pod().name("p").obj(), node_infos(handle, nodes))
    assert status == Status(Code.Skip)


def test_pre_score_skips_default_constraints_with_non_matching_replica_set() -> None:
    nodes = [make_node().name("node-a").label("planet", "mars").obj()]
    handle = FakeHandle(
        nodes=nodes,
        objects=[ReplicaSet("rs1", selector=label_selector(expressions=[("tar", "Exists", [])]))],
    )
    args = PodTopologySpreadArgs(
        default_constraints=[TopologySpreadConstraint(2, "planet", SOFT)],
        defaulting_type=LIST_DEFAULTING,
    )
    plugin = new(args, handle)
    pod = owned_by_replica_set(
        make_pod().name("p").labels({"foo": "bar", "baz": "sup"}).obj(), "rs2"
    )
    assert plugin.pre_score(CycleState(), pod, node_infos(handle, nodes)) == Status(Code.Skip)


def test_pre_score_skips_when_the_cluster_has_no_node() -> None:
    plugin = new(PodTopologySpreadArgs(defaulting_type=LIST_DEFAULTING), FakeHandle())
    pod = soft_pod((1, "zone", SOFT, FOO)).obj()
    assert plugin.pre_score(CycleState(), pod, []) == Status(Code.Skip)


def test_system_defaulting_without_selecting_objects_skips() -> None:
    # schedviz does not load Services and controllers yet: the default selector is empty.
    nodes = [host("node-a")]
    handle = FakeHandle(nodes=nodes)
    plugin = new(None, handle)
    status = plugin.pre_score(CycleState(), make_pod().name("p").obj(), node_infos(handle, nodes))
    assert status == Status(Code.Skip)


# ---------------------------------------------------------------------------------------------
# TestPreScoreStateEmptyNodes

W = topology_normalizing_weight

EMPTY_NODES_CASES: list[
    tuple[str, Pod, list[Node], list[object], PodTopologySpreadArgs, list[Any], set[str]]
] = [
    (
        "normal case",
        soft_pod((1, "zone", SOFT, FOO), (1, LABEL_HOSTNAME, SOFT, FOO)).obj(),
        [zone_host("node-a", "zone1"), zone_host("node-b", "zone1"), zone_host("node-x", "zone2")],
        [],
        PodTopologySpreadArgs(defaulting_type=LIST_DEFAULTING),
        [("zone", 1, {"zone1": 0, "zone2": 0}, W(2)), (LABEL_HOSTNAME, 1, {}, W(3))],
        set(),
    ),
    (
        "null selector",
        soft_pod((1, "zone", SOFT, None)).obj(),
        [zone_host("node-a", "zone1"), zone_host("node-b", "zone1"), zone_host("node-x", "zone2")],
        [],
        PodTopologySpreadArgs(defaulting_type=LIST_DEFAULTING),
        [("zone", 1, {"zone1": 0, "zone2": 0}, W(2))],
        set(),
    ),
    (
        "node-x doesn't have label zone",
        soft_pod((1, "zone", SOFT, FOO), (1, LABEL_HOSTNAME, SOFT, BAR)).obj(),
        [zone_host("node-a", "zone1"), zone_host("node-b", "zone1"), host("node-x")],
        [],
        PodTopologySpreadArgs(defaulting_type=LIST_DEFAULTING),
        [("zone", 1, {"zone1": 0}, W(1)), (LABEL_HOSTNAME, 1, {}, W(2))],
        {"node-x"},
    ),
    (
        "system default constraints and a replicaset",
        owned_by_replica_set(
            make_pod().name("p").labels({"foo": "tar", "baz": "sup"}).obj(), "rs1"
        ),
        [
            host("node-a", **{LABEL_TOPOLOGY_ZONE: "mars"}),
            host("node-b", **{LABEL_TOPOLOGY_ZONE: "mars"}),
            # Nodes with no zone are not excluded. They are considered a separate zone.
            host("node-c"),
            host("node-d"),
        ],
        [ReplicaSet("rs1", selector=FOO)],
        PodTopologySpreadArgs(defaulting_type=SYSTEM_DEFAULTING),
        [(LABEL_HOSTNAME, 3, {}, W(4)), (LABEL_TOPOLOGY_ZONE, 5, {"mars": 0, "": 0}, W(2))],
        set(),
    ),
    (
        "default constraints and a replicaset",
        owned_by_replica_set(
            make_pod().name("p").labels({"foo": "tar", "baz": "sup"}).obj(), "rs1"
        ),
        [host("node-a", rack="rack1", planet="mars")],
        [ReplicaSet("rs1", selector=FOO)],
        PodTopologySpreadArgs(
            default_constraints=[
                TopologySpreadConstraint(1, LABEL_HOSTNAME, SOFT),
                TopologySpreadConstraint(2, "rack", HARD),
                TopologySpreadConstraint(2, "planet", SOFT),
            ],
            defaulting_type=LIST_DEFAULTING,
        ),
        [(LABEL_HOSTNAME, 1, {}, W(1)), ("planet", 2, {"mars": 0}, W(1))],
        set(),
    ),
    (
        "default constraints and a replicaset, but pod has constraints",
        owned_by_replica_set(
            make_pod()
            .name("p")
            .labels({"foo": "bar", "baz": "sup"})
            .spread_constraint(1, "zone", HARD, BAR)
            .spread_constraint(2, "planet", SOFT, label_selector({"baz": "sup"}))
            .obj(),
            "rs1",
        ),
        [make_node().name("node-a").labels({"planet": "mars", "galaxy": "andromeda"}).obj()],
        [ReplicaSet("rs1", selector=FOO)],
        PodTopologySpreadArgs(
            default_constraints=[TopologySpreadConstraint(2, "galaxy", SOFT)],
            defaulting_type=LIST_DEFAULTING,
        ),
        [("planet", 2, {"mars": 0}, W(1))],
        set(),
    ),
    (
        "NodeAffinityPolicy honored with labelSelectors",
        soft_pod((1, "zone", SOFT, BAR)).node_selector({"foo": ""}).obj(),
        [
            host("node-a", zone="zone1", foo=""),
            host("node-b", zone="zone1", foo=""),
            host("node-x", zone="zone2"),
        ],
        [],
        PodTopologySpreadArgs(defaulting_type=LIST_DEFAULTING),
        [("zone", 1, {"zone1": 0, "zone2": 0}, W(2))],
        set(),
    ),
]


@pytest.mark.parametrize(
    ("pod", "nodes", "objects", "args", "want", "want_ignored"),
    [case[1:] for case in EMPTY_NODES_CASES],
    ids=[case[0] for case in EMPTY_NODES_CASES],
)
def test_pre_score_state_with_empty_cluster(
    pod: Pod,
    nodes: list[Node],
    objects: list[object],
    args: PodTopologySpreadArgs,
    want: list[Any],
    want_ignored: set[str],
) -> None:
    handle = FakeHandle(nodes=nodes, objects=objects)
    plugin = new(args, handle)
    state = CycleState()
    assert plugin.pre_score(state, pod, node_infos(handle, nodes)) is None
    got = get_pre_score_state(state)
    assert [
        (c.topology_key, c.max_skew, counts, weight)
        for c, counts, weight in zip(
            got.constraints,
            got.topology_value_to_pod_counts,
            got.topology_normalizing_weight,
            strict=True,
        )
    ] == want
    assert got.ignored_nodes == want_ignored


def test_default_constraints_take_the_replica_set_selector() -> None:
    nodes = [host("node-a", rack="rack1", planet="mars")]
    handle = FakeHandle(nodes=nodes, objects=[ReplicaSet("rs1", selector=FOO)])
    args = PodTopologySpreadArgs(
        default_constraints=[TopologySpreadConstraint(1, LABEL_HOSTNAME, SOFT)],
        defaulting_type=LIST_DEFAULTING,
    )
    plugin = new(args, handle)
    state = CycleState()
    pod = owned_by_replica_set(make_pod().name("p").labels({"foo": "tar"}).obj(), "rs1")
    plugin.pre_score(state, pod, node_infos(handle, nodes))
    (constraint,) = get_pre_score_state(state).constraints
    assert constraint.selector.matches({"foo": "x"})
    assert not constraint.selector.matches({"bar": "x"})


# ---------------------------------------------------------------------------------------------
# TestPodTopologySpreadScore

SCORE_CASES: list[tuple[str, Pod, list[Pod], list[Node], list[Node], list[object], dict[str, int]]]
SCORE_CASES = [
    (
        "one constraint on node, no existing pods",
        soft_pod((1, LABEL_HOSTNAME, SOFT, FOO)).obj(),
        [],
        [host("node-a"), host("node-b")],
        [],
        [],
        {"node-a": 100, "node-b": 100},
    ),
    (
        "one constraint on node, only one node is candidate",
        soft_pod((1, LABEL_HOSTNAME, SOFT, FOO)).obj(),
        foo_spread({"node-a": 2, "node-b": 1}),
        [host("node-a")],
        [host("node-b")],
        [],
        {"node-a": 100},
    ),
    (
        "one constraint on node, all nodes have the same number of matching pods",
        soft_pod((1, LABEL_HOSTNAME, SOFT, FOO)).obj(),
        [pod_on("p-a1", "node-a", "foo"), pod_on("p-b1", "node-b", "foo")],
        [host("node-a"), host("node-b")],
        [],
        [],
        {"node-a": 100, "node-b": 100},
    ),
    (
        "one constraint on node, all 4 nodes are candidates",
        soft_pod((1, LABEL_HOSTNAME, SOFT, FOO)).obj(),
        foo_spread({"node-a": 2, "node-b": 1, "node-d": 3}),
        [host("node-a"), host("node-b"), host("node-c"), host("node-d")],
        [],
        [],
        {"node-a": 20, "node-b": 60, "node-c": 100, "node-d": 0},
    ),
    (
        "one constraint on node, null selector",
        soft_pod((1, LABEL_HOSTNAME, SOFT, None)).obj(),
        foo_spread({"node-a": 2, "node-b": 1, "node-d": 3}),
        [host("node-a"), host("node-b"), host("node-c"), host("node-d")],
        [],
        [],
        {"node-a": 100, "node-b": 100, "node-c": 100, "node-d": 100},
    ),
    (
        "one constraint on node, all 4 nodes are candidates, maxSkew=2",
        soft_pod((2, LABEL_HOSTNAME, SOFT, FOO)).obj(),
        foo_spread({"node-a": 2, "node-b": 1, "node-d": 3}),
        [host("node-a"), host("node-b"), host("node-c"), host("node-d")],
        [],
        [],
        {"node-a": 33, "node-b": 66, "node-c": 100, "node-d": 16},
    ),
    (
        "one constraint on node, all 4 nodes are candidates, maxSkew=3",
        soft_pod((3, LABEL_HOSTNAME, SOFT, FOO)).obj(),
        foo_spread({"node-a": 4, "node-b": 3, "node-c": 2, "node-d": 1}),
        [host("node-a"), host("node-b"), host("node-c"), host("node-d")],
        [],
        [],
        {"node-a": 44, "node-b": 66, "node-c": 77, "node-d": 100},
    ),
    (
        "system defaulting, nodes don't have zone, pods match service",
        make_pod().name("p").label("foo", "").obj(),
        foo_spread({"node-a": 4, "node-b": 3, "node-c": 2, "node-d": 1}),
        [host("node-a"), host("node-b"), host("node-c"), host("node-d")],
        [],
        [Service("svc", selector={"foo": ""})],
        # Same scores as if we were using one spreading constraint.
        {"node-a": 44, "node-b": 66, "node-c": 77, "node-d": 100},
    ),
    (
        "one constraint on node, 3 out of 4 nodes are candidates",
        soft_pod((1, LABEL_HOSTNAME, SOFT, FOO)).obj(),
        foo_spread({"node-a": 4, "node-b": 2, "node-x": 1, "node-y": 3}),
        [host("node-a"), host("node-b"), host("node-x")],
        [host("node-y")],
        [],
        {"node-a": 33, "node-b": 83, "node-x": 100},
    ),
    (
        "one constraint on node, 3 out of 4 nodes are candidates, one node doesn't match "
        "topology key",
        soft_pod((1, LABEL_HOSTNAME, SOFT, FOO)).obj(),
        foo_spread({"node-a": 4, "node-b": 2, "node-x": 1, "node-y": 3}),
        [host("node-a"), make_node().name("node-b").label("n", "node-b").obj(), host("node-x")],
        [host("node-y")],
        [],
        {"node-a": 16, "node-b": 0, "node-x": 100},
    ),
    (
        "one constraint on zone, 3 out of 4 nodes are candidates",
        soft_pod((1, "zone", SOFT, FOO)).obj(),
        foo_spread({"node-a": 4, "node-b": 2, "node-x": 1, "node-y": 3}),
        [zone_host("node-a", "zone1"), zone_host("node-b", "zone1"), zone_host("node-x", "zone2")],
        [zone_host("node-y", "zone2")],
        [],
        {"node-a": 75, "node-b": 75, "node-x": 100},
    ),
    (
        "two Constraints on zone and node, 2 out of 4 nodes are candidates",
        soft_pod((1, "zone", SOFT, FOO), (1, LABEL_HOSTNAME, SOFT, FOO)).obj(),
        foo_spread({"node-a": 2, "node-b": 1, "node-x": 2, "node-y": 4}),
        [zone_host("node-a", "zone1"), zone_host("node-x", "zone2")],
        [zone_host("node-b", "zone1"), zone_host("node-y", "zone2")],
        [],
        {"node-a": 100, "node-x": 63},
    ),
    (
        "two Constraints on zone and node, with different labelSelectors",
        soft_pod(
            (1, "zone", SOFT, FOO), (1, LABEL_HOSTNAME, SOFT, BAR), labels=("foo", "bar")
        ).obj(),
        [
            pod_on("p-a1", "node-a", "foo"),
            pod_on("p-b1", "node-b", "foo", "bar"),
            pod_on("p-y1", "node-y", "foo"),
            pod_on("p-y2", "node-y", "bar"),
        ],
        [
            zone_host("node-a", "zone1"),
            zone_host("node-b", "zone1"),
            zone_host("node-x", "zone2"),
            zone_host("node-y", "zone2"),
        ],
        [],
        [],
        {"node-a": 60, "node-b": 20, "node-x": 100, "node-y": 60},
    ),
    (
        "two Constraints on zone and node, with different labelSelectors, some nodes have 0 pods",
        soft_pod(
            (1, "zone", SOFT, FOO), (1, LABEL_HOSTNAME, SOFT, BAR), labels=("foo", "bar")
        ).obj(),
        [
            pod_on("p-b1", "node-b", "bar"),
            pod_on("p-x1", "node-x", "foo"),
            pod_on("p-y1", "node-y", "foo", "bar"),
        ],
        [
            zone_host("node-a", "zone1"),
            zone_host("node-b", "zone1"),
            zone_host("node-x", "zone2"),
            zone_host("node-y", "zone2"),
        ],
        [],
        [],
        {"node-a": 100, "node-b": 60, "node-x": 40, "node-y": 0},
    ),
    (
        "two Constraints on zone and node, with different labelSelectors, 3 out of 4 nodes are "
        "candidates",
        soft_pod(
            (1, "zone", SOFT, FOO), (1, LABEL_HOSTNAME, SOFT, BAR), labels=("foo", "bar")
        ).obj(),
        [
            pod_on("p-a1", "node-a", "foo"),
            pod_on("p-b1", "node-b", "foo", "bar"),
            pod_on("p-y1", "node-y", "foo"),
            pod_on("p-y2", "node-y", "bar"),
        ],
        [zone_host("node-a", "zone1"), zone_host("node-b", "zone1"), zone_host("node-x", "zone2")],
        [zone_host("node-y", "zone2")],
        [],
        {"node-a": 50, "node-b": 25, "node-x": 100},
    ),
    (
        "existing pods in a different namespace do not count",
        soft_pod((1, LABEL_HOSTNAME, SOFT, FOO)).obj(),
        [
            pod_on("p-a1", "node-a", "foo", namespace="ns1"),
            pod_on("p-a2", "node-a", "foo"),
            *pods_on("node-b", "p-b", 2, "foo"),
        ],
        [host("node-a"), host("node-b")],
        [],
        [],
        {"node-a": 100, "node-b": 33},
    ),
    (
        "terminating Pods should be excluded",
        soft_pod((1, LABEL_HOSTNAME, SOFT, FOO)).obj(),
        [
            dataclasses.replace(pod_on("p-a", "node-a", "foo"), deletion_timestamp="2026-01-01"),
            pod_on("p-b", "node-b", "foo"),
        ],
        [host("node-a"), host("node-b")],
        [],
        [],
        {"node-a": 100, "node-b": 0},
    ),
    (
        "minDomains has no effect when ScheduleAnyway",
        soft_pod((2, "node", SOFT, FOO, 10)).obj(),
        foo_spread({"node-a": 2, "node-b": 2, "node-c": 1}),
        [node_label("node-a").obj(), node_label("node-b").obj(), node_label("node-c").obj()],
        [],
        [],
        {"node-a": 75, "node-b": 75, "node-c": 100},
    ),
    (
        "NodeAffinityPolicy honoed with labelSelectors",
        soft_pod((1, "node", SOFT, FOO)).node_selector({"foo": ""}).obj(),
        foo_spread({"node-a": 2, "node-b": 1, "node-c": 1}),
        foo_on_a_and_b(),
        [],
        [],
        {"node-a": 0, "node-b": 33, "node-c": 100},
    ),
    (
        "NodeAffinityPolicy ignored with labelSelectors",
        soft_pod((1, "node", SOFT, FOO, None, "Ignore")).node_selector({"foo": ""}).obj(),
        foo_spread({"node-a": 2, "node-b": 1, "node-c": 1}),
        foo_on_a_and_b(),
        [],
        [],
        {"node-a": 66, "node-b": 100, "node-c": 100},
    ),
    (
        "NodeAffinityPolicy honoed with nodeAffinity",
        soft_pod((1, "node", SOFT, FOO)).node_affinity_in("foo", [""]).obj(),
        foo_spread({"node-a": 2, "node-b": 1, "node-c": 1}),
        foo_on_a_and_b(),
        [],
        [],
        {"node-a": 0, "node-b": 33, "node-c": 100},
    ),
    (
        "NodeAffinityPolicy ignored with nodeAffinity",
        soft_pod((1, "node", SOFT, FOO, None, "Ignore")).node_affinity_in("foo", [""]).obj(),
        foo_spread({"node-a": 2, "node-b": 1, "node-c": 1}),
        foo_on_a_and_b(),
        [],
        [],
        {"node-a": 66, "node-b": 100, "node-c": 100},
    ),
    (
        "NodeTaintsPolicy honored",
        soft_pod((1, "node", SOFT, FOO, None, None, "Honor")).obj(),
        foo_spread({"node-a": 2, "node-b": 1, "node-c": 1}),
        taint_on_c(),
        [],
        [],
        {"node-a": 0, "node-b": 33, "node-c": 100},
    ),
    (
        "NodeTaintsPolicy ignored",
        soft_pod((1, "node", SOFT, FOO)).obj(),
        foo_spread({"node-a": 2, "node-b": 1, "node-c": 1}),
        taint_on_c(),
        [],
        [],
        {"node-a": 66, "node-b": 100, "node-c": 100},
    ),
    (
        "matchLabelKeys ANDed with LabelSelector when LabelSelector is empty",
        make_pod()
        .name("p")
        .labels({"foo": "", "bar": ""})
        .spread_constraint(1, "zone", SOFT, LabelSelector(), match_label_keys=("foo",))
        .spread_constraint(1, LABEL_HOSTNAME, SOFT, LabelSelector(), match_label_keys=("bar",))
        .obj(),
        [
            pod_on("p-a1", "node-a", "foo"),
            pod_on("p-b1", "node-b", "foo", "bar"),
            pod_on("p-y1", "node-c", "foo"),
            pod_on("p-y2", "node-c", "bar"),
        ],
        [
            zone_host("node-a", "zone1"),
            zone_host("node-b", "zone1"),
            zone_host("node-c", "zone2"),
            zone_host("node-d", "zone2"),
        ],
        [],
        [],
        {"node-a": 60, "node-b": 20, "node-c": 60, "node-d": 100},
    ),
    (
        "matchLabelKeys ANDed with LabelSelector when LabelSelector isn't empty",
        make_pod()
        .name("p")
        .labels({"foo": "", "bar": "", "baz": ""})
        .spread_constraint(1, "zone", SOFT, FOO)
        .spread_constraint(1, LABEL_HOSTNAME, SOFT, BAR, match_label_keys=("baz",))
        .obj(),
        [
            pod_on("p-a1", "node-a", "foo"),
            pod_on("p-b1", "node-b", "foo", "bar", "baz"),
            pod_on("p-c1", "node-c", "foo"),
            pod_on("p-c2", "node-c", "bar"),
            pod_on("p-d3", "node-c", "bar", "baz"),
        ],
        [
            zone_host("node-a", "zone1"),
            zone_host("node-b", "zone1"),
            zone_host("node-c", "zone2"),
            zone_host("node-d", "zone2"),
        ],
        [],
        [],
        {"node-a": 60, "node-b": 20, "node-c": 60, "node-d": 100},
    ),
]


@pytest.mark.parametrize(
    ("pod", "existing", "nodes", "failed_nodes", "objects", "want"),
    [case[1:] for case in SCORE_CASES],
    ids=[case[0] for case in SCORE_CASES],
)
def test_score_and_normalize(
    pod: Pod,
    existing: list[Pod],
    nodes: list[Node],
    failed_nodes: list[Node],
    objects: list[object],
    want: dict[str, int],
) -> None:
    handle = FakeHandle(pods=existing, nodes=[*nodes, *failed_nodes], objects=objects)
    plugin = new(PodTopologySpreadArgs(defaulting_type=SYSTEM_DEFAULTING), handle)
    state = CycleState()
    candidates = node_infos(handle, nodes)
    assert plugin.pre_score(state, pod, candidates) is None
    scores = []
    for info in candidates:
        score, status = plugin.score(state, pod, info)
        assert status is None
        scores.append(NodeScore(info.name, score))
    extensions = plugin.score_extensions()
    assert extensions.normalize_score(state, pod, scores) is None
    assert {s.name: s.score for s in scores} == want


def test_score_without_pre_score_state_is_an_error() -> None:
    nodes = [host("node-a")]
    handle = FakeHandle(nodes=nodes)
    plugin = new(None, handle)
    score, status = plugin.score(
        CycleState(), make_pod().name("p").obj(), node_infos(handle, nodes)[0]
    )
    assert score == 0
    assert status is not None and status.code == Code.Error
    assert (
        status.message() == 'error reading "PreScorePodTopologySpread" from cycleState: not found'
    )


@pytest.mark.parametrize(
    ("value", "want"),
    [(0.5, 1), (1.5, 2), (2.5, 3), (2.4999, 2), (0.49999999999999994, 0), (-0.5, -1), (7.0, 7)],
)
def test_go_round_rounds_halves_away_from_zero(value: float, want: int) -> None:
    assert go_round(value) == want
