"""Ports podtopologyspread/filtering_test.go: TestPreFilterState, TestPreFilterStateAddPod,
TestPreFilterStateRemovePod, TestSingleConstraint, TestMultipleConstraints, TestPreFilterDisabled.

Upstream compares the whole preFilterState; here each constraint's (topology key, counts per
domain, critical paths) is compared, critical paths sorted by name where their counts tie, as
upstream's ``criticalPaths.sort`` does.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from schedviz.kube.objects import TAINT_NODE_UNSCHEDULABLE, LabelSelector, Node, Pod, Taint
from schedviz.scheduler.apis.config.types_pluginargs import LIST_DEFAULTING, PodTopologySpreadArgs
from schedviz.scheduler.framework.cycle_state import CycleState
from schedviz.scheduler.framework.interface import Code, Status
from schedviz.scheduler.framework.plugins.podtopologyspread import (
    ERR_REASON_CONSTRAINTS_NOT_MATCH,
    ERR_REASON_NODE_LABEL_NOT_MATCH,
    PodTopologySpread,
    new,
)
from schedviz.scheduler.framework.plugins.podtopologyspread.filtering import (
    PreFilterState,
    get_pre_filter_state,
)
from schedviz.scheduler.framework.types import PodInfo
from schedviz.scheduler.testing.framework_helpers import FakeHandle
from schedviz.scheduler.testing.wrappers import label_selector, make_node, make_pod

HARD = "DoNotSchedule"
SOFT = "ScheduleAnyway"
MAX_INT32 = 2**31 - 1
FOO = label_selector(expressions=[("foo", "Exists", [])])
BAR = label_selector(expressions=[("bar", "Exists", [])])
TAINTS = [Taint(TAINT_NODE_UNSCHEDULABLE, "NoSchedule")]


def zone_node(name: str, zone: str) -> Node:
    return make_node().name(name).label("zone", zone).label("node", name).obj()


def four_nodes() -> list[Node]:
    return [
        zone_node("node-a", "zone1"),
        zone_node("node-b", "zone1"),
        zone_node("node-x", "zone2"),
        zone_node("node-y", "zone2"),
    ]


def pod_on(name: str, node: str, *labels: str, namespace: str = "default") -> Pod:
    wrapper = make_pod().name(name).namespace(namespace).node(node)
    for label in labels:
        wrapper = wrapper.label(label, "")
    return wrapper.obj()


def foo_pods(*placements: tuple[str, str]) -> list[Pod]:
    return [pod_on(name, node, "foo") for name, node in placements]


def terminating(pod: Pod) -> Pod:
    return dataclasses.replace(pod, deletion_timestamp="2026-01-01T00:00:00Z")


def plain_node(name: str, **labels: str) -> Any:
    return make_node().name(name).label("node", name).labels(labels)


def spread_2_1_0_3() -> list[Pod]:
    """Matching pods on node-a, node-b, node-x, node-y: 2/1/0/3."""
    return [
        *foo_pods(("p-a1", "node-a"), ("p-a2", "node-a"), ("p-b1", "node-b")),
        *foo_pods(("p-y1", "node-y"), ("p-y2", "node-y"), ("p-y3", "node-y")),
    ]


def spread_3_2() -> list[Pod]:
    """Matching pods per zone: zone1 3 (node-a 2, node-b 1), zone2 2 (node-y)."""
    return foo_pods(
        ("p-a1", "node-a"),
        ("p-a2", "node-a"),
        ("p-b1", "node-b"),
        ("p-y1", "node-y"),
        ("p-y2", "node-y"),
    )


def spread_1_1_0_1() -> list[Pod]:
    return foo_pods(("p-b1", "node-a"), ("p-b2", "node-b"), ("p-y1", "node-y"))


def policy_nodes(*, taint_node_y: bool = False) -> list[Node]:
    """node-a, node-b, node-x labelled foo; node-y not, or tainted instead."""
    node_y = plain_node("node-y")
    return [
        plain_node("node-a", foo="").obj(),
        plain_node("node-b", foo="").obj(),
        plain_node("node-x", foo="").obj(),
        node_y.taints(TAINTS).obj() if taint_node_y else node_y.obj(),
    ]


def affinity_nodes() -> list[Node]:
    """node-a (zone1, foo=bar) outside a NotIn foo=bar affinity, node-b (zone2) inside."""
    return [
        make_node().name("node-a").labels({"zone": "zone1", "node": "node-a", "foo": "bar"}).obj(),
        make_node().name("node-b").labels({"zone": "zone2", "node": "node-b", "foo": ""}).obj(),
    ]


def spread_pod(
    *constraints: tuple[Any, ...], labels: tuple[str, ...] = ("foo",), name: str = "p"
) -> Any:
    wrapper = make_pod().name(name)
    for label in labels:
        wrapper = wrapper.label(label, "")
    for constraint in constraints:
        wrapper = wrapper.spread_constraint(*constraint)
    return wrapper


def setup(pods: list[Pod], nodes: list[Node]) -> tuple[PodTopologySpread, FakeHandle]:
    handle = FakeHandle(pods=pods, nodes=nodes)
    plugin = new(PodTopologySpreadArgs(defaulting_type=LIST_DEFAULTING), handle)
    return plugin, handle


def run_pre_filter(
    plugin: PodTopologySpread, handle: FakeHandle, pod: Pod
) -> tuple[CycleState, Status | None]:
    state = CycleState()
    _, status = plugin.pre_filter(state, pod, handle.snapshot.list())
    return state, status


def summary(state: PreFilterState) -> list[tuple[str, dict[str, int], list[tuple[str, int]]]]:
    """Per constraint: topology key, counts per domain and critical paths in canonical order."""
    result = []
    for constraint, counts, paths in zip(
        state.constraints, state.tp_value_to_match_num, state.critical_paths, strict=True
    ):
        first, second = paths[0], paths[1]
        if first[1] == second[1] and first[0] > second[0]:
            first, second = (second[0], first[1]), (first[0], second[1])
        result.append((constraint.topology_key, counts, [first, second]))
    return result


# ---------------------------------------------------------------------------------------------
# TestPreFilterState

PRE_FILTER_STATE_CASES: list[tuple[str, Any, list[Node], list[Pod], list[Any]]] = [
    (
        "clean cluster with one spreadConstraint",
        spread_pod((5, "zone", HARD, label_selector({"foo": "bar"}))),
        four_nodes(),
        [],
        [("zone", {"zone1": 0, "zone2": 0}, [("zone1", 0), ("zone2", 0)])],
    ),
    (
        "normal case with one spreadConstraint",
        spread_pod((1, "zone", HARD, FOO)),
        four_nodes(),
        spread_3_2(),
        [("zone", {"zone1": 3, "zone2": 2}, [("zone2", 2), ("zone1", 3)])],
    ),
    (
        "normal case with null label selector",
        spread_pod((1, "zone", HARD, None)),
        four_nodes(),
        spread_3_2(),
        [("zone", {"zone1": 0, "zone2": 0}, [("zone1", 0), ("zone2", 0)])],
    ),
    (
        "normal case with one spreadConstraint, on a 3-zone cluster",
        spread_pod((1, "zone", HARD, FOO)),
        [*four_nodes(), zone_node("node-o", "zone3"), zone_node("node-p", "zone3")],
        spread_3_2(),
        [("zone", {"zone1": 3, "zone2": 2, "zone3": 0}, [("zone3", 0), ("zone2", 2)])],
    ),
    (
        "namespace mismatch doesn't count",
        spread_pod((1, "zone", HARD, FOO)),
        four_nodes(),
        [
            pod_on("p-a1", "node-a", "foo"),
            pod_on("p-a2", "node-a", "foo", namespace="ns1"),
            pod_on("p-b1", "node-b", "foo"),
            pod_on("p-y1", "node-y", "foo", namespace="ns2"),
            pod_on("p-y2", "node-y", "foo"),
        ],
        [("zone", {"zone1": 2, "zone2": 1}, [("zone2", 1), ("zone1", 2)])],
    ),
    (
        "normal case with two spreadConstraints",
        spread_pod((1, "zone", HARD, FOO), (1, "node", HARD, FOO)),
        four_nodes(),
        [*spread_2_1_0_3(), pod_on("p-y4", "node-y", "foo")],
        [
            ("zone", {"zone1": 3, "zone2": 4}, [("zone1", 3), ("zone2", 4)]),
            (
                "node",
                {"node-a": 2, "node-b": 1, "node-x": 0, "node-y": 4},
                [("node-x", 0), ("node-b", 1)],
            ),
        ],
    ),
    (
        "soft spreadConstraints should be bypassed",
        spread_pod(
            (1, "zone", SOFT, FOO),
            (1, "zone", HARD, FOO),
            (1, "node", SOFT, FOO),
            (1, "node", HARD, FOO),
        ),
        [zone_node("node-a", "zone1"), zone_node("node-b", "zone1"), zone_node("node-y", "zone2")],
        [*spread_2_1_0_3(), pod_on("p-y4", "node-y", "foo")],
        [
            ("zone", {"zone1": 3, "zone2": 4}, [("zone1", 3), ("zone2", 4)]),
            ("node", {"node-a": 2, "node-b": 1, "node-y": 4}, [("node-b", 1), ("node-a", 2)]),
        ],
    ),
    (
        "NodeAffinityPolicy honored: nodes outside the pod's nodeSelector are no domain",
        spread_pod((1, "node", HARD, FOO)).node_selector({"foo": ""}),
        [
            make_node().name("node-a").label("node", "node-a").label("foo", "").obj(),
            make_node().name("node-b").label("node", "node-b").label("foo", "").obj(),
            make_node().name("node-x").label("node", "node-x").obj(),
        ],
        foo_pods(("p-a1", "node-a"), ("p-x1", "node-x")),
        [("node", {"node-a": 1, "node-b": 0}, [("node-b", 0), ("node-a", 1)])],
    ),
    (
        "NodeAffinityPolicy ignored: every node is a domain",
        spread_pod((1, "node", HARD, FOO, None, "Ignore")).node_selector({"foo": ""}),
        [
            make_node().name("node-a").label("node", "node-a").label("foo", "").obj(),
            make_node().name("node-b").label("node", "node-b").label("foo", "").obj(),
            make_node().name("node-x").label("node", "node-x").obj(),
        ],
        foo_pods(("p-a1", "node-a"), ("p-x1", "node-x")),
        [("node", {"node-a": 1, "node-b": 0, "node-x": 1}, [("node-b", 0), ("node-a", 1)])],
    ),
    (
        "NodeTaintsPolicy honored: untolerated tainted nodes are no domain",
        spread_pod((1, "node", HARD, FOO, None, None, "Honor")),
        [
            make_node().name("node-a").label("node", "node-a").obj(),
            make_node().name("node-b").label("node", "node-b").taints(TAINTS).obj(),
        ],
        foo_pods(("p-a1", "node-a"), ("p-b1", "node-b")),
        [("node", {"node-a": 1}, [("node-a", 1), ("", MAX_INT32)])],
    ),
    (
        "NodeTaintsPolicy ignored by default: tainted nodes count",
        spread_pod((1, "node", HARD, FOO)),
        [
            make_node().name("node-a").label("node", "node-a").obj(),
            make_node().name("node-b").label("node", "node-b").taints(TAINTS).obj(),
        ],
        foo_pods(("p-a1", "node-a")),
        [("node", {"node-a": 1, "node-b": 0}, [("node-b", 0), ("node-a", 1)])],
    ),
    (
        "matchLabelKeys are merged into the selector",
        make_pod()
        .name("p")
        .label("foo", "")
        .label("bar", "a")
        .spread_constraint(1, "zone", HARD, FOO, match_label_keys=("bar",)),
        four_nodes(),
        [
            pod_on("p-a1", "node-a", "foo"),
            make_pod().name("p-a2").node("node-a").labels({"foo": "", "bar": "a"}).obj(),
            make_pod().name("p-y1").node("node-y").labels({"foo": "", "bar": "b"}).obj(),
        ],
        [("zone", {"zone1": 1, "zone2": 0}, [("zone2", 0), ("zone1", 1)])],
    ),
    (
        "matchLabelKeys the pod lacks are ignored",
        make_pod()
        .name("p")
        .label("foo", "")
        .spread_constraint(1, "zone", HARD, FOO, match_label_keys=("bar",)),
        four_nodes(),
        [
            pod_on("p-a1", "node-a", "foo"),
            make_pod().name("p-y1").node("node-y").labels({"foo": "", "bar": "b"}).obj(),
        ],
        [("zone", {"zone1": 1, "zone2": 1}, [("zone1", 1), ("zone2", 1)])],
    ),
]


@pytest.mark.parametrize(
    ("pod", "nodes", "existing", "want"),
    [case[1:] for case in PRE_FILTER_STATE_CASES],
    ids=[case[0] for case in PRE_FILTER_STATE_CASES],
)
def test_pre_filter_computes_counts_and_critical_paths(
    pod: Any, nodes: list[Node], existing: list[Pod], want: list[Any]
) -> None:
    plugin, handle = setup(existing, nodes)
    state, status = run_pre_filter(plugin, handle, pod.obj())
    assert status is None
    assert summary(get_pre_filter_state(state)) == want


def test_pre_filter_resolves_constraint_defaults() -> None:
    plugin, handle = setup([], four_nodes())
    state, _ = run_pre_filter(plugin, handle, spread_pod((5, "zone", HARD, FOO)).obj())
    (constraint,) = get_pre_filter_state(state).constraints
    assert (constraint.max_skew, constraint.min_domains) == (5, 1)
    assert (constraint.node_affinity_policy, constraint.node_taints_policy) == ("Honor", "Ignore")


def test_pre_filter_skips_pod_without_hard_constraints() -> None:
    plugin, handle = setup([], four_nodes())
    state, status = run_pre_filter(plugin, handle, spread_pod((1, "zone", SOFT, FOO)).obj())
    assert status == Status(Code.Skip)
    assert state.keys() == []


def test_pre_filter_state_clone_is_independent() -> None:
    plugin, handle = setup(foo_pods(("p-a1", "node-a")), four_nodes())
    state, _ = run_pre_filter(plugin, handle, spread_pod((1, "zone", HARD, FOO)).obj())
    original = get_pre_filter_state(state)
    copy = original.clone()
    copy.tp_value_to_match_num[0]["zone1"] = 7
    copy.critical_paths[0].update("zone2", 9)
    assert summary(original) == [("zone", {"zone1": 1, "zone2": 0}, [("zone2", 0), ("zone1", 1)])]


# ---------------------------------------------------------------------------------------------
# TestPreFilterStateAddPod / TestPreFilterStateRemovePod

ADD_POD_CASES: list[tuple[str, Any, list[Node], list[Pod], Pod, int, list[Any]]] = [
    (
        "node a and b both impact current min match",
        spread_pod((1, "node", HARD, FOO)),
        [zone_node("node-a", "zone1"), zone_node("node-b", "zone1")],
        [],
        pod_on("p-b1", "node-b", "foo"),
        1,
        [("node", {"node-a": 0, "node-b": 1}, [("node-a", 0), ("node-b", 1)])],
    ),
    (
        "only node a impacts current min match",
        spread_pod((1, "node", HARD, FOO)),
        [zone_node("node-a", "zone1"), zone_node("node-b", "zone1")],
        foo_pods(("p-b1", "node-b")),
        pod_on("p-a1", "node-a", "foo"),
        0,
        [("node", {"node-a": 1, "node-b": 1}, [("node-a", 1), ("node-b", 1)])],
    ),
    (
        "add a pod in a different namespace doesn't change topologyKeyToMinPodsMap",
        spread_pod((1, "node", HARD, FOO)),
        [zone_node("node-a", "zone1"), zone_node("node-b", "zone1")],
        foo_pods(("p-a1", "node-a")),
        pod_on("p-b1", "node-b", "foo", namespace="ns1"),
        1,
        [("node", {"node-a": 1, "node-b": 0}, [("node-b", 0), ("node-a", 1)])],
    ),
    (
        "add pod on non-critical node won't trigger re-calculation",
        spread_pod((1, "node", HARD, FOO)),
        [zone_node("node-a", "zone1"), zone_node("node-b", "zone1")],
        foo_pods(("p-a1", "node-a")),
        pod_on("p-b2", "node-b", "foo"),
        1,
        [("node", {"node-a": 1, "node-b": 1}, [("node-a", 1), ("node-b", 1)])],
    ),
    (
        "node a and x both impact topologyKeyToMinPodsMap on zone and node",
        spread_pod((1, "zone", HARD, FOO), (1, "node", HARD, FOO)),
        [zone_node("node-a", "zone1"), zone_node("node-x", "zone2")],
        [],
        pod_on("p-a1", "node-a", "foo"),
        0,
        [
            ("zone", {"zone1": 1, "zone2": 0}, [("zone2", 0), ("zone1", 1)]),
            ("node", {"node-a": 1, "node-x": 0}, [("node-x", 0), ("node-a", 1)]),
        ],
    ),
    (
        "constraints hold different labelSelectors, pod matches only one of them",
        spread_pod((1, "zone", HARD, FOO), (1, "node", HARD, BAR), labels=("foo", "bar")),
        [zone_node("node-a", "zone1"), zone_node("node-b", "zone1"), zone_node("node-x", "zone2")],
        [pod_on("p-a1", "node-a", "foo"), pod_on("p-x1", "node-x", "foo", "bar")],
        pod_on("p-b1", "node-b", "bar"),
        1,
        [
            ("zone", {"zone1": 1, "zone2": 1}, [("zone1", 1), ("zone2", 1)]),
            (
                "node",
                {"node-a": 0, "node-b": 1, "node-x": 1},
                [("node-a", 0), ("node-b", 1)],
            ),
        ],
    ),
    (
        "add a pod on a node outside the pod's node affinity changes nothing",
        spread_pod((1, "zone", HARD, FOO)).node_affinity_not_in("foo", ["bar"]),
        affinity_nodes(),
        foo_pods(("p-b1", "node-b")),
        pod_on("p-a1", "node-a", "foo"),
        0,
        [("zone", {"zone2": 1}, [("zone2", 1), ("", MAX_INT32)])],
    ),
]


@pytest.mark.parametrize(
    ("pod", "nodes", "existing", "added", "node_index", "want"),
    [case[1:] for case in ADD_POD_CASES],
    ids=[case[0] for case in ADD_POD_CASES],
)
def test_add_pod_updates_counts_and_critical_paths(
    pod: Any,
    nodes: list[Node],
    existing: list[Pod],
    added: Pod,
    node_index: int,
    want: list[Any],
) -> None:
    plugin, handle = setup(existing, nodes)
    preemptor = pod.obj()
    state, _ = run_pre_filter(plugin, handle, preemptor)
    node_info = handle.snapshot.get(nodes[node_index].name)
    assert node_info is not None
    assert plugin.add_pod(state, preemptor, PodInfo(added), node_info) is None
    assert summary(get_pre_filter_state(state)) == want


def _zone_pods_remove() -> list[Pod]:
    return foo_pods(("p-a1", "node-a"), ("p-b1", "node-b"), ("p-x1", "node-x"), ("p-y1", "node-y"))


REMOVE_POD_CASES: list[tuple[str, Any, list[Node], list[Pod], Pod | int, int, list[Any]]] = [
    (
        "one spreadConstraint on zone, topologyKeyToMinPodsMap unchanged",
        spread_pod((1, "zone", HARD, FOO)),
        four_nodes()[:3],
        foo_pods(("p-a1", "node-a"), ("p-b1", "node-b"), ("p-x1", "node-x")),
        0,
        0,
        [("zone", {"zone1": 1, "zone2": 1}, [("zone1", 1), ("zone2", 1)])],
    ),
    (
        "one spreadConstraint on node, topologyKeyToMinPodsMap changed",
        spread_pod((1, "zone", HARD, FOO)),
        four_nodes(),
        _zone_pods_remove(),
        0,
        0,
        [("zone", {"zone1": 1, "zone2": 2}, [("zone1", 1), ("zone2", 2)])],
    ),
    (
        "delete an irrelevant pod won't help",
        spread_pod((1, "zone", HARD, FOO)),
        four_nodes(),
        [pod_on("p-a0", "node-a", "bar"), *_zone_pods_remove()],
        0,
        0,
        [("zone", {"zone1": 2, "zone2": 2}, [("zone1", 2), ("zone2", 2)])],
    ),
    (
        "delete a non-existing pod won't help",
        spread_pod((1, "zone", HARD, FOO)),
        four_nodes(),
        _zone_pods_remove(),
        pod_on("p-a0", "node-a", "bar"),
        0,
        [("zone", {"zone1": 2, "zone2": 2}, [("zone1", 2), ("zone2", 2)])],
    ),
    (
        "two spreadConstraints",
        spread_pod((1, "zone", HARD, FOO), (1, "node", HARD, FOO)),
        four_nodes()[:3],
        foo_pods(
            ("p-a1", "node-a"),
            ("p-a2", "node-a"),
            ("p-b1", "node-b"),
            ("p-x1", "node-x"),
            ("p-x2", "node-x"),
        ),
        3,
        2,
        [
            ("zone", {"zone1": 3, "zone2": 1}, [("zone2", 1), ("zone1", 3)]),
            (
                "node",
                {"node-a": 2, "node-b": 1, "node-x": 1},
                [("node-b", 1), ("node-x", 1)],
            ),
        ],
    ),
    (
        "remove a pod when scheduling node affinity unmatched pod with NodeInclusionPolicy enabled",
        spread_pod((1, "zone", HARD, FOO)).node_affinity_not_in("foo", ["bar"]),
        affinity_nodes(),
        [
            make_pod().name("p-a2").node("node-a").labels({"foo": "", "zone": "zone1"}).obj(),
            make_pod().name("p-b1").node("node-b").labels({"foo": "", "zone": "zone2"}).obj(),
        ],
        make_pod().name("p-a1").node("node-a").labels({"foo": "", "zone": "zone1"}).obj(),
        0,
        [("zone", {"zone2": 1}, [("zone2", 1), ("", MAX_INT32)])],
    ),
    (
        "remove a pod when scheduling node affinity matched pod with NodeInclusionPolicy enabled",
        spread_pod((1, "zone", HARD, FOO)),
        affinity_nodes(),
        [
            make_pod().name("p-a1").node("node-a").labels({"foo": "", "zone": "zone1"}).obj(),
            make_pod().name("p-b2").node("node-b").labels({"foo": "", "zone": "zone2"}).obj(),
        ],
        make_pod().name("p-b1").node("node-b").labels({"foo": "", "zone": "zone2"}).obj(),
        1,
        [("zone", {"zone1": 1, "zone2": 0}, [("zone2", 0), ("zone1", 1)])],
    ),
]


@pytest.mark.parametrize(
    ("pod", "nodes", "existing", "deleted", "node_index", "want"),
    [case[1:] for case in REMOVE_POD_CASES],
    ids=[case[0] for case in REMOVE_POD_CASES],
)
def test_remove_pod_updates_counts_and_critical_paths(
    pod: Any,
    nodes: list[Node],
    existing: list[Pod],
    deleted: Pod | int,
    node_index: int,
    want: list[Any],
) -> None:
    plugin, handle = setup(existing, nodes)
    preemptor = pod.obj()
    state, _ = run_pre_filter(plugin, handle, preemptor)
    deleted_pod = existing[deleted] if isinstance(deleted, int) else deleted
    node_info = handle.snapshot.get(nodes[node_index].name)
    assert node_info is not None
    assert plugin.remove_pod(state, preemptor, PodInfo(deleted_pod), node_info) is None
    assert summary(get_pre_filter_state(state)) == want


def test_add_pod_without_pre_filter_state_is_an_error() -> None:
    plugin, handle = setup([], four_nodes())
    node_info = handle.snapshot.get("node-a")
    assert node_info is not None
    status = plugin.add_pod(
        CycleState(), make_pod().name("p").obj(), PodInfo(pod_on("q", "node-a")), node_info
    )
    assert status is not None and status.code == Code.Error
    assert status.message() == 'reading "PreFilterPodTopologySpread" from cycleState: not found'


# ---------------------------------------------------------------------------------------------
# TestSingleConstraint

S = Code.Success
U = Code.Unschedulable
UU = Code.UnschedulableAndUnresolvable


SINGLE_CONSTRAINT_CASES: list[tuple[str, Pod, list[Node], list[Pod], dict[str, Code]]] = [
    (
        "no existing pods",
        spread_pod((1, "zone", HARD, FOO)).obj(),
        four_nodes(),
        [],
        {"node-a": S, "node-b": S, "node-x": S, "node-y": S},
    ),
    (
        "no existing pods, incoming pod doesn't match itself",
        spread_pod((1, "zone", HARD, BAR)).obj(),
        four_nodes(),
        [],
        {"node-a": S, "node-b": S, "node-x": S, "node-y": S},
    ),
    (
        "existing pods in a different namespace do not count",
        spread_pod((1, "zone", HARD, FOO)).obj(),
        four_nodes(),
        [
            pod_on("p-a1", "node-a", "foo", namespace="ns1"),
            pod_on("p-b1", "node-a", "foo", namespace="ns2"),
            pod_on("p-x1", "node-x", "foo"),
            pod_on("p-y1", "node-y", "foo"),
        ],
        {"node-a": S, "node-b": S, "node-x": U, "node-y": U},
    ),
    (
        "existing pods do not match null selector",
        spread_pod((1, "zone", HARD, None)).obj(),
        four_nodes(),
        foo_pods(("p-x1", "node-x"), ("p-y1", "node-y")),
        {"node-a": S, "node-b": S, "node-x": S, "node-y": S},
    ),
    (
        "pods spread across zones as 3/3, all nodes fit",
        spread_pod((1, "zone", HARD, FOO)).obj(),
        four_nodes(),
        spread_2_1_0_3(),
        {"node-a": S, "node-b": S, "node-x": S, "node-y": S},
    ),
    (
        "pods spread across zones as 1/2 due to absence of label 'zone' on node-b",
        spread_pod((1, "zone", HARD, FOO)).obj(),
        [
            zone_node("node-a", "zone1"),
            make_node().name("node-b").label("zon", "zone1").label("node", "node-b").obj(),
            zone_node("node-x", "zone2"),
            zone_node("node-y", "zone2"),
        ],
        foo_pods(("p-a1", "node-a"), ("p-b1", "node-b"), ("p-x1", "node-x"), ("p-y1", "node-y")),
        {"node-a": S, "node-b": UU, "node-x": U, "node-y": U},
    ),
    (
        "pod cannot be scheduled as all nodes don't have label 'rack'",
        spread_pod((1, "rack", HARD, FOO)).obj(),
        [zone_node("node-a", "zone1"), zone_node("node-x", "zone2")],
        [],
        {"node-a": UU, "node-x": UU},
    ),
    (
        "pods spread across nodes as 2/1/0/3, only node-x fits",
        spread_pod((1, "node", HARD, FOO)).obj(),
        four_nodes(),
        spread_2_1_0_3(),
        {"node-a": U, "node-b": U, "node-x": S, "node-y": U},
    ),
    (
        "pods spread across nodes as 2/1/0/3, maxSkew is 2, node-b and node-x fit",
        spread_pod((2, "node", HARD, FOO)).obj(),
        four_nodes(),
        spread_2_1_0_3(),
        {"node-a": U, "node-b": S, "node-x": S, "node-y": U},
    ),
    (
        "pods spread across nodes as 2/1/0/3, but pod doesn't match itself",
        spread_pod((1, "node", HARD, FOO), labels=("bar",)).obj(),
        four_nodes(),
        spread_2_1_0_3(),
        {"node-a": U, "node-b": S, "node-x": S, "node-y": U},
    ),
    (
        "incoming pod has nodeAffinity, pods spread as 2/~1~/~0~/3, hence node-a fits",
        spread_pod((1, "node", HARD, FOO)).node_affinity_in("node", ["node-a", "node-y"]).obj(),
        four_nodes(),
        spread_2_1_0_3(),
        {"node-a": S, "node-b": S, "node-x": S, "node-y": U},
    ),
    (
        "terminating Pods should be excluded",
        spread_pod((1, "node", HARD, FOO)).obj(),
        [plain_node("node-a").obj(), plain_node("node-b").obj()],
        [terminating(pod_on("p-a", "node-a", "foo")), pod_on("p-b", "node-b", "foo")],
        {"node-a": S, "node-b": U},
    ),
    (
        "incoming pod has nodeAffinity, pods spread as 0/~2~/0/1, hence node-a fits",
        spread_pod((1, "zone", HARD, FOO)).node_affinity_not_in("node", ["node-b"]).obj(),
        four_nodes(),
        foo_pods(("p-b1", "node-b"), ("p-b2", "node-b"), ("p-y1", "node-y")),
        {"node-a": S, "node-b": S, "node-x": U, "node-y": U},
    ),
    (
        "pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains < minDomains, "
        "then the third node fits",
        spread_pod((2, "node", HARD, FOO, 4)).obj(),
        [plain_node("node-a").obj(), plain_node("node-b").obj(), plain_node("node-c").obj()],
        foo_pods(
            ("p-a1", "node-a"),
            ("p-a2", "node-a"),
            ("p-b1", "node-b"),
            ("p-b2", "node-b"),
            ("p-c1", "node-c"),
        ),
        {"node-a": U, "node-b": U, "node-c": S},
    ),
    (
        "pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains > minDomains, "
        "then the all nodes fit",
        spread_pod((2, "node", HARD, FOO, 2)).obj(),
        [plain_node("node-a").obj(), plain_node("node-b").obj(), plain_node("node-c").obj()],
        foo_pods(
            ("p-a1", "node-a"),
            ("p-a2", "node-a"),
            ("p-b1", "node-b"),
            ("p-b2", "node-b"),
            ("p-c1", "node-c"),
        ),
        {"node-a": S, "node-b": S, "node-c": S},
    ),
    (
        "pods spread across zone as 2/1, maxSkew is 2 and the number of domains < minDomains, "
        "then the third and fourth nodes fit",
        spread_pod((2, "zone", HARD, FOO, 3)).obj(),
        four_nodes(),
        spread_1_1_0_1(),
        {"node-a": U, "node-b": U, "node-x": S, "node-y": S},
    ),
    (
        "pods spread across zone as 2/1, maxSkew is 2 and the number of domains > minDomains, "
        "then the all nodes fit",
        spread_pod((2, "zone", HARD, FOO, 1)).obj(),
        four_nodes(),
        spread_1_1_0_1(),
        {"node-a": S, "node-b": S, "node-x": S, "node-y": S},
    ),
    (
        "NodeAffinityPolicy honored with labelSelectors",
        spread_pod((1, "node", HARD, FOO)).node_selector({"foo": ""}).obj(),
        policy_nodes(),
        spread_1_1_0_1(),
        {"node-a": U, "node-b": U, "node-x": S, "node-y": S},
    ),
    (
        "NodeAffinityPolicy ignored with labelSelectors",
        spread_pod((1, "node", HARD, FOO, None, "Ignore")).node_selector({"foo": ""}).obj(),
        policy_nodes(),
        spread_1_1_0_1(),
        {"node-a": U, "node-b": U, "node-x": S, "node-y": U},
    ),
    (
        "NodeAffinityPolicy honored with nodeAffinity",
        spread_pod((1, "node", HARD, FOO)).node_affinity_in("foo", [""]).obj(),
        policy_nodes(),
        spread_1_1_0_1(),
        {"node-a": U, "node-b": U, "node-x": S, "node-y": S},
    ),
    (
        "NodeAffinityPolicy ignored with nodeAffinity",
        spread_pod((1, "node", HARD, FOO, None, "Ignore")).node_affinity_in("foo", [""]).obj(),
        policy_nodes(),
        spread_1_1_0_1(),
        {"node-a": U, "node-b": U, "node-x": S, "node-y": U},
    ),
    (
        "NodeTaintsPolicy honored",
        spread_pod((1, "node", HARD, FOO, None, None, "Honor")).obj(),
        policy_nodes(taint_node_y=True),
        spread_1_1_0_1(),
        {"node-a": U, "node-b": U, "node-x": S, "node-y": S},
    ),
    (
        "NodeTaintsPolicy ignored",
        spread_pod((1, "node", HARD, FOO)).obj(),
        policy_nodes(taint_node_y=True),
        spread_1_1_0_1(),
        {"node-a": U, "node-b": U, "node-x": S, "node-y": U},
    ),
    (
        "empty labelSelector counts no existing pod (v1.35)",
        spread_pod((1, "node", HARD, LabelSelector())).obj(),
        [plain_node("node-a").obj(), plain_node("node-b").obj()],
        foo_pods(("p-a1", "node-a"), ("p-a2", "node-a")),
        {"node-a": S, "node-b": S},
    ),
]

_REASONS = {
    Code.Unschedulable: (ERR_REASON_CONSTRAINTS_NOT_MATCH,),
    Code.UnschedulableAndUnresolvable: (ERR_REASON_NODE_LABEL_NOT_MATCH,),
}


def filter_all(pod: Pod, nodes: list[Node], existing: list[Pod]) -> dict[str, Status | None]:
    plugin, handle = setup(existing, nodes)
    state, status = run_pre_filter(plugin, handle, pod)
    assert status is None
    result = {}
    for node in nodes:
        node_info = handle.snapshot.get(node.name)
        assert node_info is not None
        result[node.name] = plugin.filter(state, pod, node_info)
    return result


def expected_statuses(codes: dict[str, Code]) -> dict[str, Status | None]:
    return {
        name: None if code == Code.Success else Status(code, _REASONS[code])
        for name, code in codes.items()
    }


@pytest.mark.parametrize(
    ("pod", "nodes", "existing", "want"),
    [case[1:] for case in SINGLE_CONSTRAINT_CASES],
    ids=[case[0] for case in SINGLE_CONSTRAINT_CASES],
)
def test_filter_single_constraint(
    pod: Pod, nodes: list[Node], existing: list[Pod], want: dict[str, Code]
) -> None:
    assert filter_all(pod, nodes, existing) == expected_statuses(want)


def test_filter_reason_strings_are_upstreams() -> None:
    assert (
        ERR_REASON_CONSTRAINTS_NOT_MATCH == "node(s) didn't match pod topology spread constraints"
    )
    assert ERR_REASON_NODE_LABEL_NOT_MATCH == (
        "node(s) didn't match pod topology spread constraints (missing required label)"
    )


# ---------------------------------------------------------------------------------------------
# TestMultipleConstraints

MULTIPLE_CONSTRAINTS_CASES: list[tuple[str, Pod, list[Node], list[Pod], dict[str, Code]]] = [
    (
        "two Constraints on zone and node, spreads = [3/3, 2/1/0/3]",
        spread_pod((1, "zone", HARD, FOO), (1, "node", HARD, FOO)).obj(),
        four_nodes(),
        spread_2_1_0_3(),
        {"node-a": U, "node-b": U, "node-x": S, "node-y": U},
    ),
    (
        "two Constraints on zone and node, spreads = [3/4, 2/1/0/4]",
        spread_pod((1, "zone", HARD, FOO), (1, "node", HARD, FOO)).obj(),
        four_nodes(),
        [*spread_2_1_0_3(), pod_on("p-y4", "node-y", "foo")],
        {"node-a": U, "node-b": U, "node-x": U, "node-y": U},
    ),
    (
        "Constraints hold different labelSelectors, spreads = [1/0, 1/0/0/1]",
        spread_pod((1, "zone", HARD, FOO), (1, "node", HARD, BAR), labels=("foo", "bar")).obj(),
        four_nodes(),
        [pod_on("p-a1", "node-a", "foo"), pod_on("p-y1", "node-y", "bar")],
        {"node-a": U, "node-b": U, "node-x": S, "node-y": U},
    ),
    (
        "Constraints hold different labelSelectors, spreads = [1/0, 0/0/1/1]",
        spread_pod((1, "zone", HARD, FOO), (1, "node", HARD, BAR), labels=("foo", "bar")).obj(),
        four_nodes(),
        [
            pod_on("p-a1", "node-a", "foo"),
            pod_on("p-x1", "node-x", "bar"),
            pod_on("p-y1", "node-y", "bar"),
        ],
        {"node-a": U, "node-b": U, "node-x": U, "node-y": U},
    ),
    (
        "the first constraint's missing label wins over the second's skew",
        spread_pod((1, "rack", HARD, FOO), (1, "node", HARD, FOO)).obj(),
        four_nodes(),
        foo_pods(("p-a1", "node-a")),
        {"node-a": UU, "node-b": UU, "node-x": UU, "node-y": UU},
    ),
]


@pytest.mark.parametrize(
    ("pod", "nodes", "existing", "want"),
    [case[1:] for case in MULTIPLE_CONSTRAINTS_CASES],
    ids=[case[0] for case in MULTIPLE_CONSTRAINTS_CASES],
)
def test_filter_multiple_constraints(
    pod: Pod, nodes: list[Node], existing: list[Pod], want: dict[str, Code]
) -> None:
    assert filter_all(pod, nodes, existing) == expected_statuses(want)


# ---------------------------------------------------------------------------------------------
# TestPreFilterDisabled


def test_filter_without_pre_filter_state_is_an_error() -> None:
    plugin, handle = setup([], [zone_node("node-a", "zone1")])
    node_info = handle.snapshot.get("node-a")
    assert node_info is not None
    status = plugin.filter(CycleState(), make_pod().name("p").obj(), node_info)
    assert status is not None and status.code == Code.Error
    assert status.message() == 'reading "PreFilterPodTopologySpread" from cycleState: not found'
