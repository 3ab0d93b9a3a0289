"""InterPodAffinity construction, events and queueing hints: upstream's plugin_test.go tables.

Upstream tells the target pod apart by UID; here by ``namespace/name``, so the pods named "p"
below are the target and the unnamed ones are other pods.
"""

from __future__ import annotations

import dataclasses

import pytest

from schedviz.kube.objects import Node, Pod, PodAffinity, PodAffinityTerm
from schedviz.scheduler.apis.config.types_pluginargs import (
    InterPodAffinityArgs,
    NodeAffinityArgs,
)
from schedviz.scheduler.framework.interface import (
    EnqueueExtensions,
    FilterPlugin,
    PreFilterPlugin,
    PreScorePlugin,
    ScorePlugin,
)
from schedviz.scheduler.framework.plugins.interpodaffinity import NAME, InterPodAffinity, new
from schedviz.scheduler.framework.types import (
    ActionType,
    ClusterEvent,
    EventResource,
    QueueingHint,
)
from schedviz.scheduler.testing.framework_helpers import FakeHandle
from schedviz.scheduler.testing.wrappers import PodWrapper, label_selector, make_node, make_pod

QUEUE = QueueingHint.Queue
SKIP = QueueingHint.QueueSkip


def required(
    w: PodWrapper, *, anti: bool, key: str, topology_key: str, values: list[str]
) -> PodWrapper:
    """st.MakePod().PodAffinityIn / PodAntiAffinityIn with PodAffinityWithRequiredReq."""
    term = PodAffinityTerm(topology_key, label_selector(expressions=[(key, "In", values)]))
    affinity = w.obj().affinity
    current = None
    if affinity is not None:
        current = affinity.pod_anti_affinity if anti else affinity.pod_affinity
    current = current or PodAffinity()
    updated = dataclasses.replace(current, required=(*current.required, term))
    return w.pod_anti_affinity(updated) if anti else w.pod_affinity(updated)


def target_with_affinity() -> PodWrapper:
    return required(
        make_pod().uid("p").name("p"),
        anti=False,
        key="service",
        topology_key="region",
        values=["securityscan", "value2"],
    )


def target_with_anti_affinity() -> PodWrapper:
    return required(
        make_pod().uid("p").name("p"),
        anti=True,
        key="service",
        topology_key="region",
        values=["securityscan", "value2"],
    )


def other() -> PodWrapper:
    return make_pod().uid("other")


def anti_securityscan(w: PodWrapper) -> PodWrapper:
    return required(
        w, anti=True, key="service", topology_key="region", values=["securityscan", "value2"]
    )


def plugin() -> InterPodAffinity:
    return new(InterPodAffinityArgs(), FakeHandle())


# ---------------------------------------------------------------------------------------------
# Test_isSchedulableAfterPodChange

POD_CHANGE_CASES: list[tuple[str, Pod, Pod | None, Pod | None, QueueingHint]] = [
    (
        "add a pod which matches the pod affinity",
        target_with_affinity().obj(),
        None,
        other().node("fake-node").label("service", "securityscan").obj(),
        QUEUE,
    ),
    (
        "add an un-scheduled pod",
        target_with_affinity().obj(),
        None,
        other().label("service", "securityscan").obj(),
        SKIP,
    ),
    (
        "add a pod which doesn't match the pod affinity",
        target_with_affinity().obj(),
        None,
        other().node("fake-node").label("aaa", "a").obj(),
        SKIP,
    ),
    (
        "update a pod from non-match to match pod affinity",
        target_with_affinity().obj(),
        other().node("fake-node").label("aaa", "a").obj(),
        other().node("fake-node").label("service", "securityscan").obj(),
        QUEUE,
    ),
    (
        "the updating pod matches target pod's affinity both before and after label changes",
        target_with_affinity().obj(),
        other().node("fake-node").label("service", "value2").obj(),
        other().node("fake-node").label("service", "securityscan").obj(),
        SKIP,
    ),
    (
        "update an un-scheduled pod",
        target_with_affinity().obj(),
        other().label("aaa", "a").obj(),
        other().label("service", "securityscan").obj(),
        SKIP,
    ),
    (
        "update a pod from match to non-match the pod affinity",
        target_with_affinity().obj(),
        other().node("fake-node").label("service", "securityscan").obj(),
        other().node("fake-node").label("aaa", "a").obj(),
        SKIP,
    ),
    (
        "update a pod from match to non-match pod's affinity - multiple terms case",
        make_pod()
        .uid("p")
        .name("p")
        .pod_affinity_exists("aaa", "hostname")
        .pod_affinity_exists("bbb", "hostname")
        .obj(),
        other().node("fake-node").label("aaa", "a").obj(),
        other().node("fake-node").label("service", "securityscan").obj(),
        SKIP,
    ),
    (
        "update a pod from non-match to match pod's affinity - multiple terms case",
        make_pod()
        .uid("p")
        .name("p")
        .pod_affinity_exists("aaa", "hostname")
        .pod_affinity_exists("bbb", "hostname")
        .obj(),
        other().node("fake-node").label("aaa", "a").obj(),
        other().node("fake-node").label("aaa", "").label("bbb", "").obj(),
        QUEUE,
    ),
    (
        "updated pod is the target pod",
        make_pod().uid("p").name("p").label("foo", "baz").obj(),
        make_pod().uid("p").name("p").label("foo", "bar").obj(),
        make_pod().uid("p").name("p").label("foo", "baz").obj(),
        QUEUE,
    ),
    (
        "modify pod label to change it from satisfying pod anti-affinity to not satisfying "
        "anti-affinity",
        target_with_anti_affinity().obj(),
        other().node("fake-node").label("service", "securityscan").obj(),
        other().node("fake-node").label("service", "aaaa").obj(),
        QUEUE,
    ),
    (
        "modify pod label to change it from not satisfying pod anti-affinity to satisfying "
        "anti-affinity",
        target_with_anti_affinity().obj(),
        other().node("fake-node").label("service", "bbb").obj(),
        other().node("fake-node").label("service", "securityscan").obj(),
        SKIP,
    ),
    (
        "delete a pod which doesn't match pod's anti-affinity",
        target_with_anti_affinity().obj(),
        other().node("fake-node").label("aaa", "a").obj(),
        None,
        SKIP,
    ),
    (
        "delete a pod which matches pod's anti-affinity",
        target_with_anti_affinity().obj(),
        other().node("fake-node").label("service", "securityscan").obj(),
        None,
        QUEUE,
    ),
    (
        "delete a pod with anti-affinity that matches pending pod",
        make_pod().name("p").label("service", "securityscan").obj(),
        anti_securityscan(make_pod().node("fake-node")).obj(),
        None,
        QUEUE,
    ),
    (
        "delete a pod with anti-affinity that doesn't match pending pod",
        make_pod().name("p").label("service", "foo").obj(),
        anti_securityscan(make_pod().node("fake-node")).obj(),
        None,
        SKIP,
    ),
    (
        "delete a pod which doesn't match pending pod's anti-affinity and has anti-affinity that "
        "doesn't match pending pod",
        anti_securityscan(make_pod().name("p")).label("service", "foo").obj(),
        anti_securityscan(make_pod().node("fake-node")).label("service", "foo").obj(),
        None,
        SKIP,
    ),
]


@pytest.mark.parametrize(
    ("pod", "old_pod", "new_pod", "want"),
    [case[1:] for case in POD_CHANGE_CASES],
    ids=[case[0] for case in POD_CHANGE_CASES],
)
def test_is_schedulable_after_pod_change(
    pod: Pod, old_pod: Pod | None, new_pod: Pod | None, want: QueueingHint
) -> None:
    assert plugin().is_schedulable_after_pod_change(pod, old_pod, new_pod) == want


# ---------------------------------------------------------------------------------------------
# Test_isSchedulableAfterNodeChange


def affinity_in_zone() -> Pod:
    return required(
        make_pod().name("p"),
        anti=False,
        key="service",
        topology_key="zone",
        values=["securityscan", "value2"],
    ).obj()


def affinity_in_region() -> Pod:
    return required(
        make_pod().name("p"),
        anti=False,
        key="service",
        topology_key="region",
        values=["securityscan", "value2"],
    ).obj()


def anti_affinity_in_zone() -> Pod:
    term = PodAffinityTerm("zone", label_selector({"another": "label"}))
    return make_pod().name("p").pod_anti_affinity(PodAffinity(required=(term,))).obj()


def node_a(**labels: str) -> Node:
    w = make_node().name("node-a")
    for key, value in labels.items():
        w = w.label(key.replace("_", "-"), value)
    return w.obj()


NODE_CHANGE_CASES: list[tuple[str, Pod, Node | None, Node, QueueingHint]] = [
    # affinity
    (
        "add a new node with matched pod affinity topologyKey",
        affinity_in_zone(),
        None,
        node_a(zone="zone1"),
        QUEUE,
    ),
    (
        "add a new node without matched topologyKey",
        affinity_in_region(),
        None,
        node_a(zone="zone1"),
        SKIP,
    ),
    (
        "update node label but not topologyKey",
        affinity_in_zone(),
        node_a(aaa="a"),
        node_a(aaa="b"),
        SKIP,
    ),
    (
        "update node label that isn't related to the pod affinity",
        affinity_in_zone(),
        node_a(zone="zone1"),
        node_a(zone="zone1", unrelated_label="unrelated"),
        SKIP,
    ),
    (
        "update node with different affinity topologyKey value",
        affinity_in_zone(),
        node_a(zone="zone1"),
        node_a(zone="zone2"),
        QUEUE,
    ),
    (
        "update node to have the affinity topology label",
        affinity_in_zone(),
        node_a(aaa="a"),
        node_a(zone="zone1"),
        QUEUE,
    ),
    # anti-affinity
    (
        "add a new node with matched pod anti-affinity topologyKey",
        anti_affinity_in_zone(),
        None,
        node_a(zone="zone1"),
        QUEUE,
    ),
    (
        "add a new node without matched pod anti-affinity topologyKey",
        anti_affinity_in_zone(),
        None,
        node_a(),
        QUEUE,
    ),
    (
        "update node label that isn't related to the pod anti-affinity",
        anti_affinity_in_zone(),
        node_a(zone="zone1"),
        node_a(zone="zone1", unrelated_label="unrelated"),
        SKIP,
    ),
    (
        "update node with different anti-affinity topologyKey value",
        anti_affinity_in_zone(),
        node_a(zone="zone1"),
        node_a(zone="zone2"),
        QUEUE,
    ),
    (
        "update node to have the anti-affinity topology label",
        anti_affinity_in_zone(),
        node_a(aaa="a"),
        node_a(zone="zone1"),
        SKIP,
    ),
    (
        "update node label not to have anti-affinity topology label",
        anti_affinity_in_zone(),
        node_a(zone="zone1"),
        node_a(aaa="a"),
        QUEUE,
    ),
]


@pytest.mark.parametrize(
    ("pod", "old_node", "new_node", "want"),
    [case[1:] for case in NODE_CHANGE_CASES],
    ids=[case[0] for case in NODE_CHANGE_CASES],
)
def test_is_schedulable_after_node_change(
    pod: Pod, old_node: Node | None, new_node: Node, want: QueueingHint
) -> None:
    assert plugin().is_schedulable_after_node_change(pod, old_node, new_node) == want


def test_hints_queue_objects_of_the_wrong_kind() -> None:
    pod = target_with_affinity().obj()
    assert plugin().is_schedulable_after_pod_change(pod, None, node_a()) == QUEUE
    assert plugin().is_schedulable_after_node_change(pod, None, pod) == QUEUE


# ---------------------------------------------------------------------------------------------
# Registration and construction


def test_it_registers_pod_and_node_events_with_hints() -> None:
    p = plugin()
    events = p.events_to_register()
    assert [e.event for e in events] == [
        ClusterEvent(
            EventResource.Pod, ActionType.Add | ActionType.UpdatePodLabel | ActionType.Delete
        ),
        ClusterEvent(EventResource.Node, ActionType.Add | ActionType.UpdateNodeLabel),
    ]
    assert events[0].queueing_hint_fn == p.is_schedulable_after_pod_change
    assert events[1].queueing_hint_fn == p.is_schedulable_after_node_change


def test_it_implements_its_extension_points() -> None:
    p = plugin()
    assert p.name() == NAME == "InterPodAffinity"
    for protocol in (PreFilterPlugin, FilterPlugin, PreScorePlugin, ScorePlugin, EnqueueExtensions):
        assert isinstance(p, protocol)
    assert p.pre_filter_extensions() is p
    assert p.score_extensions() is p


def test_new_defaults_missing_args() -> None:
    assert plugin().args == InterPodAffinityArgs()
    assert new(None, FakeHandle()).args == InterPodAffinityArgs(hard_pod_affinity_weight=1)


def test_new_rejects_args_of_another_plugin() -> None:
    with pytest.raises(TypeError, match="want args to be of type InterPodAffinityArgs"):
        new(NodeAffinityArgs(), FakeHandle())


@pytest.mark.parametrize("weight", [-1, 101])
def test_new_rejects_hard_pod_affinity_weight_out_of_range(weight: int) -> None:
    with pytest.raises(ValueError, match=r"not in valid range \[0-100\]"):
        new(InterPodAffinityArgs(hard_pod_affinity_weight=weight), FakeHandle())
