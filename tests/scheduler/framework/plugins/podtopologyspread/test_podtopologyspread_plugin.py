"""Ports podtopologyspread/plugin_test.go (Test_isSchedulableAfterNodeChange,
Test_isSchedulableAfterPodChange) and checks the plugin's construction and registered events."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
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
    Toleration,
    TopologySpreadConstraint,
)
from schedviz.scheduler.apis.config.types_pluginargs import (
    LIST_DEFAULTING,
    SYSTEM_DEFAULTING,
    NodeResourcesFitArgs,
    PodTopologySpreadArgs,
)
from schedviz.scheduler.apis.config.validation import ConfigError
from schedviz.scheduler.framework.interface import (
    EnqueueExtensions,
    FilterPlugin,
    PreFilterPlugin,
    PreScorePlugin,
    ScorePlugin,
)
from schedviz.scheduler.framework.plugins import names
from schedviz.scheduler.framework.plugins.podtopologyspread import NAME, PodTopologySpread, new
from schedviz.scheduler.framework.plugins.podtopologyspread.common import default_selector
from schedviz.scheduler.framework.types import ActionType, ClusterEvent, EventResource, QueueingHint
from schedviz.scheduler.testing.framework_helpers import FakeHandle
from schedviz.scheduler.testing.wrappers import label_selector, make_node, make_pod

HARD = "DoNotSchedule"
FOO = label_selector(expressions=[("foo", "Exists", [])])
BAR = label_selector(expressions=[("bar", "Exists", [])])
Q = QueueingHint.Queue
SKIP = QueueingHint.QueueSkip


def plugin() -> PodTopologySpread:
    return new(PodTopologySpreadArgs(defaulting_type=LIST_DEFAULTING), FakeHandle())


def spread(*constraints: tuple[Any, ...]) -> Pod:
    wrapper = make_pod().name("p").label("foo", "")
    for constraint in constraints:
        wrapper = wrapper.spread_constraint(*constraint)
    return wrapper.obj()


def node(labels: dict[str, str], taints: list[Taint] | None = None) -> Node:
    return make_node().name("node-a").labels(labels).taints(taints or []).obj()


ZONE = (1, "zone", HARD, FOO)
ZONE_AND_NODE = ((1, "zone", HARD, FOO), (1, "node", HARD, FOO))

NODE_CHANGE_CASES: list[tuple[str, Pod, Node | None, Node | None, QueueingHint]] = [
    (
        "node updates label which matches topologyKey",
        spread(ZONE),
        node({"zone": "zone1"}),
        node({"zone": "zone2"}),
        Q,
    ),
    (
        "node that doesn't match topologySpreadConstraints updates non-related label",
        spread(ZONE),
        node({"foo": "bar1"}),
        node({"foo": "bar2"}),
        SKIP,
    ),
    (
        "node that match topologySpreadConstraints adds non-related label",
        spread(*ZONE_AND_NODE),
        node({"zone": "zone1", "node": "node1", "foo": "bar"}),
        node({"zone": "zone1", "node": "node1"}),
        SKIP,
    ),
    ("create node with non-related labels", spread(ZONE), None, node({"foo": "bar"}), SKIP),
    ("create node with related labels", spread(ZONE), None, node({"zone": "zone1"}), Q),
    ("delete node with non-related labels", spread(ZONE), node({"foo": "bar"}), None, SKIP),
    ("delete node with related labels", spread(ZONE), node({"zone": "zone1"}), None, Q),
    (
        "add node with related labels that only match one of topologySpreadConstraints",
        spread(*ZONE_AND_NODE),
        None,
        node({"zone": "zone1"}),
        SKIP,
    ),
    (
        "add node with related labels that match all topologySpreadConstraints",
        spread(*ZONE_AND_NODE),
        None,
        node({"zone": "zone1", "node": "node1"}),
        Q,
    ),
    (
        "update node with related labels that only match one of topologySpreadConstraints",
        spread(*ZONE_AND_NODE),
        node({"zone": "zone1"}),
        node({"zone": "zone1"}),
        SKIP,
    ),
    (
        "update node with related labels that match all topologySpreadConstraints",
        spread(*ZONE_AND_NODE),
        node({"zone": "zone1", "node": "node1"}),
        node({"zone": "zone1", "node": "node2"}),
        Q,
    ),
    (
        "update node with different taints that match all topologySpreadConstraints",
        spread(*ZONE_AND_NODE),
        node({"zone": "zone1", "node": "node1"}, [Taint("aaa", "NoSchedule", "bbb")]),
        node({"zone": "zone1", "node": "node1"}, [Taint("ccc", "NoSchedule", "bbb")]),
        Q,
    ),
    (
        "update node with different taints that only match one of topologySpreadConstraints",
        spread(*ZONE_AND_NODE),
        node({"node": "node1"}, [Taint("aaa", "NoSchedule", "bbb")]),
        node({"node": "node1"}, [Taint("ccc", "NoSchedule", "bbb")]),
        SKIP,
    ),
    (
        "node that matches gains the topology label of a constraint",
        spread(*ZONE_AND_NODE),
        node({"node": "node1"}),
        node({"zone": "zone1", "node": "node1"}),
        Q,
    ),
]


@pytest.mark.parametrize(
    ("pod", "old", "new_node", "want"),
    [case[1:] for case in NODE_CHANGE_CASES],
    ids=[case[0] for case in NODE_CHANGE_CASES],
)
def test_is_schedulable_after_node_change(
    pod: Pod, old: Node | None, new_node: Node | None, want: QueueingHint
) -> None:
    assert plugin().is_schedulable_after_node_change(pod, old, new_node) == want


def assigned(*labels: tuple[str, str], namespace: str = "default") -> Pod:
    return make_pod().name("p2").namespace(namespace).node("fake-node").labels(dict(labels)).obj()


def unassigned(*labels: tuple[str, str]) -> Pod:
    return make_pod().name("p2").labels(dict(labels)).obj()


def the_pod(*labels: tuple[str, str], tolerate: bool = False) -> Pod:
    wrapper = make_pod().name("p").labels(dict(labels))
    if tolerate:
        wrapper = wrapper.toleration(
            Toleration(TAINT_NODE_UNSCHEDULABLE, "Exists", effect="NoSchedule")
        )
    return wrapper.obj()


ZONE_FOO_NODE_BAR = ((1, "zone", HARD, FOO), (1, "node", HARD, BAR))

POD_CHANGE_CASES: list[tuple[str, Pod, Pod | None, Pod | None, QueueingHint]] = [
    (
        "add pod with labels match topologySpreadConstraints selector",
        spread(ZONE),
        None,
        assigned(("foo", "")),
        Q,
    ),
    ("add un-scheduled pod", spread(ZONE), None, unassigned(("foo", "")), SKIP),
    (
        "update un-scheduled pod",
        spread(ZONE),
        unassigned(("bar", "")),
        unassigned(("foo", "")),
        SKIP,
    ),
    ("delete un-scheduled pod", spread(ZONE), unassigned(("foo", "")), None, SKIP),
    (
        "add pod with different namespace",
        spread(ZONE),
        None,
        assigned(("foo", ""), namespace="fake-namespace"),
        SKIP,
    ),
    (
        "add pod with labels don't match topologySpreadConstraints selector",
        spread(ZONE),
        None,
        assigned(("bar", "")),
        SKIP,
    ),
    (
        "delete pod with labels that match topologySpreadConstraints selector",
        spread(ZONE),
        assigned(("foo", "")),
        None,
        Q,
    ),
    (
        "delete pod with labels that don't match topologySpreadConstraints selector",
        spread(ZONE),
        assigned(("bar", "")),
        None,
        SKIP,
    ),
    (
        "update pod's non-related label",
        spread(ZONE),
        assigned(("foo", ""), ("bar", "bar1")),
        assigned(("foo", ""), ("bar", "bar2")),
        SKIP,
    ),
    (
        "add pod's label that matches topologySpreadConstraints selector",
        spread(ZONE),
        assigned(),
        assigned(("foo", "")),
        Q,
    ),
    (
        "delete pod label that matches topologySpreadConstraints selector",
        spread(ZONE),
        assigned(("foo", "")),
        assigned(),
        Q,
    ),
    (
        "change pod's label that matches topologySpreadConstraints selector",
        spread(ZONE),
        assigned(("foo", "foo1")),
        assigned(("foo", "foo2")),
        SKIP,
    ),
    (
        "change pod's label that doesn't match topologySpreadConstraints selector",
        spread(ZONE),
        assigned(("foo", ""), ("bar", "bar1")),
        assigned(("foo", ""), ("bar", "bar2")),
        SKIP,
    ),
    (
        "add pod's label that matches topologySpreadConstraints selector with multi "
        "topologySpreadConstraints",
        spread(*ZONE_FOO_NODE_BAR),
        assigned(("foo", "")),
        assigned(("foo", ""), ("bar", "bar2")),
        Q,
    ),
    (
        "change pod's label that doesn't match topologySpreadConstraints selector with multi "
        "topologySpreadConstraints",
        spread(*ZONE_FOO_NODE_BAR),
        assigned(("foo", "")),
        assigned(("foo", ""), ("baz", "")),
        SKIP,
    ),
    (
        "change pod's label that match topologySpreadConstraints selector with multi "
        "topologySpreadConstraints",
        spread(*ZONE_FOO_NODE_BAR),
        assigned(("foo", ""), ("bar", "")),
        assigned(("foo", ""), ("bar", "bar2")),
        SKIP,
    ),
    (
        "the unschedulable Pod has topologySpreadConstraint with NodeTaintsPolicy:Honor and has "
        "got a new toleration",
        spread((1, "zone", HARD, FOO, None, None, "Honor"), (1, "node", HARD, BAR)),
        the_pod(("foo", "")),
        the_pod(("foo", ""), tolerate=True),
        Q,
    ),
    (
        "the unschedulable Pod has topologySpreadConstraint without NodeTaintsPolicy:Honor and "
        "has got a new toleration",
        spread((1, "zone", HARD, FOO, None, None, "Ignore"), (1, "node", HARD, BAR)),
        the_pod(("foo", "")),
        the_pod(("foo", ""), tolerate=True),
        SKIP,
    ),
    (
        "the unschedulable Pod has topologySpreadConstraint and has got a new label matching the "
        "selector of the constraint",
        spread((1, "zone", HARD, FOO, None, None, "Ignore"), (1, "node", HARD, BAR)),
        the_pod(),
        the_pod(("foo", "")),
        Q,
    ),
    (
        "the unschedulable Pod has topologySpreadConstraint and has got a new unrelated label",
        spread((1, "zone", HARD, FOO, None, None, "Ignore"), (1, "node", HARD, BAR)),
        the_pod(),
        the_pod(("unrelated", "")),
        SKIP,
    ),
]


@pytest.mark.parametrize(
    ("pod", "old", "new_pod", "want"),
    [case[1:] for case in POD_CHANGE_CASES],
    ids=[case[0] for case in POD_CHANGE_CASES],
)
def test_is_schedulable_after_pod_change(
    pod: Pod, old: Pod | None, new_pod: Pod | None, want: QueueingHint
) -> None:
    assert plugin().is_schedulable_after_pod_change(pod, old, new_pod) == want


def test_hints_queue_objects_of_the_wrong_kind() -> None:
    pod = spread(ZONE)
    assert plugin().is_schedulable_after_pod_change(pod, None, node({"zone": "z"})) == Q
    assert plugin().is_schedulable_after_node_change(pod, assigned(), None) == Q


def test_events_to_register() -> None:
    events = plugin().events_to_register()
    assert [e.event for e in events] == [
        ClusterEvent(
            EventResource.Pod,
            ActionType.Add
            | ActionType.UpdatePodLabel
            | ActionType.UpdatePodToleration
            | ActionType.Delete,
        ),
        ClusterEvent(
            EventResource.Node,
            ActionType.Add
            | ActionType.Delete
            | ActionType.UpdateNodeLabel
            | ActionType.UpdateNodeTaint,
        ),
    ]
    assert all(e.queueing_hint_fn is not None for e in events)


def test_new_defaults_args_and_rejects_other_kinds() -> None:
    default = new(None, FakeHandle())
    assert default.name() == NAME == names.POD_TOPOLOGY_SPREAD == "PodTopologySpread"
    assert default.system_defaulted
    assert [
        (c.topology_key, c.max_skew, c.when_unsatisfiable) for c in default.default_constraints
    ] == [
        (LABEL_HOSTNAME, 3, "ScheduleAnyway"),
        (LABEL_TOPOLOGY_ZONE, 5, "ScheduleAnyway"),
    ]
    with pytest.raises(TypeError, match="want args to be of type PodTopologySpreadArgs"):
        new(NodeResourcesFitArgs(), FakeHandle())


def test_new_validates_its_args() -> None:
    args = PodTopologySpreadArgs(
        default_constraints=[TopologySpreadConstraint(1, "zone", "ScheduleAnyway")],
        defaulting_type=SYSTEM_DEFAULTING,
    )
    with pytest.raises(ConfigError, match="defaultingType: Invalid value"):
        new(args, FakeHandle())


def test_system_defaulting_ignores_listed_constraints() -> None:
    args = PodTopologySpreadArgs(defaulting_type=SYSTEM_DEFAULTING)
    assert new(args, FakeHandle()).default_constraints[0].topology_key == LABEL_HOSTNAME
    listed = new(PodTopologySpreadArgs(defaulting_type=LIST_DEFAULTING), FakeHandle())
    assert listed.default_constraints == ()


def test_plugin_implements_its_extension_points() -> None:
    instance = plugin()
    for protocol in (PreFilterPlugin, FilterPlugin, PreScorePlugin, ScorePlugin, EnqueueExtensions):
        assert isinstance(instance, protocol)
    assert instance.pre_filter_extensions() is instance
    assert instance.score_extensions() is instance


# ---------------------------------------------------------------------------------------------
# helper.DefaultSelector, through the objects the handle lists


@dataclass
class Service:
    name: str
    namespace: str = "default"
    selector: dict[str, str] | None = None


@dataclass
class ReplicationController:
    name: str
    namespace: str = "default"
    selector: dict[str, str] | None = None


@dataclass
class StatefulSet:
    name: str
    namespace: str = "default"
    selector: LabelSelector | None = None


def owned(kind: str, name: str, *, controller: bool = True) -> Pod:
    pod = make_pod().name("p").labels({"app": "web", "tier": "front"}).obj()
    return dataclasses.replace(
        pod, owner_references=(OwnerReference(kind, name, controller=controller),)
    )


DEFAULT_SELECTOR_CASES: list[tuple[str, Pod, list[object], dict[str, str], dict[str, str]]] = [
    # (name, pod, objects, labels it must select, labels it must not select)
    ("nothing selects the pod", owned("ReplicaSet", "rs"), [], {}, {}),
    (
        "a service of another namespace is ignored",
        owned("ReplicaSet", "rs"),
        [Service("s", namespace="other", selector={"app": "web"})],
        {},
        {},
    ),
    (
        "a service with a nil selector selects nothing",
        owned("ReplicaSet", "rs"),
        [Service("s", selector=None)],
        {},
        {},
    ),
    (
        "a matching service gives its selector",
        owned("ReplicaSet", "rs"),
        [Service("s", selector={"app": "web"}), Service("t", selector={"app": "db"})],
        {"app": "web"},
        {"app": "db"},
    ),
    (
        "the controlling replication controller's selector is merged",
        owned("ReplicationController", "rc"),
        [
            Service("s", selector={"app": "web"}),
            ReplicationController("rc", selector={"tier": "front"}),
        ],
        {"app": "web", "tier": "front"},
        {"app": "web"},
    ),
    (
        "the controlling stateful set's label selector is added",
        owned("StatefulSet", "ss"),
        [StatefulSet("ss", selector=label_selector(expressions=[("tier", "In", ["front"])]))],
        {"tier": "front"},
        {"tier": "back"},
    ),
    (
        "an owner that is not the controller is ignored",
        owned("StatefulSet", "ss", controller=False),
        [StatefulSet("ss", selector=label_selector({"tier": "front"}))],
        {},
        {},
    ),
]


@pytest.mark.parametrize(
    ("pod", "objects", "selected", "not_selected"),
    [case[1:] for case in DEFAULT_SELECTOR_CASES],
    ids=[case[0] for case in DEFAULT_SELECTOR_CASES],
)
def test_default_selector(
    pod: Pod, objects: list[object], selected: dict[str, str], not_selected: dict[str, str]
) -> None:
    selector = default_selector(pod, FakeHandle(objects=objects).objects)
    if not selected:
        assert selector.empty
        return
    assert selector.matches(selected)
    assert not selector.matches(not_selected)
